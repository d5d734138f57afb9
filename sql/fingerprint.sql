--
-- Fingerprints: the same for the same statement on every major.  The
-- values below are fixed, and this file expects them on 15, 16, 17 and 18
-- alike, whose normalized texts differ (18 squashes lists of constants, 17
-- and later normalize savepoint names, 18 SET values).  Each statement runs
-- alone after a reset, so that no major merges it with another.
--
SET client_min_messages = warning;
CREATE TABLE fp_t (a int, b text, c numeric);
\set reset 'SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t'
\set fp 'SELECT DISTINCT fingerprint FROM pg_stat_statements_ng WHERE query NOT LIKE \'%pg_stat_statements_ng%\' AND query NOT LIKE \'%fingerprint%\' ORDER BY 1'
:reset;
SELECT * FROM fp_t WHERE a IN (1, 2, 3);
:fp;
:reset;
SELECT * FROM fp_t WHERE a IN (1, 2, 3, 4, 5, 6, 7);
:fp;
:reset;
select * from FP_T where A in (-1, 2);
:fp;
:reset;
SELECT * FROM fp_t WHERE a = 1;
:fp;
:reset;
SELECT * FROM fp_t WHERE a = ANY(ARRAY[1, 2, 3]);
:fp;
:reset;
SELECT * FROM fp_t WHERE b IN ('x'::text, 'y'::text);
:fp;
:reset;
SELECT * FROM fp_t WHERE c IN (1.5, CAST('2' AS numeric), 3::numeric(10,2));
:fp;
:reset;
SELECT ARRAY[[1, 2], [3, 4]] AS m;
:fp;
:reset;
SELECT a, count(*) FROM fp_t GROUP BY 1 ORDER BY 1 DESC LIMIT 5;
:fp;
:reset;
INSERT INTO fp_t VALUES (1, 'a', 2.5), (2, 'b', 3);
:fp;
:reset;
UPDATE fp_t SET b = 'q' WHERE a != 3;
:fp;
:reset;
SELECT /* a comment */ 'lit' AS x, "a" FROM fp_t t WHERE t.a > 0;
:fp;
:reset;
SELECT date '2020-01-01' AS d, interval '1 day' AS i;
:fp;
:reset;
SELECT count(*) FROM fp_t WHERE a::bigint IN (1::bigint, 2::bigint);
:fp;
:reset;
SET search_path TO public;
:fp;
:reset;
SET search_path TO public, pg_catalog;
:fp;
:reset;
BEGIN;
SAVEPOINT sp1;
RELEASE SAVEPOINT sp1;
SAVEPOINT sp2;
ROLLBACK TO SAVEPOINT sp2;
COMMIT;
:fp;

-- the function on texts as each major stores them: one fingerprint per
-- statement, whatever the list's length or squashing; distinct statements
-- differ
SELECT f, count(*), string_agg(q, ' | ' ORDER BY q) FROM (
  SELECT pg_stat_statements_ng_fingerprint(q) AS f, q FROM (VALUES
    ('SELECT * FROM fp_t WHERE a IN ($1, $2, $3)'),
    ('SELECT * FROM fp_t WHERE a IN ($1 /*, ... */)'),
    ('select * from FP_T where "a" in ($3,$4)'),
    ('SELECT * FROM fp_t WHERE a IN ($1)'),
    ('SELECT * FROM fp_t WHERE a = ANY(ARRAY[$1 /*, ... */])'),
    ('SELECT * FROM fp_t WHERE a = ANY(ARRAY[$1, $2::int])'),
    ('SELECT * FROM fp_t WHERE a IN ($1 + $2, $3)'),
    ('SELECT * FROM fp_t WHERE a IN (f($1), $2)'),
    ('SELECT * FROM fp_t WHERE a <> $1'),
    ('SELECT * FROM fp_t WHERE a != $1'),
    ('SELECT * FROM fp_t WHERE a = $1'),
    ('SELECT * FROM "FP_T" WHERE a = $1'),
    ('SAVEPOINT $1'),
    ('SAVEPOINT sp9'),
    ('DEALLOCATE $1'),
    ('DEALLOCATE PREPARE p1'),
    ('DEALLOCATE ALL'),
    ('SET work_mem TO DEFAULT')) v(q)) s
GROUP BY f ORDER BY min(q) COLLATE "C";
SELECT pg_stat_statements_ng_fingerprint('SELECT ''unterminated') IS NULL AS rejected,
       pg_stat_statements_ng_fingerprint(NULL) IS NULL AS null_in;

-- each text's fingerprint is cached with it by the first read: every row
-- shows the function's of its text, at the first read and the next ones
SELECT count(fingerprint) >= 5 AS some,
       count(*) FILTER (WHERE fingerprint IS DISTINCT FROM
                              pg_stat_statements_ng_fingerprint(query)) AS differ
  FROM pg_stat_statements_ng;
CREATE TEMP TABLE fp_read AS
  SELECT userid, dbid, queryid, toplevel, query, fingerprint
    FROM pg_stat_statements_ng;
SELECT count(fingerprint) >= 5 AS some,
       count(*) FILTER (WHERE fingerprint IS DISTINCT FROM
                              pg_stat_statements_ng_fingerprint(query)) AS differ,
       count(*) FILTER (WHERE fingerprint IS DISTINCT FROM
                              (SELECT r.fingerprint FROM fp_read r
                                WHERE (r.userid, r.dbid, r.queryid, r.toplevel, r.query)
                                    = (s.userid, s.dbid, s.queryid, s.toplevel, s.query)))
         AS changed
  FROM pg_stat_statements_ng s WHERE query NOT LIKE '%fp\_read%';
DROP TABLE fp_read;

-- a key whose entry is reset and made again with another text (an alias:
-- the same queryid, a text of the same length) has that text's fingerprint,
-- not the one cached with the text before it
:reset;
SELECT 1 AS fp_alias_a;
SELECT query, fingerprint = pg_stat_statements_ng_fingerprint(query) AS same
  FROM pg_stat_statements_ng WHERE query LIKE '%fp\_alias%';
SELECT pg_stat_statements_ng_reset(0, 0, queryid) IS NOT NULL AS t
  FROM pg_stat_statements_ng WHERE query LIKE '%fp\_alias%';
SELECT 1 AS fp_alias_b;
SELECT query, fingerprint = pg_stat_statements_ng_fingerprint(query) AS same
  FROM pg_stat_statements_ng WHERE query LIKE '%fp\_alias%';
SELECT query, fingerprint = pg_stat_statements_ng_fingerprint(query) AS same
  FROM pg_stat_statements_ng WHERE query LIKE '%fp\_alias%';
:reset;
SELECT 1 AS fp_alias_c;
SELECT query, fingerprint = pg_stat_statements_ng_fingerprint(query) AS same
  FROM pg_stat_statements_ng WHERE query LIKE '%fp\_alias%';

-- another user's rows, for a role without pg_read_all_stats: no text, no
-- fingerprint
CREATE ROLE regress_fp_user;
SET ROLE regress_fp_user;
SELECT count(*) > 0 AS others, count(fingerprint) AS fingerprints
  FROM pg_stat_statements_ng WHERE userid <> 'regress_fp_user'::regrole;
RESET ROLE;
DROP ROLE regress_fp_user;

-- The same schema made in another order, in another database: other OIDs
-- (the functions'), so other queryids on every major, and the same
-- fingerprints, statement for statement; the three statements' differ.
\set regdb :DBNAME
CREATE DATABASE fp_other;
\c fp_other
SET client_min_messages = warning;
CREATE FUNCTION fp_pad() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION fp_g(text) RETURNS text LANGUAGE sql AS 'SELECT $1';
CREATE FUNCTION fp_f(int) RETURNS int LANGUAGE sql AS 'SELECT $1';
CREATE TABLE fp_u (k int PRIMARY KEY, v text);
CREATE TABLE fp_t (a int, b text, c numeric);
\c :regdb
SET client_min_messages = warning;
CREATE TABLE fp_u (k int PRIMARY KEY, v text);
CREATE FUNCTION fp_f(int) RETURNS int LANGUAGE sql AS 'SELECT $1';
CREATE FUNCTION fp_g(text) RETURNS text LANGUAGE sql AS 'SELECT $1';
:reset;
SELECT fp_f(a) FROM fp_t WHERE a IN (1, 2);
SELECT fp_f(k), v FROM fp_u JOIN fp_t ON fp_t.a = fp_u.k WHERE k = 7;
UPDATE fp_u SET v = fp_g('x') WHERE k = 1;
\c fp_other
SELECT fp_f(a) FROM fp_t WHERE a IN (1, 2, 3, 4);
SELECT fp_f(k), v FROM fp_u JOIN fp_t ON fp_t.a = fp_u.k WHERE k = 8;
UPDATE fp_u SET v = fp_g('y') WHERE k = 2;
\c :regdb
SELECT count(*) AS statements,
       count(*) FILTER (WHERE n_db = 2 AND n_queryid = 2 AND n_fp = 1) AS pairs,
       count(DISTINCT fp) AS fingerprints
  FROM (SELECT regexp_replace(query, '\$[0-9]+( /\*, \.\.\. \*/)?(, \$[0-9]+)*', '?', 'g') AS q,
               count(DISTINCT dbid) AS n_db, count(DISTINCT queryid) AS n_queryid,
               count(DISTINCT fingerprint) AS n_fp, min(fingerprint) AS fp
          FROM pg_stat_statements_ng
         WHERE query LIKE '%fp\_f(%' OR query LIKE '%fp\_g(%'
         GROUP BY 1) s;
DROP DATABASE fp_other;
DROP TABLE fp_t, fp_u;
DROP FUNCTION fp_f(int), fp_g(text);
