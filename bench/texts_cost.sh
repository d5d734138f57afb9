#!/bin/bash
# texts_cost.sh: reading the texts of 1,000 statements out of 100,000
# against reading every text, on one throwaway cluster.
#
#   bench/texts_cost.sh BINDIR [PORT] [REPS]
#
# BINDIR is a PostgreSQL installation's bin directory into which
# pg_stat_statements_ng is installed.  With max = 100000, 100,000 distinct
# statements of about 300 bytes each are run once; 1,000 of their queryids
# are chosen at random.  Then REPS rounds (default 11), each timing, by
# psql, in this order:
#   texts_1000      count and total length of pg_stat_statements_ng_texts()
#                   of the 1,000 queryids (in the server)
#   all_texts       the same of the view's query column (every text)
#   no_texts        count(*) of pg_stat_statements_ng(false) (no text)
#   texts_1000_out  the 1,000 texts sent to psql (written to /dev/null)
#   all_texts_out   every text sent to psql
# Prints the median and the range of each.  Run it as a user that may run
# initdb (not root).
set -euo pipefail
bindir=$1
port=${2:-54398}
reps=${3:-11}
dir=$(mktemp -d)
trap '"$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

"$bindir/initdb" -D "$dir/data" >/dev/null
cat >> "$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements_ng'
port = $port
unix_socket_directories = '$dir'
max_connections = 20
pg_stat_statements_ng.max = 100000
pg_stat_statements_ng.admission = all
pg_stat_statements_ng.query_text_memory = 256MB
pg_stat_statements_ng.track_utility = off
CONF
"$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
psql() { PGOPTIONS='-c pg_stat_statements_ng.track=none' "$bindir/psql" -h "$dir" -p "$port" -d postgres -X -Atq "$@"; }
psql -c 'CREATE EXTENSION pg_stat_statements_ng'
psql -c "CREATE TABLE w ($(seq -s, -f 'c%g int' 0 99))"

# 100,000 distinct statements: three of w's columns (100 x 100 x 10), with
# a comment that makes each text about 300 bytes
pad=$(printf 'x%.0s' $(seq 1 250))
awk -v pad="$pad" 'BEGIN {
	for (a = 0; a < 100; a++) for (b = 0; b < 100; b++) for (c = 0; c < 10; c++)
		printf "SELECT c%d, c%d, c%d /* %s */ FROM w;\n", a, b, c, pad }' > "$dir/fill.sql"
PGOPTIONS='' "$bindir/psql" -h "$dir" -p "$port" -d postgres -X -q -o /dev/null -f "$dir/fill.sql"
psql -c 'CREATE TABLE ids AS SELECT queryid FROM pg_stat_statements_ng(false) ORDER BY random() LIMIT 1000'
echo "entries: $(psql -c 'SELECT entries FROM pg_stat_statements_ng_info')," \
	"text bytes: $(psql -c 'SELECT query_text_memory_used FROM pg_stat_statements_ng_info')"

declare -A sql=(
	[texts_1000]="SELECT count(*), sum(length(query)) FROM pg_stat_statements_ng_texts(ARRAY(SELECT queryid FROM ids))"
	[all_texts]="SELECT count(*), sum(length(query)) FROM pg_stat_statements_ng"
	[no_texts]="SELECT count(*) FROM pg_stat_statements_ng(false)"
	[texts_1000_out]="SELECT query FROM pg_stat_statements_ng_texts(ARRAY(SELECT queryid FROM ids))"
	[all_texts_out]="SELECT query FROM pg_stat_statements_ng"
)
order="texts_1000 all_texts no_texts texts_1000_out all_texts_out"
declare -A times
for r in $(seq 1 "$reps"); do
	for k in $order; do
		t=$({ echo '\timing on'; echo '\o /dev/null'; echo "${sql[$k]};"; } |
			psql 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
		times[$k]="${times[$k]:-} $t"
	done
done
for k in $order; do
	echo "${times[$k]}" | tr ' ' '\n' | grep -v '^$' | sort -g |
		awk -v k="$k" '{ v[NR] = $1 } END {
			printf "%-15s median %8.2f ms  (%.2f - %.2f, %d runs)\n", k, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
done
