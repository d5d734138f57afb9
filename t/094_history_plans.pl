# The history's plan rows: pg_stat_statements_ng_history_plans, one row per
# plan a statement kept by a window executed in it, exact.  A statement run
# 30 times with one plan and 20 with another in a window has two plan rows of
# 30 and 20 calls, adding up to its calls in pg_stat_statements_ng_history;
# the next window has only what ran in it; a reset of the statement, or a
# full reset, inside a window leaves the window's rows exact (what ran before
# the reset counts in it), also for executions still unfolded in an open
# session's slot when the reset voids them, and so does an eviction of the
# statement; executions unfolded in an open session's slot at a close count
# in that window, and only the new ones in the next; with track_plans off a
# statement has no plan row; another user's queryid and planid are hidden
# without pg_read_all_stats; the rows survive a clean restart; a history
# file of format 2 (without plan rows) is read.
#
# The test's own SQL runs with pg_stat_statements_ng.track = none, so that
# every counted statement is one the workload ran.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;
use NgPersist qw(ng_history_file_downgrade);

$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
my $node = ng_node(
	'history_plans',
	autovacuum => 'off',
	'pg_stat_statements_ng.max' => 100,
	'pg_stat_statements_ng.admission' => 'all',
	'pg_stat_statements_ng.history_statements' => 1000,
	'pg_stat_statements_ng.history_interval' => 3600);
sub sql { return $node->safe_psql('postgres', $_[0]); }
sub take_window { sql('SELECT pg_stat_statements_ng_take_window()'); }
sub run { return ng_tracked($node, 'postgres', $_[0]); }

sql(q{
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t SELECT g, g FROM generate_series(1, 10000) g;
VACUUM ANALYZE t;
});

my $q = "SELECT count(*) FROM t WHERE id < 10;\n";
my $off = 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';
my $on = 'RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan;';

take_window();

# 1. a plan flip in a window: 30 executions without index scans, 20 with
run($off . ($q x 30) . $on . ($q x 20));
my $qid = sql(q{SELECT queryid FROM pg_stat_statements_ng
 WHERE query = 'SELECT count(*) FROM t WHERE id < $1'});
my ($seq, $idx) = split(/\|/, sql(qq{
SELECT string_agg(planid::text, '|' ORDER BY calls DESC)
FROM pg_stat_statements_ng_plans WHERE queryid = $qid}));
ok($seq && $idx && $seq ne $idx, 'the flip has two plans');
take_window();

# the last closed window's plan rows of the statement ("seq:30 idx:20"), the
# sum of their calls, and its calls in the history
sub last_window
{
	return sql(qq{
WITH w AS (SELECT history_open_since AS e FROM pg_stat_statements_ng_info)
SELECT (SELECT string_agg(CASE planid WHEN $seq THEN 'seq' WHEN $idx THEN 'idx'
                                      ELSE coalesce(planid::text, 'other') END
                          || ':' || calls, ' ' ORDER BY calls DESC, planid)
        FROM pg_stat_statements_ng_history_plans, w
        WHERE queryid = $qid AND window_end = w.e),
       (SELECT sum(calls) FROM pg_stat_statements_ng_history_plans, w
        WHERE queryid = $qid AND window_end = w.e),
       (SELECT sum(calls) FROM pg_stat_statements_ng_history, w
        WHERE queryid = $qid AND window_end = w.e)});
}

is(last_window(), 'seq:30 idx:20|50|50',
	'a flip in a window: two plan rows, 30 and 20, adding up to its calls');

# 2. the next window: only what ran in it
run($q x 7);
take_window();
is(last_window(), 'idx:7|7|7', 'the next window: its 7 executions only');

# 3. a reset of the statement inside a window: what ran before it counts
run($off . ($q x 5));
sql("SELECT pg_stat_statements_ng_reset(0, 0, $qid)");
run($q x 4);
take_window();
is(last_window(), 'seq:5 idx:4|9|9',
	'a reset of the statement inside a window: the window stays exact');

# ... and a full reset
run($off . ($q x 3));
sql('SELECT pg_stat_statements_ng_reset()');
run($q x 2);
take_window();
is(last_window(), 'seq:3 idx:2|5|5',
	'a full reset inside a window: the window stays exact');

# 4. executions unfolded in an open session's slot at the close
my $bg = do
{
	local $ENV{PGOPTIONS} = '';
	$node->background_psql('postgres');
};
$bg->query_safe($q) for 1 .. 6;
run($off . ($q x 2));
take_window();
is(last_window(), 'idx:6 seq:2|8|8',
	'executions unfolded in a slot at the close count in the window');
$bg->query_safe($q);
take_window();
is(last_window(), 'idx:1|1|1',
	'the next window: only the slot\'s new execution');

# a reset voids the slot's unfolded executions: they count in the window
$bg->query_safe($q) for 1 .. 4;
sql("SELECT pg_stat_statements_ng_reset(0, 0, $qid)");
$bg->query_safe($q);
take_window();
is(last_window(), 'idx:5|5|5',
	'a reset voiding a slot\'s executions inside a window: exact');
$bg->quit;

# 5. track_plans off: counted in the statement, in no plan row, folded or
# still in an open session's slot at the close
run("SET pg_stat_statements_ng.track_plans = off;\n" . ($q x 3));
take_window();
is(last_window(), '||3', 'track_plans off: the history row, no plan row');
$bg = do
{
	local $ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track_plans=off';
	$node->background_psql('postgres');
};
$bg->query_safe($q) for 1 .. 2;
take_window();
is(last_window(), '||2',
	'track_plans off, executions in a slot at the close: no plan row');
$bg->quit;

# 6. the statement evicted inside a window: its plan records count in it
run($off . ($q x 5) . $on . ($q x 3));
my $gone = 0;
my $others = join('', map { 'SELECT ' . join(', ', (1) x $_) . ";\n" } 1 .. 150);
for (1 .. 30)
{
	run($others);
	$gone = sql("SELECT count(*) = 0 FROM pg_stat_statements_ng WHERE queryid = $qid")
	  eq 't';
	last if $gone;
}
ok($gone, 'the statement was evicted');
take_window();
is(last_window(), 'seq:5 idx:3|8|8',
	'the statement evicted inside a window: the window stays exact');

# another user's rows: queryid and planid hidden without pg_read_all_stats
sql('CREATE ROLE viewer LOGIN');
sub as_viewer
{
	local $ENV{PGOPTIONS} = '';
	return $node->safe_psql('postgres', $_[0], extra_params => [ '-U', 'viewer' ]);
}
my $hidden = q{SELECT count(*) FILTER (WHERE queryid IS NULL AND planid IS NULL)
  || '/' || count(*) FROM pg_stat_statements_ng_history_plans};
my ($nhidden, $nrows) = split m{/}, as_viewer($hidden);
ok($nrows > 0 && $nhidden == $nrows,
	'another user\'s plan rows: queryid and planid NULL');
sql('GRANT pg_read_all_stats TO viewer');
is(as_viewer($hidden), "0/$nrows", 'with pg_read_all_stats: shown');

# 7. a clean restart keeps the plan rows
my $all = qq{
SELECT string_agg(window_end::text || ':' || coalesce(planid::text, 'other')
                  || ':' || calls || ':' || rows, ' '
                  ORDER BY window_end, planid)
FROM pg_stat_statements_ng_history_plans WHERE queryid = $qid};
my $before = sql($all);
like($before, qr/(\S+ ){6}/, 'the windows have plan rows');
my $nwin = sql('SELECT history_windows FROM pg_stat_statements_ng_info');
$node->restart;
# the keeper restores the windows once it runs (a clean stop closed one more)
$node->poll_query_until('postgres', 'SELECT history_windows = ' . ($nwin + 1) .
	  ' FROM pg_stat_statements_ng_info')
  or die 'the windows were not restored';
is(sql($all), $before, 'a clean restart keeps the plan rows');

# 8. a history file of format 2 (no plan rows) is read: the file a clean
# stop wrote, its plan rows dropped, headers of format 2, the CRC made again
my $hq = q{
SELECT string_agg(concat_ws(' ', window_start, window_end, queryid, calls),
                  E'\n' ORDER BY window_start, queryid)
  FROM pg_stat_statements_ng_history};
my $history = sql($hq);
$node->stop;
my $hfile = $node->data_dir . '/pg_stat/pg_stat_statements_ng_history.stat';
my ($nwindows, undef, $plans_dropped) = ng_history_file_downgrade($hfile, 2);
cmp_ok($plans_dropped, '>', 0, 'the file had plan rows');
$node->start;
ok( $node->poll_query_until('postgres',
		"SELECT history_windows = $nwindows FROM pg_stat_statements_ng_info"),
	'every window of the format 2 file is restored');
is(sql($hq), $history, 'with its statements\' rows');
is(sql('SELECT count(*) FROM pg_stat_statements_ng_history_plans'), '0',
	'with no plan rows');

$node->stop;
done_testing();
