# Plan statistics under faults: plan text memory full, and a plan too large
# for a text.  With plan_text_memory at 1 kB, statements of distinct plans
# (each in a session of its own, so that the token bucket never refuses a
# text) get texts until the texts fill it; the plans after them are counted
# without text, each in plan_texts_dropped, plan_text_memory_used never
# exceeds plan_text_memory_max, and every statement succeeds.  A larger cap
# (ALTER SYSTEM, reload) gives a new plan its text.  A plan of 10,002 nodes (1,502
# on 15 and 16) runs, its plan row counts its calls, and its text, not made, is counted
# once per session that found the plan without text.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

# nothing is tracked but what tracked() runs
my $node = ng_node(
	'plan_faults',
	'pg_stat_statements_ng.track' => 'none',
	'pg_stat_statements_ng.plan_text_memory' => '1kB');

my $ntables = 40;
my @tables = map { sprintf('t%02d', $_) } 1 .. $ntables + 1;
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE $_ (a int); INSERT INTO $_ VALUES (2);\n" } @tables));

# run $sql, tracked, in a session of its own; return when that session's
# backend has exited (its slots folded: its plan texts installed)
sub tracked
{
	my ($sql) = @_;
	my $out;
	{
		local $ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=top';
		$out = $node->safe_psql('postgres', $sql);
	}
	$node->poll_query_until('postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()})
	  or die 'a tracked session did not exit';
	return $out;
}

sub info
{
	my ($column) = @_;
	return ng_value($node, $column);
}

# the plan text of SELECT a FROM tNN WHERE a > 1, and the bytes it holds
sub text_of { return "Seq Scan on $_[0]\n  Filter: (a > \$1)"; }
my $bytes = length(text_of('t01')) + 1;
my $fit = int(1024 / $bytes);
cmp_ok($fit, '<', $ntables, "$fit texts of $bytes bytes fit in 1 kB, fewer than $ntables");

is(info('plan_text_memory_max'), '1024', 'plan_text_memory_max: 1 kB, in bytes');
is(info('plan_text_memory_used'), '0', 'no plan text yet');

my (@out, @over);
foreach my $t (@tables[ 0 .. $ntables - 1 ])
{
	push @out, tracked("SELECT a FROM $t WHERE a > 1");
	push @over, $t
	  if info('plan_text_memory_used') > info('plan_text_memory_max');
}
is_deeply(\@out, [ ('2') x $ntables ], 'every statement succeeds');
is_deeply(\@over, [], 'plan_text_memory_used never exceeds plan_text_memory_max');

# each statement's plan rows: "table:calls:text-or-NULL"
sub plan_rows
{
	my ($where) = @_;
	return $node->safe_psql('postgres', qq{
SELECT string_agg(substr(s.query, 15, 3) || ':' || p.calls || ':' ||
                  CASE WHEN p.plan IS NULL THEN 'NULL'
                       WHEN p.plan = 'Seq Scan on ' || substr(s.query, 15, 3)
                                     || E'\\n  Filter: (a > \$1)' THEN 'text'
                       ELSE 'other text' END,
                  ' ' ORDER BY s.query)
FROM pg_stat_statements_ng s
JOIN pg_stat_statements_ng_plans p USING (userid, dbid, queryid, toplevel)
WHERE $where});
}
my $want = join(' ',
	(map { "$_:1:text" } @tables[ 0 .. $fit - 1 ]),
	(map { "$_:1:NULL" } @tables[ $fit .. $ntables - 1 ]));
is(plan_rows(q{s.query LIKE 'SELECT a FROM t%'}), $want,
	"the first $fit plans have their texts, the other " . ($ntables - $fit)
	  . ' are counted without');
is(info('plan_texts_dropped'), $ntables - $fit,
	'each plan without text is counted in plan_texts_dropped');
is(info('plan_text_memory_used'), $fit * $bytes,
	'plan_text_memory_used: the bytes of the texts kept');

# a larger cap: a new plan gets its text
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET pg_stat_statements_ng.plan_text_memory = '2kB'; SELECT pg_reload_conf()});
$node->poll_query_until('postgres',
	'SELECT plan_text_memory_max = 2048 FROM pg_stat_statements_ng_info')
  or die 'the new plan_text_memory was not loaded';
my $last = $tables[$ntables];
is(tracked("SELECT a FROM $last WHERE a > 1"), '2', 'a statement after the cap is raised');
is(plan_rows(qq{s.query = 'SELECT a FROM $last WHERE a > \$1'}), "$last:1:text",
	'its plan has its text');
is(info('plan_texts_dropped'), $ntables - $fit, 'plan_texts_dropped unchanged');
is(info('plan_text_memory_used'), ($fit + 1) * $bytes, 'plan_text_memory_used: one text more');

# A UNION ALL of n branches, nested as a balanced tree (the parser's
# recursion stays shallow); the planner makes one Append of n children.
sub union_all
{
	my ($lo, $hi) = @_;
	return "SELECT $lo AS x" if $lo == $hi;
	my $mid = int(($lo + $hi) / 2);
	return '(' . union_all($lo, $mid) . ') UNION ALL (' . union_all($mid + 1, $hi) . ')';
}

# 10,002 nodes (Aggregate, Append, 10,000 Results), run twice in a session
# and once in another: three calls in one plan row, without text; its text
# is tried once per session (the first execution of the plan in its slot),
# each time too large, each counted.  15 and 16's own planner takes
# minutes over such a union (90 s without the extension on 15, here), so
# there the plan has 1,502 nodes, still past plan_text.c's bound of 1,000
my $n = $node->pg_version >= 17 ? 10000 : 1500;
my $big = 'SELECT count(*) FROM (' . union_all(1, $n) . ') u;';
is(tracked($big . $big), "$n\n$n", 'a plan of ' . ($n + 2) . ' nodes runs, twice');
is(tracked($big), "$n", 'and again, in another session');
is($node->safe_psql('postgres', q{
SELECT s.calls || ' ' || p.calls || ' ' || (p.planid IS NOT NULL) || ' ' || (p.plan IS NULL)
FROM pg_stat_statements_ng s
JOIN pg_stat_statements_ng_plans p USING (userid, dbid, queryid, toplevel)
WHERE s.query LIKE 'SELECT count(*) FROM (%'}), '3 3 true true',
	'its statement and its one plan row count 3 calls; the plan has no text');
is(info('plan_texts_dropped'), $ntables - $fit + 2,
	'its text, too large, is counted in plan_texts_dropped once per session');
is(info('plan_text_memory_used'), ($fit + 1) * $bytes,
	'and takes no plan text memory');

$node->stop;
done_testing();
