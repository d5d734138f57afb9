# What statements and slots cost in memory, exactly (issue #13), from
# pg_stat_statements_ng_info's entries_memory and slots_memory, on x86-64:
#  - an entry is 648 bytes, its first histogram group (16 buckets of one
#    kind) included, plus 144 per further group its samples fell in: 50
#    statements run once each hold exactly 50 x 648 bytes;
#  - a statement whose durations spread over many buckets holds a group for
#    each 16 of them it touched, and its histogram adds up to its calls;
#  - a process's slot area is 32,384 bytes with 64 slots (506 per slot, cell
#    pool included), 4,096 with 8: 100 more connections cost exactly
#    100 x 32,384 bytes, so 100 connections cost under 4 MB of slots;
#  - with 8 slots (a pool of 40 histogram cells), one statement with more
#    than 40 distinct buckets in one session uses the pool up, and its
#    histogram still adds up to its calls, read while the session runs and
#    after it exits.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $entry_bytes = 648;
my $group_bytes = 144;
my $area_64 = 32384;
my $area_8 = 4096;

my $node = PostgreSQL::Test::Cluster->new('memory');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements_ng'
pg_stat_statements_ng.track_planning = off
max_connections = 20
});
$node->start;
# the test's own reads are not tracked: only role measured's statements
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements_ng;
ALTER ROLE CURRENT_USER SET pg_stat_statements_ng.track = 'none';
CREATE ROLE measured LOGIN;
});
my @measured = (extra_params => [ '-U', 'measured' ]);

# a session's slots are folded into entries when it exits: wait for that
sub wait_measured_gone
{
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = 'measured'")
	  or die 'measured sessions did not exit';
}

sub info
{
	my ($col) = @_;
	return $node->safe_psql('postgres',
		"SELECT $col FROM pg_stat_statements_ng_info");
}

# ---- entries: one group per statement run once ----
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
$node->safe_psql('postgres',
	join('', map { 'SELECT 1' . (' + 1' x $_) . ";\n" } 1 .. 50), @measured);
wait_measured_gone();
my ($entries, $mem) = split /\|/,
  info('entries, entries_memory');
is($entries, 50, 'entries: the 50 statements');
is($mem, $entries * $entry_bytes,
	'entries_memory: 648 bytes per entry, its one group included');

# ---- a statement over many buckets: a group per 16 buckets touched ----
# 80 runs of one statement, each with 12% more rows: 1.12^79 = 7,700 times
# more work from first to last, so its durations spread over more than 40
# buckets of ratio 1.1 (0.6 s in all)
my $spread_runs = join('',
	map { sprintf("SELECT count(*) FROM generate_series(1, %d);\n", 200 * 1.12**$_) }
	  0 .. 79);
$node->safe_psql('postgres', $spread_runs, @measured);
wait_measured_gone();
my $check = q{
SELECT (SELECT entries_memory FROM pg_stat_statements_ng_info) =
       (SELECT count(*) * 648 + 144 * sum(greatest(g - 1, 0))
          FROM (SELECT (SELECT count(DISTINCT bucket / 16)
                          FROM pg_stat_statements_ng_histogram(queryid, 'exec')) AS g
                  FROM pg_stat_statements_ng) AS x)
};
is($node->safe_psql('postgres', $check), 't',
	'entries_memory: 648 per entry plus 144 per further group it touched');
is( $node->safe_psql(
		'postgres', q{
SELECT s.calls, (SELECT sum(count) FROM pg_stat_statements_ng_histogram(s.queryid, 'exec'))
  FROM pg_stat_statements_ng s WHERE query LIKE '%generate_series%'}),
	'80|80',
	'the spread statement: 80 calls, 80 samples in its histogram');

# ---- slot areas: exact per process, and per connection ----
my $slots_20 = info('slots_memory');
is($slots_20 % $area_64, 0, 'slots_memory: whole areas of 32,384 bytes');
$node->append_conf('postgresql.conf', "max_connections = 120\n");
$node->restart;
my $slots_120 = info('slots_memory');
is($slots_120 - $slots_20, 100 * $area_64,
	'100 more connections: 100 x 32,384 bytes of slots (506 per slot)');
cmp_ok($slots_120 - 20 * $area_64, '<', 4 * 1024 * 1024,
	'100 connections cost less than 4 MB of slots');

# ---- a pool of 40 cells used up by one statement ----
$node->append_conf('postgresql.conf',
	"max_connections = 20\npg_stat_statements_ng.slots_per_backend = 8\n");
$node->restart;
is(info('slots_memory'), $slots_20 / $area_64 * $area_8,
	'8 slots: 4,096 bytes per process');
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
my $session = $node->background_psql('postgres', @measured);
$session->query_safe($spread_runs);
my $spread = q{
SELECT s.calls, (SELECT sum(count) FROM pg_stat_statements_ng_histogram(s.queryid, 'exec')),
       (SELECT count(*) > 40 FROM pg_stat_statements_ng_histogram(s.queryid, 'exec'))
  FROM pg_stat_statements_ng s WHERE query LIKE '%generate_series%'};
is($node->safe_psql('postgres', $spread), '80|80|t',
	'more buckets than the pool has cells, session running: 80 calls, 80 samples');
$session->quit;
wait_measured_gone();
is($node->safe_psql('postgres', $spread), '80|80|t',
	'and after the session exited');
is($node->safe_psql('postgres', $check), 't',
	'entries_memory still 648 per entry plus 144 per further group');

$node->stop;
done_testing();
