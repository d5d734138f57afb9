--
-- Privileges, as pg_stat_statements has them
--
CREATE ROLE regress_priv_alice LOGIN;
CREATE ROLE regress_priv_bob LOGIN;
CREATE ROLE regress_priv_stats LOGIN;
GRANT pg_read_all_stats TO regress_priv_stats;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;

-- each user runs the same statement once; it returns 7 rows, which tells
-- its rows apart from everything else in the view
SET ROLE regress_priv_alice;
SELECT 'alice' AS who FROM generate_series(1, 7);
SET ROLE regress_priv_bob;
SELECT 'bob' AS who FROM generate_series(1, 7);
RESET ROLE;
SELECT 'superuser' AS who FROM generate_series(1, 7);

-- an ordinary user sees its own texts and queryids only
SET ROLE regress_priv_alice;
SELECT r.rolname, p.query, p.queryid IS NOT NULL AS has_queryid, p.calls
  FROM pg_stat_statements_ng p JOIN pg_roles r ON r.oid = p.userid
 WHERE p.rows = 7
 ORDER BY r.rolname;
-- without texts (showtext false) every text is NULL, the hidden ones too,
-- as contrib has it
SELECT r.rolname, p.query IS NULL AS no_text, p.queryid IS NOT NULL AS has_queryid
  FROM pg_stat_statements_ng(false) p JOIN pg_roles r ON r.oid = p.userid
 WHERE p.rows = 7
 ORDER BY r.rolname;
-- and cannot reset
SELECT pg_stat_statements_ng_reset();
RESET ROLE;

-- pg_read_all_stats sees everything
SET ROLE regress_priv_stats;
SELECT r.rolname, p.query, p.queryid IS NOT NULL AS has_queryid, p.calls
  FROM pg_stat_statements_ng p JOIN pg_roles r ON r.oid = p.userid
 WHERE p.rows = 7
 ORDER BY r.rolname;
RESET ROLE;

-- so does a superuser
SELECT r.rolname, p.query, p.queryid IS NOT NULL AS has_queryid
  FROM pg_stat_statements_ng p JOIN pg_roles r ON r.oid = p.userid
 WHERE p.rows = 7
 ORDER BY r.rolname;

-- reset can be granted
GRANT EXECUTE ON FUNCTION pg_stat_statements_ng_reset(oid, oid, bigint, boolean) TO regress_priv_bob;
SET ROLE regress_priv_bob;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION pg_stat_statements_ng_reset(oid, oid, bigint, boolean) FROM regress_priv_bob;

-- the info view is readable by anyone
SET ROLE regress_priv_alice;
SELECT max FROM pg_stat_statements_ng_info;
RESET ROLE;

DROP ROLE regress_priv_alice;
DROP ROLE regress_priv_bob;
DROP ROLE regress_priv_stats;
