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
-- sqlstates_lost: failures whose SQLSTATE pg_stat_statements_ng_errors does
-- not show (the statement had no entry, or no memory for its SQLSTATEs).
-- plan_text_memory_used, plan_text_memory_max: bytes of plan texts, and
-- plan_text_memory; plan_texts_dropped: plan texts not kept (rate, memory,
-- or none made); plan_calls_lost: executions counted in no plan's row.
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
    OUT wait_samples_evicted bigint,
    -- 1.2: failed executions by SQLSTATE
    OUT sqlstates_lost bigint,
    -- 1.2: plan statistics
    OUT plan_text_memory_used bigint,
    OUT plan_text_memory_max bigint,
    OUT plan_texts_dropped bigint,
    OUT plan_calls_lost bigint
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

-- ---- the report: one self-contained HTML document (begin) ----

-- t as HTML text: & < > " ' and = escaped, so that no stored text can
-- open an element or an attribute, in a text node or an attribute value
CREATE FUNCTION pg_stat_statements_ng_html(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT replace(replace(replace(replace(replace(replace(coalesce(t, ''),
         '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'),
         '''', '&#39;'), '=', '&#61;')
$$;

-- a figure for the report: rounded to 3 decimals, '-' when unknown
CREATE FUNCTION pg_stat_statements_ng_report_num(x float8)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT coalesce(round(x::numeric, 3)::text, '-')
$$;

-- one statement's chart: a bar of calls per point (a window, or a run of
-- windows when the period has more than the chart has room for) and the
-- lines of p50, p95 and p99 (ms) on a scale of their own
CREATE FUNCTION pg_stat_statements_ng_report_chart(
    starts timestamptz[], calls bigint[],
    p50 float8[], p95 float8[], p99 float8[])
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path FROM CURRENT
AS $$
  WITH p AS (
    SELECT i, starts[i] AS s, calls[i] AS c,
           p50[i] AS a, p95[i] AS b, p99[i] AS d
      FROM generate_subscripts(starts, 1) AS i
  ), m AS (
    SELECT count(*) AS n, greatest(max(c), 1) AS mc,
           greatest(max(a), max(b), max(d), 0.001) AS mp,
           min(s) AS first, max(s) AS last
      FROM p
  ), xy AS (
    SELECT p.*, 50 + (i - 1) * 800.0 / m.n AS x, 800.0 / m.n AS w,
           170.0 * c / m.mc AS h,
           (190 - 170.0 * a / m.mp)::numeric AS ya,
           (190 - 170.0 * b / m.mp)::numeric AS yb,
           (190 - 170.0 * d / m.mp)::numeric AS yd
      FROM p, m
  )
  SELECT '<svg class="chart" viewBox="0 0 900 230" width="900" height="230">'
      || '<title>calls and exec p50, p95, p99 per window</title>'
      || '<line class="axis" x1="50" y1="190" x2="850" y2="190"></line>'
      || '<g class="calls">'
      || (SELECT string_agg(format('<rect x="%s" y="%s" width="%s" height="%s">'
                                   '<title>%s: %s calls, p50 %s, p95 %s, p99 %s ms</title></rect>',
                                   round(x, 2), round(190 - h, 2),
                                   round(greatest(w * 0.8, 0.5), 2), round(h, 2),
                                   pg_stat_statements_ng_html(to_char(s, 'YYYY-MM-DD HH24:MI:SS')),
                                   c, pg_stat_statements_ng_report_num(a),
                                   pg_stat_statements_ng_report_num(b),
                                   pg_stat_statements_ng_report_num(d)), '' ORDER BY i)
            FROM xy)
      || '</g>'
      || (SELECT coalesce(string_agg(format('<polyline class="%s" points="%s"></polyline>', k, pts), ''), '')
            FROM (SELECT 'p50' AS k, string_agg(round(x + w * 0.4, 2) || ',' || round(ya, 2), ' ' ORDER BY i) AS pts
                    FROM xy WHERE a IS NOT NULL
                  UNION ALL
                  SELECT 'p95', string_agg(round(x + w * 0.4, 2) || ',' || round(yb, 2), ' ' ORDER BY i)
                    FROM xy WHERE b IS NOT NULL
                  UNION ALL
                  SELECT 'p99', string_agg(round(x + w * 0.4, 2) || ',' || round(yd, 2), ' ' ORDER BY i)
                    FROM xy WHERE d IS NOT NULL) AS l
           WHERE pts IS NOT NULL)
      || format('<text x="46" y="24" text-anchor="end">%s</text>'
                '<text x="46" y="194" text-anchor="end">0</text>'
                '<text x="850" y="12" text-anchor="end">%s ms</text>'
                '<text x="50" y="208">%s</text>'
                '<text x="850" y="208" text-anchor="end">%s</text>'
                '<text x="50" y="226" class="legend">bars: calls; lines: exec p50 (light), p95, p99 (dark), right scale</text>',
                m.mc, pg_stat_statements_ng_report_num(m.mp),
                to_char(m.first, 'YYYY-MM-DD HH24:MI'), to_char(m.last, 'YYYY-MM-DD HH24:MI'))
      || '</svg>'
    FROM m
$$;

-- a wait event type's colour in the report's bars
CREATE FUNCTION pg_stat_statements_ng_report_wait_color(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE t WHEN 'CPU' THEN '#4caf50' WHEN 'IO' THEN '#2196f3'
                WHEN 'Lock' THEN '#e53935' WHEN 'LWLock' THEN '#ff9800'
                WHEN 'Client' THEN '#9e9e9e' WHEN 'IPC' THEN '#8e24aa'
                WHEN 'Timeout' THEN '#795548' WHEN 'BufferPin' THEN '#00897b'
                ELSE '#607d8b' END
$$;

-- the report of [since, until): from the history's windows that start in
-- the period when there are any, else from the cumulative statistics.
-- It reads the views only, so a reader sees the texts the views show it.
-- It and the chart find the extension's objects through the search_path
-- of their creation: the extension's schema.
CREATE FUNCTION pg_stat_statements_ng_report(since timestamptz, until timestamptz)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  top_n    constant int := 20;   -- statements per top list
  max_pts  constant int := 120;  -- points per chart (windows are grouped beyond)
  plan_rows constant int := 5;   -- plan rows per section (the rest summed in one)
  nwin     bigint;
  per      bigint;
  head     text;
  info     text;
  sets     text;
  body     text;
BEGIN
  SELECT count(DISTINCT window_start) INTO nwin
    FROM pg_stat_statements_ng_history()
   WHERE window_start >= since AND window_start < until;
  per := greatest(1, ceil(nwin::numeric / max_pts))::bigint;

  head := format('<h1>pg_stat_statements_ng report</h1><table class="kv">'
                 '<tr><th>period</th><td>%s to %s</td></tr>'
                 '<tr><th>source</th><td>%s</td></tr>'
                 '<tr><th>server</th><td>%s</td></tr>'
                 '<tr><th>cluster name</th><td>%s</td></tr>'
                 '<tr><th>data as of</th><td>%s</td></tr></table>',
                 pg_stat_statements_ng_html(since::text),
                 pg_stat_statements_ng_html(until::text),
                 CASE WHEN nwin > 0
                      THEN format('%s history windows starting in the period', nwin)
                      ELSE 'cumulative statistics since the last reset: no history window covers the period' END,
                 pg_stat_statements_ng_html(version()),
                 pg_stat_statements_ng_html(current_setting('cluster_name')),
                 pg_stat_statements_ng_html(now()::text));

  SELECT format('<h2 id="info">Completeness</h2>%s<div class="figs">%s</div>',
                CASE WHEN coalesce((j->>'dealloc')::numeric, 0)
                        + coalesce((j->>'evicted_calls')::numeric, 0)
                        + coalesce((j->>'entries_refused')::numeric, 0)
                        + coalesce((j->>'texts_dropped')::numeric, 0)
                        + coalesce((j->>'counts_discarded')::numeric, 0)
                        + coalesce((j->>'dsa_failures')::numeric, 0)
                        + coalesce((j->>'history_windows_dropped')::numeric, 0)
                        + coalesce((j->>'history_windows_skipped')::numeric, 0)
                        + coalesce((j->>'history_counts_lost')::numeric, 0) > 0
                     THEN '<p class="warn">Warning: the data is incomplete. Statements were evicted or refused, texts dropped, or windows dropped (the figures below say which): totals and top lists may miss some executions.</p>'
                     ELSE '<p class="ok">No statement, text or window was lost: the data is complete.</p>' END,
                (SELECT string_agg(format('<div><span>%s</span> <b>%s</b></div>',
                                          pg_stat_statements_ng_html(key),
                                          pg_stat_statements_ng_html(value)), '')
                   FROM json_each_text(j)))
    INTO info
    FROM (SELECT to_json(i) AS j FROM pg_stat_statements_ng_info i) AS x;

  SELECT '<h2 id="settings">Settings</h2><div class="figs">'
      || coalesce(string_agg(format('<div><span>%s</span> <b>%s</b></div>',
                                    pg_stat_statements_ng_html(name),
                                    pg_stat_statements_ng_html(setting || coalesce(' ' || unit, ''))),
                             '' ORDER BY name), '')
      || '</div>'
    INTO sets
    FROM pg_settings WHERE name LIKE 'pg\_stat\_statements\_ng.%';

  WITH hist AS MATERIALIZED (
    SELECT window_start, userid, dbid, queryid, toplevel, calls, total_exec_time,
           errors + cancels + timeouts AS failures, exec_p50, exec_p95, exec_p99
      FROM pg_stat_statements_ng_history
     WHERE nwin > 0 AND window_start >= since AND window_start < until
       AND queryid IS NOT NULL
  ), texts AS MATERIALIZED (
    SELECT userid, dbid, queryid, toplevel, query
      FROM pg_stat_statements_ng WHERE queryid IS NOT NULL
  ), stats AS MATERIALIZED (
    SELECT userid, dbid, queryid, toplevel, sum(calls)::bigint AS calls,
           sum(total_exec_time) AS total, sum(failures)::bigint AS failures,
           max(exec_p99) AS p99
      FROM hist GROUP BY userid, dbid, queryid, toplevel
    UNION ALL
    SELECT userid, dbid, queryid, toplevel, calls, total_exec_time,
           errors + cancels + timeouts, exec_p99
      FROM pg_stat_statements_ng WHERE nwin = 0 AND queryid IS NOT NULL
  ), ranked AS MATERIALIZED (
    SELECT s.*, l.ord, l.list, s.total / nullif(s.calls, 0) AS mean,
           format('s%s_%s_%s_%s', s.userid, s.dbid,
                  replace(s.queryid::text, '-', 'm'), s.toplevel::int) AS anchor,
           row_number() OVER (PARTITION BY l.list
                              ORDER BY l.v DESC, s.queryid, s.userid, s.dbid, s.toplevel) AS rn
      FROM stats s
     CROSS JOIN LATERAL (VALUES (1, 'total execution time', s.total),
                                (2, 'calls', s.calls::float8),
                                (3, 'mean execution time', s.total / nullif(s.calls, 0)),
                                (4, CASE WHEN nwin > 0 THEN 'p99 (highest of a window)' ELSE 'p99' END, s.p99),
                                (5, 'failures (errors, cancels, timeouts)', nullif(s.failures, 0)::float8))
                 AS l(ord, list, v)
     WHERE l.v IS NOT NULL
  ), tops AS (
    SELECT r.*, t.query FROM ranked r
      LEFT JOIN texts t USING (userid, dbid, queryid, toplevel)
     WHERE rn <= top_n
  ), sec AS MATERIALIZED (
    SELECT DISTINCT ON (anchor) userid, dbid, queryid, toplevel, calls, total, mean,
           failures, p99, anchor, query
      FROM tops ORDER BY anchor
  ), win AS (
    SELECT ws, row_number() OVER (ORDER BY ws) AS i
      FROM (SELECT DISTINCT window_start AS ws FROM hist) AS d
  ), bk AS (
    SELECT (i - 1) / per AS b, min(ws) AS bs FROM win GROUP BY 1
  ), hb AS (
    SELECT h.userid, h.dbid, h.queryid, h.toplevel, (w.i - 1) / per AS b,
           sum(h.calls)::bigint AS c, max(h.exec_p50) AS a,
           max(h.exec_p95) AS p, max(h.exec_p99) AS d
      FROM hist h JOIN win w ON w.ws = h.window_start
      JOIN sec USING (userid, dbid, queryid, toplevel)
     GROUP BY 1, 2, 3, 4, 5
  ), charts AS (
    SELECT sec.anchor,
           pg_stat_statements_ng_report_chart(array_agg(bk.bs ORDER BY bk.b),
                                              array_agg(coalesce(hb.c, 0) ORDER BY bk.b),
                                              array_agg(hb.a ORDER BY bk.b),
                                              array_agg(hb.p ORDER BY bk.b),
                                              array_agg(hb.d ORDER BY bk.b)) AS svg
      FROM sec CROSS JOIN bk
      LEFT JOIN hb ON hb.userid = sec.userid AND hb.dbid = sec.dbid
                  AND hb.queryid = sec.queryid AND hb.toplevel = sec.toplevel
                  AND hb.b = bk.b
     GROUP BY sec.anchor
  ), hw AS MATERIALIZED (
    SELECT h.window_start, h.userid, h.dbid, h.queryid, h.wait_event_type,
           h.wait_event, h.samples, h.est_time_ms
      FROM pg_stat_statements_ng_history_waits h
     WHERE nwin > 0 AND h.window_start >= since AND h.window_start < until
       AND h.queryid IS NOT NULL
  ), wr0 AS (
    SELECT sec.anchor, h.wait_event_type, h.wait_event,
           sum(h.samples)::bigint AS samples, sum(h.est_time_ms) AS est_time_ms
      FROM sec JOIN hw h
        ON h.userid = sec.userid AND h.dbid = sec.dbid AND h.queryid = sec.queryid
     WHERE sec.toplevel
     GROUP BY 1, 2, 3
    UNION ALL
    SELECT sec.anchor, w.wait_event_type, w.wait_event, w.samples, w.est_time_ms
      FROM sec JOIN pg_stat_statements_ng_waits w
        ON w.userid = sec.userid AND w.dbid = sec.dbid AND w.queryid = sec.queryid
     WHERE nwin = 0 AND sec.toplevel AND w.samples > 0
  ), wr AS (
    SELECT wr0.*, sum(wr0.samples) OVER (PARTITION BY wr0.anchor) AS total
      FROM wr0
  ), wb AS (
    SELECT sec.anchor, (w.i - 1) / per AS b, h.wait_event_type AS t,
           sum(h.samples)::bigint AS n
      FROM sec JOIN hw h
        ON h.userid = sec.userid AND h.dbid = sec.dbid AND h.queryid = sec.queryid
      JOIN win w ON w.ws = h.window_start
     WHERE sec.toplevel
     GROUP BY 1, 2, 3
  ), ws AS (
    SELECT wb.*, bk.bs, (SELECT count(*) FROM bk) AS nb,
           sum(n) OVER (PARTITION BY anchor, b ORDER BY t) AS cum,
           sum(n) OVER (PARTITION BY anchor, b) AS bt
      FROM wb JOIN bk USING (b)
  ), wsc AS (
    SELECT ws.*, max(bt) OVER (PARTITION BY anchor) AS mx FROM ws
  ), wcharts AS (
    SELECT anchor,
           '<svg class="waits" viewBox="0 0 900 150" width="900" height="150">'
        || '<title>wait samples per window, by wait event type</title>'
        || '<line class="axis" x1="50" y1="120" x2="850" y2="120"></line>'
        || string_agg(format('<rect x="%s" y="%s" width="%s" height="%s" fill="%s">'
                             '<title>%s: %s, %s samples</title></rect>',
                             round(50 + b * 800.0 / nb, 2), round(120 - 100.0 * cum / mx, 2),
                             round(greatest(800.0 / nb * 0.8, 0.5), 2), round(100.0 * n / mx, 2),
                             pg_stat_statements_ng_report_wait_color(t),
                             pg_stat_statements_ng_html(to_char(bs, 'YYYY-MM-DD HH24:MI:SS')),
                             pg_stat_statements_ng_html(t), n), '' ORDER BY b, t)
        || format('<text x="46" y="24" text-anchor="end">%s</text>'
                  '<text x="46" y="124" text-anchor="end">0</text>'
                  '<text x="50" y="142" class="legend">samples per window: %s</text></svg>',
                  max(mx),
                  string_agg(DISTINCT format('<tspan fill="%s">&#9632; %s</tspan> ',
                                             pg_stat_statements_ng_report_wait_color(t),
                                             pg_stat_statements_ng_html(t)), ''))
           AS svg
      FROM wsc
     GROUP BY anchor
  ), waits AS (
    SELECT w.anchor,
           max(w.total) AS total,
           string_agg(format('<span class="w" style="width:%s%%;background:%s" title="%s: %s samples, %s ms"></span>',
                             round(100.0 * w.samples / w.total, 2),
                             pg_stat_statements_ng_report_wait_color(w.wait_event_type),
                             pg_stat_statements_ng_html(w.wait_event_type || ' / ' || w.wait_event),
                             w.samples, round(w.est_time_ms::numeric, 1)),
                      '' ORDER BY w.samples DESC, w.wait_event_type, w.wait_event) AS bar,
           string_agg(format('<li>%s / %s: %s samples, about %s ms</li>',
                             pg_stat_statements_ng_html(w.wait_event_type),
                             pg_stat_statements_ng_html(w.wait_event),
                             w.samples, round(w.est_time_ms::numeric, 1)),
                      '' ORDER BY w.samples DESC, w.wait_event_type, w.wait_event) AS list
      FROM wr AS w
     GROUP BY w.anchor
  ), pl AS (
    -- each section's plans in the period: the windows' plan rows, or the
    -- cumulative ones without windows; most calls first, numbered
    SELECT sec.anchor, sec.calls AS scalls, p.*,
           row_number() OVER (PARTITION BY sec.anchor
                              ORDER BY p.calls DESC, p.planid NULLS LAST) AS rn,
           count(*) OVER (PARTITION BY sec.anchor) AS n,
           bool_or(p.planid IS NULL) OVER (PARTITION BY sec.anchor) AS other
      FROM sec JOIN (
             SELECT h.userid, h.dbid, h.queryid, h.toplevel, h.planid,
                    sum(h.calls)::bigint AS calls, sum(h.total_exec_time) AS total,
                    min(h.window_start) AS first, max(h.window_start) AS last
               FROM pg_stat_statements_ng_history_plans h
              WHERE nwin > 0 AND h.window_start >= since AND h.window_start < until
                AND h.queryid IS NOT NULL
              GROUP BY 1, 2, 3, 4, 5
             UNION ALL
             SELECT c.userid, c.dbid, c.queryid, c.toplevel, c.planid, c.calls,
                    c.total_exec_time, c.first_seen, c.last_seen
               FROM pg_stat_statements_ng_plans c
              WHERE nwin = 0 AND c.queryid IS NOT NULL) AS p
        USING (userid, dbid, queryid, toplevel)
  ), pgrp AS (
    -- at most plan_rows rows: the plans beyond them summed in one
    SELECT anchor, least(rn, plan_rows + 1) AS k,
           max(userid) AS userid, max(dbid) AS dbid, max(queryid) AS queryid,
           bool_or(toplevel) AS toplevel, max(planid) AS planid,
           count(*) AS rows_in, max(n) AS n, bool_or(other) AS other,
           sum(calls)::bigint AS calls, sum(total) AS total, max(scalls) AS scalls,
           min(first) AS first, max(last) AS last
      FROM pl
     GROUP BY anchor, least(rn, plan_rows + 1)
  ), plans AS (
    SELECT pgrp.anchor, max(pgrp.n) AS n, bool_or(pgrp.other) AS other,
           string_agg(format('<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
                             '<td>%s</td><td>%s</td><td>%s</td></tr>',
                             CASE WHEN pgrp.k > plan_rows THEN format('%s more plans', pgrp.rows_in)
                                  WHEN pgrp.planid IS NULL THEN 'other'
                                  ELSE pgrp.planid::text END,
                             pgrp.calls,
                             pg_stat_statements_ng_report_num(pgrp.total / nullif(pgrp.calls, 0)),
                             coalesce(round(100.0 * pgrp.calls / nullif(pgrp.scalls, 0), 1) || '%', '-'),
                             pg_stat_statements_ng_html(to_char(pgrp.first, 'YYYY-MM-DD HH24:MI:SS')),
                             pg_stat_statements_ng_html(to_char(pgrp.last, 'YYYY-MM-DD HH24:MI:SS')),
                             CASE WHEN t.plan IS NULL THEN ''
                                  ELSE '<details><summary>plan</summary><pre>'
                                    || pg_stat_statements_ng_html(t.plan) || '</pre></details>' END),
                      '' ORDER BY pgrp.k) AS tbl
      FROM pgrp
      LEFT JOIN pg_stat_statements_ng_plans t
        ON pgrp.k <= plan_rows AND t.userid = pgrp.userid AND t.dbid = pgrp.dbid
       AND t.queryid = pgrp.queryid AND t.toplevel = pgrp.toplevel AND t.planid = pgrp.planid
     GROUP BY pgrp.anchor
  )
  SELECT '<h2 id="top">Top statements</h2>'
      || coalesce((SELECT string_agg(tbl, '' ORDER BY ord) FROM (
           SELECT ord, format('<h3>By %s</h3><table class="top"><tr><th>#</th><th>calls</th>'
                              '<th>total ms</th><th>mean ms</th><th>p99 ms</th><th>failures</th>'
                              '<th>statement</th></tr>%s</table>',
                              list,
                              string_agg(format('<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
                                                '<td>%s</td><td>%s</td><td><a href="#%s">%s</a>%s</td></tr>',
                                                rn, calls, pg_stat_statements_ng_report_num(total),
                                                pg_stat_statements_ng_report_num(mean),
                                                pg_stat_statements_ng_report_num(p99), failures, anchor,
                                                pg_stat_statements_ng_html(coalesce(left(query, 100),
                                                                                    '(no text)')),
                                                CASE WHEN p.n > 1
                                                     THEN format(' <span class="nplans">%s%s plans</span>',
                                                                 p.n, CASE WHEN p.other THEN '+' ELSE '' END)
                                                     ELSE '' END),
                                         '' ORDER BY rn)) AS tbl
             FROM tops LEFT JOIN plans p USING (anchor) GROUP BY ord, list) AS t),
           '<p>No statement was counted in the period.</p>')
      || '<h2 id="statements">Statements</h2>'
      || coalesce((SELECT string_agg(format(
             '<section id="%s"><h3>queryid %s</h3><p class="who">user %s, database %s%s</p>'
             '<pre>%s</pre><table class="kv"><tr><th>calls</th><td>%s</td></tr>'
             '<tr><th>total execution time</th><td>%s ms</td></tr>'
             '<tr><th>mean execution time</th><td>%s ms</td></tr>'
             '<tr><th>p99</th><td>%s ms</td></tr>'
             '<tr><th>failures</th><td>%s</td></tr></table>%s%s%s'
             '<p><a href="#top">back to the top lists</a></p></section>',
             sec.anchor, sec.queryid,
             pg_stat_statements_ng_html(pg_get_userbyid(sec.userid)::text),
             pg_stat_statements_ng_html((SELECT datname FROM pg_database WHERE oid = sec.dbid)::text),
             CASE WHEN sec.toplevel THEN '' ELSE ', nested' END,
             pg_stat_statements_ng_html(coalesce(sec.query, '(no text)')),
             sec.calls, pg_stat_statements_ng_report_num(sec.total),
             pg_stat_statements_ng_report_num(sec.mean),
             pg_stat_statements_ng_report_num(sec.p99), sec.failures,
             CASE WHEN p.anchor IS NULL
                  THEN '<h4>Plans</h4><p class="note">No plan was counted for this statement in the period (a utility statement, or track_plans off).</p>'
                  ELSE format('<h4>Plans</h4><table class="plans"><tr><th>planid</th><th>calls</th>'
                              '<th>mean ms</th><th>share of calls</th><th>%s</th><th>%s</th>'
                              '<th>plan text</th></tr>%s</table>',
                              CASE WHEN nwin > 0 THEN 'first window' ELSE 'first seen' END,
                              CASE WHEN nwin > 0 THEN 'last window' ELSE 'last seen' END,
                              p.tbl) END,
             CASE WHEN nwin > 0
                  THEN '<h4>Per window</h4>' || coalesce(c.svg, '')
                  ELSE '<p class="note">No history window covers the period: the figures are cumulative since the last reset.</p>' END,
             CASE WHEN NOT sec.toplevel THEN ''
                  WHEN w.anchor IS NULL AND nwin > 0
                  THEN '<h4>Waits</h4><p class="note">No wait sample for this statement in the windows that kept it.</p>'
                  WHEN w.anchor IS NULL THEN '<h4>Waits</h4><p class="note">No wait sample for this statement.</p>'
                  ELSE format('<h4>Waits (%s samples %s)</h4><div class="bar">%s</div><ul class="waits">%s</ul>%s',
                              w.total,
                              CASE WHEN nwin > 0 THEN 'in the period''s windows' ELSE 'since the last reset' END,
                              w.bar, w.list, coalesce(wc.svg, '')) END),
           '' ORDER BY sec.total DESC NULLS LAST, sec.anchor)
             FROM sec LEFT JOIN charts c USING (anchor) LEFT JOIN waits w USING (anchor)
             LEFT JOIN wcharts wc USING (anchor) LEFT JOIN plans p USING (anchor)),
           '')
    INTO body;

  RETURN '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
      || '<title>pg_stat_statements_ng report</title><style>'
      || 'body{font:14px/1.4 sans-serif;margin:2em;color:#222;max-width:1100px}'
      || 'table{border-collapse:collapse;margin:.5em 0}'
      || 'th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}'
      || 'table.top td:nth-child(-n+6){text-align:right;white-space:nowrap}'
      || 'table.plans td:nth-child(-n+4){text-align:right;white-space:nowrap}'
      || '.nplans{background:#fff3e0;border:1px solid #f57c00;padding:0 4px;white-space:nowrap}'
      || 'pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.5em;border:1px solid #ddd}'
      || 'section{border-top:2px solid #888;margin-top:1.5em;page-break-inside:avoid}'
      || '.warn{background:#fdecea;border:1px solid #e53935;padding:.5em}'
      || '.ok{background:#e8f5e9;border:1px solid #4caf50;padding:.5em}'
      || '.note{color:#555;font-style:italic}'
      || '.figs{columns:3 18em;font-size:13px}.figs div{break-inside:avoid}.figs span{color:#555}'
      || '.bar{display:flex;width:600px;height:18px;border:1px solid #999}'
      || '.bar .w{display:block;height:100%}'
      || 'svg.chart text,svg.waits text{font-size:11px;fill:#333}'
      || 'svg.waits .axis{stroke:#333}'
      || 'svg.chart .calls rect{fill:#90caf9}'
      || 'svg.chart .axis{stroke:#333}'
      || 'svg.chart polyline{fill:none;stroke-width:1.5}'
      || 'svg.chart .p50{stroke:#ffb74d}svg.chart .p95{stroke:#f57c00}svg.chart .p99{stroke:#b71c1c}'
      || '@media print{body{margin:0}a{color:inherit;text-decoration:none}}'
      || '</style></head><body>'
      || head || info || body || sets
      || '</body></html>';
END;
$$;

-- ---- the report (end) ----

-- ---- texts once: the texts of chosen statements (begin) ----

-- the texts of the entries with these queryids, each with its
-- text_stored_at (a stamp no other text of the run has)
CREATE FUNCTION pg_stat_statements_ng_texts(IN queryids bigint[],
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT toplevel bool,
    OUT query text,
    OUT text_stored_at timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_texts_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- ---- texts once (end) ----

-- ---- the history's wait samples: each window's waits (begin) ----

-- every wait row of every closed window, oldest window first: per statement
-- the window keeps and wait event, its samples; the other statements'
-- samples per wait event in rows with userid, dbid and queryid NULL
CREATE FUNCTION pg_stat_statements_ng_history_waits(
    OUT window_start timestamp with time zone,
    OUT window_end timestamp with time zone,
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT wait_event_type text,
    OUT wait_event text,
    OUT samples bigint,
    OUT est_time_ms float8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_history_waits_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_ng_history_waits AS
  SELECT * FROM pg_stat_statements_ng_history_waits();

GRANT SELECT ON pg_stat_statements_ng_history_waits TO PUBLIC;

-- ---- the history's wait samples (end) ----

-- ---- fingerprint: one per statement on every server and major (begin) ----

-- the fingerprint of a normalized text: the same for the same statement on
-- every server and major (README states its rules)
CREATE FUNCTION pg_stat_statements_ng_fingerprint(query text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_fingerprint_1_2'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE COST 1000;

-- the statements function and view gain it as their last column, cached
-- with each text; the view is kept (objects that depend on it stay), its
-- function replaced
CREATE FUNCTION pg_stat_statements_ng_1_2(IN showtext boolean,
    OUT userid oid,
    OUT dbid oid,
    OUT toplevel bool,
    OUT queryid bigint,
    OUT query text,
    OUT plans int8,
    OUT total_plan_time float8,
    OUT min_plan_time float8,
    OUT max_plan_time float8,
    OUT mean_plan_time float8,
    OUT stddev_plan_time float8,
    OUT calls int8,
    OUT total_exec_time float8,
    OUT min_exec_time float8,
    OUT max_exec_time float8,
    OUT mean_exec_time float8,
    OUT stddev_exec_time float8,
    OUT rows int8,
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
    OUT wal_bytes numeric,
    OUT wal_buffers_full int8,
    OUT jit_functions int8,
    OUT jit_generation_time float8,
    OUT jit_inlining_count int8,
    OUT jit_inlining_time float8,
    OUT jit_optimization_count int8,
    OUT jit_optimization_time float8,
    OUT jit_emission_count int8,
    OUT jit_emission_time float8,
    OUT jit_deform_count int8,
    OUT jit_deform_time float8,
    OUT parallel_workers_to_launch int8,
    OUT parallel_workers_launched int8,
    OUT stats_since timestamp with time zone,
    OUT minmax_stats_since timestamp with time zone,
    OUT errors int8,
    OUT cancels int8,
    OUT timeouts int8,
    OUT failed_exec_time float8,
    OUT last_executed_at timestamp with time zone,
    OUT text_stored_at timestamp with time zone,
    OUT exec_p50 float8,
    OUT exec_p95 float8,
    OUT exec_p99 float8,
    OUT plan_p50 float8,
    OUT plan_p95 float8,
    OUT plan_p99 float8,
    OUT fingerprint bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE OR REPLACE VIEW pg_stat_statements_ng AS
  SELECT * FROM pg_stat_statements_ng_1_2(true) s;

DROP FUNCTION pg_stat_statements_ng(boolean);
ALTER FUNCTION pg_stat_statements_ng_1_2(boolean) RENAME TO pg_stat_statements_ng;

-- ---- fingerprint (end) ----

-- ---- failed executions by SQLSTATE (begin) ----

-- each statement's failures by SQLSTATE: its first 4 SQLSTATEs apart, the
-- rest in one row whose sqlstate is NULL; no error message is kept
CREATE FUNCTION pg_stat_statements_ng_errors(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT toplevel bool,
    OUT sqlstate text,
    OUT errors bigint,
    OUT last_error_at timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_errors_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_ng_errors AS
  SELECT * FROM pg_stat_statements_ng_errors();

GRANT SELECT ON pg_stat_statements_ng_errors TO PUBLIC;

-- ---- failed executions by SQLSTATE (end) ----

-- ---- plan identity: what each process runs now, with its plan's id (begin) ----

-- each process running a counted top-level statement: its queryid and the
-- id of its plan's shape (NULL while none is known)
CREATE FUNCTION pg_stat_statements_ng_activity(
    OUT pid int4,
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT planid bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_activity_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_ng_activity AS
  SELECT * FROM pg_stat_statements_ng_activity();

GRANT SELECT ON pg_stat_statements_ng_activity TO PUBLIC;

-- ---- plan identity (end) ----

-- ---- plan statistics: calls, times and rows per (statement, plan) (begin) ----

-- a row per plan of each statement (planid NULL: the plans beyond
-- plans_per_statement, together); joins to pg_stat_statements_ng on
-- (userid, dbid, queryid, toplevel)
CREATE FUNCTION pg_stat_statements_ng_plans(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT toplevel bool,
    OUT planid bigint,
    OUT calls bigint,
    OUT total_exec_time float8,
    OUT min_exec_time float8,
    OUT max_exec_time float8,
    OUT mean_exec_time float8,
    OUT rows bigint,
    OUT first_seen timestamp with time zone,
    OUT last_seen timestamp with time zone,
    OUT plan text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_plans_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_ng_plans AS
  SELECT * FROM pg_stat_statements_ng_plans();

GRANT SELECT ON pg_stat_statements_ng_plans TO PUBLIC;

-- ---- plan statistics (end) ----

-- ---- the history's plans: each window's calls per plan (begin) ----

-- every plan row of every closed window, oldest window first: for each
-- statement a window keeps, one row per plan executed in the window (planid
-- NULL: the plans beyond plans_per_statement, together), with the plan's
-- calls, exec time and rows in it; joins to pg_stat_statements_ng_history on
-- (window_start, userid, dbid, queryid, toplevel)
CREATE FUNCTION pg_stat_statements_ng_history_plans(
    OUT window_start timestamp with time zone,
    OUT window_end timestamp with time zone,
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT toplevel bool,
    OUT planid bigint,
    OUT calls int8,
    OUT total_exec_time float8,
    OUT rows int8
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_stat_statements_ng_history_plans_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_ng_history_plans AS
  SELECT * FROM pg_stat_statements_ng_history_plans();

GRANT SELECT ON pg_stat_statements_ng_history_plans TO PUBLIC;

-- ---- the history's plans (end) ----

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
    s.query,
    s.fingerprint
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
