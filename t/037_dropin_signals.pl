# What a contrib user watches, under the drop-in:
# - without the library preloaded, every function of the extension named
#   pg_stat_statements fails naming what the DBA configures:
#   pg_stat_statements, not pg_stat_statements_ng;
# - pg_stat_statements_info.dealloc rises when the table is full and new
#   statements are turned away by the admission filter (one per execution
#   refused), as contrib's rises when it evicts for them, and restarts with
#   stats_reset when a reset leaves no entry;
# - pg_settings has one row per setting, the one in effect, with its
#   source: pg_stat_statements.max set in the file shows as such, and no
#   pg_stat_statements_ng.max row claims the same value from the default.
#
# Runs where the drop-in is installed.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgContrib;
use NgNode;

my $paths = dropin_conf();
plan skip_all => 'the drop-in is not installed (make install-dropin)'
  unless defined $paths;

# -- not preloaded: the messages name pg_stat_statements
my $node = ng_node(
	'signals',
	-preload => '',
	-conf => $paths,
	-extension => 'pg_stat_statements');
foreach my $call (
	'SELECT * FROM pg_stat_statements',
	'SELECT * FROM pg_stat_statements(false)',
	'SELECT * FROM pg_stat_statements_info',
	'SELECT pg_stat_statements_reset()')
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $call);
	isnt($ret, 0, "$call fails");
	like($stderr,
		qr/ERROR:  pg_stat_statements must be loaded via "shared_preload_libraries"/,
		"$call: the error names pg_stat_statements");
	like($stderr,
		qr/HINT:  Add pg_stat_statements to shared_preload_libraries in postgresql.conf and restart the server\./,
		"$call: so does the hint");
}
$node->stop;

# -- preloaded as contrib's configuration has it, with max in the file
$node->append_conf(
	'postgresql.conf', q(
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.max = 100
));
$node->start;

is( $node->safe_psql(
		'postgres', q(SELECT string_agg(format('%s=%s (%s)', name, setting, source), ', '
			ORDER BY name) FROM pg_settings WHERE name ~ '^pg_stat_statements(_ng)?\.max$')),
	'pg_stat_statements.max=100 (configuration file)',
	'pg_settings: max in effect, from the file, one row');
is($node->safe_psql('postgres', 'SHOW pg_stat_statements_ng.max'), '100',
	'SHOW under our name still gives the value in effect');
# our own name set in a session: its row is the one in effect then
is( $node->safe_psql(
		'postgres', q(SET pg_stat_statements_ng.track = 'all';
		SELECT string_agg(format('%s=%s (%s)', name, setting, source), ', '
			ORDER BY name) FROM pg_settings WHERE name ~ '^pg_stat_statements(_ng)?\.track$')),
	'pg_stat_statements_ng.track=all (session)',
	'pg_settings: a SET under our name is the row in effect');

# the workload's session is counted; the test's own reads are not
$ENV{PGOPTIONS} = '-c pg_stat_statements.track=none';
sub work { return ng_tracked($node, 'postgres', $_[0]); }

$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');
# 100 statements fill the table (max = 100); 30 more, each run once, are
# refused an entry by the admission filter
work(join("\n", map { 'SELECT ' . join(' + ', (1) x $_) . ';' } 1 .. 100));
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements'),
	'100', 'the table is full');
is($node->safe_psql('postgres', 'SELECT dealloc FROM pg_stat_statements_info'),
	'0', 'dealloc 0 while everything fits');
work(join("\n", map { 'SELECT ' . join(' + ', (1) x $_) . ';' } 101 .. 130));
is($node->safe_psql('postgres', 'SELECT dealloc FROM pg_stat_statements_info'),
	'30', 'dealloc 30: one per new statement turned away');

# as contrib's: a reset with arguments restarts dealloc and stats_reset
# when it leaves no entry, and only then
my $reset_at =
  $node->safe_psql('postgres', 'SELECT stats_reset FROM pg_stat_statements_info');
$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset(0, 0, 1)');
is( $node->safe_psql(
		'postgres', qq(SELECT dealloc, stats_reset = '$reset_at' FROM pg_stat_statements_info)),
	'30|t', 'a reset that removes nothing leaves dealloc and stats_reset');
$node->safe_psql('postgres',
	q(SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = 'postgres'), 0)));
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements'),
	'0', 'a reset of the only database removed every entry');
is( $node->safe_psql(
		'postgres', qq(SELECT dealloc, stats_reset > '$reset_at' FROM pg_stat_statements_info)),
	'0|t', 'and restarted dealloc and stats_reset, as contrib does');

$node->stop;
done_testing();
