--
-- Executions that end in an error, a cancel or a statement_timeout
--
CREATE TABLE fail_t (a int PRIMARY KEY);
INSERT INTO fail_t VALUES (1);
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;

-- an error at execution: not a call, an error
SELECT 1 / (a - a) FROM fail_t;
SELECT 1 / (a - a) FROM fail_t;
-- the same statement succeeding
SELECT 1 / (a - a + 1) FROM fail_t;
-- an error in a utility statement
CREATE TABLE fail_t (a int);
-- a constraint violation in a DML statement
INSERT INTO fail_t VALUES (1);
INSERT INTO fail_t VALUES (2);
-- a cancel: the statement cancels itself
SELECT pg_cancel_backend(pg_backend_pid()), pg_sleep(5);
-- a statement_timeout
SET statement_timeout = '200ms';
SELECT pg_sleep(2);
RESET statement_timeout;
-- a failure inside a function, caught there: counted for the nested
-- statement (track = all), and the function call itself succeeds
SET pg_stat_statements_ng.track = 'all';
DO $$
BEGIN
  BEGIN
    INSERT INTO fail_t VALUES (1);
  EXCEPTION WHEN unique_violation THEN
    NULL;
  END;
END $$;
RESET pg_stat_statements_ng.track;

SELECT query, toplevel, calls, errors, cancels, timeouts,
       failed_exec_time > 0 AS took_time
  FROM pg_stat_statements_ng
 WHERE errors + cancels + timeouts > 0 OR query LIKE '%fail_t%' OR query = 'DO $1'
 ORDER BY query COLLATE "C", toplevel;

DROP TABLE fail_t;
