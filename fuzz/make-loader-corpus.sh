#!/usr/bin/env bash
# fuzz/make-loader-corpus.sh -- (re)writes fuzz/loader-corpus/ from a real
# dump of the current format: a throwaway instance of PostgreSQL 18 (the
# normal tree) with the extension installed in a private copy and loaded as
# the drop-in (so that the dump names contrib's file written beside it), a
# workload of a few hundred statements with texts and timings, a clean stop
# (which writes the dump), then fuzz/make_corpus.py, which keeps the files
# of older formats as old-vK-*.stat.  The corpus is committed; run this
# when the dump format changes (fuzz/run.sh fails on a stale corpus).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$top/scripts/common.sh"

major=${PGSSNG_SAN_MAJOR:-18}
work=$(mktemp -d /tmp/pgssng-corpus.XXXXXX)
cp -a "$(readlink -f "$(pg_bindir "$major")/..")" "$work/pg"
pgc="$work/pg/bin/pg_config"
(cd "$top" && tar cf - --exclude=.git --exclude='*.o' --exclude='*.so' \
	--exclude=tmp_check --exclude=results .) | (mkdir "$work/src" && tar xf - -C "$work/src")
make -C "$work/src" PG_CONFIG="$pgc" >/dev/null && make -C "$work/src" PG_CONFIG="$pgc" install-dropin >/dev/null
dropin="$("$pgc" --sharedir)/pg_stat_statements_ng_dropin"
gcc -I"$top/src" -I"$("$pgc" --includedir-server)" -o "$work/layout" "$here/loader_layout.c" \
	-L"$("$pgc" --libdir)" -lpgcommon -lpgport
"$work/layout" >"$work/layout.txt"
chown -R postgres: "$work"
as_pg() { runuser -u postgres -- env PATH="$work/pg/bin:$PATH" "$@"; }
as_pg initdb -D "$work/data" -U postgres >/dev/null
cat >>"$work/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements'
extension_control_path = '$dropin:\$system'
dynamic_library_path = '$dropin/lib:\$libdir'
pg_stat_statements_ng.track = all
pg_stat_statements_ng.plans_per_statement = 2
listen_addresses = ''
unix_socket_directories = '$work'
port = 54328
CONF
as_pg pg_ctl -D "$work/data" -l "$work/server.log" -w start >/dev/null
as_pg psql -X -q -h "$work" -p 54328 -d postgres >/dev/null <<'SQL'
SET pg_stat_statements_ng.track = top;
CREATE EXTENSION pg_stat_statements_ng;
RESET pg_stat_statements_ng.track;
CREATE TABLE c (a int, b text);
SELECT 1; SELECT 'x' AS y; SELECT * FROM c WHERE a IN (1, 2, 3);
INSERT INTO c SELECT i, 'v' || i FROM generate_series(1, 1000) i;
SELECT count(*) FROM c WHERE b LIKE 'v1%';
SELECT pg_sleep(0.01); SELECT pg_sleep(0.002);
DO $$ BEGIN FOR i IN 1..20 LOOP PERFORM count(*) FROM c WHERE a > i; END LOOP; END $$;
SELECT 'ü日本' AS mb;
-- three plans of one statement (the third in "other": plans_per_statement
-- is 2), for the plan rows that follow the SQLSTATE counts
CREATE TABLE pt (id int PRIMARY KEY, v int);
INSERT INTO pt SELECT g, g FROM generate_series(1, 10000) g;
VACUUM ANALYZE pt;
SELECT count(*) FROM pt WHERE id < 5;
SELECT count(*) FROM pt WHERE id < 6;
SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM pt WHERE id < 5;
SET enable_seqscan = off; SET enable_indexscan = on;
SELECT count(*) FROM pt WHERE id < 5;
RESET ALL;
-- failures, for the SQLSTATE counts that follow the entries
SELECT 1 / 0;
SELECT 1 / (a - a) FROM c LIMIT 1;
INSERT INTO c VALUES ('x');
SQL
# fifty statements more: select lists of 1 to 50 columns (a list of
# another length is another statement), some with a pg_sleep slow enough
# for more than one histogram group (the dump stays under 64 kB: the
# fuzzer's time grows with the size of the dumps)
cols=a
for i in $(seq 1 50); do
	echo "SELECT $cols FROM c WHERE a = $i;"
	if [ $((i % 10)) = 0 ]; then
		echo "SELECT pg_sleep(0.00$((i / 10))), $cols FROM c WHERE a = $i;"
	fi
	cols="$cols, $([ $((i % 2)) = 0 ] && echo a || echo b)"
done | as_pg psql -X -q -h "$work" -p 54328 -d postgres >/dev/null
as_pg pg_ctl -D "$work/data" -m fast -w stop >/dev/null
mkdir -p "$here/loader-corpus"
python3 "$here/make_corpus.py" "$work/layout.txt" "$work/data/pg_stat/pg_stat_statements_ng.stat" \
	"$here/loader-corpus"
rm -rf "$work"
