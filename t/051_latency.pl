# Tail latency: percentiles from the log-scaled histograms are within the
# stated error bound (4.9%) of the true values.
#
# 1. Single samples, whose true value is known exactly (min = max = the
#    sample): one statement per duration, from microseconds to a fifth of a
#    second; for each,
#    p50, p95 and p99 must be within 4.9% of max_exec_time.
# 2. A known distribution: 50 executions of ~10 ms, 45 of ~40 ms and 5 of
#    ~160 ms of one statement: p50 falls in the first group, p95 in the
#    second, p99 in the third, each within the bound of that group's range.
# 3. The histogram function returns the buckets, which add up to calls.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('latency', 'pg_stat_statements_ng.track' => 'all');

my $bound = sqrt(1.1) - 1;

# 1. single samples: distinct statements (distinct functions, so distinct
# queryids), each run once, from microseconds (a little arithmetic) to a
# fifth of a second
my @bodies = (
	'SELECT 1', 'SELECT count(*) FROM generate_series(1, 100)',
	'SELECT count(*) FROM generate_series(1, 10000)',
	'SELECT count(*) FROM generate_series(1, 300000)',
	'SELECT pg_sleep(0.01)', 'SELECT pg_sleep(0.05)', 'SELECT pg_sleep(0.2)');
my @sleeps = @bodies;
my $setup = '';
for my $i (0 .. $#bodies)
{
	$setup .= "CREATE FUNCTION lat_$i() RETURNS void LANGUAGE sql AS \$\$ $bodies[$i] \$\$;\n";
}
$node->safe_psql('postgres', $setup);
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
$node->safe_psql('postgres', "SELECT lat_$_()") for 0 .. $#sleeps;

my $single = $node->safe_psql('postgres', q{
SELECT query, calls, min_exec_time = max_exec_time,
       abs(exec_p50 / max_exec_time - 1), abs(exec_p95 / max_exec_time - 1),
       abs(exec_p99 / max_exec_time - 1), max_exec_time
  FROM pg_stat_statements_ng WHERE query LIKE 'SELECT lat_%' ORDER BY max_exec_time});
my @lines = split /\n/, $single;
is(scalar(@lines), scalar(@sleeps), 'one entry per duration');
foreach my $line (@lines)
{
	my ($query, $calls, $one, $e50, $e95, $e99, $ms) = split /\|/, $line;
	is("$calls $one", '1 t', "$query: a single sample");
	cmp_ok($e50, '<=', $bound, "$query ($ms ms): p50 within 4.9%");
	cmp_ok($e95, '<=', $bound, "$query ($ms ms): p95 within 4.9%");
	cmp_ok($e99, '<=', $bound, "$query ($ms ms): p99 within 4.9%");
}

# 2. a known distribution, in shuffled order; each group's true range is
# known from a statement that runs only that group's duration alongside
$node->safe_psql('postgres', q{
CREATE FUNCTION lat_mix(ms float8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_sleep(ms / 1000);
END $$;
});
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
my @plan = ((10) x 50, (40) x 45, (160) x 5);
# a fixed shuffle
my @order = map { $plan[($_ * 37) % 100] } 0 .. 99;
$node->safe_psql('postgres', join '', map { "SELECT lat_mix($_);\n" } @order);

# the nested PERFORM is one statement with 100 samples; group ranges from the
# top-level statement would include call overhead, so compare to the nested
# statement's own min and max and to the requested durations
my ($calls, $p50, $p95, $p99, $min, $max) = split /\|/, $node->safe_psql('postgres', q{
SELECT calls, exec_p50, exec_p95, exec_p99, min_exec_time, max_exec_time
  FROM pg_stat_statements_ng WHERE query LIKE 'SELECT pg_sleep(ms / %'});
is($calls, 100, 'the nested statement ran 100 times')
  or diag($node->safe_psql('postgres', 'SELECT toplevel, calls, query FROM pg_stat_statements_ng'));
# p50 is the 50th sample: a ~10 ms one (at least 10 ms, far below 40)
cmp_ok($p50, '>=', 10 * (1 - $bound), "p50 ($p50) is a 10 ms sample, from below");
cmp_ok($p50, '<', 40 * (1 - $bound), "p50 ($p50) is a 10 ms sample, from above");
cmp_ok($p95, '>=', 40 * (1 - $bound), "p95 ($p95) is a 40 ms sample, from below");
cmp_ok($p95, '<', 160 * (1 - $bound), "p95 ($p95) is a 40 ms sample, from above");
cmp_ok($p99, '>=', 160 * (1 - $bound), "p99 ($p99) is a 160 ms sample, from below");
cmp_ok($p99, '<=', $max * (1 + $bound), "p99 ($p99) is within the bound of the largest");
cmp_ok($p50, '>=', $min * (1 - $bound), 'p50 is within the bound of the smallest');

# 3. the buckets
my $queryid = $node->safe_psql('postgres',
	q{SELECT queryid FROM pg_stat_statements_ng WHERE query LIKE 'SELECT pg_sleep(ms / %'});
is( $node->safe_psql('postgres',
		"SELECT sum(count) FROM pg_stat_statements_ng_histogram($queryid)"),
	'100', 'the buckets add up to the calls');
is( $node->safe_psql('postgres',
		"SELECT bool_and(lower_ms < upper_ms AND upper_ms <= lower_ms * 1.1 + 1e-9)
		   FROM pg_stat_statements_ng_histogram($queryid)"),
	't', 'each bucket spans at most a factor 1.1');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_statements_ng_histogram($queryid, 'plan')"),
	'0', 'no planning samples without track_planning');
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM pg_stat_statements_ng_histogram($queryid, 'other')");
like($err, qr/invalid histogram kind "other"/, 'a bad kind is refused');

$node->stop;
done_testing();
