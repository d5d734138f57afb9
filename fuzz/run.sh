#!/usr/bin/env bash
# fuzz/run.sh WORK -- the three fuzzers against one throwaway instance of the
# server in WORK/pg (scripts/sanitize.sh fuzz builds and installs it, with
# AddressSanitizer and UBSan, and checks their logs and the server's after
# this script).  Runs as root; the instance runs as postgres.
#
#   PGSSNG_FUZZ_SEED              the seed of both (default: random, printed)
#   PGSSNG_FUZZ_STATEMENTS        statements for the normalizer (100000), or
#   PGSSNG_FUZZ_SECONDS           a time for it instead
#   PGSSNG_FUZZ_LOADER_ITERATIONS mutated dumps for the loader (1000000)
#   PGSSNG_FUZZ_PLAN_ITERATIONS   mutated EXPLAIN texts for the plan text's
#                                 scrubber (200000)
#   PGSSNG_FUZZ_LOADER_MIN_PAST   the share of them, in percent, whose
#                                 verdict must be the entries' (past the
#                                 size, header and CRC checks; 33): fewer
#                                 fail the run, as a corpus of another
#                                 format would
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$top/scripts/common.sh"

work=$1
bin="$work/pg/bin"
fz="$work/fuzz"
seed=${PGSSNG_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
seed=$((seed % 2147483647))
# the client library of the uninstrumented tree: an ASan library cannot be
# loaded into a Python that is not
libpq=$(readlink -f "$(pg_bindir "${PGSSNG_SAN_MAJOR:-18}")/../lib/libpq.so.5")
as_pg() { runuser -u postgres -- env PATH="$bin:$PATH" "$@"; }

mkdir -p "$fz" && chown postgres: "$fz"
as_pg initdb -D "$fz/data" -U postgres -E UTF8 --locale=C.UTF-8 >"$fz/initdb.log" 2>&1 ||
	{ tail -n 20 "$fz/initdb.log"; exit 1; }
cat >>"$fz/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements_ng'
listen_addresses = ''
unix_socket_directories = '$fz'
port = 54329
pg_stat_statements_ng.max = 20000
max_stack_depth = 6MB
CONF
as_pg pg_ctl -D "$fz/data" -l "$fz/server.log" -w start >/dev/null ||
	{ tail -n 20 "$fz/server.log"; exit 1; }
trap 'as_pg pg_ctl -D "$fz/data" -m fast -w stop >/dev/null 2>&1' EXIT

rc=0
statements=${PGSSNG_FUZZ_STATEMENTS:-100000}
limit=(--statements "$statements")
[ -n "${PGSSNG_FUZZ_SECONDS:-}" ] && limit=(--seconds "$PGSSNG_FUZZ_SECONDS")
echo "fuzz: normalizer, seed $seed, ${limit[*]}"
as_pg python3 "$here/normalize.py" --libpq "$libpq" --host "$fz" --port 54329 --jobs 2 \
	--seed "$seed" "${limit[@]}" || rc=1

iterations=${PGSSNG_FUZZ_LOADER_ITERATIONS:-1000000}
min_past=${PGSSNG_FUZZ_LOADER_MIN_PAST:-33}
echo "fuzz: loader, seed $seed, $iterations mutated dumps of $(ls "$here"/loader-corpus/*.stat | wc -l) files"
corpus=$(for f in "$here"/loader-corpus/*.stat; do printf "pg_read_binary_file('%s')," "$f"; done)
start=$(date +%s)
if as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$fz" -p 54329 -d postgres >"$fz/loader.out" 2>&1 <<SQL
CREATE FUNCTION fuzz_loader(bytea[], int8, int8)
  RETURNS TABLE (outcome text, stage text, count int8)
  AS '\$libdir/pg_stat_statements_ng', 'pg_stat_statements_ng_fuzz_loader' LANGUAGE C STRICT;
CREATE TEMP TABLE tally AS SELECT * FROM fuzz_loader(ARRAY[${corpus%,}], $iterations, $seed);
\pset footer off
SELECT * FROM tally ORDER BY count DESC, outcome, stage;
SELECT coalesce(sum(count) FILTER (WHERE stage = 'entries'), 0) AS past,
       coalesce(sum(count) FILTER (WHERE outcome = 'sound'), 0) AS sound
  FROM tally \gset
\echo tally :past :sound
SQL
then
	echo "fuzz: loader, seed $seed: $iterations mutated dumps in $(($(date +%s) - start)) s; outcomes:"
	grep -v '^tally ' "$fz/loader.out" | sed 's/^/  /'
	read -r past sound < <(sed -n 's/^tally //p' "$fz/loader.out")
	echo "fuzz: loader: $past of $iterations ($((past * 100 / (iterations > 0 ? iterations : 1)))%) past the size, header and CRC checks (at least $min_past% required), $sound sound"
	if [ "$((past * 100))" -lt "$((iterations * min_past))" ] || [ "$sound" -eq 0 ]; then
		echo "fuzz: loader FAILED: too few mutated dumps reach the entries' checks (is fuzz/loader-corpus/ of the current format? fuzz/make-loader-corpus.sh rewrites it)"
		rc=1
	fi
else
	echo "fuzz: loader FAILED (seed $seed):"
	cat "$fz/loader.out"
	rc=1
fi
plan_iterations=${PGSSNG_FUZZ_PLAN_ITERATIONS:-200000}
echo "fuzz: plan text, seed $seed, $plan_iterations mutated texts of $(ls "$here"/plan-corpus/*.txt | wc -l) files"
corpus=$(for f in "$here"/plan-corpus/*.txt; do printf "pg_read_file('%s')," "$f"; done)
start=$(date +%s)
if as_pg psql -X -q -At -v ON_ERROR_STOP=1 -h "$fz" -p 54329 -d postgres >"$fz/plan.out" 2>&1 <<SQL
CREATE FUNCTION fuzz_plan_text(text[], int8, int8) RETURNS int8
  AS '\$libdir/pg_stat_statements_ng', 'pg_stat_statements_ng_fuzz_plan_text' LANGUAGE C STRICT;
SELECT fuzz_plan_text(ARRAY[${corpus%,}], $plan_iterations, $seed);
SQL
then
	echo "fuzz: plan text, seed $seed: $(cat "$fz/plan.out") mutated texts in $(($(date +%s) - start)) s, each scrubbed twice alike and cut"
else
	echo "fuzz: plan text FAILED (seed $seed):"
	cat "$fz/plan.out"
	rc=1
fi
exit $rc
