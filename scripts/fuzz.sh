#!/usr/bin/env bash
# fuzz.sh -- the fuzzers for as long as asked, on 18's ASan build.
#
#   scripts/fuzz.sh                      # an hour of the normalizer's fuzzer
#   scripts/fuzz.sh --seconds 14400 --seed 42 --loader-iterations 100000000
#
# The normalizer's fuzzer (fuzz/normalize.py) runs for --seconds, then the
# loader's for --loader-iterations mutated dumps; both from --seed (a random
# one is printed otherwise).  A failure prints the seed, the statement's
# number and its text; the same seed replays the same statements.  Every
# ASan, UBSan and memory-context report fails the run (scripts/sanitize.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
seconds=3600
iterations=10000000
seed=
while [ $# -gt 0 ]; do
	case "$1" in
		--seconds) seconds=$2; shift 2 ;;
		--seed) seed=$2; shift 2 ;;
		--loader-iterations) iterations=$2; shift 2 ;;
		*) echo "usage: fuzz.sh [--seconds N] [--seed S] [--loader-iterations N]" >&2; exit 2 ;;
	esac
done
export PGSSNG_FUZZ_SECONDS=$seconds PGSSNG_FUZZ_LOADER_ITERATIONS=$iterations
[ -n "$seed" ] && export PGSSNG_FUZZ_SEED=$seed
bash "$here/setup-postgres.sh"
exec bash "$here/sanitize.sh" fuzz
