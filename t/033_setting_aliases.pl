# contrib's setting names as second names of ours: a value set in the
# configuration under either name is in effect under both, and so is a SET.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('aliases');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements_ng'
pg_stat_statements_ng.track = 'all'
pg_stat_statements.max = 1234
pg_stat_statements.track_planning = on
});
$node->start;

sub show
{
	return $node->safe_psql('postgres',
		"SELECT current_setting('pg_stat_statements_ng.$_[0]') || ' ' || current_setting('pg_stat_statements.$_[0]')");
}
is(show('track'), 'all all', 'our name set in the file: both names show it');
is(show('max'), '1234 1234', "contrib's name set in the file: both names show it");
is(show('track_planning'), 'on on', 'the same for a boolean');
is(show('track_utility'), 'on on', 'a setting set nowhere: the default under both');
is( $node->safe_psql('postgres',
		"SET pg_stat_statements.track = 'none'; SELECT current_setting('pg_stat_statements_ng.track')"),
	'none', 'SET under one name is seen under the other');

# and in effect: with track = all, nested statements are counted
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements_ng');
$node->safe_psql('postgres', 'DO $$ BEGIN PERFORM count(*) FROM pg_class; END $$');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_statements_ng WHERE NOT toplevel AND query LIKE '%pg_class%'}),
	'1', 'track = all from the file is in effect');

# after a reload that sets contrib's name only
$node->append_conf('postgresql.conf', "pg_stat_statements.max = 2000\n");
$node->reload;
$node->poll_query_until('postgres',
	"SELECT current_setting('pg_stat_statements_ng.max') = '2000'")
  or die 'reload not applied';
is(show('max'), '2000 2000', 'a reload through contrib name reaches ours');

# a SET is stronger than the configuration file under either name, and a
# RESET brings the file's value back under both
is( $node->safe_psql('postgres',
		"SET pg_stat_statements_ng.track_planning = off; SELECT current_setting('pg_stat_statements.track_planning')"),
	'off', "SET of our name beats contrib's name set in the file");
is( $node->safe_psql('postgres',
		"SET pg_stat_statements_ng.track_planning = off; RESET pg_stat_statements_ng.track_planning; "
		  . "SELECT current_setting('pg_stat_statements.track_planning')"),
	'on', 'RESET brings the value of the file back');

# both names set in the configuration: contrib's name wins, at a reload as
# at a restart, whatever order the file has them in
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_stat_statements.max = 300');
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_stat_statements_ng.max = 700');
$node->reload;
$node->poll_query_until('postgres',
	"SELECT sourcefile LIKE '%postgresql.auto.conf' FROM pg_settings WHERE name = 'pg_stat_statements.max'")
  or die 'reload not applied';
is(show('max'), '300 300', "both names set: contrib's wins at a reload");
is( $node->safe_psql('postgres',
		q{SELECT string_agg(name || ' ' || setting || ' ' || source, ', ' ORDER BY name)
		    FROM pg_settings WHERE name IN ('pg_stat_statements.max', 'pg_stat_statements_ng.max')}),
	'pg_stat_statements.max 300 configuration file',
	'pg_settings shows the value in effect under the name it comes from, with its source, once');
$node->restart;
is(show('max'), '300 300', "both names set: contrib's wins at a restart");
is($node->safe_psql('postgres', 'SELECT max FROM pg_stat_statements_ng_info'),
	'300', 'and it is the limit in use');

$node->stop;
done_testing();
