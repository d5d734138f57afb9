--
-- Planning counters (track_planning)
--
SET pg_stat_statements_ng.track_planning = on;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;

CREATE TABLE plan_t (a int);
SELECT 42 AS planned;
SELECT 42 AS planned;
SELECT 42 AS planned;
PREPARE plan_p AS SELECT count(*) FROM plan_t;
EXECUTE plan_p;
EXECUTE plan_p;
EXECUTE plan_p;
-- invalidate the cached plan: one more planning
ALTER TABLE plan_t ADD COLUMN b int;
EXECUTE plan_p;
DEALLOCATE plan_p;

SELECT plans, calls, total_plan_time > 0 AS planned_time,
       min_plan_time <= max_plan_time AS minmax_ok, query
  FROM pg_stat_statements_ng
 WHERE query IN ('SELECT $1 AS planned', 'PREPARE plan_p AS SELECT count(*) FROM plan_t')
 ORDER BY query COLLATE "C";

-- with track_planning off, no plans are counted
SET pg_stat_statements_ng.track_planning = off;
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
SELECT 43 AS unplanned;
SELECT plans, calls FROM pg_stat_statements_ng WHERE query = 'SELECT $1 AS unplanned';

DROP TABLE plan_t;
