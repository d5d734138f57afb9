# A plan node of a type the plan id does not know (a newer minor's, or an
# extension's), made real with the fault planid_unknown_hashjoin
# (assertion builds): every Hash Join is hashed by its tag alone, and its
# children are walked.  Two statements whose plans differ only in the Hash
# Join's join type (inner, left) get one planid under the fault and two
# without it: the fault's branch ran.  Two whose plans differ in the
# relation under the Hash Join get two planids under the fault: the
# children were walked.  The planid is stable across executions and
# sessions, the plan text is EXPLAIN's as without the fault, and nothing
# raises an error.  Each execution is planned anew (simple protocol: no
# cached plan), so each computes its planid.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('planid_unknown', 'pg_stat_statements_ng.track' => 'none');
plan skip_all => 'debug_fault needs an assertion build'
  unless ng_has_debug_fault($node);

$node->safe_psql('postgres', q{
CREATE TABLE big (x int);
INSERT INTO big SELECT g % 20 FROM generate_series(1, 2000) g;
CREATE TABLE s1 (x int, y int);
INSERT INTO s1 SELECT g, g FROM generate_series(1, 10) g;
CREATE TABLE s2 (x int, y int);
INSERT INTO s2 SELECT g, g FROM generate_series(1, 10) g;
ANALYZE big, s1, s2;
});

my %sql = (
	inner => 'SELECT count(y) FROM big JOIN s1 USING (x)',
	left => 'SELECT count(y) FROM big LEFT JOIN s1 USING (x)',
	other => 'SELECT count(y) FROM big JOIN s2 USING (x)');
my $joins = '-c enable_mergejoin=off -c enable_nestloop=off';

# the plans: the same but for the join type, and the relation
my %explain = map {
	$_ => scalar $node->safe_psql('postgres',
		"SET enable_mergejoin = off; SET enable_nestloop = off;\n"
		  . "EXPLAIN (COSTS OFF) $sql{$_}")
} keys %sql;
like($explain{inner}, qr/^Aggregate\n  ->  Hash Join\n/, 'inner: a Hash Join');
(my $as_inner = $explain{left}) =~ s/Hash Left Join/Hash Join/;
is($as_inner, $explain{inner}, 'left: the same plan but for its join type');
(my $as_s1 = $explain{other}) =~ s/\bs2\b/s1/g;
is($as_s1, $explain{inner}, 'other: the same plan but for its relation');

# run each statement $times times, tracked, in a session of its own, with
# the fault or not; wait for the session's exit (its slots folded)
sub run
{
	my ($fault, $times) = @_;
	my ($out, $err) = ('', '');
	{
		local $ENV{PGOPTIONS} = "-c pg_stat_statements_ng.track=top $joins"
		  . ($fault ? ' -c pg_stat_statements_ng.debug_fault=planid_unknown_hashjoin' : '');
		$node->psql('postgres',
			join('', map { "$sql{$_};\n" x $times } sort keys %sql),
			stdout => \$out, stderr => \$err, on_error_die => 1);
	}
	is($err, '', 'no client message' . ($fault ? ' under the fault' : ''));
	$node->poll_query_until('postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()})
	  or die 'a tracked session did not exit';
}

run(1, 3);
run(1, 2);
run(0, 4);

# each statement's plan rows, by calls: 5 under the fault, 4 without
my %row;
foreach my $k (keys %sql)
{
	my @rows = split /\n/, $node->safe_psql('postgres', qq{
SELECT p.calls || '|' || coalesce(p.planid::text, 'NULL') || '|' ||
       coalesce(replace(p.plan, E'\\n', '~'), 'NULL')
FROM pg_stat_statements_ng s
JOIN pg_stat_statements_ng_plans p USING (userid, dbid, queryid, toplevel)
WHERE s.query = '$sql{$k}'
ORDER BY p.calls DESC});
	is(scalar(@rows), 2, "$k: two plan rows");
	my %by_calls = map { my @f = split /\|/, $_, 3; ($f[0] => [ @f[ 1, 2 ] ]) } @rows;
	is_deeply([ sort { $b <=> $a } keys %by_calls ], [ 5, 4 ],
		"$k: 5 calls under the fault, in two sessions, in one row; 4 without");
	$row{$k} = \%by_calls;
}

my %fault = map { $_ => $row{$_}{5}[0] } keys %sql;
my %plain = map { $_ => $row{$_}{4}[0] } keys %sql;
isnt($fault{inner}, 'NULL', 'under the fault a planid is given');
is($fault{left}, $fault{inner},
	'under the fault, plans differing only in join type have one planid');
isnt($plain{left}, $plain{inner}, 'without it, two');
isnt($fault{other}, $fault{inner},
	'under the fault, plans differing in the relation under the join differ');
isnt($fault{inner}, $plain{inner}, 'the planid under the fault is another one');

foreach my $k (sort keys %sql)
{
	(my $text = $explain{$k}) =~ s/\n/~/g;
	is($row{$k}{5}[1], $row{$k}{4}[1],
		"$k: the plan text under the fault is the one without");
	is($row{$k}{5}[1], $text, "$k: and is EXPLAIN's");
}

is( $node->safe_psql('postgres',
		q{SELECT sum(calls) FROM pg_stat_statements_ng WHERE query LIKE 'SELECT count(y)%'}),
	'27', 'the statements count all 27 executions');
my $log = slurp_file($node->logfile);
unlike($log, qr/ERROR/, 'no ERROR in the server log');

$node->stop;
done_testing();
