#!/usr/bin/env bash
# contrib-regress.sh MAJOR -- run contrib/pg_stat_statements' own regression
# suite, from Debian's source package of that major, against the drop-in
# (the extension pg_stat_statements backed by our library), with only our
# library preloaded.  The drop-in must be installed (make install-dropin).
#
# A test passes if its output is contrib's expected output, unmodified.  A
# test whose output differs exactly as documented in docs/compatibility.md
# (the diff kept in docs/contrib-diffs/MAJOR/TEST.diff) is reported as a
# known difference; any other difference fails.  Exit status 0 only if
# nothing failed.  Runs the server as the postgres user; the caller may be
# root.
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
bindir=$(pg_bindir "$major")
src="$PGSSNG_CACHE/pg$major/share/pgssng-src/pg_stat_statements"
[ -d "$src" ] || src="$PGSSNG_CACHE/contrib-src-$major/pg_stat_statements"
[ -d "$src/sql" ] || die "no contrib sources for $major (run scripts/setup-postgres.sh)"

# the test list, as contrib's Makefile has it
tests=$(awk '/^REGRESS *=/ { on = 1; sub(/^REGRESS *=/, "") }
	on { cont = sub(/\\$/, ""); printf "%s ", $0; if (!cont) exit }' "$src/Makefile" | tr -s ' \t' ' ')
work=$(mktemp -d /tmp/pgssng-contrib-$major.XXXXXX)
cp -r "$src/sql" "$src/expected" "$work/"
printf "shared_preload_libraries = 'pg_stat_statements_ng'\nmax_prepared_transactions = 5\n" >"$work/dropin.conf"
if [ "$major" -ge 18 ]; then
	share=$("$bindir/pg_config" --sharedir)
	printf "extension_control_path = '%s'\ndynamic_library_path = '%s'\n" \
		"$share/pg_stat_statements_ng_dropin:\$system" \
		"$share/pg_stat_statements_ng_dropin/lib:\$libdir" >>"$work/dropin.conf"
fi
chown -R postgres: "$work"
regress="$("$bindir/pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress"
(cd "$work" && runuser -u postgres -- "$regress" --bindir="$bindir" \
	--inputdir="$work" --outputdir="$work" --expecteddir="$work" \
	--temp-instance="$work/tmp_check" --temp-config="$work/dropin.conf" \
	--dbname=contrib_regression $tests >"$work/out.log" 2>&1)

# split regression.diffs per test, keeping only the hunks
if [ -f "$work/regression.diffs" ]; then
	awk -v dir="$work" '
		/^diff / { n = split($NF, p, "/"); f = dir "/" p[n] ".diff"; sub(/\.out\.diff$/, ".diff", f); sub(/_[0-9]\.diff$/, ".diff", f); keep = 0; next }
		/^@@/ { keep = 1 }
		keep { print > f }' "$work/regression.diffs"
fi

pass=0 known=0 fail=0 n=0
for t in $tests; do
	n=$((n + 1))
	if [ ! -f "$work/$t.diff" ]; then
		echo "ok $n - $t"
		pass=$((pass + 1))
	elif cmp -s "$work/$t.diff" "$top/docs/contrib-diffs/$major/$t.diff"; then
		echo "ok $n - $t # known difference, see docs/compatibility.md"
		known=$((known + 1))
	else
		echo "not ok $n - $t"
		sed 's/^/    /' "$work/$t.diff" | head -n 60
		fail=$((fail + 1))
	fi
done
echo "contrib suite on $major: $pass/$n pass unmodified, $known known difference(s), $fail failed (output in $work)"
[ "$fail" = 0 ]
