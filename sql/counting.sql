--
-- Counting: calls, rows and the counters that can be checked exactly
--
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;

SELECT 1 AS one;
SELECT 1 AS one;
SELECT 1 AS one;
SELECT * FROM generate_series(1, 10) AS g;
SELECT * FROM generate_series(1, 10) AS g;

CREATE TEMP TABLE cnt_tab (a int, b text);
INSERT INTO cnt_tab SELECT g, 'row ' || g FROM generate_series(1, 100) g;
UPDATE cnt_tab SET b = 'x' WHERE a <= 30;
DELETE FROM cnt_tab WHERE a > 90;
SELECT count(*) FROM cnt_tab;

-- a statement that fails at execution is not counted as a call (it is
-- counted as an error: see failures.sql)
SELECT 1 / (a - a) FROM cnt_tab LIMIT 1;

SELECT query, calls, rows, errors
  FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C";

-- timing columns are consistent
SELECT calls, total_exec_time >= 0 AS total_ok,
       min_exec_time <= mean_exec_time AND mean_exec_time <= max_exec_time AS minmax_ok,
       stddev_exec_time >= 0 AS stddev_ok,
       plans = 0 AS no_plans_tracked
  FROM pg_stat_statements_ng WHERE query = 'SELECT $1 AS one';

-- one row per key, and queryid is core's
SELECT count(*) = count(DISTINCT (userid, dbid, queryid, toplevel)) AS unique_keys
  FROM pg_stat_statements_ng;

-- local block counters of the temp table
SELECT local_blks_hit + local_blks_read > 0 AS local_io, shared_blks_hit >= 0 AS shared_ok
  FROM pg_stat_statements_ng WHERE query = 'SELECT count(*) FROM cnt_tab';

-- WAL counters of a write to a permanent table
CREATE TABLE cnt_wal (a int);
INSERT INTO cnt_wal SELECT generate_series(1, 50);
SELECT wal_records >= 50 AS wal_records_ok, wal_bytes > 0 AS wal_bytes_ok
  FROM pg_stat_statements_ng WHERE query LIKE 'INSERT INTO cnt_wal%';
DROP TABLE cnt_wal;

-- the columns of the view, in order, are the same on every major
SELECT attnum, attname, atttypid::regtype
  FROM pg_attribute
 WHERE attrelid = 'pg_stat_statements_ng'::regclass AND attnum > 0
 ORDER BY attnum;

-- showtext = false leaves the text out
SELECT count(*) > 0 AS rows, count(query) AS texts
  FROM pg_stat_statements_ng(false);
