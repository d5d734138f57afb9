#!/bin/bash
# read_callgrind.sh: instructions of whole reads of pg_stat_statements_ng,
# by hand: a cluster filled with 10,000 distinct statements (texts of about
# 200 bytes), restarted (the texts come back from the dump) under
# valgrind --tool=callgrind --toggle-collect=PortalRun; each read runs in a
# session of its own and prints the instructions of its backend.
#
#   bench/read_callgrind.sh BINDIR ['SELECT ...' ...]
#
# Run it as a user that may run initdb (not root).
set -euo pipefail
bin=$1
shift
[ $# -gt 0 ] || set -- 'SELECT * FROM pg_stat_statements_ng;' \
	'SELECT * FROM pg_stat_statements_ng;'
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$bin/initdb" -D "$d/data" >/dev/null 2>&1
cat >>"$d/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements_ng'
pg_stat_statements_ng.max = 20000
listen_addresses = ''
unix_socket_directories = '$d'
CONF
P="$bin/psql -h $d -X -q postgres"
"$bin/pg_ctl" -D "$d/data" -l "$d/log" -w start >/dev/null
$P -c "CREATE EXTENSION pg_stat_statements_ng"
$P -c "DO \$\$ BEGIN FOR i IN 1..1000 LOOP
  EXECUTE format('CREATE TABLE r%s (x int)', i); END LOOP; END \$\$"
for i in $(seq 0 9999); do
	a=$((1 + i / 1000)) b=$((1 + i % 1000))
	echo "SELECT a_$a.x, b_$b.x, a_$a.x + b_$b.x AS s, count(*) FROM r$a a_$a" \
		"JOIN r$b b_$b ON a_$a.x = b_$b.x WHERE a_$a.x > 5 AND b_$b.x < 100" \
		"AND a_$a.x IN (1, 2, 3) GROUP BY 1, 2 ORDER BY 1 LIMIT 10;"
done | $P >/dev/null
"$bin/pg_ctl" -D "$d/data" -w stop >/dev/null
mkdir "$d/cg"
valgrind --tool=callgrind --trace-children=yes --toggle-collect=PortalRun \
	--callgrind-out-file="$d/cg/out.%p" "$bin/postgres" -D "$d/data" \
	>"$d/vlog" 2>&1 &
for _ in $(seq 1 120); do
	"$bin/pg_isready" -q -h "$d" && break
	sleep 1
done
sleep 5
for q in "$@"; do
	ls "$d/cg" | sort >"$d/before"
	printf '\\o /dev/null\n%s\n' "$q" | $P
	sleep 3
	# the files written since: the session's backend (other processes run
	# no PortalRun)
	ir=0
	for f in $(ls "$d/cg" | sort | comm -13 "$d/before" -); do
		ir=$((ir + $(grep '^summary:' "$d/cg/$f" | awk '{print $2}')))
	done
	echo "$ir $q"
done
"$bin/pg_ctl" -D "$d/data" -w -m fast stop >/dev/null
wait
