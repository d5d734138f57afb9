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

-- ---- the history: time windows of per-statement deltas ----

-- every row of every closed window, oldest window first
CREATE FUNCTION pg_stat_statements_ng_history(
    OUT window_start timestamp with time zone,
    OUT window_end timestamp with time zone,
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT toplevel bool,
    OUT calls int8,
    OUT total_exec_time float8,
    OUT rows int8,
    OUT plans int8,
    OUT total_plan_time float8,
    OUT shared_blks_hit int8,
    OUT shared_blks_read int8,
    OUT shared_blks_dirtied int8,
    OUT shared_blks_written int8,
    OUT local_blks_hit int8,
    OUT local_blks_read int8,
    OUT local_blks_dirtied int8,
    OUT local_blks_written int8,
    OUT temp_blks_read int8,
    OUT temp_blks_written int8,
    OUT shared_blk_read_time float8,
    OUT shared_blk_write_time float8,
    OUT local_blk_read_time float8,
    OUT local_blk_write_time float8,
    OUT temp_blk_read_time float8,
    OUT temp_blk_write_time float8,
    OUT wal_records int8,
    OUT wal_fpi int8,
    OUT wal_bytes int8,
    OUT wal_buffers_full int8,
    OUT errors int8,
    OUT cancels int8,
    OUT timeouts int8,
    OUT failed_exec_time float8,
    OUT exec_p50 float8,
    OUT exec_p95 float8,
    OUT exec_p99 float8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_history_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- the windows' rows, with the statement's text while the table knows it
CREATE VIEW pg_stat_statements_ng_history AS
  SELECT
    h.window_start,
    h.window_end,
    h.userid,
    h.dbid,
    h.queryid,
    h.toplevel,
    h.calls,
    h.total_exec_time,
    h.rows,
    h.plans,
    h.total_plan_time,
    h.shared_blks_hit,
    h.shared_blks_read,
    h.shared_blks_dirtied,
    h.shared_blks_written,
    h.local_blks_hit,
    h.local_blks_read,
    h.local_blks_dirtied,
    h.local_blks_written,
    h.temp_blks_read,
    h.temp_blks_written,
    h.shared_blk_read_time,
    h.shared_blk_write_time,
    h.local_blk_read_time,
    h.local_blk_write_time,
    h.temp_blk_read_time,
    h.temp_blk_write_time,
    h.wal_records,
    h.wal_fpi,
    h.wal_bytes,
    h.wal_buffers_full,
    h.errors,
    h.cancels,
    h.timeouts,
    h.failed_exec_time,
    h.exec_p50,
    h.exec_p95,
    h.exec_p99,
    s.query
  FROM pg_stat_statements_ng_history() h
  LEFT JOIN pg_stat_statements_ng(true) s
    ON s.userid = h.userid AND s.dbid = h.dbid AND s.queryid = h.queryid
   AND s.toplevel = h.toplevel;

GRANT SELECT ON pg_stat_statements_ng_history TO PUBLIC;

-- close the open window now
CREATE FUNCTION pg_stat_statements_ng_take_window()
RETURNS void
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_take_window_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION pg_stat_statements_ng_take_window() FROM PUBLIC;

-- drop every closed window
CREATE FUNCTION pg_stat_statements_ng_history_reset()
RETURNS timestamp with time zone
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_history_reset_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION pg_stat_statements_ng_history_reset() FROM PUBLIC;

-- the history's figures, which the info view shows after its own
CREATE FUNCTION pg_stat_statements_ng_history_info(
    OUT history_windows bigint,
    OUT history_memory_used bigint,
    OUT history_windows_dropped bigint,
    OUT history_windows_skipped bigint,
    OUT history_counts_lost bigint,
    OUT history_open_since timestamp with time zone
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_history_info_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE OR REPLACE VIEW pg_stat_statements_ng_info AS
  SELECT i.*, h.*
  FROM pg_stat_statements_ng_info() i, pg_stat_statements_ng_history_info() h;

-- ---- end of the history ----
