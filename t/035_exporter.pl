# A real collector against the drop-in: Debian's prometheus-postgres-exporter
# scraping two clusters configured as for contrib (shared_preload_libraries
# names pg_stat_statements, which the drop-in makes our library), through the
# queries file the project ships (docs/exporter/queries.yaml).  The metric of
# a statement run N times on a server shows calls N for that server; every
# column of the running major's view is exported; the native views' extras
# (percentiles, errors, timeouts, the fingerprint, the waits, the history's
# last window) are exported too; a statement whose queryids differ between
# the servers (other function OIDs) has one fingerprint on both; and each
# query exports at most 100 statements per scrape however many there are.
# The exporter listens on 127.0.0.1, on a free port.
use strict;
use warnings FATAL => 'all';

use File::Basename;
use HTTP::Tiny;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgContrib;
use Time::HiRes qw(usleep);

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => "$exporter is not installed (scripts/setup-postgres.sh installs it)"
  unless -x $exporter;
my $queries = dirname(__FILE__) . '/../docs/exporter/queries.yaml';
$queries = `realpath $queries`;
chomp $queries;

# the lines a cluster needs to find the drop-in (18: its own directory;
# 15 to 17: none, it is in contrib's place)
my $paths = dropin_conf();
plan skip_all => 'the drop-in is not installed (make install-dropin)'
  unless defined $paths;

my %node;
foreach my $name ('a', 'b')
{
	my $node = PostgreSQL::Test::Cluster->new("exporter_$name");
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'pg_stat_statements'\n$paths"
		  . "pg_stat_statements_ng.history_statements = 200\n");
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pg_stat_statements_ng');
	# b has a function more, made first: exp_f has another OID there, so
	# the statements calling it another queryid
	$node->safe_psql('postgres',
		q{CREATE FUNCTION exp_pad() RETURNS int LANGUAGE sql AS 'SELECT 1'})
	  if $name eq 'b';
	$node->safe_psql('postgres',
		q{CREATE FUNCTION exp_f(int) RETURNS int LANGUAGE sql AS 'SELECT $1'});
	$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');
	$node{$name} = $node;
}
my $major = $node{a}->pg_version->major;

# on a: 7 probes, 3 errors, a timeout, a sleep, 4 calls of exp_f; on b: 5
# probes, 6 calls of exp_f
my ($na, $nb) = ($node{a}, $node{b});
$na->safe_psql('postgres', 'SELECT 1 AS exporter_probe') for 1 .. 7;
$nb->safe_psql('postgres', 'SELECT 1 AS exporter_probe') for 1 .. 5;
$na->safe_psql('postgres', 'SELECT exp_f(1) AS exporter_fp') for 1 .. 4;
$nb->safe_psql('postgres', 'SELECT exp_f(1) AS exporter_fp') for 1 .. 6;
for (1 .. 3)
{
	# an error in execution (1 / 0 would fail in planning, not counted)
	my ($ret) = $na->psql('postgres',
		'SELECT 1 / g AS exporter_error FROM generate_series(0, 0) g');
	die 'the division did not fail' if $ret == 0;
}
my ($ret) = $na->psql('postgres',
	"SET statement_timeout = '100ms'; SELECT pg_sleep(5) AS exporter_timeout");
die 'the sleep was not stopped' if $ret == 0;
$na->safe_psql('postgres', 'SELECT pg_sleep(0.3) AS exporter_wait');
# close the history's open window on both: its rows are these statements'
$_->safe_psql('postgres', 'SELECT pg_stat_statements_ng_take_window()')
  for ($na, $nb);

sub queryid
{
	my ($node, $text) = @_;
	return $node->safe_psql('postgres',
		"SELECT queryid FROM pg_stat_statements_ng WHERE query = '$text' AND toplevel");
}
my $probe = queryid($na, 'SELECT $1 AS exporter_probe');
my $error = queryid($na, 'SELECT $1 / g AS exporter_error FROM generate_series($2, $3) g');
my $timeout = queryid($na, 'SELECT pg_sleep($1) AS exporter_timeout');
my $wait = queryid($na, 'SELECT pg_sleep($1) AS exporter_wait');
my $fp_a = queryid($na, 'SELECT exp_f($1) AS exporter_fp');
my $fp_b = queryid($nb, 'SELECT exp_f($1) AS exporter_fp');
like("$probe $error $timeout $wait $fp_a $fp_b",
	qr/^-?\d+ -?\d+ -?\d+ -?\d+ -?\d+ -?\d+$/, 'the statements have queryids');
isnt($fp_a, $fp_b, 'exp_f\'s statement has another queryid on each server');

my $port = PostgreSQL::Test::Cluster::get_free_port();
my %server;
my @dsn;
foreach my $name ('a', 'b')
{
	my $node = $node{$name};
	$server{$name} = $node->host . ':' . $node->port;
	push @dsn, 'host=' . $node->host . ' port=' . $node->port
	  . ' dbname=postgres sslmode=disable';
}
# 0.11 takes several servers: DSNs separated by commas
my $dsn = join(',', @dsn);
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

# scrape until the exporter answers with both servers' metrics (bounded)
my $http = HTTP::Tiny->new(timeout => 5);
my @samples;
sub scrape
{
	my $metrics = '';
	foreach my $try (1 .. 100)
	{
		my $res = $http->get("http://127.0.0.1:$port/metrics");
		$metrics = $res->{content} if $res->{success};
		last
		  if $metrics =~ /^pg_stat_statements_ng_history_calls\{[^}]*\Q$server{a}\E/m
		  && $metrics =~ /^pg_stat_statements_ng_history_calls\{[^}]*\Q$server{b}\E/m;
		usleep(200_000);
	}
	@samples = ();
	foreach my $line (split /\n/, $metrics)
	{
		next unless $line =~ /^(\w+)\{(.*)\} (\S+)$/;
		my ($name, $labels, $value) = ($1, $2, $3);
		my %l = $labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
		push @samples, { name => $name, labels => \%l, value => $value };
	}
	return $metrics;
}

# the samples of metric name on server, with the labels given
sub find
{
	my ($name, $server, %want) = @_;
	return grep {
		my $s = $_;
		$s->{name} eq $name
		  && ($s->{labels}{server} // '') eq $server{$server}
		  && !grep { ($s->{labels}{$_} // '') ne $want{$_} } keys %want
	} @samples;
}

sub metric
{
	my ($name, $server, $queryid) = @_;
	my @s = find($name, $server, queryid => $queryid, toplevel => 'true');
	return @s == 1 ? $s[0]{value} : undef;
}

my $metrics = scrape();
is(metric('pg_stat_statements_calls', 'a', $probe), '7',
	'the statement run 7 times on a shows calls 7 for a');
is(metric('pg_stat_statements_calls', 'b', $probe), '5',
	'and 5 for b, where it ran 5 times');
is(metric('pg_stat_statements_rows', 'a', $probe), '7', 'rows 7 on a');
like($metrics, qr/^# TYPE pg_stat_statements_calls counter$/m,
	'calls is a counter, as the queries file says');
is(metric('pg_stat_statements_ng_errors', 'a', $error), '3',
	'the statement that failed 3 times shows errors 3');
is(metric('pg_stat_statements_ng_timeouts', 'a', $timeout), '1',
	'the statement stopped by statement_timeout shows timeouts 1');
ok(defined metric('pg_stat_statements_ng_exec_p99', 'a', $probe),
	'the 99th percentile is exported');

# errors by SQLSTATE: the division's 3 as 22012, the timeout as 57014
my @e = find('pg_stat_statements_ng_errors_errors', 'a', queryid => $error);
is(join(' ', map { "$_->{labels}{sqlstate}=$_->{value}" } @e), '22012=3',
	'the division by zero: 3 errors of SQLSTATE 22012');
@e = find('pg_stat_statements_ng_errors_errors', 'a', queryid => $timeout);
is(join(' ', map { "$_->{labels}{sqlstate}=$_->{value}" } @e), '57014=1',
	'the timeout: 1 of SQLSTATE 57014');
is(scalar(find('pg_stat_statements_ng_errors_errors', 'b')), 0,
	'no errors by SQLSTATE on b, where nothing failed');

# one fingerprint for exp_f's statement on both servers, its queryids apart
my ($fa) = find('pg_stat_statements_ng_errors', 'a', queryid => $fp_a);
my ($fb) = find('pg_stat_statements_ng_errors', 'b', queryid => $fp_b);
my $fingerprint = $na->safe_psql('postgres',
	"SELECT fingerprint FROM pg_stat_statements_ng WHERE queryid = $fp_a");
is($fa->{labels}{fingerprint}, $fingerprint,
	'the fingerprint label on a is the view\'s fingerprint');
is($fb->{labels}{fingerprint}, $fingerprint, 'and the same on b');

# the history's last window: each statement's executions in it
is(metric('pg_stat_statements_ng_history_calls', 'a', $probe), '7',
	'the history\'s last window on a: calls 7');
is(metric('pg_stat_statements_ng_history_calls', 'b', $probe), '5',
	'on b: calls 5');
is(metric('pg_stat_statements_ng_history_calls', 'b', $fp_b), '6',
	'exp_f\'s statement on b: calls 6');
is(metric('pg_stat_statements_ng_history_errors', 'a', $error), '3',
	'errors 3 in the window');
my @hf = find('pg_stat_statements_ng_history_calls', 'b', queryid => $fp_b);
is($hf[0]{labels}{fingerprint}, $fingerprint,
	'the history\'s rows carry the fingerprint');

# the waits: the sleep was sampled in PgSleep (how often is not exact)
my @w = find('pg_stat_statements_ng_waits_samples', 'a',
	queryid => $wait, wait_event => 'PgSleep');
ok(@w == 1 && $w[0]{value} > 0, 'the sleep\'s PgSleep samples are exported');

# every column of the running major's view, but the discarded ones, has a
# metric for the statement
my @columns = split /\n/, $na->safe_psql('postgres',
	q{SELECT attname FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass AND attnum > 0
	    AND attname NOT IN ('userid', 'dbid', 'toplevel', 'queryid', 'query') ORDER BY attnum});
my @missing =
  grep { !defined metric("pg_stat_statements_$_", 'a', $probe) } @columns;
is("@missing", '', 'a metric for every column of the view ('
	  . scalar(@columns) . " on $major)");

# 150 more statements on a (each a different number of columns): each
# query exports 100 of them, no more
$na->safe_psql('postgres',
	join(";\n", map { 'SELECT ' . join(', ', (1) x $_) } 1 .. 150));
$na->safe_psql('postgres', 'SELECT pg_stat_statements_ng_take_window()');
scrape();
foreach my $name ('pg_stat_statements_calls', 'pg_stat_statements_ng_errors',
	'pg_stat_statements_ng_history_calls')
{
	my %q = map { $_->{labels}{queryid} => 1 } find($name, 'a');
	is(scalar(keys %q), 100, "$name: 100 statements of a's 160");
}

$h->kill_kill;
$_->stop for ($na, $nb);
done_testing();
