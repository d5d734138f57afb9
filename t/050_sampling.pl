# sample_rate: with 0.1, over 100,000 executions the tracked calls are within
# three standard deviations of 10,000, and sampling never stores a literal:
# a statement skipped by sampling is still parsed, and normalized, first.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('sampling', 'pg_stat_statements_ng.sample_rate' => '0.1');
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');

my $script = $node->basedir . '/sampled.sql';
open my $fh, '>', $script or die;
print $fh "\\set n random(1, 1000000)\nSELECT 'secret-marker-' || :n AS s;\n";
close $fh;

my ($out, $err);
my $n = 100_000;
IPC::Run::run([ 'pgbench', '-n', '-M', 'simple', '-c', 4, '-j', 2,
		'-t', $n / 4, '-f', $script, '-h', $node->host, '-p', $node->port,
		'postgres' ], '>', \$out, '2>', \$err)
  or die "pgbench failed: $err";
like($out, qr/number of transactions actually processed: $n\b/, "$n executions");

my $calls = $node->safe_psql('postgres',
	q{SELECT calls FROM pg_stat_statements_ng WHERE query = 'SELECT $1 || $2 AS s'});
my $sd = sqrt($n * 0.1 * 0.9);
cmp_ok($calls, '>=', 10_000 - 3 * $sd, "tracked calls ($calls) not below 10000 - 3 sd");
cmp_ok($calls, '<=', 10_000 + 3 * $sd, "tracked calls ($calls) not above 10000 + 3 sd");

is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_statements_ng WHERE query = 'SELECT $1 || $2 AS s'}),
	'1', 'the text is normalized');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_statements_ng(true) WHERE query LIKE '%secret-marker-%'}),
	'0', 'no stored text holds the secret marker');

# sample_rate = 0: nothing counted, texts still made normalized
$node->safe_psql('postgres', q{
ALTER SYSTEM SET pg_stat_statements_ng.sample_rate = 0;
SELECT pg_reload_conf();
});
$node->poll_query_until('postgres',
	q{SELECT current_setting('pg_stat_statements_ng.sample_rate') = '0'});
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
$node->safe_psql('postgres', q{SELECT 'secret-marker-2' AS s}) for 1 .. 20;
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_statements_ng WHERE query = 'SELECT $1 AS s'}),
	'0', 'sample_rate = 0: nothing counted');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_statements_ng(true) WHERE query LIKE '%secret-marker-%'}),
	'0', 'sample_rate = 0: no stored text holds the secret marker');

# nested statements follow their top-level statement's decision
$node->safe_psql('postgres', q{
ALTER SYSTEM SET pg_stat_statements_ng.sample_rate = 0.5;
ALTER SYSTEM SET pg_stat_statements_ng.track = 'all';
SELECT pg_reload_conf();
CREATE FUNCTION nested_twice() RETURNS int LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  SELECT count(*) INTO r FROM pg_class WHERE relname = 'nested_a';
  SELECT count(*) INTO r FROM pg_attribute WHERE attname = 'nested_b';
  RETURN r;
END $$;
});
$node->poll_query_until('postgres',
	q{SELECT current_setting('pg_stat_statements_ng.sample_rate') = '0.5'});
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
$node->safe_psql('postgres', 'SELECT nested_twice()') for 1 .. 200;
my $rows = $node->safe_psql('postgres', q{
SELECT string_agg(calls::text, ',' ORDER BY query COLLATE "C")
  FROM pg_stat_statements_ng
 WHERE query LIKE '%FROM pg_class WHERE relname%'
    OR query LIKE '%FROM pg_attribute WHERE attname%'
    OR query = 'SELECT nested_twice()'});
my ($a, $b, $top) = split /,/, $rows;
is($a, $b, 'the two nested statements are counted together');
is($a, $top, 'and exactly as often as the statement that runs them');
cmp_ok($top, '>', 0, 'some were counted');
cmp_ok($top, '<', 200, 'some were not');

$node->stop;
done_testing();
