#!/bin/bash
# bench/waits-compare.sh -- the wait profile beside pg_wait_sampling, and the
# sampler's CPU, on a throwaway cluster of a private copy of Debian's 15.
#
#   bench/waits-compare.sh compare WORKDIR [SECONDS]
#       pg_wait_sampling (Debian's postgresql-15-pg-wait-sampling, unpacked
#       into the copy with dpkg -x) and ours loaded together, one mixed
#       workload, then both profiles per (queryid, wait event) side by side,
#       and each sampler's CPU time from /proc/PID/stat.
#   bench/waits-compare.sh cost WORKDIR [SECONDS]
#       ours alone, 100 connections of which 16 run pgbench -S and 84 sit
#       idle, at the default interval: the sampler's CPU time.
#
# WORKDIR gets the copy (usr/lib/postgresql/15, usr/share/postgresql/15,
# made once from the system's) with our extension installed into it (make
# install DESTDIR=WORKDIR), and the cluster.  Nothing is installed into the
# system's tree.  Run as root (the cluster runs as postgres) from the
# repository's top directory.
set -euo pipefail

mode=$1
work=$(readlink -f "$2")
secs=${3:-60}
port=55431
sys=/usr/lib/postgresql/15
bin=$work$sys/bin
data=$work/data
top=$(pwd)

as_pg() { runuser -u postgres -- "$@"; }
psql_() { as_pg "$bin/psql" -X -h "$work" -p $port -d postgres -v ON_ERROR_STOP=1 "$@"; }

if [ ! -x "$bin/postgres" ]; then
	mkdir -p "$work/usr/lib/postgresql" "$work/usr/share/postgresql"
	cp -a $sys "$work/usr/lib/postgresql/"
	cp -a /usr/share/postgresql/15 "$work/usr/share/postgresql/"
	(cd /tmp && apt-get download postgresql-15-pg-wait-sampling >/dev/null)
	dpkg -x /tmp/postgresql-15-pg-wait-sampling_*.deb "$work"
fi
build=$work/build
rm -rf "$build" && mkdir -p "$build"
git archive HEAD | tar xf - -C "$build"
make -s -C "$build" PG_CONFIG=$sys/bin/pg_config >/dev/null
make -s -C "$build" PG_CONFIG=$sys/bin/pg_config install DESTDIR="$work" >/dev/null

if [ -d "$data" ]; then as_pg "$bin/pg_ctl" -D "$data" stop -m fast >/dev/null 2>&1 || true; fi
rm -rf "$data"
chown postgres: "$work"
as_pg "$bin/initdb" -D "$data" >/dev/null
if [ "$mode" = compare ]; then
	libs="pg_wait_sampling, pg_stat_statements_ng"
else
	libs="pg_stat_statements_ng"
fi
cat >>"$data/postgresql.conf" <<EOF
port = $port
unix_socket_directories = '$work'
listen_addresses = ''
max_connections = 120
shared_preload_libraries = '$libs'
compute_query_id = on
pg_wait_sampling.profile_pid = off
pg_wait_sampling.profile_period = 10
pg_stat_statements_ng.wait_sample_interval = 10ms
EOF
as_pg "$bin/pg_ctl" -D "$data" -l "$work/log" -w start >/dev/null
as_pg "$bin/pgbench" -h "$work" -p $port -i -s 1 -q postgres >/dev/null 2>&1
psql_ -qc "CREATE EXTENSION pg_stat_statements_ng" >/dev/null
[ "$mode" = compare ] && psql_ -qc "CREATE EXTENSION pg_wait_sampling" >/dev/null

# CPU time (ticks) of the postmaster's child whose title matches $1
proc_ticks() {
	local pid
	pid=$(ps -o pid=,args= --ppid "$(head -1 "$data/postmaster.pid")" |
		awk -v pat="$1" '$0 ~ pat {print $1; exit}')
	awk '{print $14 + $15}' "/proc/$pid/stat"
}

pgb() { as_pg "$bin/pgbench" -h "$work" -p $port -n -T "$secs" "$@" postgres; }

cat >"$work/sleep.sql" <<EOF
SELECT pg_sleep(0.02);
EOF
cat >"$work/cpu.sql" <<EOF
SELECT count(*) FROM generate_series(1, 100000);
EOF
cat >"$work/idle.sql" <<EOF
SELECT 1;
\sleep 10 s
EOF
chmod 644 "$work"/*.sql

ours_before=$(proc_ticks 'waits sampler')
[ "$mode" = compare ] && pgws_before=$(proc_ticks 'pg_wait_sampling collector')
psql_ -qc "SELECT pg_stat_statements_ng_reset()" >/dev/null
[ "$mode" = compare ] && psql_ -qc "SELECT pg_wait_sampling_reset_profile()" >/dev/null
start=$(date +%s.%N)
if [ "$mode" = compare ]; then
	pgb -c 6 -j 2 >"$work/tpcb.out" 2>&1 &
	pgb -c 1 -f "$work/sleep.sql" >/dev/null 2>&1 &
	pgb -c 1 -f "$work/cpu.sql" >/dev/null 2>&1 &
else
	pgb -c 84 -j 4 -f "$work/idle.sql" >/dev/null 2>&1 &
	sleep 2
	pgb -c 16 -j 2 -S >"$work/select.out" 2>&1 &
fi
wait
end=$(date +%s.%N)
ours_after=$(proc_ticks 'waits sampler')
hz=$(getconf CLK_TCK)
elapsed=$(echo "$end - $start" | bc)
echo "elapsed ${elapsed}s"
echo "ours: sampler CPU $(echo "($ours_after - $ours_before) / $hz" | bc -l | cut -c1-6) s" \
	"= $(echo "100 * ($ours_after - $ours_before) / $hz / $elapsed" | bc -l | cut -c1-5)% of one core"
if [ "$mode" = compare ]; then
	pgws_after=$(proc_ticks 'pg_wait_sampling collector')
	echo "pg_wait_sampling: collector CPU $(echo "($pgws_after - $pgws_before) / $hz" | bc -l | cut -c1-6) s" \
		"= $(echo "100 * ($pgws_after - $pgws_before) / $hz / $elapsed" | bc -l | cut -c1-5)% of one core"
	psql_ -P footer=off <<'EOF'
WITH ours AS (
  SELECT queryid, wait_event_type AS type, wait_event AS event, samples
    FROM pg_stat_statements_ng_waits),
pgws AS (
  SELECT queryid, coalesce(event_type, 'CPU') AS type,
         coalesce(event, 'CPU') AS event, sum(count) AS samples
    FROM pg_wait_sampling_profile WHERE queryid <> 0 GROUP BY 1, 2, 3),
j AS (
  SELECT queryid, type, event, coalesce(o.samples, 0) AS ours,
         coalesce(p.samples, 0) AS pgws
    FROM ours o FULL JOIN pgws p USING (queryid, type, event))
SELECT left(regexp_replace(s.query, '\s+', ' ', 'g'), 44) AS statement,
       j.type || ':' || j.event AS wait, j.ours, j.pgws,
       round((j.ours - j.pgws) / sqrt(greatest(j.ours + j.pgws, 1)), 1) AS z
  FROM j LEFT JOIN (SELECT DISTINCT ON (queryid) queryid, query
                      FROM pg_stat_statements_ng WHERE toplevel) s USING (queryid)
 WHERE j.ours + j.pgws >= 20
 ORDER BY j.ours + j.pgws DESC;
EOF
fi
as_pg "$bin/pg_ctl" -D "$data" stop -m fast >/dev/null
