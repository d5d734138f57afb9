--
-- Cheap collection: changed_since, last_executed_at, text_stored_at
--
CREATE TABLE col_t (a int);
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT count(*) FROM col_t;
SELECT a FROM col_t WHERE a = 1;

-- a first call returns everything, and a generation for the next call
SELECT generation AS gen1 FROM pg_stat_statements_ng_changed_since(0) LIMIT 1 \gset
SELECT count(*) > 0 AS all_rows FROM pg_stat_statements_ng_changed_since(0);

-- run one statement only, then ask for what changed since gen1
SELECT count(*) FROM col_t;
SELECT generation AS gen2 FROM pg_stat_statements_ng_changed_since(:gen1) LIMIT 1 \gset
SELECT :gen2 > :gen1 AS newer;
-- changed since gen1: the statement run, and the statements that ran after
-- the first call (the \gset query that made that call finished after it);
-- not the WHERE a = 1 statement, which did not run again.  A generation is
-- a bigint (it starts at the server's start time in microseconds), so the
-- gen2 query, whose literal is one, is a statement of its own, apart from
-- the gen1 query's int literal 0
SELECT query, calls
  FROM pg_stat_statements_ng_changed_since(:gen1)
 ORDER BY query COLLATE "C";

-- nothing has run since: only the reads themselves
SELECT generation AS gen3 FROM pg_stat_statements_ng_changed_since(:gen2) LIMIT 1 \gset
SELECT count(*) AS col_t_rows FROM pg_stat_statements_ng_changed_since(:gen3)
 WHERE query LIKE '%col_t%';

-- when it last ran, and when its text was stored
SELECT last_executed_at >= stats_since AS ran_after_creation,
       last_executed_at <= now() AS ran_before_this_statement,
       text_stored_at IS NOT NULL AS has_text_time
  FROM pg_stat_statements_ng WHERE query = 'SELECT count(*) FROM col_t';

-- showtext = false: no text, the rest as with text
SELECT count(*) = count(*) FILTER (WHERE query IS NULL) AS no_texts
  FROM pg_stat_statements_ng_changed_since(0, false);

-- a min/max-only reset is a change: the row comes back, with its new
-- minmax_stats_since, to a collector whose generation is from before it
SELECT queryid AS col_qid FROM pg_stat_statements_ng
 WHERE query = 'SELECT count(*) FROM col_t' \gset
SELECT generation AS gen4 FROM pg_stat_statements_ng_changed_since(0) LIMIT 1 \gset
SELECT pg_stat_statements_ng_reset(0, 0, :col_qid, true) IS NOT NULL AS t;
SELECT calls, min_exec_time = 0 AS minmax_cleared
  FROM pg_stat_statements_ng_changed_since(:gen4)
 WHERE query = 'SELECT count(*) FROM col_t';

-- texts once: the text and stamp of the entries with given queryids, as the
-- view shows them (NULL elements and unknown queryids are ignored); a
-- min/max reset keeps the stamp
SELECT text_stored_at AS stamp1 FROM pg_stat_statements_ng
 WHERE queryid = :col_qid \gset
SELECT pg_stat_statements_ng_reset(0, 0, :col_qid, true) IS NOT NULL AS t;
SELECT t.query, t.text_stored_at = v.text_stored_at AS same_stamp,
       t.text_stored_at = :'stamp1' AS kept_by_minmax_reset
  FROM pg_stat_statements_ng_texts(ARRAY[:col_qid, NULL, 42]) t
  JOIN pg_stat_statements_ng v USING (userid, dbid, queryid, toplevel);
SELECT count(*) AS none FROM pg_stat_statements_ng_texts('{}');
-- no two texts share a stamp
SELECT count(*) = count(DISTINCT text_stored_at) AS stamps_unique
  FROM pg_stat_statements_ng WHERE text_stored_at IS NOT NULL;
-- a reset removes the entry; run again, it has a new stamp
SELECT pg_stat_statements_ng_reset(0, 0, :col_qid) IS NOT NULL AS t;
SELECT count(*) FROM col_t;
SELECT t.query, t.text_stored_at > :'stamp1' AS new_stamp
  FROM pg_stat_statements_ng_texts(ARRAY[:col_qid]) t;

DROP TABLE col_t;
