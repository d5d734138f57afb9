# Plan statistics: pg_stat_statements_ng_plans, a row per (statement, plan).
# Exact: a statement's plan rows add up to its calls, whether their counts
# are folded into the entry or still in a backend's slot; a plan flip, a
# prepared statement's generic plan after custom ones, partition pruning, a
# parallel plan, a CTE and nested statements each show their plans; utility
# statements have none; the plans beyond plans_per_statement are counted in
# one row of planid NULL; resets remove and clear plan rows; with
# track_plans off a statement has no plan row.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('plans');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements_ng'
pg_stat_statements_ng.plans_per_statement = 3
max_worker_processes = 8
max_parallel_workers = 4
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements_ng;
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t SELECT g, g FROM generate_series(1, 10000) g;
CREATE TABLE p (k int, v int) PARTITION BY LIST (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1);
CREATE TABLE p2 PARTITION OF p FOR VALUES IN (2);
CREATE TABLE p3 PARTITION OF p FOR VALUES IN (3);
CREATE TABLE p4 PARTITION OF p FOR VALUES IN (4);
CREATE TABLE p5 PARTITION OF p FOR VALUES IN (5);
INSERT INTO p SELECT 1 + g % 5, g FROM generate_series(1, 1000) g;
VACUUM ANALYZE t;
VACUUM ANALYZE p;
CREATE FUNCTION f() RETURNS bigint LANGUAGE plpgsql AS
$$BEGIN RETURN (SELECT count(*) FROM t WHERE v < 7); END$$;
SELECT pg_stat_statements_ng_reset();
});

# the plan rows of the statement whose text is $query: "planid-or-other:calls"
# (planid shown as "p", NULL as "other"), most calls first; and the sum of
# their calls and the statement's calls
my $bg_pid = 0;
sub plans_of
{
	my ($query, $toplevel) = @_;
	$toplevel //= 'true';
	# a session's plan texts are installed by its slots' fold at its exit:
	# wait for the sessions that ran the workload to have exited (the
	# counts are exact before, the texts only after)
	$node->poll_query_until('postgres', qq{
SELECT count(*) = 0 FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
   AND pid <> $bg_pid}) or die 'a session did not exit';
	my $q = $query =~ s/'/''/gr;
	return $node->safe_psql('postgres', qq{
SELECT string_agg(CASE WHEN p.planid IS NULL THEN 'other' ELSE 'p' END
                  || ':' || p.calls || CASE WHEN p.plan IS NULL THEN '' ELSE ':text' END,
                  ' ' ORDER BY p.planid IS NULL, p.calls DESC),
       sum(p.calls), min(s.calls)
FROM pg_stat_statements_ng s
JOIN pg_stat_statements_ng_plans p USING (userid, dbid, queryid, toplevel)
WHERE s.query = '$q' AND s.toplevel = $toplevel});
}

my $flip = 'SELECT count(*) FROM t WHERE id < $1';
my $off = 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';
my $on = 'RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan;';

# the premise: index scans on and off give two shapes
like($node->safe_psql('postgres', "EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE id < 10"),
	qr/Index Only Scan/, 'the index is chosen');
like($node->safe_psql('postgres', "$off EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE id < 10"),
	qr/Seq Scan/, 'index scans off: a sequential scan');

# a plan flip: 30 executions without index scans, 20 with
$node->safe_psql('postgres',
	$off . ("SELECT count(*) FROM t WHERE id < 10;\n" x 30) . $on .
	  ("SELECT count(*) FROM t WHERE id < 10;\n" x 20));
is(plans_of($flip), 'p:30:text p:20:text|50|50', 'a plan flip: two plans, 30 and 20 calls');
# each plan's text: EXPLAIN without costs, the constant replaced
is($node->safe_psql('postgres', qq{
SELECT string_agg(p.plan, E'\n--\n' ORDER BY p.calls DESC)
FROM pg_stat_statements_ng s
JOIN pg_stat_statements_ng_plans p USING (userid, dbid, queryid, toplevel)
WHERE s.query = 'SELECT count(*) FROM t WHERE id < \$1'}),
	'Aggregate
  ->  Seq Scan on t
        Filter: (id < $1)
--
Aggregate
  ->  Index Only Scan using t_pkey on t
        Index Cond: (id < $1)', 'a plan flip: each plan\'s text, its constant replaced');

# exact while another session's counts are in its slot: a session that
# stays open and idle keeps them there (no fold)
my $bg = $node->background_psql('postgres');
$bg_pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_safe("$on SELECT count(*) FROM t WHERE id < 10;") for 1 .. 7;
is(plans_of($flip), 'p:30:text p:27:text|57|57',
	'another session\'s counts in its slot, not folded: read exactly');
$bg->query_safe("$off SELECT count(*) FROM t WHERE id < 10;") for 1 .. 2;
is(plans_of($flip), 'p:32:text p:27:text|59|59',
	'that session\'s plan flips: its slot folds, exact');
$bg->quit;

# a prepared statement on a partitioned table: 5 custom plans (one
# partition scanned), then the generic plan (an Append pruned at run time)
my $prep = 'PREPARE q(int) AS SELECT count(*) FROM p WHERE k = $1';
$node->safe_psql('postgres', q{
SET plan_cache_mode = force_custom_plan;
PREPARE q(int) AS SELECT count(*) FROM p WHERE k = $1;
EXECUTE q(1); EXECUTE q(1); EXECUTE q(1); EXECUTE q(1); EXECUTE q(1);
SET plan_cache_mode = force_generic_plan;
EXECUTE q(1); EXECUTE q(1); EXECUTE q(1);
});
is(plans_of($prep), 'p:5:text p:3:text|8|8',
	'a prepared statement: 5 custom plans, then 3 of the generic plan');

# partition pruning: each constant scans its own partition, another plan
# each; with plans_per_statement = 3, the 4th and 5th go to "other"
my $prune = 'SELECT count(v) FROM p WHERE k = $1';
$node->safe_psql('postgres', join('', map {
	my $k = $_; "SELECT count(v) FROM p WHERE k = $k;\n" x $k } 1 .. 5));
is(plans_of($prune), 'p:3:text p:2:text p:1:text other:9|15|15',
	'partition pruning: a plan per partition, beyond 3 in "other"');

# a parallel plan
my $par_setup = q{SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;};
like($node->safe_psql('postgres',
		"$par_setup EXPLAIN (COSTS OFF) SELECT sum(v) FROM t WHERE v > 5"),
	qr/Gather/, 'the premise: a parallel plan');
$node->safe_psql('postgres',
	$par_setup . ("SELECT sum(v) FROM t WHERE v > 5;\n" x 4));
is(plans_of('SELECT sum(v) FROM t WHERE v > $1'), 'p:4:text|4|4',
	'a parallel plan: one plan row');

# a CTE
$node->safe_psql('postgres',
	"WITH c AS MATERIALIZED (SELECT id FROM t WHERE id < 10) SELECT count(*) FROM c;\n" x 3);
is(plans_of('WITH c AS MATERIALIZED (SELECT id FROM t WHERE id < $1) SELECT count(*) FROM c'),
	'p:3:text|3|3', 'a CTE: one plan row');

# nested statements under track = all: each its own plan row
$node->safe_psql('postgres',
	"SET pg_stat_statements_ng.track = 'all';\n" . ("SELECT f();\n" x 3));
is(plans_of('SELECT f()'), 'p:3:text|3|3', 'the top-level statement: its plan');
is(plans_of('(SELECT count(*) FROM t WHERE v < $1)', 'false'),
	'p:3:text|3|3', 'the nested statement: its plan');

# utility statements: no plan row
$node->safe_psql('postgres', "VACUUM t;\nVACUUM t;");
is($node->safe_psql('postgres', q{
SELECT s.calls, (SELECT count(*) FROM pg_stat_statements_ng_plans p
                 WHERE p.queryid = s.queryid)
FROM pg_stat_statements_ng s WHERE s.query = 'VACUUM t'}),
	'2|0', 'a utility statement: counted, no plan row');

# track_plans off: counted in the statement, in no plan row
$node->safe_psql('postgres', "SET pg_stat_statements_ng.track_plans = off;\n"
	  . ("SELECT count(*) FROM t WHERE v > 3;\n" x 3));
is($node->safe_psql('postgres', q{
SELECT s.calls, (SELECT count(*) FROM pg_stat_statements_ng_plans p
                 WHERE p.queryid = s.queryid)
FROM pg_stat_statements_ng s WHERE s.query = 'SELECT count(*) FROM t WHERE v > $1'}),
	'3|0', 'track_plans off: counted, no plan row');

# every plan row but "other" has its text, and no text holds a constant
# the statements above ran with (10, 5, 7, 3 and 1 to 5 as whole words, or
# a quoted literal); nothing lost
is($node->safe_psql('postgres', q{SELECT count(*) FILTER (WHERE plan IS NULL),
       count(*) FILTER (WHERE planid IS NULL AND plan IS NOT NULL),
       string_agg(plan, E'\n--\n') FILTER (WHERE bare ~ '''' OR
                                       bare ~ '(^|[^$\w])(10|[1-7])\M')
FROM (SELECT planid, plan,
             regexp_replace(regexp_replace(plan,
                 '^ *(Workers Planned|Subplans Removed): \d+$', '', 'gn'),
                 '(SubPlan|InitPlan) \d+', '', 'g') AS bare
      FROM pg_stat_statements_ng_plans) p
WHERE planid IS NOT NULL}), '0|0|',
	'every plan has its text, without a constant (but properties and subplans\' numbers)');
# the two plans in "other" (partitions 4 and 5) have no text: counted once
# each, when their slot began them, without making it
is($node->safe_psql('postgres', q{SELECT plan_texts_dropped FROM pg_stat_statements_ng_info}),
	'2', 'a text for each plan without a record of its own: dropped');
is($node->safe_psql('postgres', q{SELECT plan_calls_lost FROM pg_stat_statements_ng_info}),
	'0', 'no plan calls lost');

# another user's rows: no queryid, planid or text without pg_read_all_stats
$node->safe_psql('postgres', q{
CREATE ROLE r1 LOGIN; CREATE ROLE r2 LOGIN;
SET ROLE r1; SELECT 41 + 1; RESET ROLE;});
my $other = q{SELECT count(*), count(queryid), count(planid), count(plan)
FROM pg_stat_statements_ng_plans WHERE userid = 'r1'::regrole};
is($node->safe_psql('postgres', "SET ROLE r2; $other"), '1|0|0|0',
	'another user\'s plan row: no queryid, planid or text');
is($node->safe_psql('postgres', "SET ROLE r1; $other"), '1|1|1|1',
	'its own plan row: queryid, planid and text');

# a min/max reset clears the plans' min/max, keeps their calls
my $qid = $node->safe_psql('postgres', qq{
SELECT queryid FROM pg_stat_statements_ng WHERE query = 'SELECT count(*) FROM t WHERE id < \$1'});
$node->safe_psql('postgres', "SELECT pg_stat_statements_ng_reset(0, 0, $qid, true)");
is($node->safe_psql('postgres', qq{
SELECT string_agg(calls || ':' || (min_exec_time = 0 AND max_exec_time = 0), ' '
                  ORDER BY calls DESC)
FROM pg_stat_statements_ng_plans WHERE queryid = $qid}),
	'32:true 27:true', 'a min/max reset: plan min/max cleared, calls kept');

# a statement's reset removes its plan rows, and no other's
$node->safe_psql('postgres', "SELECT pg_stat_statements_ng_reset(0, 0, $qid)");
is($node->safe_psql('postgres', qq{
SELECT count(*) FROM pg_stat_statements_ng_plans WHERE queryid = $qid}),
	'0', 'a statement\'s reset removes its plan rows');
is(plans_of($prep), 'p:5:text p:3:text|8|8', 'another statement keeps its plan rows');

# a full reset removes them all (but its own, counted after it)
$node->safe_psql('postgres', "SELECT pg_stat_statements_ng_reset()");
is($node->safe_psql('postgres', q{
SELECT string_agg(s.query || ':' || p.calls, ' ')
FROM pg_stat_statements_ng_plans p
LEFT JOIN pg_stat_statements_ng s USING (userid, dbid, queryid, toplevel)}),
	'SELECT pg_stat_statements_ng_reset():1',
	'a full reset removes every plan row');

$node->stop;
done_testing();
