--
-- Normalization: constants become $n, and no literal is stored
--
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;

SELECT 'secret-literal-1' AS s;
SELECT 'secret-literal-2' AS s;
SELECT 42 + 7 AS n, 'abc' AS t;
SELECT -42 AS neg, - 7 AS spaced;
SELECT 1.5e3 AS f, B'1010' AS bits, X'1F' AS hex, $$dollar$$ AS dq;
SELECT E'esc\'aped' AS e;
SELECT * FROM (VALUES (1, 'one'), (2, 'two')) v(n, s) WHERE n IN (1, 2, 3);
SELECT * FROM (VALUES (1)) v(n) WHERE n IN (4, 5, 6, 7, 8, 9);
SELECT 'x' ||
   'y'
   AS multi_line;
  SELECT 1   AS padded  ;
SELECT 'a' AS first; SELECT 'b' AS second;
-- a comment before the statement
SELECT 'after comment' AS c;
SELECT interval '1 day' AS i, date '2020-01-01' AS d;
PREPARE norm_p(int) AS SELECT $1 + 100 AS p;
EXECUTE norm_p(1);
EXECUTE norm_p(2);
DEALLOCATE norm_p;

SELECT query, calls
  FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C";

-- no stored text holds the literals
SELECT count(*) AS leaked
  FROM pg_stat_statements_ng
 WHERE query LIKE '%secret-literal%' OR query LIKE '%dollar%'
    OR query LIKE '%esc%' OR query LIKE '%after comment%';
