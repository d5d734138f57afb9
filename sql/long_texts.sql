--
-- Long texts: a row whose text is longer than the room a row starts with
-- (the room grows, src/rowform.c), next to short ones; assertion builds
-- compare every tuple with heap_form_minimal_tuple's
--
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
-- an 11 kB statement (not echoed)
\set ECHO none
SELECT 'SELECT count(*) FROM (SELECT ' ||
       string_agg('1 AS c' || i, ', ' ORDER BY i) || ') s'
  FROM generate_series(1, 800) AS i \gexec
\set ECHO all
SELECT 1 AS short;
SELECT length(query), calls, rows FROM pg_stat_statements_ng
 WHERE query LIKE 'SELECT count(*) FROM (SELECT $1 AS c1,%'
    OR query LIKE 'SELECT $1 AS short'
 ORDER BY length(query);
-- the same rows without texts
SELECT count(*) FILTER (WHERE query IS NULL) AS no_text, sum(calls) AS calls
  FROM pg_stat_statements_ng(false)
 WHERE queryid IN (SELECT queryid FROM pg_stat_statements_ng
                    WHERE query LIKE 'SELECT count(*) FROM (SELECT $1 AS c1,%'
                       OR query LIKE 'SELECT $1 AS short');
