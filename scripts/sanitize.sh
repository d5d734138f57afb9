#!/usr/bin/env bash
# sanitize.sh -- the test suite and the fuzzers on instrumented PostgreSQL
# trees (scripts/setup-sanitizers.sh builds them when absent).
#
#   scripts/sanitize.sh asan        the whole pg_regress and TAP suite on a
#                                   server built with ASan and UBSan, the
#                                   extension built the same way
#   scripts/sanitize.sh valgrind    the pg_regress suite and the normalizer's
#                                   TAP tests (PGSSNG_VALGRIND_TAP) with every
#                                   server process under valgrind memcheck,
#                                   on a server built with USE_VALGRIND
#   scripts/sanitize.sh fuzz        on the ASan server: the normalizer's
#                                   fuzzer (PGSSNG_FUZZ_STATEMENTS, 100000,
#                                   or PGSSNG_FUZZ_SECONDS) and the loader's
#                                   (PGSSNG_FUZZ_LOADER_ITERATIONS, 1000000)
#
# PGSSNG_FUZZ_SEED fixes the fuzzers' seed (a random one is printed);
# PGSSNG_SAN_REGRESS and PGSSNG_SAN_TAP run only the named pg_regress tests
# and TAP files (PGSSNG_VALGRIND_TAP the TAP files under valgrind).  Each
# mode passes only with zero reports: no ASan or UBSan report (their logs,
# one file per process), no valgrind error (one log per process), no memory
# context warning in any server log ("detected write past chunk end",
# "problem in alloc set": the sentinel byte assertion builds keep after a
# chunk's requested size, checked when the chunk is freed or its context
# reset or deleted), and every test passing.  Ends with "ok - MODE" or
# "not ok - MODE", and keeps its work directory when it fails.
#
# The instrumented build goes into a private copy of the instrumented tree
# (PostgreSQL installations are relocatable), never into the cached one.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"

mode=${1:-}
major=${PGSSNG_SAN_MAJOR:-18}
case "$mode" in
	asan | fuzz) kind=asan ;;
	valgrind) kind=valgrind ;;
	*) die "usage: sanitize.sh asan|valgrind|fuzz" ;;
esac
PGSSNG_SAN_MAJOR=$major bash "$here/setup-sanitizers.sh" "$kind" ||
	die "the $kind tree of PostgreSQL $major could not be built"
install=$(readlink -f "$PGSSNG_CACHE/pg$major-$kind")

work=$(mktemp -d /tmp/pgssng-$mode.XXXXXX)
cp -a "$install" "$work/pg" || die "could not copy $install"
pgc="$work/pg/bin/pg_config"
mkdir "$work/src" "$work/logs"
(cd "$top" && tar cf - --exclude=.git --exclude='*.o' --exclude='*.so' \
	--exclude=tmp_check --exclude=results .) | tar xf - -C "$work/src"

# what every process of the run (and of the build: pg_config is
# instrumented too) reports to: ASan and UBSan write a file per
# process (log_path), valgrind one per process (the tree's postgres wrapper)
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:print_stacktrace=1:detect_stack_use_after_return=0:log_path=$work/logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$work/logs/ubsan"

copt="-Wall -Werror"
[ "$kind" = asan ] && copt="$copt -fsanitize=address,undefined -fno-omit-frame-pointer"
log "$mode: build against $("$pgc" --version) ($kind)"
if ! make -C "$work/src" PG_CONFIG="$pgc" COPT="$copt" >"$work/build.log" 2>&1 ||
	! make -C "$work/src" PG_CONFIG="$pgc" install >>"$work/build.log" 2>&1 ||
	! make -C "$work/src" PG_CONFIG="$pgc" install-dropin >>"$work/build.log" 2>&1; then
	tail -n 40 "$work/build.log"
	echo "not ok - $mode: build failed ($work)"
	exit 1
fi
chown -R postgres: "$work"


as_pg() { runuser -u postgres -- env PATH="$work/pg/bin:$PATH" "$@"; }

rc=0
case "$mode" in
	asan)
		log "asan: pg_regress and TAP suite"
		as_pg make -C "$work/src" PG_CONFIG="$pgc" installcheck PROVE_FLAGS="--timer" \
			${PGSSNG_SAN_REGRESS+"REGRESS=$PGSSNG_SAN_REGRESS"} \
			${PGSSNG_SAN_TAP:+"PROVE_TESTS=$PGSSNG_SAN_TAP"} >"$work/test.log" 2>&1 || rc=1
		;;
	valgrind)
		log "valgrind: pg_regress suite and ${PGSSNG_VALGRIND_TAP:=t/061_utility_literals.pl}"
		as_pg env PGSSNG_VALGRIND="$work/logs" PGCTLTIMEOUT=600 \
			make -C "$work/src" PG_CONFIG="$pgc" installcheck PROVE_FLAGS="--timer" \
			${PGSSNG_SAN_REGRESS+"REGRESS=$PGSSNG_SAN_REGRESS"} \
			PROVE_TESTS="$PGSSNG_VALGRIND_TAP" >"$work/test.log" 2>&1 || rc=1
		;;
	fuzz)
		bash "$work/src/fuzz/run.sh" "$work" >"$work/test.log" 2>&1 || rc=1
		cat "$work/test.log" | grep -E '^(fuzz|FAIL|stored|candidate|statement|loader|  )' | head -n 60
		;;
esac
grep -E '^(not )?ok [0-9]+ |^(\[[0-9:]+\] )?t/.*\.\. |^Files=|^Result' "$work/test.log"

# reports: ASan, UBSan, valgrind, and the memory contexts' own checks
reports=$(grep -lE 'ERROR: AddressSanitizer|runtime error:|VALGRINDERROR-BEGIN' "$work"/logs/* 2>/dev/null)
warnings=$(grep -rhE 'detected write past chunk end|problem in alloc set|TRAP: ' \
	"$work/src/tmp_check" "$work/src/log" "$work/fuzz" 2>/dev/null | sort | uniq -c | head -n 20)
if [ -n "$reports" ]; then
	rc=1
	echo "$mode: reports in $(echo "$reports" | wc -l) log(s):"
	for f in $(echo "$reports" | head -n 5); do
		echo "---- $f"
		grep -m1 -B2 -A40 -E 'ERROR: AddressSanitizer|runtime error:|VALGRINDERROR-BEGIN' "$f"
	done
fi
if [ -n "$warnings" ]; then
	rc=1
	echo "$mode: memory context warnings in the server logs:"
	echo "$warnings"
fi
if [ "$rc" != 0 ] && [ -f "$work/src/regression.diffs" ]; then
	head -n 60 "$work/src/regression.diffs"
fi
if [ "$rc" = 0 ]; then
	echo "ok - $mode"
	rm -rf "$work"
	exit 0
fi
tail -n 30 "$work/test.log"
echo "not ok - $mode (kept $work)"
exit 1
