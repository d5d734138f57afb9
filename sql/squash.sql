--
-- Squashed constant lists (18 and later): the texts stored for lists of
-- every shape and size, in every place a list can stand.  Contrib's
-- normalizer of 18.0 to 18.5 wrote past its buffer for statements with many
-- short squashed lists (CVE-2026-14676); the first statements here are that
-- case.  Long statements are built with string_agg and sent with \gexec, so
-- that the text the server gets, and the one expected back, are exact.
--
SELECT current_setting('server_version_num')::int >= 180000 AS squashing \gset
\if :squashing
\else
\echo squashing of constant lists exists from PostgreSQL 18 on
\quit
\endif
SET client_min_messages = warning;
CREATE TABLE sq_t (a int, b text);
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;

-- many short squashed lists: each "1,2" (3 bytes) becomes "$n /*, ... */"
-- (13 bytes and more); contrib sized its buffer 10 bytes over each constant.
-- The generated statements are not echoed (they are long); their results are.
\set ECHO none
SELECT 'SELECT count(*) FROM sq_t WHERE ' ||
       string_agg('a IN (1,2)', ' AND ') FROM generate_series(1, 300) \gexec
SELECT 'SELECT count(*) FROM sq_t WHERE ' ||
       string_agg('a = ANY(ARRAY[1,2])', ' OR ') FROM generate_series(1, 300) \gexec
-- thousands of elements, one list, as IN and = ANY(ARRAY[])
SELECT 'SELECT count(*) FROM sq_t WHERE a IN (' ||
       string_agg(i::text, ', ') || ')' FROM generate_series(1, 5000) i \gexec
SELECT 'SELECT count(a) FROM sq_t WHERE a = ANY(ARRAY[' ||
       string_agg(i::text, ',') || '])' FROM generate_series(1, 5000) i \gexec
SELECT 'SELECT count(*) FROM sq_t WHERE b IN (' ||
       string_agg(quote_literal('sq-str-' || i), ',') || ')'
  FROM generate_series(1, 3000) i \gexec
\set ECHO all

-- the stored texts, exactly as expected
SELECT query = (SELECT 'SELECT count(*) FROM sq_t WHERE ' ||
                       string_agg(format('a IN ($%s /*, ... */)', i), ' AND ' ORDER BY i)
                  FROM generate_series(1, 300) i) AS in_lists,
       length(query) AS len
  FROM pg_stat_statements_ng WHERE query LIKE '%a IN ($1 /*, ... */) AND%';
SELECT query = (SELECT 'SELECT count(*) FROM sq_t WHERE ' ||
                       string_agg(format('a = ANY(ARRAY[$%s /*, ... */])', i), ' OR ' ORDER BY i)
                  FROM generate_series(1, 300) i) AS any_lists,
       length(query) AS len
  FROM pg_stat_statements_ng WHERE query LIKE '%ANY(ARRAY[$1 /*, ... */]) OR%';
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query LIKE 'SELECT count(_) FROM sq_t WHERE%' AND length(query) < 100
 ORDER BY query COLLATE "C";

SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
-- lists ending at the very end of the text (no semicolon, no newline)
SELECT 'SELECT 1 AS e WHERE 1 IN (1,2,3)' \gexec
SELECT 'SELECT 2 = ANY(ARRAY[1,2])' \gexec
SELECT 'SELECT ARRAY[3,4]' \gexec
-- nested ARRAY[] constructors
SELECT ARRAY[ARRAY[1,2],ARRAY[3,4]] AS nested;
SELECT ARRAY[ARRAY[ARRAY[5,6,7]],ARRAY[ARRAY[8,9,10]]] AS deeper;
SELECT 11 = ANY(ARRAY[ARRAY[12,13],ARRAY[14,15]]) AS nested_any;
-- comments and newlines between elements
SELECT 1, 1 AS c WHERE 1 IN (1, /* sq-comment-1 */ 2,
  3 -- sq-comment-2
  , 4);
SELECT 2, 2, 2 AS c WHERE 2 IN (
5
,
6
);
-- casts, signs and every numeric literal form of 16 and later
SELECT 3, 3, 3, 3 AS n WHERE 3 IN (0x1F, 0o17, 0b101, 1_000_000, -7, 8::int, '9'::int);
SELECT 0x2F AS h, 0o27 AS o, 0b1101 AS b, 2_000_000 AS u, 1_000.000_5 AS d, -0x3F AS nh;
SELECT 4, 4, 4, 4, 4 AS n WHERE 4.5 IN (1.5e3, .5, 6., 1_0.2_5);
-- multi-byte characters at the bounds of a list
SELECT 'é' IN ('é','ü') AS mb1;
SELECT 'ü', 'ü' = ANY(ARRAY['日本','語']) AS mb2;
SELECT 1 AS "ü" WHERE 1 IN (1,2)AND'ö'IN('ö','ä');
-- external parameters in a list
PREPARE sq_p(int, int) AS SELECT 5 AS p FROM sq_t WHERE a IN ($1, $2, 3);
EXECUTE sq_p(1, 2);
DEALLOCATE sq_p;
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C";

SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
-- lists inside dollar quotes, DO bodies, utility statements
SELECT $$ a IN (1,2,3) $$ AS dq, $sq$ ARRAY[4,5] $sq$ AS tagged;
SET pg_stat_statements_ng.track = 'all';
DO $$ BEGIN PERFORM 1 WHERE 1 IN (1,2,3); END $$;
DO $body$ BEGIN PERFORM ARRAY['sq-do-1','sq-do-2']; END $body$;
SET pg_stat_statements_ng.track = 'top';
EXPLAIN (COSTS OFF) SELECT * FROM sq_t WHERE a IN (1,2,3);
EXPLAIN (COSTS OFF) SELECT * FROM sq_t WHERE b = ANY(ARRAY['sq-ex-1','sq-ex-2']);
COPY (SELECT 1 AS c WHERE 1 IN (1,2,3)) TO STDOUT;
COPY (SELECT x FROM unnest(ARRAY['sq-copy-1','sq-copy-2']) x) TO STDOUT;
CREATE TABLE sq_ctas AS SELECT a FROM sq_t WHERE a IN (1,2,3) OR b IN ('sq-ctas-1','sq-ctas-2');
DROP TABLE sq_ctas;
-- a multi-statement string: each statement is cut out and normalized
SELECT 'SELECT 6 IN (7,8) AS m1; SELECT ''sq-ms'' = ANY(ARRAY[''a'',''b'']) AS m2;SELECT 9, 9 IN (10,11)' \gexec
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C";

-- syntax errors inside a list: no entry, and the next statement is fine
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT 1 WHERE 1 IN (1,,2);
SELECT 'SELECT 1 WHERE 1 IN (1,2' \gexec
SELECT ARRAY[1,2,];
SELECT 1 WHERE 1 IN (1, 2 3);
SELECT 'SELECT 1 WHERE 1 IN (1, 2, ''unterminated' \gexec
SELECT 12 AS after_errors WHERE 12 IN (12, 13);
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C";

-- no stored text holds a literal of this file
SELECT count(*) AS leaked FROM pg_stat_statements_ng
 WHERE query ~ '(sq-|[0-9]_[0-9]|0x|0o|0b1|日|''|\$\$|\$sq\$|\$body\$)';
DROP TABLE sq_t;
