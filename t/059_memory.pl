# What statements and slots cost in memory, exactly, from
# pg_stat_statements_ng_info's entries_memory and slots_memory, on x86-64:
#  - an entry is 640 bytes, its first histogram group (16 buckets of one
#    kind) included, plus 144 per further group its samples fell in: 50
#    statements run once each hold exactly 50 x 640 bytes;
#  - a statement whose durations spread over many buckets holds a group for
#    each 16 of them it touched, and its histogram adds up to its calls;
#  - a client backend's slot area is 33,408 bytes with 64 slots (522 per
#    slot, cell pool included), 4,224 with 8: 100 more connections cost
#    exactly 100 x 33,408 bytes; every other process below MaxBackends
#    (autovacuum, background workers, walsenders) has 16 slots, 8,448 bytes
#    (8 when slots_per_backend is 8): slots_memory is exactly that sum, the
#    number of such processes computed here from the server's settings for
#    its major, and at most 4 MB at 100 connections and default settings;
#  - a walsender (replication=database) running more distinct statements
#    than its 16 slots counts each execution exactly;
#  - with 8 slots (a pool of 40 histogram cells), one statement with more
#    than 40 distinct buckets in one session uses the pool up, and its
#    histogram still adds up to its calls, read while the session runs and
#    after it exits.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $entry_bytes = 640;
my $group_bytes = 144;
my $area_64 = 33408;
my $area_16 = 8448;
my $area_8 = 4224;

# walsenders at their default number (10), for the figures at the defaults
# and for a walsender running SQL
my $node = ng_node(
	'memory',
	-init => { allows_streaming => 1 },
	'pg_stat_statements_ng.track_planning' => 'off',
	max_connections => 20);
# the test's own reads are not tracked: only role measured's statements
$node->safe_psql('postgres', q{
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
	return ng_value($node, $col);
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
	'entries_memory: 640 bytes per entry, its one group included');

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
       (SELECT count(*) * 640 + 144 * sum(greatest(g - 1, 0))
          FROM (SELECT (SELECT count(DISTINCT bucket / 16)
                          FROM pg_stat_statements_ng_histogram(queryid, 'exec')) AS g
                  FROM pg_stat_statements_ng) AS x)
};
is($node->safe_psql('postgres', $check), 't',
	'entries_memory: 640 per entry plus 144 per further group it touched');
is( $node->safe_psql(
		'postgres', q{
SELECT s.calls, (SELECT sum(count) FROM pg_stat_statements_ng_histogram(s.queryid, 'exec'))
  FROM pg_stat_statements_ng s WHERE query LIKE '%generate_series%'}),
	'80|80',
	'the spread statement: 80 calls, 80 samples in its histogram');

# ---- slot areas: exact per kind of process, and per connection ----
my $major =
  int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000);

sub setting
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT setting FROM pg_settings WHERE name = '$name'");
}

# Processes with a process number below MaxBackends that are not client
# backends: autovacuum workers (autovacuum_worker_slots from 18,
# autovacuum_max_workers before), its launcher and, from 17, the slot sync
# worker; background workers; walsenders.  Auxiliary processes (checkpointer,
# I/O workers, ...) come after MaxBackends and have no slot area.
sub other_procs
{
	return setting($major >= 18
		? 'autovacuum_worker_slots'
		: 'autovacuum_max_workers') + ($major >= 17 ? 2 : 1) +
	  setting('max_worker_processes') + setting('max_wal_senders');
}

sub expected_slots_memory
{
	my ($client_area, $other_area) = @_;
	return setting('max_connections') * $client_area +
	  other_procs() * $other_area;
}

my $slots_20 = info('slots_memory');
is($slots_20, expected_slots_memory($area_64, $area_16),
	'slots_memory, 20 connections: 33,408 bytes per client backend, 8,448 per other process'
);
$node->append_conf('postgresql.conf', "max_connections = 120\n");
$node->restart;
my $slots_120 = info('slots_memory');
is($slots_120 - $slots_20, 100 * $area_64,
	'100 more connections: 100 x 33,408 bytes of slots (522 per slot)');
is($slots_120, expected_slots_memory($area_64, $area_16),
	'slots_memory, 120 connections: client and other areas');

# ---- 100 connections, every other setting at its default ----
# (the test harness lowers autovacuum_worker_slots on 18)
$node->append_conf(
	'postgresql.conf',
	"max_connections = 100\n"
	  . $node->safe_psql(
		'postgres', q{
SELECT string_agg(name || ' = ' || boot_val, E'\n') FROM pg_settings
 WHERE name IN ('autovacuum_max_workers', 'autovacuum_worker_slots',
                'max_worker_processes', 'max_wal_senders')})
	  . "\n");
$node->restart;
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(name, ',') FROM pg_settings
 WHERE name IN ('autovacuum_max_workers', 'autovacuum_worker_slots',
                'max_worker_processes', 'max_wal_senders')
   AND setting <> boot_val}),
	'',
	'the settings that make processes at their defaults');
my $slots_100 = info('slots_memory');
is($slots_100, expected_slots_memory($area_64, $area_16),
	'slots_memory, 100 connections: client and other areas');
cmp_ok($slots_100, '<=', 4 * 1024 * 1024,
	"100 connections and default settings: at most 4 MB of slots on $major");
note "slots_memory at 100 connections on $major: $slots_100 bytes, "
  . other_procs()
  . ' other processes';

# ---- a walsender counts SQL with its 16 slots, exactly ----
# 40 distinct statements, three rounds, in one replication=database
# connection: the first round binds a slot to each, folding at least
# 40 - 16 (none if it had 64 slots); in the next two each statement recurs
# every 40 counts, less often than 16 slots turn over, so it is counted
# straight into its entry instead of folding a slot again (fewer than
# 120 - 16 folds in all, which a fold per bind would need); every statement
# still counts exactly 3 calls, while the walsender runs and after it exits.
$node->safe_psql('postgres', q{
CREATE ROLE walsql LOGIN REPLICATION;
SELECT pg_stat_statements_ng_reset();
});
my $folds_before = info('folds');
my $walsender = $node->background_psql(
	'postgres',
	replication => 'database',
	extra_params => [ '-U', 'walsql' ]);
$walsender->query_safe(
	join('',
		map { my $n = $_ % 40 + 1; 'SELECT 1' . (' + 1' x $n) . ";\n" }
		  0 .. 119));
is( $node->safe_psql(
		'postgres',
		"SELECT backend_type FROM pg_stat_activity WHERE usename = 'walsql'"),
	'walsender',
	'the replication=database session is a walsender');
my $walsql_calls = q{
SELECT count(*), min(calls), max(calls) FROM pg_stat_statements_ng s
  JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = 'walsql'};
is($node->safe_psql('postgres', $walsql_calls),
	'40|3|3', 'walsender running: 40 statements, 3 calls each');
my $walsender_folds = info('folds') - $folds_before;
cmp_ok($walsender_folds, '>=', 40 - 16,
	'the walsender folded its 16 slots to bind 40 statements');
cmp_ok($walsender_folds, '<', 120 - 16,
	'statements it runs less often than its slots turn over count straight into their entries');
$walsender->quit;
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = 'walsql'")
  or die 'the walsender did not exit';
is($node->safe_psql('postgres', $walsql_calls),
	'40|3|3', 'walsender exited: 40 statements, 3 calls each');

# ---- with track_planning, a statement's planning does not make it look
# frequent to its execution: 200 statements three times in one backend of
# 64 slots; the first round folds at least 136 slots, exit folds up to 64,
# maintenance perhaps a few; the next two rounds count plans and executions
# straight into the entries (a bind per execution would fold 400 more)
$node->safe_psql('postgres', q{
ALTER ROLE measured SET pg_stat_statements_ng.track_planning = on;
SELECT pg_stat_statements_ng_reset();
});
my $folds_planned = info('folds');
$node->safe_psql('postgres',
	join('', map { my $n = $_ % 200 + 1; 'SELECT 2' . (' + 2' x $n) . ";\n" }
		  0 .. 599),
	@measured);
wait_measured_gone();
$folds_planned = info('folds') - $folds_planned;
cmp_ok($folds_planned, '>=', 200 - 64, 'track_planning: the first round folded slots to bind');
cmp_ok($folds_planned, '<', 400,
	'track_planning: later rounds counted plans and executions straight into their entries');
is( $node->safe_psql(
		'postgres', q{
SELECT format('%s %s %s %s %s', count(*), min(calls), max(calls), min(plans), max(plans))
  FROM pg_stat_statements_ng WHERE query LIKE 'SELECT $1 + %'}),
	'200 3 3 3 3',
	'track_planning: 200 statements, 3 calls and 3 plans each');
$node->safe_psql('postgres',
	'ALTER ROLE measured RESET pg_stat_statements_ng.track_planning');

# ---- a pool of 40 cells used up by one statement ----
$node->append_conf('postgresql.conf',
	"max_connections = 20\npg_stat_statements_ng.slots_per_backend = 8\n");
$node->restart;
is(info('slots_memory'), expected_slots_memory($area_8, $area_8),
	'8 slots: 4,096 bytes per process, client or other');
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
	'entries_memory still 640 per entry plus 144 per further group');

$node->stop;
done_testing();
