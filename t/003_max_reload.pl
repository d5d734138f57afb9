# Changing pg_stat_statements_ng.max with a reload while clients run.
#
# 4 pgbench clients run about 600 distinct statements (SELECT * FROM t<n>
# for a random n) for a bounded time.  Meanwhile max goes from 5000 down to
# 100: the backends' periodic maintenance must bring the table down to 100
# entries; then up to 1000: the table must grow past 100 again.  The
# clients must never see an error.  Eviction happens asynchronously, so
# this test polls (and only this one).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);

use NgNode;

my $ntables = 600;
my $clients = 4;
my $duration = 15;    # seconds pgbench runs

my $node = ng_node('max_reload', 'pg_stat_statements_ng.max' => 5000);

$node->safe_psql('postgres', 'CREATE DATABASE bench');
my $bench_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_database WHERE datname = 'bench'");
$node->safe_psql('bench',
	    "DO \$\$ BEGIN FOR i IN 1..$ntables LOOP "
	  . "EXECUTE format('CREATE TABLE t%s (a int)', i); "
	  . "EXECUTE format('INSERT INTO t%s VALUES (%s)', i, i); "
	  . "END LOOP; END \$\$");

my $script = $node->basedir . '/max_reload.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"\\set n random(1, $ntables)\nSELECT * FROM t:n;\n");

$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
is( $node->safe_psql(
		'postgres', 'SELECT max, dealloc FROM pg_stat_statements_ng_info'),
	'5000|0',
	'max is 5000, nothing evicted yet');

my ($out, $err) = ('', '');
my $timer = IPC::Run::timeout($duration + $PostgreSQL::Test::Utils::timeout_default);
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-M', 'simple', '-c', $clients, '-j', '2',
		'-T', $duration, '-f', $script, $node->connstr('bench')
	],
	'>', \$out, '2>', \$err, $timer);

my $started = time;

sub running
{
	$pgbench->pump_nb;
	ok($pgbench->pumpable, "pgbench still runs: $_[0]");
	note(sprintf("%s: %.1fs after pgbench started", $_[0], time - $started));
}

# the table fills up well past 100
ok( $node->poll_query_until(
		'postgres', 'SELECT entries > 300 FROM pg_stat_statements_ng_info'),
	'more than 300 entries with max = 5000');
running('after the table filled');

# lower max: the running backends evict down to 100
$node->safe_psql('postgres',
	'ALTER SYSTEM SET pg_stat_statements_ng.max = 100');
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'postgres',
		'SELECT entries <= 100 AND max = 100 FROM pg_stat_statements_ng_info'),
	'entries down to max = 100 after a reload');
running('after lowering max');
# once down, the table stays within max while the clients go on
my @over;
for my $i (1 .. 20)
{
	my $e = $node->safe_psql('postgres',
		'SELECT entries FROM pg_stat_statements_ng_info');
	push @over, $e if $e > 100;
}
is_deeply(\@over, [], 'entries stay within max = 100 (20 reads)');
running('after the reads at max = 100');
my ($entries, $dealloc) = split /\|/, $node->safe_psql('postgres',
	'SELECT entries, dealloc FROM pg_stat_statements_ng_info');
note("after lowering: entries $entries, dealloc $dealloc");
cmp_ok($dealloc, '>', 0, 'entries were evicted to lower the table');

# raise max: the table grows again
$node->safe_psql('postgres',
	'ALTER SYSTEM SET pg_stat_statements_ng.max = 1000');
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'postgres',
		'SELECT entries > 100 AND max = 1000 FROM pg_stat_statements_ng_info'),
	'entries grow past 100 after raising max to 1000');
running('after raising max');

ok($pgbench->finish, 'pgbench exits 0')
  or diag("stdout:\n$out\nstderr:\n$err");
my ($processed) = $out =~ /number of transactions actually processed: (\d+)/;
ok(defined $processed && $processed > 0, 'pgbench processed transactions')
  or diag("stdout:\n$out");
like($out, qr/number of failed transactions: 0 /, 'no failed transaction');
unlike($err, qr/ERROR/, 'no error from the clients');
unlike($out, qr/ERROR/, 'no error in the report');

my $info = $node->safe_psql(
	'postgres', qq{
SELECT i.max, i.entries <= i.max, i.dealloc > 0, i.evicted_calls > 0
FROM pg_stat_statements_ng_info i});
is($info, '1000|t|t|t', 'max 1000, within it, entries were evicted');

# nothing vanished without being accounted for: every execution of the
# clients is in a row of the view, in an evicted entry, or counted as
# discarded (evicted_calls also counts this script's own statements, so
# this is a lower bound)
my ($in_view, $accounted) = split /\|/, $node->safe_psql(
	'postgres', qq{
SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng
        WHERE dbid = $bench_oid),
       (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng
        WHERE dbid = $bench_oid) + i.evicted_calls + i.counts_discarded
FROM pg_stat_statements_ng_info i});
note("processed $processed, in view $in_view, accounted $accounted");
cmp_ok($accounted, '>=', $processed,
	'view + evicted + discarded account for every execution');

$node->stop;
done_testing();
