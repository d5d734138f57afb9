/* pg_stat_statements_ng--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_stat_statements_ng UPDATE TO '1.2'" to load this file. \quit

-- 1.2 changes the SQL objects of 1.1 as follows (each change is made here
-- and in pg_stat_statements_ng--1.2.sql alike):

-- ---- pg_stat_statements_ng_info: the columns 1.2 adds ----
-- keeper_start_failures: times the keeper worker could not be started for
-- want of a background worker slot.
-- wait_samples_evicted: wait samples of profile rows given up because the
-- profile was full.
DROP VIEW pg_stat_statements_ng_info;
DROP FUNCTION pg_stat_statements_ng_info();

CREATE FUNCTION pg_stat_statements_ng_info(
    OUT dealloc bigint,
    OUT stats_reset timestamp with time zone,
    OUT entries bigint,
    OUT max bigint,
    OUT evicted_calls bigint,
    OUT evicted_exec_time float8,
    OUT last_eviction_time timestamp with time zone,
    OUT query_text_memory_used bigint,
    OUT query_text_memory_max bigint,
    OUT texts_dropped bigint,
    OUT entries_refused bigint,
    OUT counts_discarded bigint,
    OUT unadmitted_calls bigint,
    OUT lock_misses bigint,
    OUT folds bigint,
    OUT entries_memory bigint,
    OUT slots_memory bigint,
    OUT dsa_failures bigint,
    -- 1.2: the keeper
    OUT keeper_start_failures bigint,
    -- 1.2: the wait profile
    OUT wait_samples_evicted bigint
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_info_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_ng_info AS
  SELECT * FROM pg_stat_statements_ng_info();

GRANT SELECT ON pg_stat_statements_ng_info TO PUBLIC;
-- ---- end of pg_stat_statements_ng_info ----

-- ---- wait profile: wait events per statement, sampled (begin) ----

CREATE FUNCTION pg_stat_statements_ng_waits(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT wait_event_type text,
    OUT wait_event text,
    OUT samples bigint,
    OUT est_time_ms float8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_waits_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_ng_waits AS
  SELECT * FROM pg_stat_statements_ng_waits();

GRANT SELECT ON pg_stat_statements_ng_waits TO PUBLIC;

-- ---- wait profile (end) ----
