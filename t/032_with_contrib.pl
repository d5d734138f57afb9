# contrib's pg_stat_statements and pg_stat_statements_ng preloaded together:
# both count, each in its own views, and the pg_stat_statements.* settings
# stay contrib's.  In either order of shared_preload_libraries.
#
# Needs contrib's library itself, which the drop-in replaces on 15 to 17
# (make install-dropin moves it aside); skipped there while it is installed.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($stdout, $stderr);
IPC::Run::run([ 'pg_config', '--pkglibdir' ], '>', \$stdout);
chomp(my $pkglibdir = $stdout);
plan skip_all => "contrib's library is replaced by the drop-in here"
  if -l "$pkglibdir/pg_stat_statements.so";

my $n = 0;
foreach my $order ('pg_stat_statements, pg_stat_statements_ng',
	'pg_stat_statements_ng, pg_stat_statements')
{
	my $node = PostgreSQL::Test::Cluster->new('both' . ++$n);
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$order'\npg_stat_statements.max = 1000\n");
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pg_stat_statements_ng');
	$node->safe_psql('postgres',
		'SELECT pg_stat_statements_reset(); SELECT pg_stat_statements_ng_reset()');
	$node->safe_psql('postgres', 'SELECT 1 AS both_count') for 1 .. 7;

	is( $node->safe_psql('postgres',
			q{SELECT calls FROM pg_stat_statements WHERE query = 'SELECT $1 AS both_count'}),
		'7', "$order: contrib counts");
	is( $node->safe_psql('postgres',
			q{SELECT calls FROM pg_stat_statements_ng WHERE query = 'SELECT $1 AS both_count'}),
		'7', "$order: ours counts");
	is( $node->safe_psql('postgres',
			q{SELECT a.queryid = b.queryid FROM pg_stat_statements a, pg_stat_statements_ng b
			   WHERE a.query = 'SELECT $1 AS both_count' AND b.query = a.query}),
		't', "$order: the same queryid");
	is($node->safe_psql('postgres', 'SHOW pg_stat_statements.max'),
		'1000', "$order: pg_stat_statements.max is contrib's setting");
	is($node->safe_psql('postgres', 'SHOW pg_stat_statements_ng.max'),
		'5000', "$order: ours is separate");
	$node->stop;
}

done_testing();
