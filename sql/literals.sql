--
-- Literals the jumble does not record are replaced too, whatever the
-- statement shares its queryid with and whatever settings changed since the
-- raw parse: no stored text holds a literal
--
CREATE TABLE users (flag bool, name text, doc xml);
CREATE ROLE lit_role;
CREATE FOREIGN DATA WRAPPER lit_fdw;
CREATE SERVER lit_srv FOREIGN DATA WRAPPER lit_fdw;
CREATE SERVER lit_srv2 FOREIGN DATA WRAPPER lit_fdw;
CREATE SERVER lit_srv3 FOREIGN DATA WRAPPER lit_fdw;

-- a statement with the queryid of one without constants (a CASE without
-- ELSE, FETCH FIRST ROW ONLY, XMLROOT's VERSION NO VALUE have a constant
-- the jumble does not record), run after a reset that followed the other's
-- parse: the entry is made at execution, from the source text
PREPARE pc AS SELECT CASE WHEN flag THEN name ELSE 'LEAKCASE' END FROM users;
PREPARE pf AS SELECT name FROM users FETCH FIRST 31337317 ROWS ONLY;
PREPARE px AS SELECT xmlroot(doc, version 'LEAKXML') FROM users;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT CASE WHEN flag THEN name END FROM users;
SELECT name FROM users FETCH FIRST ROW ONLY;
SELECT xmlroot(doc, version no value) FROM users;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
EXECUTE pc;
EXECUTE pf;
EXECUTE px;
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%' ORDER BY query COLLATE "C";

-- standard_conforming_strings and backslash_quote changed earlier in the
-- same query string, as the statement's raw parse did not see them; and a
-- multi-statement string run by PL/pgSQL's EXECUTE (nested: track = all)
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SET standard_conforming_strings = off \; CREATE USER MAPPING FOR lit_role SERVER lit_srv OPTIONS (user 'u\', password 'SECRETSCS1' /* ' */) \; RESET standard_conforming_strings;
SET standard_conforming_strings = off \; SELECT 'u\', 'SECRETSCS2' /* ' */ AS s \; RESET standard_conforming_strings;
SET standard_conforming_strings = off;
SET backslash_quote = off \; CREATE USER MAPPING FOR lit_role SERVER lit_srv2 OPTIONS (user 'u\'', password 'SECRETBQ1') \; RESET backslash_quote;
RESET standard_conforming_strings;
SET pg_stat_statements_ng.track = 'all';
DO $$BEGIN EXECUTE 'SET standard_conforming_strings = off; CREATE USER MAPPING FOR lit_role SERVER lit_srv3 OPTIONS (user ''u\'', password ''SECRETSCS3'' /* '' */)'; END$$;
RESET standard_conforming_strings;
SET pg_stat_statements_ng.track = 'top';
SELECT toplevel, coalesce(query, '<no text>') AS query, calls
  FROM pg_stat_statements_ng
 WHERE query IS NULL OR query NOT LIKE '%pg_stat_statements_ng%'
 ORDER BY query COLLATE "C", toplevel;

-- COPY (query) TO PROGRAM or to a file, under track = all: the nested
-- query's row does not get the program or the file name
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SET pg_stat_statements_ng.track = 'all';
COPY (SELECT name FROM users WHERE name <> 'SECRETCOPY1') TO PROGRAM 'cat >/dev/null # SECRETPROG';
COPY (SELECT 'SECRETCOPY2', name FROM users) TO '/dev/null' (FORMAT csv, DELIMITER '|', NULL 'SECRETNULL');
SET pg_stat_statements_ng.track = 'top';
SELECT toplevel, query, calls FROM pg_stat_statements_ng
 WHERE query LIKE 'COPY%' ORDER BY query COLLATE "C", toplevel;

-- constants the jumble does not record: a CYCLE clause's marks (XMLTABLE's
-- and JSON_TABLE's: t/063_secrets.pl, as they need libxml or 17); kept:
-- type modifiers and ORDER BY, GROUP BY, DISTINCT ON positions, as
-- pg_stat_statements keeps them
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3)
  CYCLE n SET is_cycle TO 'SECRETCYC1' DEFAULT 'SECRETCYC2' USING path
SELECT n FROM t;
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3)
  CYCLE n SET is_cycle TO 4711 DEFAULT 4712 USING path
SELECT n FROM t;
SELECT 'a'::varchar(10) AS v, 1.5::numeric(10, 2) AS n, name
  FROM users GROUP BY 3 ORDER BY 1, 2 DESC;
SELECT DISTINCT ON (1) name FROM users ORDER BY 1 DESC NULLS LAST;
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query NOT LIKE '%pg_stat_statements_ng%' ORDER BY query COLLATE "C";

SELECT count(*) AS leaked FROM pg_stat_statements_ng
 WHERE query ~ '(LEAK|SECRET|4711|4712|31337317)';

DROP USER MAPPING FOR lit_role SERVER lit_srv;
DROP USER MAPPING FOR lit_role SERVER lit_srv2;
DROP USER MAPPING FOR lit_role SERVER lit_srv3;
DROP SERVER lit_srv, lit_srv2, lit_srv3;
DROP FOREIGN DATA WRAPPER lit_fdw;
DROP ROLE lit_role;
DROP TABLE users;
