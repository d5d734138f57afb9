# Plan statistics across restarts: a clean restart brings every row of
# pg_stat_statements_ng_plans back as it was (every column, texts
# included), and a statement's plan rows still add up to its calls; a
# crash (an immediate stop) starts empty.  Restored under lower bounds:
# with plans_per_statement lowered, the saved plans beyond it are counted
# in their statement's "other" row (their texts dropped, counted in
# plan_texts_dropped), with one LOG line; with plan_text_memory lowered,
# the texts that do not fit are dropped and counted; with track_plans off,
# the saved plans are kept.  A dump of the previous format (6, without
# plans) still restores its statements, with no plan rows.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgNode;
use NgPersist;

# the test's own reads are not counted: only the workload (ng_tracked) is
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $node = ng_init_node('plans_persist', @NG_SMALL,
	'pg_stat_statements_ng.plans_per_statement' => '2');
ng_start($node) or die 'the server did not start';
my $stat = $node->data_dir . '/' . $STAT_FILE;

$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements_ng;
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t SELECT g, g FROM generate_series(1, 10000) g;
VACUUM ANALYZE t;
SELECT pg_stat_statements_ng_reset();
});

my $flip = 'SELECT count(*) FROM t WHERE id < $1';

# three plans of one statement: 5 index-only scans, 3 sequential scans,
# 2 index scans (the third plan: "other", with plans_per_statement = 2)
sub workload
{
	ng_tracked($node, 'postgres',
		join('', map { "SELECT count(*) FROM t WHERE id < $_;\n" } 1 .. 5));
	ng_tracked($node, 'postgres',
		'SET enable_indexscan = off; SET enable_indexonlyscan = off; '
		  . 'SET enable_bitmapscan = off;'
		  . join('', map { "SELECT count(*) FROM t WHERE id < $_;\n" } 1 .. 3));
	ng_tracked($node, 'postgres',
		'SET enable_indexonlyscan = off; SET enable_bitmapscan = off; '
		  . 'SET enable_seqscan = off;'
		  . join('', map { "SELECT count(*) FROM t WHERE id < $_;\n" } 1 .. 2));
}

# the texts are installed by a session's fold at its exit: wait for the
# sessions of the workload to be gone
sub sessions_gone
{
	$node->poll_query_until('postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()})
	  or die 'a session did not exit';
}

# every row of the plans view, every column, in a fixed order
my $all_rows = q{
SELECT p.* FROM pg_stat_statements_ng_plans p
 ORDER BY queryid, toplevel, planid NULLS LAST};

# the flip statement's rows: kind:calls:text?
sub flip_rows
{
	return $node->safe_psql('postgres', qq{
SELECT string_agg(CASE WHEN p.planid IS NULL THEN 'other' ELSE 'p' END
                  || ':' || p.calls || CASE WHEN p.plan IS NULL THEN '' ELSE ':text' END,
                  ' ' ORDER BY p.planid IS NULL, p.calls DESC)
FROM pg_stat_statements_ng s
JOIN pg_stat_statements_ng_plans p USING (userid, dbid, queryid, toplevel)
WHERE s.query = '$flip'});
}

# statements whose plan rows do not add up to their calls
my $not_adding_up = q{
SELECT count(*) FROM pg_stat_statements_ng s
  JOIN (SELECT userid, dbid, queryid, toplevel, sum(calls) AS c
          FROM pg_stat_statements_ng_plans GROUP BY 1, 2, 3, 4) p
 USING (userid, dbid, queryid, toplevel)
 WHERE p.c <> s.calls};

sub restart_restored
{
	my ($how) = @_;
	$node->stop($how // 'fast');
	ok(-e $stat, 'the clean stop saved the file');
	my $off = log_mark($node);
	ng_start($node) or die 'the server did not start';
	$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/,
		$off);
	return $off;
}

# --- a clean restart: every row back as it was --------------------------------

workload();
sessions_gone();
is(flip_rows(), 'p:5:text p:3:text other:2',
	'the statement has two plans with texts and an "other" row');
$node->safe_psql('postgres', qq{CREATE TABLE before AS $all_rows});
my $before = $node->safe_psql('postgres', $all_rows);
my $figures = q{SELECT plan_texts_dropped, plan_calls_lost, plan_text_memory_used
  FROM pg_stat_statements_ng_info};
my $figures_before = $node->safe_psql('postgres', $figures);
is($node->safe_psql('postgres', $not_adding_up), '0',
	'before: every statement\'s plan rows add up to its calls');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM before'), '>=', 3,
	'before: plan rows of the workload');

my $off = restart_restored();
is($node->safe_psql('postgres', $all_rows), $before,
	'after a clean restart the plans view is as it was (every column, texts)');
is($node->safe_psql('postgres', qq{
SELECT count(*) FROM ((TABLE before EXCEPT ALL TABLE pg_stat_statements_ng_plans)
  UNION ALL (TABLE pg_stat_statements_ng_plans EXCEPT ALL TABLE before)) d}), '0',
	'and no row differs from the one saved');
is(flip_rows(), 'p:5:text p:3:text other:2', 'the statement\'s two plans and "other"');
is($node->safe_psql('postgres', $not_adding_up), '0',
	'every statement\'s plan rows add up to its calls');
is($node->safe_psql('postgres', $figures), $figures_before,
	'plan_texts_dropped, plan_calls_lost and the texts\' memory as before');
is(count_since($node, $off, qr/restored plan statistics/), 0,
	'nothing left out: no line about plans');

# --- plans_per_statement lowered: the plans beyond it go to "other" ----------

$node->append_conf('postgresql.conf', "pg_stat_statements_ng.plans_per_statement = 1\n");
my ($dropped_before) = split /\|/, $figures_before;
$off = restart_restored();
like(log_since($node, $off),
	qr/LOG:  pg_stat_statements_ng: restored plan statistics: 1 saved plans beyond plans_per_statement = 1 counted in their statement's "other" row, 1 saved plan texts not kept \(plan_texts_dropped\)/,
	'one LOG line: one plan counted in "other", its text dropped');
is(flip_rows(), 'p:5:text other:5',
	'the first plan keeps its row; the second is counted in "other"');
# the rows of every other statement as saved; the flip statement's first
# plan as saved, its "other" row the sum of the saved second plan and
# "other", exactly
my $folded = qq{
SELECT queryid, toplevel, planid, calls, total_exec_time, min_exec_time,
       max_exec_time, rows, first_seen, last_seen, plan
  FROM pg_stat_statements_ng_plans};
my $expected = qq{
SELECT queryid, toplevel, planid, calls, total_exec_time, min_exec_time,
       max_exec_time, rows, first_seen, last_seen, plan
  FROM before b
 WHERE planid IS NOT NULL
   AND planid = (SELECT planid FROM before b2
                  WHERE b2.queryid = b.queryid AND b2.toplevel = b.toplevel
                    AND b2.planid IS NOT NULL ORDER BY first_seen, planid LIMIT 1)
UNION ALL
SELECT queryid, toplevel, NULL, sum(calls), sum(total_exec_time),
       min(min_exec_time), max(max_exec_time), sum(rows), min(first_seen),
       max(last_seen), NULL
  FROM before b
 WHERE planid IS NULL
    OR planid <> (SELECT planid FROM before b2
                   WHERE b2.queryid = b.queryid AND b2.toplevel = b.toplevel
                     AND b2.planid IS NOT NULL ORDER BY first_seen, planid LIMIT 1)
 GROUP BY queryid, toplevel};
is($node->safe_psql('postgres', "$folded ORDER BY 1, 2, 3 NULLS LAST"),
	$node->safe_psql('postgres', "$expected ORDER BY 1, 2, 3 NULLS LAST"),
	'every row as saved, the plans beyond the first summed into "other"');
is($node->safe_psql('postgres', $not_adding_up), '0',
	'every statement\'s plan rows still add up to its calls');
is(ng_value($node, 'plan_texts_dropped'), $dropped_before + 1,
	'plan_texts_dropped: the saved figure and the text of the folded plan');

# --- a crash starts empty ----------------------------------------------------

$node->stop('immediate');
ng_start($node) or die 'the server did not start';
is($node->safe_psql('postgres',
		'SELECT count(*) FROM pg_stat_statements_ng_plans'),
	'0', 'after an immediate stop the plans view is empty');

# --- plan_text_memory lowered: texts that do not fit are dropped -------------

$node->append_conf('postgresql.conf', "pg_stat_statements_ng.plans_per_statement = 2\n");
$node->restart;
workload();
sessions_gone();
$node->safe_psql('postgres', qq{DROP TABLE before; CREATE TABLE before AS $all_rows});
$before = $node->safe_psql('postgres', $all_rows);
my $ntexts = $node->safe_psql('postgres',
	'SELECT count(*) FROM before WHERE plan IS NOT NULL');
cmp_ok($ntexts, '>=', 2, "$ntexts plan texts saved");
$dropped_before = ng_value($node, 'plan_texts_dropped');
$node->append_conf('postgresql.conf', "pg_stat_statements_ng.plan_text_memory = 0\n");
$off = restart_restored();
like(log_since($node, $off),
	qr/restored plan statistics: 0 saved plans beyond plans_per_statement = 2 counted in their statement's "other" row, $ntexts saved plan texts not kept/,
	"one LOG line: $ntexts texts dropped");
is($node->safe_psql('postgres', "$folded ORDER BY 1, 2, 3 NULLS LAST"),
	$node->safe_psql('postgres', qq{
SELECT queryid, toplevel, planid, calls, total_exec_time, min_exec_time,
       max_exec_time, rows, first_seen, last_seen, NULL::text
  FROM before ORDER BY 1, 2, 3 NULLS LAST}),
	'every row as saved, without its text');
is(ng_value($node, 'plan_texts_dropped'), $dropped_before + $ntexts,
	'plan_texts_dropped: the saved figure and every text');
is(ng_value($node, 'plan_text_memory_used'), '0', 'no memory held by plan texts');

# --- track_plans off at the start: the saved plans are kept -------------------

$node->append_conf('postgresql.conf', "pg_stat_statements_ng.plan_text_memory = '4MB'\n");
$node->restart;
workload();
sessions_gone();
$before = $node->safe_psql('postgres', $all_rows);
$node->append_conf('postgresql.conf', "pg_stat_statements_ng.track_plans = off\n");
restart_restored();
is($node->safe_psql('postgres', $all_rows), $before,
	'with track_plans off the saved plans are restored as they were');

# --- a dump of the previous format (6): its statements, no plans --------------

$node->append_conf('postgresql.conf', "pg_stat_statements_ng.track_plans = on\n");
my $statements = q{SELECT queryid, toplevel, calls, rows, total_exec_time, query
  FROM pg_stat_statements_ng ORDER BY 1, 2};
my $statements_before = $node->safe_psql('postgres', $statements);
$node->stop;
my $valid = read_bytes($stat);
my $layout = ng_file_layout($valid);
ok(defined $layout && $layout->{nplans} > 0, 'the dump has a plan section')
  or BAIL_OUT('cannot make sense of the dump file');
# format 6 is format 7 without the plan section (the entries and the
# failures by SQLSTATE laid out alike): what the previous release wrote
my $v6 = substr($valid, 0, $layout->{plans_at});
substr($v6, 4, 4) = pack('L', 6);
write_bytes($stat, $v6 . pack('L', crc32c($v6)));
$off = log_mark($node);
ng_start($node) or die 'the server did not start';
$node->wait_for_log(
	qr/pg_stat_statements_ng: restored statistics of $layout->{nentries} statements/, $off);
is($node->safe_psql('postgres', $statements), $statements_before,
	'a format 6 dump restores every statement');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements_ng_plans'),
	'0', 'and no plan row');
is(count_since($node, $off, qr/ignoring saved statistics/), 0, 'nothing rejected');

# on 18, a dump the previous release wrote (the loader fuzzer's corpus keeps
# it: 20 statements of format 6, naming no contrib file)
my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000);
SKIP:
{
	skip 'the saved format 6 dump is of PostgreSQL 18', 3 if $major != 18;
	my $old = read_bytes('fuzz/loader-corpus/old-v6-no-contrib.stat');
	is(unpack('L', substr($old, 4, 4)), 6, 'the saved dump is of format 6');
	$node->stop;
	write_bytes($stat, $old);
	$off = log_mark($node);
	ng_start($node) or die 'the server did not start';
	$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of 20 statements/,
		$off);
	pass('the previous release\'s dump restores its 20 statements');
	is($node->safe_psql('postgres',
			'SELECT count(*) FROM pg_stat_statements_ng_plans'),
		'0', 'and no plan row');
}

$node->stop;
done_testing();
