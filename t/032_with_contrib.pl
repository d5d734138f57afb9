# contrib's pg_stat_statements and pg_stat_statements_ng preloaded together:
# both count, each in its own views, and the pg_stat_statements.* settings
# stay contrib's.  In either order of shared_preload_libraries.
#
# Needs contrib's library, wherever the drop-in left it (on 15 to 17 it is
# loaded from the drop-in's backup directory, see 030_contrib_common.pm);
# skipped where it is not installed.
use strict;
use warnings FATAL => 'all';

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

BEGIN
{
	require "$FindBin::RealBin/030_contrib_common.pm";
	ContribCommon->import;
}

my ($contrib_lib, $moved_to) = contrib_library();
plan skip_all => "contrib's pg_stat_statements library is not installed"
  unless defined $contrib_lib;

my $n = 0;
foreach my $order ("$contrib_lib, pg_stat_statements_ng",
	"pg_stat_statements_ng, $contrib_lib")
{
	my $node = PostgreSQL::Test::Cluster->new('both' . ++$n);
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$order'\npg_stat_statements.max = 1000\n");
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pg_stat_statements_ng');
	point_at_contrib($node, 'postgres', $contrib_lib) if defined $moved_to;
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
