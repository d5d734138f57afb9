# Plan texts: EXPLAIN (COSTS OFF) of a statement's plan with every constant
# replaced by $n (plan_text.c, plan_text_scrub.c).  The texts are read from
# the LOG message that debug_fault = plan_text_log makes ExecutorEnd write
# (assertion builds); plan_text_of() is the one place that knows that.
# Exact texts: an index scan with a constant, LIKE, an IN list, a date and a
# negative number, a quoted identifier and names with digits, a generic
# plan's $1 beside a constant, a Gather (Workers Planned stays), run-time
# partition pruning (Subplans Removed stays), a CTE, an initplan, a string
# whose lines look like EXPLAIN's; a plan of 10,002 nodes has no text, one
# of 999 has; a long text is cut at 64 kB; a text whose making fails
# (debug_fault = plan_text_error) leaves the statement and its transaction
# as they were.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node(
	'plan_text',
	-extension => '',
	max_parallel_workers_per_gather => 2);

plan skip_all => 'pg_stat_statements_ng.debug_fault exists only in assertion builds'
  unless ng_has_debug_fault($node);

my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000);

$node->safe_psql('postgres', q{
CREATE TABLE t (id int PRIMARY KEY, v int, s text, d date, "Col 1" int);
INSERT INTO t SELECT g, g, 'x' || g, '2024-01-01'::date + g, g
  FROM generate_series(1, 10000) g;
CREATE TABLE t1 (a int, b int);
CREATE INDEX idx_2 ON t1 (a);
INSERT INTO t1 SELECT g, g FROM generate_series(1, 10000) g;
CREATE TABLE p (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (10);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (10) TO (20);
CREATE TABLE p3 PARTITION OF p FOR VALUES FROM (20) TO (30);
CREATE TABLE p4 PARTITION OF p FOR VALUES FROM (30) TO (40);
CREATE TABLE log (x int);
VACUUM ANALYZE;
});

# The plan texts the statements of $sql made, in order: [result, text] each
# (result: made, too large, failed).  $sql runs in one session with the
# texts logged to the client.
sub plan_texts
{
	my ($sql, $fault) = @_;
	$fault //= 'plan_text_log';
	my ($out, $err) = ('', '');
	$node->psql('postgres', qq{
SET client_min_messages = log;
SET pg_stat_statements_ng.debug_fault = $fault;
$sql}, stdout => \$out, stderr => \$err, on_error_die => 1);
	my @texts;
	while ($err =~ /LOG:  plan text (made|too large|failed) \([0-9]+ bytes, [0-9.]+ ms\):\n(.*?)(?=\n?(?:psql:\S+: )?LOG:  |\n?\z)/sg)
	{
		push @texts, [ $1, $2 ];
	}
	return ($out, @texts);
}

# the text of the last plan $sql made (and that it was made)
sub plan_text_of
{
	my ($sql) = @_;
	my (undef, @texts) = plan_texts($sql);
	my $last = $texts[-1] // [ 'none', '' ];
	is($last->[0], 'made', 'a text is made for: ' . (split /\n/, $sql)[-1]);
	return $last->[1];
}

my @cases = (
	[ 'an index scan with a constant',
	  'SELECT v FROM t WHERE id = 5;',
	  "Index Scan using t_pkey on t\n  Index Cond: (id = \$1)" ],
	[ 'LIKE and a string with a quote',
	  q{SELECT count(*) FROM t WHERE s LIKE 'x1%' AND s <> 'it''s';},
	  "Aggregate\n  ->  Seq Scan on t\n        Filter: ((s ~~ \$1::text) AND (s <> \$2::text))" ],
	[ 'an IN list (= ANY of an array)',
	  'SELECT count(*) FROM t WHERE id IN (1, 2, 3);',
	  "Aggregate\n  ->  Index Only Scan using t_pkey on t\n        Index Cond: (id = ANY (\$1::integer[]))" ],
	[ 'a date literal and a negative number',
	  q{SELECT count(*) FROM t WHERE d > '2024-03-01' AND v > -5;},
	  "Aggregate\n  ->  Seq Scan on t\n        Filter: ((d > \$1::date) AND (v > \$2::integer))" ],
	[ 'a quoted identifier with a digit, a numeric',
	  'SELECT count(*) FROM t WHERE "Col 1" > 7 AND v::numeric > 1.5;',
	  "Aggregate\n  ->  Seq Scan on t\n        Filter: ((\"Col 1\" > \$1) AND ((v)::numeric > \$2))" ],
	[ 'names with digits, a typmod kept',
	  q{SELECT b FROM t1 WHERE a = 42 AND b::varchar(12) <> 'zz';},
	  "Index Scan using idx_2 on t1\n  Index Cond: (a = \$1)\n"
	  . "  Filter: (((b)::character varying(12))::text <> \$2::text)" ],
	[ 'a generic plan: its $1 kept, the constant after it',
	  "SET plan_cache_mode = force_generic_plan;\n"
	  . "PREPARE g(int) AS SELECT v FROM t WHERE id = \$1 AND v > 3;\nEXECUTE g(5);",
	  "Index Scan using t_pkey on t\n  Index Cond: (id = \$1)\n  Filter: (v > \$2)" ],
	[ 'a Gather: Workers Planned kept',
	  "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;\n"
	  . "SET min_parallel_table_scan_size = 0;\nSELECT count(*) FROM t WHERE v > 5;",
	  "Finalize Aggregate\n  ->  Gather\n        Workers Planned: 2\n"
	  . "        ->  Partial Aggregate\n              ->  Parallel Seq Scan on t\n"
	  . "                    Filter: (v > \$1)" ],
	[ 'run-time partition pruning: Subplans Removed kept',
	  "SET plan_cache_mode = force_generic_plan;\n"
	  . "PREPARE q(int) AS SELECT count(*) FROM p WHERE k = \$1 AND v > 10;\nEXECUTE q(15);",
	  "Aggregate\n  ->  Append\n        Subplans Removed: 3\n"
	  . "        ->  Seq Scan on p2 p_1\n              Filter: ((v > \$2) AND (k = \$1))" ],
	[ 'a CTE, an E string',
	  q{WITH c AS MATERIALIZED (SELECT * FROM t WHERE v < 100)
SELECT count(*) FROM c WHERE s = E'a\\\\b';},
	  "Aggregate\n  CTE c\n    ->  Seq Scan on t\n          Filter: (v < \$1)\n"
	  . "  ->  CTE Scan on c\n        Filter: (s = \$2::text)" ],
	[ "a string of lines that look like a plan's",
	  q{SELECT count(*) FROM t WHERE s <> E'x\n  ->  Workers Planned: 9\n  Filter: ''7''';},
	  "Aggregate\n  ->  Seq Scan on t\n        Filter: (s <> \$1::text)" ],
	[ 'an initplan: its number kept, its parameter before the constants',
	  'SELECT count(*) FROM t WHERE v = (SELECT max(v) FROM t WHERE id < 50);',
	  $major >= 17
	  ? "Aggregate\n  InitPlan 1\n    ->  Aggregate\n"
	  . "          ->  Index Scan using t_pkey on t t_1\n                Index Cond: (id < \$1)\n"
	  . "  ->  Seq Scan on t\n        Filter: (v = (InitPlan 1).col1)"
	  : "Aggregate\n  InitPlan 1 (returns \$0)\n    ->  Aggregate\n"
	  . "          ->  Index Scan using t_pkey on t t_1\n                Index Cond: (id < \$1)\n"
	  . "  ->  Seq Scan on t\n        Filter: (v = \$0)" ],
);
foreach my $case (@cases)
{
	my ($name, $sql, $want) = @$case;
	is(plan_text_of($sql), $want, $name);
}

# A UNION ALL of n branches, nested as a balanced tree (the parser's
# recursion stays shallow); the planner makes one Append of n children.
sub union_all
{
	my ($lo, $hi, $leaf) = @_;
	return $leaf->($lo) if $lo == $hi;
	my $mid = int(($lo + $hi) / 2);
	return '(' . union_all($lo, $mid, $leaf) . ') UNION ALL ('
	  . union_all($mid + 1, $hi, $leaf) . ')';
}

# 10,002 nodes (Aggregate, Append, 10,000 Results): no text.  15 and 16's
# own planner takes minutes over such a union (90 s without the extension
# on 15, here): there 1,502 nodes, still past the bound of 1,000
my $leaves = $major >= 17 ? 10000 : 1500;
my (undef, @big) = plan_texts('SELECT count(*) FROM ('
	  . union_all(1, $leaves, sub { "SELECT $_[0] AS x" }) . ') u;');
is(scalar(@big), 1, 'one plan of ' . ($leaves + 2) . ' nodes');
is($big[0][0], 'too large', 'a plan of ' . ($leaves + 2) . ' nodes has no text');

# 999 nodes (Aggregate, Append, 997 Results): a text
my (undef, @near) = plan_texts('SELECT count(*) FROM ('
	  . union_all(1, 997, sub { "SELECT $_[0] AS x" }) . ') u;');
is($near[0][0], 'made', 'a plan of 999 nodes has a text');
is(scalar(() = $near[0][1] =~ /->  Result/g), 997, 'of its 997 leaves');

# 902 nodes of 200 bytes each: the text is cut at a line end, at 64 kB
my (undef, @long) = plan_texts('SELECT count(*) FROM ('
	  . union_all(1, 450, sub {
		  "SELECT v FROM t WHERE v > $_[0] AND s <> '" . ('z' x 100) . "'" })
	  . ') u;');
is($long[0][0], 'made', 'a plan of 902 nodes with long filters has a text');
cmp_ok(length($long[0][1]), '<=', 65536, 'of at most 64 kB');
like($long[0][1], qr/\n\Q... (plan text cut here)\E\z/, 'cut, with the marker line last');
unlike($long[0][1], qr/zzz|'/, 'and no constant');

# a failure while the text is made: the statement, its transaction and the
# session go on as if no text had been asked for
my ($out, @failed) = plan_texts(q{
BEGIN;
INSERT INTO log VALUES (1);
SAVEPOINT s;
INSERT INTO log VALUES (2);
SELECT count(*) FROM t WHERE v > 5;
RELEASE SAVEPOINT s;
COMMIT;
SELECT count(*) FROM log;}, 'plan_text_error');
is_deeply([ map { $_->[0] } @failed ], [ ('failed') x 4 ],
	'every text fails under plan_text_error');
is($out, "9995\n2", 'the statements succeed, and the transaction commits');
is($node->safe_psql('postgres', 'SELECT count(*) FROM log'), '2',
	'the rows are there');

$node->stop;
done_testing();
