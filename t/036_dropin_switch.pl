# Switching between contrib's pg_stat_statements and the drop-in, on one
# cluster, both ways, keeps the statistics and never brings older ones
# back:
# - contrib runs, counts, stops cleanly (it writes pg_stat/pg_stat_statements.stat);
#   the drop-in's first start imports that file (counts, stats_since from
#   17 on, texts normalized again: no literal) and removes it;
# - the drop-in counts on, stops cleanly: it writes its own file and
#   contrib's; a restart of the drop-in restores its own;
# - contrib starts with what the drop-in saved, counts on, stops cleanly;
#   the drop-in then imports contrib's newer file, not its own older one;
# - contrib reads the drop-in's file, then is told not to save, stops: the
#   drop-in's own file is older than what contrib counted, and is dropped.
#
# Runs where the drop-in and contrib's library are both installed.
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
my ($lib) = contrib_library();
plan skip_all => "contrib's pg_stat_statements library is not installed"
  unless defined $lib;
# by absolute path: on 18 the name finds the drop-in's link first
$lib = pg_config_value('pkglibdir') . '/pg_stat_statements.so'
  if $lib eq 'pg_stat_statements';

# the library named by use_contrib or use_dropin
my $node = ng_init_node(
	'switch', @NG_SMALL,
	-preload => '',
	-conf => $paths,
	'pg_stat_statements.track_utility' => 'on');
my $major = $node->pg_version->major;
my $pgss_file = $node->data_dir . '/pg_stat/pg_stat_statements.stat';
my $ng_file = $node->data_dir . '/pg_stat/pg_stat_statements_ng.stat';

sub use_contrib
{
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$lib'\n");
	return;
}

sub use_dropin
{
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'pg_stat_statements'\n");
	return;
}

# the rows this test makes (those that read the view left out)
my $since = $major >= 17 ? 'stats_since' : 'NULL::timestamptz';
my $rows_sql = qq(SELECT queryid, calls, rows, $since, query
	FROM pg_stat_statements
	WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_proc%'
	ORDER BY queryid, toplevel);
my $count_sql = q(SELECT calls FROM pg_stat_statements
	WHERE query = 'SELECT count(*) FROM sw WHERE a > $1');
my $info_sql = 'SELECT dealloc, stats_reset FROM pg_stat_statements_info';

sub start_logged
{
	my $off = -s $node->logfile // 0;
	$node->start;
	return $off;
}

# the log since $off, once the keeper has restored or imported what it
# does (it runs after the server accepts connections)
sub log_after
{
	my ($off, $last) = @_;
	$node->wait_for_log(
		$last // qr/pg_stat_statements_ng: (restored|imported|ignoring saved statistics)/,
		$off);
	return substr(slurp_file($node->logfile), $off);
}

# -- contrib counts, and saves at a clean stop
use_contrib();
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
point_at_contrib($node, 'postgres', $lib);
$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');
$node->safe_psql('postgres', join("\n",
	'CREATE TABLE sw (a int, b varchar(20));',
	q(COMMENT ON TABLE sw IS 'secret comment';),
	q(INSERT INTO sw SELECT g, 'x' FROM generate_series(1, 10) g;),
	('SELECT count(*) FROM sw WHERE a > 3;') x 7));
my $contrib_rows = $node->safe_psql('postgres', $rows_sql);
my $contrib_info = $node->safe_psql('postgres', $info_sql);
like($contrib_rows, qr/IS 'secret comment'/,
	"contrib stores the COMMENT's literal");
is($node->safe_psql('postgres', $count_sql), '7', 'contrib counted 7 calls');
$node->stop;
ok(-f $pgss_file, "contrib saved its file at the clean stop");

# -- the drop-in's first start imports it, normalized, and removes it
use_dropin();
my $off = start_logged();
$node->safe_psql('postgres',
	"UPDATE pg_proc SET probin = '\$libdir/pg_stat_statements' WHERE probin = '$lib'");
like(log_after($off),
	qr/pg_stat_statements_ng: imported statistics of \d+ statements from contrib's "pg_stat\/pg_stat_statements.stat"/,
	'the drop-in imported contrib\'s file');
ok(!-e $pgss_file, "contrib's file is removed");
(my $expected = $contrib_rows) =~ s/'secret comment'/\$1/;
$expected =~ s/varchar\(20\)/varchar(\$1)/;
is($node->safe_psql('postgres', $rows_sql), $expected,
	'the drop-in shows contrib\'s rows: counts, stats_since, texts without literals');
is($node->safe_psql('postgres', $info_sql), $contrib_info,
	"pg_stat_statements_info: contrib's dealloc and stats_reset");

# -- the drop-in counts on; a clean stop writes both files
$node->safe_psql('postgres', join("\n",
	('SELECT count(*) FROM sw WHERE a > 3;') x 2,
	('SELECT a FROM sw WHERE a = 5;') x 3));
my $dropin_rows = $node->safe_psql('postgres', $rows_sql);
is($node->safe_psql('postgres', $count_sql), '9', 'the drop-in counted on: 9 calls');
$node->stop;
ok(-f $ng_file && -f $pgss_file, 'a clean stop wrote our file and contrib\'s');

# -- a restart of the drop-in restores its own file
$off = start_logged();
like(log_after($off), qr/pg_stat_statements_ng: restored statistics of \d+ statements/,
	'a restart of the drop-in restores its own file');
ok(!-e $pgss_file && !-e $ng_file, 'and removes both');
is($node->safe_psql('postgres', $rows_sql), $dropin_rows, 'same rows after the restart');
$node->stop;

# -- switched back, contrib starts with what the drop-in saved
use_contrib();
$node->start;
point_at_contrib($node, 'postgres', $lib);
is($node->safe_psql('postgres', $rows_sql), $dropin_rows,
	'contrib starts with the drop-in\'s statistics');
$node->safe_psql('postgres', 'SELECT count(*) FROM sw WHERE a > 3');
is($node->safe_psql('postgres', $count_sql), '10', 'contrib counted on: 10 calls');
$node->stop;
ok(-f $ng_file, "the drop-in's file of before is still there");

# -- the drop-in imports contrib's newer file, not its own older one
use_dropin();
$off = start_logged();
$node->safe_psql('postgres',
	"UPDATE pg_proc SET probin = '\$libdir/pg_stat_statements' WHERE probin = '$lib'");
my $log = log_after($off, qr/pg_stat_statements_ng: imported statistics/);
like($log,
	qr/ignoring saved statistics in "pg_stat\/pg_stat_statements_ng.stat": contrib's pg_stat_statements saved statistics since/,
	'the drop-in drops its own older file');
like($log, qr/imported statistics of \d+ statements from contrib's/,
	"and imports contrib's");
is($node->safe_psql('postgres', $count_sql), '10', '10 calls, as contrib left them');
$node->stop;

# -- contrib reads the drop-in's file, then does not save: the drop-in's own
# file is older than what contrib counted
use_contrib();
$node->start;
point_at_contrib($node, 'postgres', $lib);
$node->safe_psql('postgres', 'SELECT count(*) FROM sw WHERE a > 3');
$node->safe_psql('postgres',
	'ALTER SYSTEM SET pg_stat_statements.save = off; SELECT pg_reload_conf()');
$node->poll_query_until('postgres',
	"SELECT current_setting('pg_stat_statements.save') = 'off'");
$node->safe_psql('postgres', 'ALTER SYSTEM RESET pg_stat_statements.save');
$node->stop;
ok(!-e $pgss_file && -f $ng_file,
	"contrib saved nothing; the drop-in's file is there");
use_dropin();
$off = start_logged();
$node->safe_psql('postgres',
	"UPDATE pg_proc SET probin = '\$libdir/pg_stat_statements' WHERE probin = '$lib'");
like(log_after($off),
	qr/ignoring saved statistics in "pg_stat\/pg_stat_statements_ng.stat": contrib's pg_stat_statements has read the statistics saved with them since/,
	'the drop-in drops its own file that contrib read since');
is($node->safe_psql('postgres', $count_sql), '',
	'no statistics come back from before contrib ran');
ok(!-e $ng_file, 'the file is removed');

$node->stop;
done_testing();
