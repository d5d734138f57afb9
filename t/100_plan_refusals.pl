# Plan statistics when shared memory (DSA) refuses them, with the one-shot
# faults plan_array_refused and plan_text_refused (assertion builds).
#
# A plan array refused: a session runs a statement $n times.  Its first
# execution begins a plan in a bound slot, whose plan array the fault
# refuses (the fault disarms); the $n executions all count in that slot,
# which is folded once, at the session's exit, where nothing is allocated
# (alloc.c): the fold finds no plan array, so all $n are counted in the
# statement's calls and in plan_calls_lost, the statement has no plan row,
# and the text made for the plan has no record to go to (plan_texts_dropped
# 1).  The next new statement of the same session gets its array, its row
# and its text.
#
# A plan text refused: the plan row exists, counts its calls, has no text,
# and plan_texts_dropped counts it once; the next new plan has its text.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('plan_refusals', 'pg_stat_statements_ng.track' => 'none');
plan skip_all => 'debug_fault needs an assertion build'
  unless ng_has_debug_fault($node);

$node->safe_psql('postgres',
	join('', map { "CREATE TABLE $_ (a int); INSERT INTO $_ VALUES (2);\n" } qw(r1 r2 r3 r4)));

# run $sql, tracked, with debug_fault $fault, in a session of its own;
# return its output when that session's backend has exited (its slots
# folded)
sub faulted
{
	my ($fault, $sql) = @_;
	my $out;
	{
		local $ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=top '
		  . "-c pg_stat_statements_ng.debug_fault=$fault";
		($out, my $err) = ('', '');
		$node->psql('postgres', $sql, stdout => \$out, stderr => \$err,
			on_error_die => 1);
		is($err, '', "no client message under $fault");
	}
	$node->poll_query_until('postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()})
	  or die 'a tracked session did not exit';
	return $out;
}

# "calls plan-rows plan-calls texts" of the statement on table $t ('-'
# for the sum and the texts of no plan row)
sub statement
{
	my ($t) = @_;
	return $node->safe_psql('postgres', qq{
SELECT s.calls || ' ' || count(p.planid) || ' ' ||
       coalesce(sum(p.calls)::text, '-') || ' ' ||
       coalesce(string_agg(CASE WHEN p.plan IS NULL THEN 'NULL'
                                ELSE p.plan END, ',')
                FILTER (WHERE p.planid IS NOT NULL), '-')
FROM pg_stat_statements_ng s
LEFT JOIN pg_stat_statements_ng_plans p USING (userid, dbid, queryid, toplevel)
WHERE s.query = 'SELECT a FROM $t WHERE a > \$1'
GROUP BY s.calls});
}

sub info { return ng_value($node, $_[0]); }

sub text_of { return "Seq Scan on $_[0]\n  Filter: (a > \$1)"; }

is(info('plan_calls_lost'), '0', 'no call lost yet');
is(info('plan_texts_dropped'), '0', 'no text dropped yet');

# a plan array refused
my $n = 7;
my $m = 3;
is( faulted('plan_array_refused',
		join('', ("SELECT a FROM r1 WHERE a > 1;\n") x $n)
		  . join('', ("SELECT a FROM r2 WHERE a > 1;\n") x $m)),
	join("\n", ('2') x ($n + $m)),
	"$n executions while the plan array is refused, then $m of a new statement");
is(statement('r1'), "$n 0 - -",
	"the statement counts its $n calls and has no plan row");
is(info('plan_calls_lost'), $n, "plan_calls_lost counts the $n calls");
is(statement('r2'), "$m 1 $m " . text_of('r2'),
	'the next new statement has its plan row and its text');
is(info('plan_texts_dropped'), '1',
	'plan_texts_dropped: the refused plan\'s text, which had no record to go to');

# a plan text refused
is( faulted('plan_text_refused',
		join('', ("SELECT a FROM r3 WHERE a > 1;\n") x $n)
		  . join('', ("SELECT a FROM r4 WHERE a > 1;\n") x $m)),
	join("\n", ('2') x ($n + $m)),
	"$n executions while the plan text is refused, then $m of a new statement");
is(statement('r3'), "$n 1 $n NULL",
	"the statement's plan row counts its $n calls, without text");
is(info('plan_texts_dropped'), '2', 'plan_texts_dropped counts the refused text');
is(statement('r4'), "$m 1 $m " . text_of('r4'),
	'the next new plan has its text');
is(info('plan_calls_lost'), $n, 'plan_calls_lost unchanged');
is(info('plan_text_memory_used'),
	length(text_of('r2')) + 1 + length(text_of('r4')) + 1,
	'plan_text_memory_used: the two texts kept, none refused');

$node->stop;
done_testing();
