# contrib's pg_stat_statements and pg_stat_statements_ng preloaded together:
# both count, each in its own views, and the pg_stat_statements.* settings
# stay contrib's.  In either order of shared_preload_libraries.
#
# Needs contrib's library, wherever the drop-in left it (on 15 to 17 it is
# loaded from the drop-in's backup directory, see t/lib/NgContrib.pm);
# skipped where it is not installed.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgContrib;

my ($lib, $moved_to) = contrib_library();
plan skip_all => "contrib's pg_stat_statements library is not installed"
  unless defined $lib;
my $view = 'pg_stat_statements';

my $n = 0;
foreach my $order ("$lib, pg_stat_statements_ng", "pg_stat_statements_ng, $lib")
{
	my $node = PostgreSQL::Test::Cluster->new('both' . ++$n);
	# SET's constant is normalized from 18 on
	my $set =
	  $node->pg_version->major >= 18 ? 'SET work_mem = $1' : q{SET work_mem = ''4MB''};
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$order'\npg_stat_statements.max = 1000\n");
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pg_stat_statements_ng');
	point_at_contrib($node, 'postgres', $lib) if defined $moved_to;
	$node->safe_psql('postgres',
		'SELECT pg_stat_statements_reset(); SELECT pg_stat_statements_ng_reset()');
	$node->safe_psql('postgres', 'SELECT 1 AS both_count') for 1 .. 7;

	is( $node->safe_psql('postgres',
			qq{SELECT calls FROM $view WHERE query = 'SELECT \$1 AS both_count'}),
		'7', "$order: contrib counts");
	is( $node->safe_psql('postgres',
			q{SELECT calls FROM pg_stat_statements_ng WHERE query = 'SELECT $1 AS both_count'}),
		'7', "$order: ours counts");
	is( $node->safe_psql('postgres',
			qq{SELECT a.queryid = b.queryid FROM $view a, pg_stat_statements_ng b
			   WHERE a.query = 'SELECT \$1 AS both_count' AND b.query = a.query}),
		't', "$order: the same queryid");
	is($node->safe_psql('postgres', 'SHOW pg_stat_statements.max'),
		'1000', "$order: pg_stat_statements.max is contrib's setting");
	is($node->safe_psql('postgres', 'SHOW pg_stat_statements_ng.max'),
		'5000', "$order: ours is separate");

	# utility statements: each library's hook passes the queryId on to the
	# other, so both count every one of them, under the same queryid
	$node->safe_psql('postgres', 'CREATE TABLE both_u (a int)');
	$node->safe_psql('postgres', "SET work_mem = '4MB'") for 1 .. 3;
	$node->safe_psql('postgres', 'BEGIN; SELECT 1 AS in_tx; COMMIT') for 1 .. 2;
	$node->safe_psql('postgres', 'ANALYZE both_u') for 1 .. 4;
	# ours shows a utility statement's literals as $n on every major
	my $set_ours = 'SET work_mem = $1';
	my $utility = q{
SELECT string_agg(calls || ' ' || rows || ' ' || query, ', ' ORDER BY query)
  FROM %s WHERE query IN ('CREATE TABLE both_u (a int)', '%s', 'BEGIN',
                          'COMMIT', 'ANALYZE both_u')};
	my $expected = '4 0 ANALYZE both_u, 2 0 BEGIN, 2 0 COMMIT, '
	  . "1 0 CREATE TABLE both_u (a int), 3 0 %s";
	(my $set_text = $set) =~ s/''/'/g;
	is($node->safe_psql('postgres', sprintf($utility, $view, $set)),
		sprintf($expected, $set_text), "$order: contrib counts utility statements");
	is($node->safe_psql('postgres', sprintf($utility, 'pg_stat_statements_ng', $set_ours)),
		sprintf($expected, $set_ours), "$order: ours counts utility statements");
	is( $node->safe_psql('postgres',
			qq{SELECT count(*) FROM $view a JOIN pg_stat_statements_ng b
			   USING (queryid, toplevel)
			   WHERE a.query IN ('CREATE TABLE both_u (a int)', '$set',
			                     'BEGIN', 'COMMIT', 'ANALYZE both_u')
			     AND a.calls = b.calls
			     AND b.query = CASE a.query WHEN '$set' THEN '$set_ours' ELSE a.query END}),
		'5', "$order: under the same queryids");

	$node->stop;
	my $said = () = slurp_file($node->logfile) =~
	  /contrib's pg_stat_statements library is preloaded as well/g;
	is($said, 1, "$order: the log says once that contrib's library is loaded too");
}

done_testing();
