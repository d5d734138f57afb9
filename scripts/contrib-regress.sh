#!/usr/bin/env bash
# contrib-regress.sh MAJOR [--alter-expected TEST] -- run
# contrib/pg_stat_statements' own regression suite, from Debian's source
# package of that major, against the drop-in (the extension
# pg_stat_statements backed by our library), with only our library
# preloaded.  The drop-in must be installed (make install-dropin).
#
# A test passes if its output is contrib's expected output, unmodified.  A
# test whose output differs exactly as documented in docs/compatibility.md
# (the diff kept in docs/contrib-diffs/MAJOR/TEST.diff) is reported as a
# known difference; any other difference fails, and so does a suite that did
# not run: pg_regress's exit status and its summary line must agree with the
# per-test results, and every test of contrib's list must have been run.
# Exit status 0 only if nothing failed.  Runs the server as the postgres
# user; the caller may be root.
#
# --alter-expected TEST changes contrib's expected output of TEST (a line
# added) before the run: the harness's own test (scripts/test.sh) checks that
# the run then fails.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"

major=$1
# 16 comes from a binary distribution, and no reachable source has contrib
# 16's sql/ and expected/: its suite cannot run here (neither pass nor fail)
if [ "$major" = 16 ]; then
	echo "contrib suite on 16: skipped (no reachable source has contrib/pg_stat_statements' sql/ and expected/ of 16)"
	exit 0
fi
alter=
[ "${2:-}" = --alter-expected ] && alter=${3:?--alter-expected needs a test name}
bindir=$(pg_bindir "$major")
src="$PGSSNG_CACHE/pg$major/share/pgssng-src/pg_stat_statements"
[ -d "$src" ] || src="$PGSSNG_CACHE/contrib-src-$major/pg_stat_statements"
[ -d "$src/sql" ] || die "no contrib sources for $major (run scripts/setup-postgres.sh)"

# the test list, as contrib's Makefile has it
tests=$(awk '/^REGRESS *=/ { on = 1; sub(/^REGRESS *=/, "") }
	on { cont = sub(/\\$/, ""); printf "%s ", $0; if (!cont) exit }' "$src/Makefile" | tr -s ' \t' ' ')
[ -n "${tests// /}" ] || die "no test list in $src/Makefile"
work=$(mktemp -d /tmp/pgssng-contrib-$major.XXXXXX)
cp -r "$src/sql" "$src/expected" "$work/"
if [ -n "$alter" ]; then
	[ -f "$work/expected/$alter.out" ] || die "no expected output for $alter"
	echo "-- a line the harness test added" >>"$work/expected/$alter.out"
fi
printf "shared_preload_libraries = 'pg_stat_statements_ng'\nmax_prepared_transactions = 5\n" >"$work/dropin.conf"
if [ "$major" -ge 18 ]; then
	share=$("$bindir/pg_config" --sharedir)
	printf "extension_control_path = '%s'\ndynamic_library_path = '%s'\n" \
		"$share/pg_stat_statements_ng_dropin:\$system" \
		"$share/pg_stat_statements_ng_dropin/lib:\$libdir" >>"$work/dropin.conf"
fi
chown -R postgres: "$work"
regress="$("$bindir/pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress"
# expected/ is found under --inputdir (15's pg_regress has no --expecteddir)
(cd "$work" && runuser -u postgres -- "$regress" --bindir="$bindir" \
	--inputdir="$work" --outputdir="$work" \
	--temp-instance="$work/tmp_check" --temp-config="$work/dropin.conf" \
	--dbname=contrib_regression $tests >"$work/out.log" 2>&1)
rc=$?

# split regression.diffs per test, keeping only the hunks
if [ -f "$work/regression.diffs" ]; then
	awk -v dir="$work" '
		/^diff / { n = split($NF, p, "/"); f = dir "/" p[n] ".diff"; sub(/\.out\.diff$/, ".diff", f); sub(/_[0-9]\.diff$/, ".diff", f); keep = 0; next }
		/^@@/ { keep = 1 }
		keep { print > f }' "$work/regression.diffs"
fi

# what pg_regress said of each test: "ok"/"FAILED" (15, 16: "test x ... ok",
# "     x ... FAILED"; 17 on: "ok 1 - x", "not ok 1 - x")
verdict() {
	local t=$1
	if grep -qE "^(test +$t +\.\.\. +ok|ok +[0-9]+ +[-+] +$t )|^ +$t +\.\.\. +ok" "$work/out.log"; then
		echo ok
	elif grep -qE "^(test +$t +\.\.\. +FAILED|not ok +[0-9]+ +[-+] +$t )|^ +$t +\.\.\. +FAILED" "$work/out.log"; then
		echo failed
	else
		echo missing
	fi
}

pass=0 known=0 fail=0 n=0 reported_failed=0
for t in $tests; do
	n=$((n + 1))
	v=$(verdict "$t")
	[ "$v" = failed ] && reported_failed=$((reported_failed + 1))
	if [ "$v" = missing ]; then
		echo "not ok $n - $t # pg_regress did not run it"
		fail=$((fail + 1))
	elif [ ! -f "$work/$t.diff" ]; then
		if [ "$v" = ok ]; then
			echo "ok $n - $t"
			pass=$((pass + 1))
		else
			echo "not ok $n - $t # pg_regress says FAILED, but there is no diff"
			fail=$((fail + 1))
		fi
	elif [ "$v" = ok ]; then
		echo "not ok $n - $t # a diff, but pg_regress says ok"
		fail=$((fail + 1))
	elif cmp -s "$work/$t.diff" "$top/docs/contrib-diffs/$major/$t.diff"; then
		echo "ok $n - $t # known difference, see docs/compatibility.md"
		known=$((known + 1))
	else
		echo "not ok $n - $t"
		sed 's/^/    /' "$work/$t.diff" | head -n 60
		fail=$((fail + 1))
	fi
done

# pg_regress's own verdict must agree: its exit status, and its summary
# ("All N tests passed." or "M of N tests failed.")
if [ "$reported_failed" = 0 ]; then
	summary="All $n tests passed"
	want_rc=0
else
	summary="$reported_failed of $n tests failed"
	want_rc=1
fi
if [ "$rc" != "$want_rc" ]; then
	echo "not ok - pg_regress exited with $rc, expected $want_rc"
	tail -n 20 "$work/out.log" | sed 's/^/    /'
	fail=$((fail + 1))
elif ! grep -q "$summary" "$work/out.log"; then
	echo "not ok - pg_regress's summary is not \"$summary\""
	tail -n 20 "$work/out.log" | sed 's/^/    /'
	fail=$((fail + 1))
fi
echo "contrib suite on $major: $pass/$n pass unmodified, $known known difference(s), $fail failed (output in $work)"
[ "$fail" = 0 ]
