--
-- Percentiles: exec_p50, exec_p95 and exec_p99 are exactly the midpoints of
-- the buckets that hold the samples of rank ceil(f * calls) in the
-- statement's histogram (pg_stat_statements_ng_histogram), for a statement
-- whose samples span several histogram groups (a group is 16 buckets, a
-- factor of 4.6), some folded into its entry by a backend that exited, the
-- others still in this backend's slot.
--
SELECT pg_stat_statements_ng_reset() IS NOT NULL AS t;
\c -
SELECT pg_sleep(0.0);
SELECT pg_sleep(0.0);
SELECT pg_sleep(0.002);
SELECT pg_sleep(0.002);
SELECT pg_sleep(0.02);
-- the backend that ran them exits: its samples go to the entry
\c -
SELECT pg_sleep(0.0);
SELECT pg_sleep(0.005);
SELECT pg_sleep(0.005);
SELECT pg_sleep(0.05);
-- the histogram the percentiles come from: 9 samples in 3 groups or more
SELECT queryid AS qid FROM pg_stat_statements_ng
 WHERE query = 'SELECT pg_sleep($1)' \gset
SELECT sum(count) AS samples, count(DISTINCT bucket / 16) >= 3 AS groups
  FROM pg_stat_statements_ng_histogram(:qid, 'exec');
-- each percentile, recomputed from the histogram
WITH h AS (
  SELECT bucket, lower_ms,
         sum(count) OVER (ORDER BY bucket) AS seen,
         sum(count) OVER () AS total
    FROM pg_stat_statements_ng_histogram(:qid, 'exec')
), expected AS (
  SELECT f, (SELECT CASE WHEN bucket = 0 THEN 0.0005::float8
                         ELSE lower_ms * sqrt(1.1::float8) END
               FROM h
              WHERE seen >= greatest(ceil(f * total::float8), 1)
              ORDER BY bucket LIMIT 1) AS ms
    FROM unnest(ARRAY[0.50, 0.95, 0.99]::float8[]) AS f
)
SELECT s.calls,
       s.exec_p50 = (SELECT ms FROM expected WHERE f = 0.50) AS p50,
       s.exec_p95 = (SELECT ms FROM expected WHERE f = 0.95) AS p95,
       s.exec_p99 = (SELECT ms FROM expected WHERE f = 0.99) AS p99,
       s.exec_p50 < s.exec_p95 AND s.exec_p95 = s.exec_p99 AS ordered,
       s.plan_p50 IS NULL AND s.plan_p99 IS NULL AS no_plans
  FROM pg_stat_statements_ng s WHERE s.queryid = :qid;
