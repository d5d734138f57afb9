# A real collector against the drop-in: Debian's prometheus-postgres-exporter
# scraping a cluster configured as for contrib (shared_preload_libraries
# names pg_stat_statements, which the drop-in makes our library), through the
# queries file the project ships (docs/exporter/queries.yaml).  The metric of
# a statement run N times shows calls N; every column of the running major's
# view is exported; the native view's extras (percentiles, errors, timeouts)
# are exported too.  The exporter listens on 127.0.0.1, on a free port.
use strict;
use warnings FATAL => 'all';

use File::Basename;
use HTTP::Tiny;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

BEGIN
{
	require "$FindBin::RealBin/030_contrib_common.pm";
	ContribCommon->import;
}
use Time::HiRes qw(usleep);

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => "$exporter is not installed (scripts/setup-postgres.sh installs it)"
  unless -x $exporter;
my $queries = dirname(__FILE__) . '/../docs/exporter/queries.yaml';
$queries = `realpath $queries`;
chomp $queries;

my $node = PostgreSQL::Test::Cluster->new('exporter');
my $major = $node->pg_version->major;
# the lines a cluster needs to find the drop-in (18: its own directory;
# 15 to 17: none, it is in contrib's place)
my $paths = dropin_conf();
plan skip_all => 'the drop-in is not installed (make install-dropin)'
  unless defined $paths;

$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements'\n$paths");
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pg_stat_statements_ng');
$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');

$node->safe_psql('postgres', 'SELECT 1 AS exporter_probe') for 1 .. 7;
for (1 .. 3)
{
	# an error in execution (1 / 0 would fail in planning, not counted)
	my ($ret) = $node->psql('postgres',
		'SELECT 1 / g AS exporter_error FROM generate_series(0, 0) g');
	die 'the division did not fail' if $ret == 0;
}
my ($ret) = $node->psql('postgres',
	"SET statement_timeout = '100ms'; SELECT pg_sleep(5) AS exporter_timeout");
die 'the sleep was not stopped' if $ret == 0;

sub queryid
{
	my ($text) = @_;
	return $node->safe_psql('postgres',
		"SELECT queryid FROM pg_stat_statements_ng WHERE query = '$text' AND toplevel");
}
my $probe = queryid('SELECT $1 AS exporter_probe');
my $error = queryid('SELECT $1 / g AS exporter_error FROM generate_series($2, $3) g');
my $timeout = queryid('SELECT pg_sleep($1) AS exporter_timeout');
like("$probe $error $timeout", qr/^-?\d+ -?\d+ -?\d+$/,
	'the three statements have queryids');

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $dsn = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres sslmode=disable';
my $log = $PostgreSQL::Test::Utils::log_path . '/035_exporter.log';
my $h = IPC::Run::start(
	[
		$exporter, "--web.listen-address=127.0.0.1:$port",
		"--extend.query-path=$queries", '--disable-default-metrics',
		'--disable-settings-metrics', '--no-collector.database',
		'--no-collector.bgwriter'
	],
	'<', \undef, '>', $log, '2>&1',
	init => sub { $ENV{DATA_SOURCE_NAME} = $dsn });

# scrape until the exporter answers with our metrics (bounded)
my $http = HTTP::Tiny->new(timeout => 5);
my $metrics = '';
foreach my $try (1 .. 100)
{
	my $res = $http->get("http://127.0.0.1:$port/metrics");
	$metrics = $res->{content} if $res->{success};
	last if $metrics =~ /^pg_stat_statements_calls\{/m;
	usleep(200_000);
}

sub metric
{
	my ($name, $queryid) = @_;
	return $1
	  if $metrics =~ /^\Q$name\E\{[^}]*queryid="\Q$queryid\E"[^}]*toplevel="true"[^}]*\} (\S+)$/m;
	return undef;
}

is(metric('pg_stat_statements_calls', $probe), '7',
	'the statement run 7 times shows calls 7');
is(metric('pg_stat_statements_rows', $probe), '7', 'and rows 7');
like($metrics, qr/^# TYPE pg_stat_statements_calls counter$/m,
	'calls is a counter, as the queries file says');
is(metric('pg_stat_statements_ng_errors', $error), '3',
	'the statement that failed 3 times shows errors 3');
is(metric('pg_stat_statements_ng_timeouts', $timeout), '1',
	'the statement stopped by statement_timeout shows timeouts 1');
ok(defined metric('pg_stat_statements_ng_exec_p99', $probe),
	'the 99th percentile is exported');

# every column of the running major's view, but the discarded ones, has a
# metric for the statement
my @columns = split /\n/, $node->safe_psql('postgres',
	q{SELECT attname FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass AND attnum > 0
	    AND attname NOT IN ('userid', 'dbid', 'toplevel', 'queryid', 'query') ORDER BY attnum});
my @missing = grep { !defined metric("pg_stat_statements_$_", $probe) } @columns;
is("@missing", '', 'a metric for every column of the view ('
	  . scalar(@columns) . " on $major)");

$h->kill_kill;
$node->stop;
done_testing();
