--
-- The info view and the settings
--
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT dealloc, entries, max, evicted_calls, evicted_exec_time,
       last_eviction_time, query_text_memory_used, query_text_memory_max,
       texts_dropped, entries_refused, counts_discarded
  FROM pg_stat_statements_ng_info;

SELECT 'one' AS a;
SELECT 'two' AS a, 2 AS b;
-- entries: the reset, the first info query, the two statements above, and
-- this query (its entry is made when it is parsed)
SELECT entries, query_text_memory_used > 0 AS texts_kept
  FROM pg_stat_statements_ng_info;
-- text memory is exactly the stored texts, each with its 16-byte header and
-- its terminator: those shown, and the text of this query, stored when it
-- was parsed but not shown until it has run: 162 bytes, 16 and 1
SELECT query_text_memory_used - (SELECT sum(16 + octet_length(query) + 1) FROM pg_stat_statements_ng)
       AS bytes_not_shown
  FROM pg_stat_statements_ng_info;

-- the settings, with their defaults
SELECT name, setting, unit, context FROM pg_settings
 WHERE name LIKE 'pg_stat_statements_ng.%' ORDER BY name;

-- bad values are refused
SET pg_stat_statements_ng.track = 'sometimes';
SET pg_stat_statements_ng.max = 10;
ALTER SYSTEM SET pg_stat_statements_ng.max = 10;
SET pg_stat_statements_ng.slots_per_backend = 16;
SET pg_stat_statements_ng.no_such_setting = 1;

-- one C function serves 1.0's info (17 columns) and 1.1's (dsa_failures
-- added): a database still at 1.0 reads it, then updates
DROP EXTENSION pg_stat_statements_ng;
CREATE EXTENSION pg_stat_statements_ng VERSION '1.0';
SELECT count(*) AS columns_1_0 FROM pg_attribute
 WHERE attrelid = 'pg_stat_statements_ng_info'::regclass AND attnum > 0;
SELECT max, counts_discarded FROM pg_stat_statements_ng_info;
ALTER EXTENSION pg_stat_statements_ng UPDATE TO '1.1';
SELECT count(*) AS columns_1_1 FROM pg_attribute
 WHERE attrelid = 'pg_stat_statements_ng_info'::regclass AND attnum > 0;
SELECT max, dsa_failures FROM pg_stat_statements_ng_info;
-- ---- the keeper (1.2): keeper_start_failures added ----
ALTER EXTENSION pg_stat_statements_ng UPDATE TO '1.2';
SELECT count(*) AS columns_1_2 FROM pg_attribute
 WHERE attrelid = 'pg_stat_statements_ng_info'::regclass AND attnum > 0;
SELECT max, dsa_failures, keeper_start_failures FROM pg_stat_statements_ng_info;
-- ---- failures by SQLSTATE (1.2): sqlstates_lost added ----
SELECT sqlstates_lost FROM pg_stat_statements_ng_info;
-- ---- the history (1.2): its figures after the others ----
SELECT history_windows_dropped, history_windows_skipped, history_counts_lost
  FROM pg_stat_statements_ng_info;
