--
-- Nested statements, toplevel, and utility statements
--
CREATE FUNCTION nest_f(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  SELECT n + 1 INTO r;
  RETURN r;
END $$;
CREATE TABLE nest_t (a int);
CREATE TABLE nest_src AS SELECT generate_series(1, 5) AS a;

-- track = top: only the top-level statement
SET pg_stat_statements_ng.track = 'top';
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT nest_f(1);
SELECT nest_f(2);
SELECT toplevel, calls, query FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C", toplevel;

-- track = all: the nested statement too, marked not toplevel
SET pg_stat_statements_ng.track = 'all';
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT nest_f(1);
SELECT nest_f(2);
SELECT nest_f(3);
DO $$ BEGIN PERFORM nest_f(10); END $$;
SELECT toplevel, calls, rows, query FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C", toplevel;

-- the same statement at both levels gives two rows
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT count(*) FROM nest_t;
DO $$ BEGIN PERFORM count(*) FROM nest_t; END $$;
SELECT toplevel, calls, query FROM pg_stat_statements_ng
 WHERE query LIKE '%FROM nest_t%' AND query NOT LIKE 'DO%'
 ORDER BY toplevel;

-- utility statements, counted once each (not also by the executor)
SET pg_stat_statements_ng.track = 'top';
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
CREATE TABLE nest_u AS SELECT a FROM nest_src;
COPY nest_u TO STDOUT;
BEGIN;
DECLARE nest_c CURSOR FOR SELECT * FROM nest_u;
FETCH 2 FROM nest_c;
CLOSE nest_c;
COMMIT;
EXPLAIN (COSTS OFF) SELECT * FROM nest_u;
DROP TABLE nest_u;
SELECT calls, rows, query FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C";

-- track_utility = off
SET pg_stat_statements_ng.track_utility = off;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
CREATE TABLE nest_v (a int);
DROP TABLE nest_v;
SELECT 'counted' AS c;
SELECT calls, query FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C";
RESET pg_stat_statements_ng.track_utility;

-- track = none
SET pg_stat_statements_ng.track = 'none';
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT 'not counted' AS c;
SELECT count(*) FROM pg_stat_statements_ng;
RESET pg_stat_statements_ng.track;

DROP FUNCTION nest_f(int);
DROP TABLE nest_t;
DROP TABLE nest_src;
