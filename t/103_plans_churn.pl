# Plan rows under concurrency: a statement's plan rows add up to its calls,
# exactly, in the cumulative view and in each window, while several clients
# flip its plan at every execution (each flip folds the client's slot),
# statements are evicted, and another session closes windows and resets the
# statement.
#
# Four pgbench clients of role bench run a fixed number of transactions of
# two statements, a and b, each once with index scans off (a Seq Scan) and
# once with them on (an Index Scan), so that two plans interleave in every
# session, and one of 150 statements (a count of one of 150 tables), so
# that the table of 100 entries evicts all the time; meanwhile a session
# loops closing a window and resetting a alone
# (pg_stat_statements_ng_reset(0, 0, queryid)) until told to stop.
# Then, over the windows opened since the clients began:
#  - in each window, each statement's plan rows add up to its calls;
#  - b, never reset, has exactly the calls the clients ran, half of them in
#    each of its two plans, and so has a (a reset or an eviction inside a
#    window leaves the window exact);
#  - in the cumulative views, each statement's plan rows add up to its calls;
#  - nothing is counted as lost.
#
# The test's own SQL runs with pg_stat_statements_ng.track = none; bench's
# SET statements are not tracked (track_utility off for bench), so every
# counted statement is one of the script's.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $clients = 4;
my $xacts = 500;

my $node = ng_node(
	'plans_churn',
	@NG_SMALL,
	'pg_stat_statements_ng.max' => 100,
	'pg_stat_statements_ng.admission' => 'all',
	'pg_stat_statements_ng.history_statements' => 1000,
	'pg_stat_statements_ng.history_interval' => 3600);
sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(q{
ALTER ROLE CURRENT_USER SET pg_stat_statements_ng.track = 'none';
CREATE ROLE bench LOGIN;
ALTER ROLE bench SET pg_stat_statements_ng.track_utility = off;
ALTER ROLE bench SET enable_bitmapscan = off;
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t SELECT g, g FROM generate_series(1, 10000) g;
VACUUM ANALYZE t;
GRANT SELECT ON t TO bench;
DO $$
BEGIN
  FOR i IN 1 .. 150 LOOP
    EXECUTE format('CREATE TABLE u_%s (a int)', i);
    EXECUTE format('GRANT SELECT ON u_%s TO bench', i);
  END LOOP;
END $$;
CREATE TABLE churn_stop ();
CREATE TABLE churn_done (rounds int);
});

my %text = (
	a => 'SELECT sum(v) FROM t WHERE id < 10',
	b => 'SELECT max(v) FROM t WHERE id < 20');
my %qid;
foreach my $s (keys %text)
{
	my $plan = sql("EXPLAIN (VERBOSE, COSTS OFF) $text{$s}");
	$plan =~ /Query Identifier: (-?\d+)/ or die "no queryid in $plan";
	$qid{$s} = $1;
}

my $script = $node->basedir . '/flip.sql';
open(my $fh, '>', $script) or die "$script: $!";
print $fh "SET enable_indexscan = off;\n$text{a};\n$text{b};\n"
  . "SET enable_indexscan = on;\n$text{a};\n$text{b};\n"
  . "\\set k random(1, 150)\nSELECT count(*) FROM u_:k;\n";
close($fh);

sql('SELECT pg_stat_statements_ng_take_window()');
my $since = sql('SELECT history_open_since FROM pg_stat_statements_ng_info');

# the windows and resets, paced, until churn_stop has a row: the loop ends
# on its own, so that no reset is cut short
my $churner = $node->background_psql('postgres');
$churner->query_until(qr/churning/, qq{\\echo churning
DO \$\$
DECLARE
  n int := 0;
BEGIN
  WHILE NOT EXISTS (SELECT FROM churn_stop) LOOP
    PERFORM pg_stat_statements_ng_take_window();
    PERFORM pg_sleep(0.02);
    PERFORM pg_stat_statements_ng_reset(0, 0, $qid{a});
    PERFORM pg_sleep(0.02);
    n := n + 1;
  END LOOP;
  INSERT INTO churn_done VALUES (n);
END \$\$;
});
{
	local $ENV{PGOPTIONS} = '';
	$node->command_ok(
		[
			'pgbench', '-n', '-M', 'simple', '-c', $clients, '-j', 2,
			'-t', $xacts, '-f', $script, '-U', 'bench', 'postgres'
		],
		'the clients ran');
}
sql('INSERT INTO churn_stop DEFAULT VALUES');
$churner->quit;
my $rounds = sql('SELECT rounds FROM churn_done');
cmp_ok($rounds, '>', 0, 'windows were closed and a reset while the clients ran');
note("$rounds windows closed and as many resets of a while the clients ran");
sql('SELECT pg_stat_statements_ng_take_window()');

# each window: every statement's plan rows add up to its calls
is( sql(qq{
WITH h AS (SELECT window_start, queryid, sum(calls) AS calls
             FROM pg_stat_statements_ng_history
            WHERE window_start >= '$since' AND userid = 'bench'::regrole
            GROUP BY 1, 2),
     p AS (SELECT window_start, queryid, sum(calls) AS calls
             FROM pg_stat_statements_ng_history_plans
            WHERE window_start >= '$since' AND userid = 'bench'::regrole
            GROUP BY 1, 2)
SELECT count(*) FILTER (WHERE coalesce(h.calls, 0) <> coalesce(p.calls, 0))
       || ' ' || (count(DISTINCT window_start) FILTER (WHERE h.calls > 0) > 1)
  FROM h FULL JOIN p USING (window_start, queryid)}),
	'0 true',
	'in each window, each statement\'s plan rows add up to its calls');

# over the windows: the statement's calls, and its plan rows' calls by
# plan, most first ("600 300 300")
sub over_windows
{
	my ($s) = @_;
	return sql(qq{
SELECT (SELECT sum(calls) FROM pg_stat_statements_ng_history
         WHERE window_start >= '$since' AND queryid = $qid{$s})
       || ' ' || (SELECT string_agg(c::text, ' ' ORDER BY c DESC)
                    FROM (SELECT sum(calls) AS c
                            FROM pg_stat_statements_ng_history_plans
                           WHERE window_start >= '$since'
                             AND queryid = $qid{$s}
                           GROUP BY planid) AS p)});
}
my $half = $clients * $xacts;
is(over_windows('b'), 2 * $half . " $half $half",
	'b, never reset: every execution in the windows, half in each plan');
is(over_windows('a'), 2 * $half . " $half $half",
	'a, reset again and again: every execution in the windows, half in each plan');
is( sql(qq{
SELECT count(DISTINCT planid) || ' ' || count(*) FILTER (WHERE planid IS NULL)
  FROM pg_stat_statements_ng_history_plans
 WHERE window_start >= '$since' AND queryid = $qid{b}}),
	'2 0', 'b\'s plan rows are of two plans');

# the cumulative views: each statement's plan rows add up to its calls
is( sql(qq{
SELECT (count(*) > 0) || ' ' || count(*) FILTER (WHERE s.calls <> (
         SELECT coalesce(sum(p.calls), 0) FROM pg_stat_statements_ng_plans p
          WHERE (p.userid, p.dbid, p.queryid, p.toplevel)
              = (s.userid, s.dbid, s.queryid, s.toplevel)))
  FROM pg_stat_statements_ng s WHERE s.userid = 'bench'::regrole}),
	'true 0',
	'the cumulative views: each statement\'s plan rows add up to its calls');

my $dealloc = ng_value($node, 'dealloc');
cmp_ok($dealloc, '>', 0, 'statements were evicted');
note("$dealloc evictions");
is( sql(q{
SELECT history_counts_lost || ' ' || history_windows_dropped || ' '
       || history_windows_skipped || ' ' || plan_calls_lost
  FROM pg_stat_statements_ng_info}),
	'0 0 0 0', 'nothing lost, no window dropped or skipped');

$node->stop;
done_testing();
