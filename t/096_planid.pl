# Plan identity: the planid of a plan's shape, as pg_stat_statements_ng_activity
# shows it for the statement a process runs.  A statement that reads the view
# for its own process sees its own queryid and planid; its plan reads a table
# with an index, so that settings flip its shape.  Exact: the same shape gives
# the same id in every execution and backend, whatever its constants; another
# shape another id; a cached generic plan keeps the id it was made with; a
# utility statement has none; a statement running in another session shows.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('planid');
$node->safe_psql('postgres', q{
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t SELECT g, g FROM generate_series(1, 10000) g;
VACUUM ANALYZE t;
});

# a statement that shows its own planid (the view reads this process's row)
my $self = q{(SELECT planid FROM pg_stat_statements_ng_activity
 WHERE pid = pg_backend_pid())};
sub own
{
	my ($bound) = @_;
	return "SELECT $self AS planid, count(*) FROM t WHERE id < $bound";
}

# the planids of the statements, run in one session
sub planids
{
	my ($setup, @stmts) = @_;
	my $sql = join('', map { own($_) . ";\n" } @stmts);
	return [ map { (split /\|/)[0] }
		  split /\n/, $node->safe_psql('postgres', "$setup\n$sql") ];
}

# the premise: the bounds get the same shape, an index scan (of other costs)
my ($shape10, $shape20, $shape500) = map {
	my $plan = $node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) ' . own($_));
	$plan =~ s/id < [0-9]+/id < N/;
	$plan
} (10, 20, 500);
is($shape10, $shape20, 'bounds 10 and 20 are planned alike');
is($shape10, $shape500, 'bounds 10 and 500 are planned alike');
like($shape10, qr/Index Only Scan using t_pkey/, 'as an index scan');

my $a = planids('', 10, 10, 10);
like($a->[0], qr/^-?[0-9]+$/, 'a statement has a planid');
is($a->[1], $a->[0], 'the same statement: the same planid, 2nd execution');
is($a->[2], $a->[0], 'the same statement: the same planid, 3rd execution');

my $b = planids('', 10);
is($b->[0], $a->[0], 'another backend: the same planid');

my $c = planids('', 20, 500);
is($c->[0], $a->[0], 'another constant, the same shape: the same planid');
is($c->[1], $a->[0], 'a constant of another cost, the same shape: the same planid');

my $off = planids(
	'SET enable_indexscan = off; SET enable_indexonlyscan = off;
	 SET enable_bitmapscan = off;', 10);
isnt($off->[0], $a->[0], 'index scans disabled: another planid');
my $on = planids(
	'SET enable_indexscan = off; SET enable_indexonlyscan = off;
	 SET enable_bitmapscan = off; RESET enable_indexscan;
	 RESET enable_indexonlyscan; RESET enable_bitmapscan;', 10);
is($on->[0], $a->[0], 'index scans enabled again: the first planid');

# a generic plan: made once, its planid kept in every execution, even one
# after track_plans is turned off (no recomputation); a plan made while it
# is off has none
my $generic = $node->safe_psql('postgres', "
SET plan_cache_mode = force_generic_plan;
PREPARE p(int) AS " . own('$1') . ";
EXECUTE p(10); EXECUTE p(20); EXECUTE p(30);
SET pg_stat_statements_ng.track_plans = off;
EXECUTE p(40);
PREPARE q(int) AS " . own('$1') . ";
EXECUTE q(10);");
my @g = map { (split /\|/)[0] } split /\n/, $generic;
is(scalar(@g), 5, 'five executions');
like($g[0], qr/^-?[0-9]+$/, 'a generic plan has a planid');
is($g[1], $g[0], 'generic plan: the same planid, 2nd execution');
is($g[2], $g[0], 'generic plan: the same planid, 3rd execution');
is($g[3], $g[0], 'generic plan: its planid, made with it, kept with track_plans off');
is($g[4], '', 'a plan made with track_plans off: no planid');

# the carrier sits beside the plan's own dependencies: a generic plan that
# depends on a function only through planning (g inlined, and f in it) is
# still invalidated when that function changes
my $dep = $node->safe_psql('postgres', "
CREATE FUNCTION f() RETURNS int LANGUAGE sql VOLATILE AS 'SELECT 1';
CREATE FUNCTION g() RETURNS int LANGUAGE sql VOLATILE AS 'SELECT f()';
SET plan_cache_mode = force_generic_plan;
PREPARE r AS SELECT g() AS v, $self AS planid;
EXECUTE r;
CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql VOLATILE AS 'SELECT 2';
EXECUTE r;");
my @d = map { [ split /\|/ ] } split /\n/, $dep;
is($d[0][0] . ',' . $d[1][0], '1,2', 'a generic plan is invalidated by its function');
like($d[0][1], qr/^-?[0-9]+$/, 'a plan with dependencies has a planid');
is($d[1][1], $d[0][1], 'the plan made again has the same planid');

# a utility statement: its queryid, no planid (what it runs is nested)
$node->safe_psql('postgres', q{
CREATE TABLE util AS SELECT queryid IS NOT NULL AS has_queryid, planid
  FROM pg_stat_statements_ng_activity WHERE pid = pg_backend_pid()});
is($node->safe_psql('postgres', 'SELECT has_queryid, planid IS NULL FROM util'),
	't|t', 'a utility statement: a queryid and no planid');

# a statement running in another session: its queryid (core's) and planid;
# it waits for an advisory lock another session holds, then sleeps
my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(42)');
my $bg = $node->background_psql('postgres');
my $bgpid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/start/, q{
\echo start
SELECT pg_advisory_lock(42), pg_sleep(0);
});
$node->poll_query_until('postgres', qq{
SELECT count(*) = 1 FROM pg_stat_statements_ng_activity WHERE pid = $bgpid})
  or die 'the waiting statement did not show';
my $row = $node->safe_psql('postgres', qq{
SELECT a.queryid = s.query_id, a.planid IS NOT NULL, s.query
FROM pg_stat_statements_ng_activity a JOIN pg_stat_activity s USING (pid)
WHERE pid = $bgpid});
is($row, 't|t|SELECT pg_advisory_lock(42), pg_sleep(0);',
	'a statement running in another session: its queryid and planid');
$holder->query_safe('SELECT pg_advisory_unlock(42)');
$holder->quit;
$bg->quit;

$node->stop;
done_testing();
