# Without the library in shared_preload_libraries, the extension can be
# created but every function fails with a clear error and a hint, and
# nothing is counted.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements_ng');

foreach my $call (
	'SELECT * FROM pg_stat_statements_ng',
	'SELECT * FROM pg_stat_statements_ng(false)',
	'SELECT * FROM pg_stat_statements_ng_info',
	'SELECT pg_stat_statements_ng_reset()',
	'SELECT pg_stat_statements_ng_reset(0, 0, 0, true)')
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $call);
	isnt($ret, 0, "$call fails");
	like(
		$stderr,
		qr/ERROR:  pg_stat_statements_ng must be loaded via "shared_preload_libraries"/,
		"$call: error message");
	like(
		$stderr,
		qr/HINT:  Add pg_stat_statements_ng to shared_preload_libraries in postgresql.conf and restart the server./,
		"$call: hint");
}

# loading the library in a session (not preloaded) must not break queries
$node->safe_psql('postgres', "LOAD 'pg_stat_statements_ng'; SELECT 1");
is($node->safe_psql('postgres', "LOAD 'pg_stat_statements_ng'; SELECT 41 + 1"),
	'42', 'queries run with the library loaded late');

$node->stop;
done_testing();
