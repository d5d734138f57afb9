#!/bin/bash
# history_cost.sh: what the history costs, on one throwaway cluster.
#
#   bench/history_cost.sh BINDIR [PORT]
#
# BINDIR is a PostgreSQL installation's bin directory into which
# pg_stat_statements_ng is installed.  With max = 5000 and 5000 distinct
# statements in the table, 4 pgbench clients running them all the while:
#   1. closing a window: 20 calls of pg_stat_statements_ng_take_window(),
#      each timed by psql (the keeper's close, plus waking it);
#   2. reading a day of windows: 144 windows taken, then the history view,
#      the history function without texts, and the statements view, each
#      read 10 times (count(*) of every row), timed by psql.
# Prints the median and the range of each.  Run it as a user that may run
# initdb (not root).
set -euo pipefail
bindir=$1
port=${2:-54399}
dir=$(mktemp -d)
trap '"$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

"$bindir/initdb" -D "$dir/data" >/dev/null
cat >> "$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements_ng'
port = $port
unix_socket_directories = '$dir'
max_connections = 20
pg_stat_statements_ng.max = 5000
pg_stat_statements_ng.admission = all
pg_stat_statements_ng.history_interval = 3600
CONF
"$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
psql() { PGOPTIONS='-c pg_stat_statements_ng.track=none' "$bindir/psql" -h "$dir" -p "$port" -d postgres -X -Atq "$@"; }
psql -c 'CREATE EXTENSION pg_stat_statements_ng'

# 5000 distinct statements: 1 to 1000 constants, in 5 shapes
for k in $(seq 1 1000); do
	cols=$(printf '1,%.0s' $(seq 1 "$k")); cols=${cols%,}
	for tail in '' ' WHERE false' ' LIMIT 0' ' OFFSET 0' ' WHERE true AND false'; do
		echo "SELECT $cols$tail;"
	done
done > "$dir/stmts.sql"
"$bindir/psql" -h "$dir" -p "$port" -d postgres -X -q -f "$dir/stmts.sql" >/dev/null
echo "entries: $(psql -c 'SELECT entries FROM pg_stat_statements_ng_info')"

"$bindir/pgbench" -h "$dir" -p "$port" -n -c 4 -j 2 -T 600 -f "$dir/stmts.sql" postgres >/dev/null 2>&1 &
bench=$!
sleep 2

# median, min and max (ms) of psql's "Time: x ms" lines
stats() { grep -o 'Time: [0-9.]*' | awk '{print $2}' | sort -n |
	awk '{v[NR]=$1} END {printf "median %.1f ms (%.1f to %.1f, n=%d)\n", v[int((NR+1)/2)], v[1], v[NR], NR}'; }

echo -n "closing a window at 5000 busy entries: "
for i in $(seq 1 20); do echo '\timing on'; echo 'SELECT pg_stat_statements_ng_take_window();'; done |
	psql | stats

for i in $(seq 1 124); do echo 'SELECT pg_stat_statements_ng_take_window();'; done | psql >/dev/null
psql -c "SELECT format('%s windows, %s rows, %s', history_windows,
  (SELECT count(*) FROM pg_stat_statements_ng_history()),
  pg_size_pretty(history_memory_used)) FROM pg_stat_statements_ng_info"
for q in 'SELECT count(*) FROM pg_stat_statements_ng_history' \
		 'SELECT count(*) FROM pg_stat_statements_ng_history()' \
		 'SELECT count(*) FROM pg_stat_statements_ng'; do
	echo -n "$q: "
	for i in $(seq 1 10); do echo '\timing on'; echo "$q;"; done | psql | stats
done
kill "$bench" 2>/dev/null || true
wait "$bench" 2>/dev/null || true
