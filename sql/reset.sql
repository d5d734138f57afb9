--
-- Every variant of pg_stat_statements_ng_reset
--
CREATE ROLE regress_reset_user;
GRANT pg_read_all_stats TO regress_reset_user;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;

-- four statements with distinct queryids, one run by another user
SELECT count(*) >= 0 AS r1 FROM pg_class;
SELECT count(*) >= 0 AS r2 FROM pg_proc;
SELECT count(*) >= 0 AS r2b FROM pg_type;
SET ROLE regress_reset_user;
SELECT count(*) >= 0 AS r3 FROM pg_am;
RESET ROLE;

-- by queryid
SELECT pg_stat_statements_ng_reset(0, 0, queryid) IS NOT NULL AS t
  FROM pg_stat_statements_ng WHERE query LIKE '%AS r1 %';
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query LIKE '%AS r%FROM pg_%' ORDER BY query COLLATE "C";

-- by user
SELECT pg_stat_statements_ng_reset((SELECT oid FROM pg_roles WHERE rolname = 'regress_reset_user')) IS NOT NULL AS t;
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query LIKE '%AS r%FROM pg_%' ORDER BY query COLLATE "C";

-- by database, another database: nothing goes
SELECT pg_stat_statements_ng_reset(0, (SELECT oid FROM pg_database WHERE datname = 'template1')) IS NOT NULL AS t;
SELECT count(*) FROM pg_stat_statements_ng WHERE query LIKE '%AS r%FROM pg_%';

-- by user, database and queryid together
SELECT pg_stat_statements_ng_reset(userid, dbid, queryid) IS NOT NULL AS t
  FROM pg_stat_statements_ng WHERE query LIKE '%AS r2 %';
SELECT query, calls FROM pg_stat_statements_ng
 WHERE query LIKE '%AS r%FROM pg_%' ORDER BY query COLLATE "C";

-- by database: this one
SELECT pg_stat_statements_ng_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database())) IS NOT NULL AS t;
SELECT count(*) FROM pg_stat_statements_ng WHERE query LIKE '%AS r%FROM pg_%';

-- min/max only: min and max start over, the rest stays
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT pg_sleep(0.01);
SELECT pg_sleep(0.01);
SELECT calls, min_exec_time > 0 AS has_min, minmax_stats_since = stats_since AS same_since
  FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep($1)';
SELECT pg_stat_statements_ng_reset(0, 0, 0, true) IS NOT NULL AS t;
SELECT calls, min_exec_time, max_exec_time, mean_exec_time > 0 AS kept_mean,
       minmax_stats_since > stats_since AS since_moved
  FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep($1)';
SELECT pg_sleep(0.01);
SELECT calls, min_exec_time > 0 AS has_min, min_exec_time = max_exec_time AS one_sample
  FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep($1)';

-- the reset returns the time it took effect, and a full reset starts the info view afresh
SELECT pg_stat_statements_ng_reset() AS reset_at \gset
SELECT stats_reset = :'reset_at' AS info_reset, dealloc FROM pg_stat_statements_ng_info;
SELECT count(*) FROM pg_stat_statements_ng WHERE query NOT LIKE '%pg_stat_statements_ng%';

DROP ROLE regress_reset_user;
