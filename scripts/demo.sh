#!/usr/bin/env bash
# demo.sh -- set everything up and show the extension at work.
#
#   scripts/demo.sh                 # PostgreSQL 18 (PGSSNG_DEMO_MAJOR=15|16|17|18)
#
# Installs PostgreSQL (scripts/setup-postgres.sh), builds and installs the
# extension, starts a throwaway cluster with it preloaded, runs a short mixed
# pgbench workload (TPC-B-like writes, prepared selects, and a churn of
# distinct statements, and one that fails one time in ten) while a history
# window closes every 2 seconds, then prints the top statements and the info
# view, and writes the HTML report of the workload
# (PGSSNG_DEMO_REPORT, default /tmp/pg_stat_statements_ng-report.html).
# The cluster is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"

major=${PGSSNG_DEMO_MAJOR:-18}
bash "$here/setup-postgres.sh"
bindir=$(pg_bindir "$major")

log "building pg_stat_statements_ng for PostgreSQL $major"
build=$(mktemp -d /tmp/pgssng-demo-build.XXXXXX)
(cd "$top" && tar cf - --exclude=.git --exclude='*.o' --exclude='*.so' .) | tar xf - -C "$build"
make -C "$build" PG_CONFIG="$bindir/pg_config" >/dev/null
make -C "$build" PG_CONFIG="$bindir/pg_config" install >/dev/null
rm -rf "$build"

work=$(mktemp -d /tmp/pgssng-demo.XXXXXX)
as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
[ "$(id -u)" = 0 ] && chown postgres: "$work"
port=${PGSSNG_DEMO_PORT:-55432}
cleanup() {
	as_pg "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

log "starting a throwaway cluster in $work (port $port)"
as_pg "$bindir/initdb" -D "$work/data" -A trust >/dev/null
cat >>"$work/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements_ng'
port = $port
unix_socket_directories = '$work'
listen_addresses = ''
pg_stat_statements_ng.track_planning = on
CONF
as_pg "$bindir/pg_ctl" -D "$work/data" -l "$work/log" -w start >/dev/null
psql() { as_pg "$bindir/psql" -h "$work" -p "$port" -X -v ON_ERROR_STOP=1 "$@" postgres; }
pgbench() { as_pg "$bindir/pgbench" -h "$work" -p "$port" "$@" postgres; }

psql -q -c "CREATE EXTENSION pg_stat_statements_ng"
pgbench -i -q -s 2 >/dev/null 2>&1
cat >"$work/churn.sql" <<'SQL'
\set n random(1, 300)
SELECT count(*) FROM pgbench_branches WHERE bid = :n OR bid = :n + 1;
SQL
# one statement that fails one time in ten (division by zero)
for i in $(seq 1 400); do printf 'SELECT 1 / (%d %% 10 + floor(random())::int);\n' "$i"; done >"$work/failing.sql"
# distinct statements: a different number of OR terms each time
for k in $(seq 1 40); do
	terms=$(for j in $(seq 1 "$k"); do printf ' OR aid = %d' "$j"; done)
	printf 'SELECT count(*) FROM pgbench_accounts WHERE aid = 0%s;\n' "$terms" >"$work/distinct_$k.sql"
done
chmod a+r "$work"/*.sql

log "running a mixed workload for 10 seconds (a history window closed every 2 seconds)"
psql -q -c "SELECT pg_stat_statements_ng_take_window()" >/dev/null
pgbench -c 4 -j 2 -T 10 -n >/dev/null &
pgbench -c 2 -j 1 -T 10 -n -S -M prepared >/dev/null &
pgbench -c 2 -j 1 -T 10 -n -f "$work/churn.sql" $(for k in $(seq 1 40); do printf ' -f %s' "$work/distinct_$k.sql"; done) >/dev/null &
as_pg "$bindir/psql" -h "$work" -p "$port" -X -q -f "$work/failing.sql" postgres >/dev/null 2>&1 &
for w in 1 2 3 4 5; do
	sleep 2
	psql -q -c "SELECT pg_stat_statements_ng_take_window()" >/dev/null
done
wait
psql -q -c "SELECT pg_stat_statements_ng_take_window()" >/dev/null

log "top statements by total execution time (read right after the clients stopped: no flush, no lag)"
psql -c "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
                round(mean_exec_time::numeric, 3) AS mean_ms, rows,
                plans, shared_blks_hit, left(query, 60) AS query
           FROM pg_stat_statements_ng ORDER BY total_exec_time DESC LIMIT 10"
log "the info view"
psql -x -c "SELECT * FROM pg_stat_statements_ng_info"

report=${PGSSNG_DEMO_REPORT:-/tmp/pg_stat_statements_ng-report.html}
psql -Atc "SELECT pg_stat_statements_ng_report(now() - interval '1 hour', now())" >"$report"
log "the report of this workload (one HTML file, open it in a browser): $report"
