#!/usr/bin/env bash
# test.sh -- build and run the whole test suite on every tested major.
#
#   scripts/test.sh            # 15, 16, 17 and 18
#   PGSSNG_MAJORS=18 scripts/test.sh
#   scripts/test.sh asan       # one sanitizer mode only (scripts/sanitize.sh):
#   scripts/test.sh valgrind   # asan, valgrind or fuzz, on 18's instrumented
#   scripts/test.sh fuzz       # trees (scripts/setup-sanitizers.sh)
#
# For each major: build with -Wall -Werror and assertions, install into that
# major's tree, then run the pg_regress suite and the TAP tests (each starts
# its own throwaway instance) as the postgres user, from a scratch copy of
# the tree.  Ends with one line "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"

if [ $# -gt 0 ]; then
	bash "$here/setup-postgres.sh" || die "setup failed"
	exec bash "$here/sanitize.sh" "$@"
fi

bash "$here/setup-postgres.sh" || die "setup failed"

passed=0
failed=0
failures=()

run_major() {
	local major=$1 bindir pgc scratch rc
	bindir=$(pg_bindir "$major")
	pgc="$bindir/pg_config"
	log "PostgreSQL $major: build ($("$pgc" --version))"

	scratch=$(mktemp -d /tmp/pgssng-test-$major.XXXXXX)
	# a copy without build products, owned by the user that runs the tests
	(cd "$top" && tar cf - --exclude=.git --exclude='*.o' --exclude='*.so' \
		--exclude=tmp_check --exclude=results .) | tar xf - -C "$scratch"
	chown -R postgres: "$scratch" 2>/dev/null || true

	# assertions: 17 and 18 are built with them; Debian's 15 is not, so the
	# extension turns them on for itself
	local copt="-Wall -Werror"
	"$pgc" --configure | grep -q enable-cassert || copt="$copt -DUSE_ASSERT_CHECKING"
	if ! make -C "$scratch" PG_CONFIG="$pgc" COPT="$copt" >"$scratch/build.log" 2>&1 ||
		! make -C "$scratch" PG_CONFIG="$pgc" install >>"$scratch/build.log" 2>&1; then
		tail -n 40 "$scratch/build.log"
		failed=$((failed + 1)); failures+=("$major:build")
		return
	fi

	# the drop-in, installed for the TAP tests that use it and contrib's suite,
	# removed again at the end (restoring contrib's files on 15 to 17)
	if ! make -C "$scratch" PG_CONFIG="$pgc" install-dropin >>"$scratch/build.log" 2>&1; then
		tail -n 20 "$scratch/build.log"
		failed=$((failed + 1)); failures+=("$major:install-dropin")
		return
	fi

	# a tree without the TAP modules (16's binary distribution, configured
	# without --enable-tap-tests) runs them with 17's PostgreSQL::Test::*
	local tap=()
	if [ ! -f "$(dirname "$("$pgc" --pgxs)")/../../src/test/perl/PostgreSQL/Test/Cluster.pm" ]; then
		tap=(enable_tap_tests=yes PROVE=prove
			"PG_PROVE_FLAGS=-I $(pg_bindir 17)/../lib/postgresql/pgxs/src/test/perl -I .")
	fi

	log "PostgreSQL $major: tests"
	runuser -u postgres -- env PATH="$bindir:$PATH" \
		make -C "$scratch" PG_CONFIG="$pgc" installcheck "${tap[@]}" \
		PROVE_FLAGS="--timer" >"$scratch/test.log" 2>&1
	rc=$?

	# t/053 needs a /dev/shm of its own that it may fill: a small tmpfs in a
	# private mount namespace (root only; elsewhere the file skipped above)
	if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
		log "PostgreSQL $major: t/053_dev_shm_full.pl with a private /dev/shm"
		# installcheck starts by removing tmp_check: keep the first run's logs
		mv "$scratch/tmp_check" "$scratch/tmp_check.main" 2>/dev/null
		unshare -m sh -c "mount -t tmpfs -o size=8m tmpfs /dev/shm &&
			exec runuser -u postgres -- env PATH='$bindir:$PATH' PGSSNG_PRIVATE_SHM=1 \
			make -C '$scratch' PG_CONFIG='$pgc' installcheck REGRESS= \
			PROVE_TESTS=t/053_dev_shm_full.pl PROVE_FLAGS=--timer" >>"$scratch/test.log" 2>&1 || rc=1
		if [ -d "$scratch/tmp_check.main" ]; then
			cp -a "$scratch/tmp_check/log/." "$scratch/tmp_check.main/log/" 2>/dev/null
			rm -rf "$scratch/tmp_check"
			mv "$scratch/tmp_check.main" "$scratch/tmp_check"
		fi
	fi

	log "PostgreSQL $major: contrib's pg_stat_statements suite against the drop-in"
	if bash "$here/contrib-regress.sh" "$major" >"$scratch/contrib.log" 2>&1; then
		crc=0
	else
		crc=1
	fi
	# the harness itself: an altered expected file must make it fail
	local first
	first=$(grep -m1 -oE '^(not )?ok 1 - [a-z_]+' "$scratch/contrib.log" | sed 's/.* - //')
	if [ -z "$first" ] && grep -q '^contrib suite on .*: skipped' "$scratch/contrib.log"; then
		: # the suite cannot run on this major (the log says why): nor can its check
	elif [ -n "$first" ] &&
		! bash "$here/contrib-regress.sh" "$major" --alter-expected "$first" >"$scratch/contrib-harness.log" 2>&1 &&
		grep -q "^not ok 1 - $first\$" "$scratch/contrib-harness.log"; then
		echo "ok - contrib-regress.sh fails on an altered expected file ($major, $first)" >>"$scratch/contrib.log"
	else
		echo "not ok - contrib-regress.sh did not fail on an altered expected file ($major)" >>"$scratch/contrib.log"
		crc=1
	fi
	cat "$scratch/contrib.log"
	make -C "$scratch" PG_CONFIG="$pgc" uninstall-dropin >>"$scratch/build.log" 2>&1 ||
		{ echo "not ok - uninstall-dropin on $major"; failed=$((failed + 1)); }
	# and where there are no contrib files to save (a DESTDIR holds none):
	# both succeed and leave nothing named pg_stat_statements* but ours
	local stage
	stage=$(mktemp -d /tmp/pgssng-stage-$major.XXXXXX)
	if make -C "$scratch" PG_CONFIG="$pgc" DESTDIR="$stage" install-dropin >>"$scratch/build.log" 2>&1 &&
		make -C "$scratch" PG_CONFIG="$pgc" DESTDIR="$stage" uninstall-dropin >>"$scratch/build.log" 2>&1 &&
		[ -z "$(find "$stage" -name 'pg_stat_statements*' ! \( -name 'pg_stat_statements_ng*' \
			! -name 'pg_stat_statements_ng_dropin' \))" ]; then
		echo "ok - drop-in install and uninstall without contrib's files on $major"
		passed=$((passed + 1))
	else
		echo "not ok - drop-in install and uninstall without contrib's files on $major"
		failed=$((failed + 1)); failures+=("$major:dropin-without-contrib")
	fi
	rm -rf "$stage"
	# the build a user makes against a server without assertions (Debian's
	# 15) is warning-free too: code used only by assertions compiles out
	if [ "$copt" != "-Wall -Werror" ]; then
		if make -C "$scratch" PG_CONFIG="$pgc" clean >>"$scratch/build.log" 2>&1 &&
			make -C "$scratch" PG_CONFIG="$pgc" COPT="-Wall -Werror" >>"$scratch/build.log" 2>&1; then
			echo "ok - build without assertions, -Wall -Werror, on $major"
			passed=$((passed + 1))
		else
			tail -n 20 "$scratch/build.log"
			echo "not ok - build without assertions, -Wall -Werror, on $major"
			failed=$((failed + 1)); failures+=("$major:build-release")
		fi
	fi
	passed=$((passed + $(grep -c '^ok ' "$scratch/contrib.log")))
	failed=$((failed + $(grep -c '^not ok ' "$scratch/contrib.log")))
	[ "$crc" = 0 ] || failures+=("$major:contrib-suite")
	cat "$scratch/test.log" | grep -E '^(ok|not ok|# |(\[[0-9:]+\] )?t/|All tests|Files=|Result|[[:space:]]+(ok|FAILED))|tests passed|failed \(|^\s+[a-z_]+\s+\.\.\.' || true

	# tally: pg_regress lines "ok N - name" / "not ok N - name" (15: "test x ... ok")
	local rp rf tp tf
	rp=$(grep -cE '^(ok [0-9]+ +[-+] |test .* \.\.\. ok|     [a-z_]+ +\.\.\. ok)' "$scratch/test.log")
	rf=$(grep -cE '^(not ok [0-9]+ +[-+] |test .* \.\.\. FAILED|     [a-z_]+ +\.\.\. FAILED)' "$scratch/test.log")
	# TAP: each test file counts once
	# (prove --timer starts each line with [hh:mm:ss])
	tp=$(grep -cE '^(\[[0-9:]+\] )?t/.*\.\. ok' "$scratch/test.log")
	# prove's summary names each failing file once: "t/NAME.pl (Wstat: ..."
	# (a file listed only for a TODO that passed, "Wstat: 0 ... Failed: 0",
	# did not fail)
	tf=$(grep -E '^t/[0-9a-z_]+\.pl +\(Wstat' "$scratch/test.log" |
		grep -vcE '\(Wstat: 0 Tests: [0-9]+ Failed: 0\)')
	if [ "$rc" != 0 ] && [ $((rf + tf)) = 0 ]; then
		rf=1
	fi
	passed=$((passed + rp + tp))
	failed=$((failed + rf + tf))
	if [ "$rc" != 0 ] || [ "$crc" != 0 ]; then
		failures+=("$major")
		report_major_failure "$major" "$scratch" >>"$failure_report"
	else
		rm -rf "$scratch"
	fi
}

# What failed on one major, for the report printed last (CI shows the tail of
# the output): the failing lines, regression.diffs, and the log of each
# failing TAP file only.
report_major_failure() {
	local major=$1 scratch=$2 t name
	echo "==== PostgreSQL $major: what failed (scratch tree $scratch)"
	grep -E '^(not ok|test .* FAILED|     [a-z_]+ +\.\.\. FAILED)|^t/[0-9a-z_]+\.pl +\(Wstat|^#   Failed test|^make: \*\*\*|^Bail' \
		"$scratch/test.log" || echo "(no failing test line)"
	if [ -f "$scratch/regression.diffs" ]; then
		echo "---- regression.diffs"
		head -n 80 "$scratch/regression.diffs"
	fi
	# prove's summary names each failing file: "t/NAME.pl (Wstat: ..."
	for t in $(grep -oE '^t/[0-9a-z_]+\.pl +\(Wstat' "$scratch/test.log" |
		grep -oE 't/[0-9a-z_]+' | sed 's,^t/,,' | sort -u); do
		name="$scratch/tmp_check/log/regress_log_$t"
		[ -f "$name" ] || continue
		echo "---- $name: failures, then its last lines"
		grep -E '^\[[^]]*\] not ok|#   Failed test|#\s+(got|expected)' "$name" | head -n 40
		tail -n 40 "$name"
	done
	if grep -q '^not ok' "$scratch/contrib.log"; then
		echo "---- contrib's suite"
		grep '^not ok' "$scratch/contrib.log"
	fi
	echo "---- last lines of the test output"
	tail -n 25 "$scratch/test.log"
}

failure_report=$(mktemp /tmp/pgssng-failures.XXXXXX)

log "format: pgindent --check"
if bash "$here/pgindent.sh" --check; then
	echo "ok - pgindent"
	passed=$((passed + 1))
else
	echo "not ok - pgindent: run scripts/pgindent.sh"
	failed=$((failed + 1)); failures+=("pgindent")
fi

log "shape: scripts/check-house.sh (file and function sizes, include and call circles, names in comments and docs)"
if bash "$here/check-house.sh"; then
	echo "ok - check-house"
	passed=$((passed + 1))
else
	echo "not ok - check-house: see its lines above"
	failed=$((failed + 1)); failures+=("check-house")
fi
# the checker itself: a tree with each fault must make it fail
if bash "$here/check-house.sh" --self-test >/dev/null; then
	echo "ok - check-house fails on a tree with each fault"
	passed=$((passed + 1))
else
	echo "not ok - check-house did not fail on a tree with each fault"
	failed=$((failed + 1)); failures+=("check-house-self-test")
fi

# The sanitizer modes (18) start before the per-major runs and run beside
# them: the majors' TAP tests leave much of the machine idle (server starts
# and stops, fsync), and each mode works in its own copy of its tree
# (scripts/sanitize.sh), with its own temporary ports and socket directory.
# Their results are collected after the majors.
#   asan: the whole suite (t/021's damaged files among it) under ASan and
#     UBSan, the server instrumented too;
#   valgrind: the pg_regress suite and the normalizer's TAP test;
#   fuzz: the normalizer's and the loader's fuzzers.
# scripts/asan-persist.sh (the loader's test alone, the server not
# instrumented) is left for a quick check by hand.
declare -A san_out san_pid
san_modes=""
case " $PGSSNG_MAJORS " in *" 18 "*)
	bash "$here/setup-sanitizers.sh" >/dev/null || true
	san_modes="asan valgrind fuzz"
	san_t0=$(date +%s)
	for mode in $san_modes; do
		log "sanitizers: scripts/sanitize.sh $mode (18), in the background"
		san_out[$mode]=$(mktemp /tmp/pgssng-san-$mode.XXXXXX)
		bash "$here/sanitize.sh" "$mode" >"${san_out[$mode]}" 2>&1 &
		san_pid[$mode]=$!
	done ;;
esac

for major in $PGSSNG_MAJORS; do
	run_major "$major"
done

case " $PGSSNG_MAJORS " in *" 15 "*)
	# the benchmark runner, briefly, on the build just tested (no timing is
	# asserted: it must run every contender and workload to the end)
	log "benchmark smoke (bench/run.py --smoke, PostgreSQL 15)"
	smoke=$(mktemp -d /tmp/pgssng-smoke.XXXXXX)
	if python3 "$top/bench/run.py" --smoke --use-installed --bindir "$(pg_bindir 15)" \
		--results "$smoke" --quiet >"$smoke/out.log" 2>&1; then
		echo "ok - benchmark smoke"; passed=$((passed + 1)); rm -rf "$smoke"
	else
		tail -n 30 "$smoke/out.log"
		echo "not ok - benchmark smoke"; failed=$((failed + 1)); failures+=("bench-smoke")
	fi ;;
esac

for mode in $san_modes; do
	if wait "${san_pid[$mode]}"; then
		grep -E '^fuzz' "${san_out[$mode]}"
		echo "ok - sanitize $mode (done by $(($(date +%s) - san_t0)) s after the sanitizers started)"
		passed=$((passed + 1))
	else
		tail -n 80 "${san_out[$mode]}"
		echo "not ok - sanitize $mode"; failed=$((failed + 1)); failures+=("sanitize-$mode")
	fi
	rm -f "${san_out[$mode]}"
done

# packaging: the Debian packages on Debian's 15 (the script moves
# aside a source build of ours it finds there and puts it back), and the PGXN
# zip installed with pgxn into a copy of 18's tree
run_packaging() {
	local name=$1 script=$2 out
	out=$(mktemp /tmp/pgssng-$name.XXXXXX)
	log "$name (scripts/$script)"
	if bash "$here/$script" >"$out" 2>&1; then
		echo "ok - $name"; passed=$((passed + 1))
	else
		grep -E '^not ok' "$out"; tail -n 30 "$out"
		echo "not ok - $name"; failed=$((failed + 1)); failures+=("$name")
	fi
	rm -f "$out"
}
case " $PGSSNG_MAJORS " in *" 15 "*) run_packaging debian-package deb-package.sh ;; esac
case " $PGSSNG_MAJORS " in *" 18 "*) run_packaging pgxn-install pgxn-install.sh ;; esac

if [ -s "$failure_report" ]; then
	echo
	cat "$failure_report"
fi
rm -f "$failure_report"
[ ${#failures[@]} -eq 0 ] || echo "failed on: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
