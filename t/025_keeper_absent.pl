# Without a background worker slot for the keeper.  The logical replication
# launcher and pg_prewarm's autoprewarm leader, registered before the
# keeper, take both slots max_worker_processes = 2 allows, so core refuses
# the keeper's registration.  Then:
# - the server says so in one WARNING naming max_worker_processes, and
#   pg_stat_statements_ng_info counts it (keeper_start_failures = 1);
# - a lowered max and query_text_memory are applied by the backends at
#   their maintenance;
# - at shutdown nothing is saved, and the file an earlier run saved is
#   removed (one LOG line each): it must not come back at a later start,
#   after statistics newer than it (here a reset);
# - once a slot is free (the autoprewarm leader, which is never restarted,
#   exits), a backend registers the keeper; it runs, and saves at shutdown.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;

use NgNode;

# pg_prewarm is contrib's: a server without it cannot run this test
my $pkglibdir;
IPC::Run::run([ 'pg_config', '--pkglibdir' ], '>', \$pkglibdir);
chomp $pkglibdir;
plan skip_all => "pg_prewarm is not installed in $pkglibdir"
  unless -f "$pkglibdir/pg_prewarm.so";

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

# the WARNING is what is tested (LOG lines are logged too)
my $node = ng_init_node(
	'keeper_absent', @NG_SMALL,
	-preload => 'pg_prewarm, pg_stat_statements_ng',
	'pg_prewarm.autoprewarm_interval' => 0,
	log_min_messages => 'warning');
my $stat = $node->data_dir . "/$STAT_FILE";
my $warning_re = qr/WARNING:  pg_stat_statements_ng: its keeper worker could not be registered: no background worker slot is free/;

# start with no autoprewarm.blocks: the leader (never restarted) then waits
# for SIGTERM; with blocks to load, it would fail for want of a slot for its
# worker, and exit (giving its slot back) at a time the test does not choose
sub start_run
{
	unlink($node->data_dir . '/autoprewarm.blocks');
	return ng_start($node);
}

# a child of the postmaster whose command line matches re: its pid, or undef
sub child_pid
{
	my ($re) = @_;
	my $pm = $node->{_pid};
	for my $dir (glob('/proc/[0-9]*'))
	{
		my $st = eval { read_bytes("$dir/stat") } // next;
		my $cmd = eval { read_bytes("$dir/cmdline") } // next;
		next unless $st =~ /^\d+ \(.*\) \S (\d+) / && $1 == $pm;
		return ($dir =~ m{/(\d+)$})[0] if $cmd =~ $re;
	}
	return undef;
}

sub info
{
	my ($col) = @_;
	return $node->safe_psql('postgres', "SELECT $col FROM pg_stat_statements_ng_info");
}

sub calls_of
{
	my ($query) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng WHERE query = '$query'");
}

# one statement, then one more after the maintenance interval (1 s): the
# second runs this backend's maintenance
sub maintain
{
	ng_tracked($node, 'postgres', "SELECT 1;\nSELECT pg_sleep(1.2);\nSELECT 1;");
	return;
}

# --- run 1: the keeper runs and saves ---------------------------------------
ok(start_run(), 'run 1: server starts');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements_ng');
ng_tracked($node, 'postgres', 'SELECT current_database()');
is(info('keeper_start_failures'), '0', 'run 1: the keeper started');
$node->stop;
ok(-f $stat, 'run 1: statistics saved');

# --- run 2: no slot for the keeper ------------------------------------------
$node->append_conf('postgresql.conf', "max_worker_processes = 2\n");
my $off = log_mark($node);
ok(start_run(), 'run 2: server starts');
my $log = log_since($node, $off);
is(scalar(() = $log =~ /$warning_re/g), 1, 'run 2: one WARNING');
like($log, qr/$warning_re\n(?:.*\n)*?.*HINT:  Raise max_worker_processes \(now 2\)\./,
	'run 2: the WARNING names the setting to raise');
is(info('keeper_start_failures'), '1', 'run 2: counted in the info view');
is(child_pid(qr/pg_stat_statements_ng keeper/), undef, 'run 2: no keeper runs');

# a full reset: whatever run 1 saved is older than what follows
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
ng_tracked($node, 'postgres', 'SELECT version()');

# 150 statements with texts (about 23 kB), then max 100 and 8 kB of text
ng_tracked($node, 'postgres',
	join("\n", map { 'SELECT ' . join(', ', ('1') x $_) . ';' } 1 .. 150));
cmp_ok(info('entries'), '>', 150, 'run 2: over 150 entries');
cmp_ok(info('query_text_memory_used'), '>', 16384, 'run 2: over 16 kB of texts');
$node->append_conf('postgresql.conf',
	"pg_stat_statements_ng.max = 100\npg_stat_statements_ng.query_text_memory = 8kB\n");
$node->reload;
maintain();
is(info('entries'), '100', 'run 2: a backend brought the table down to max');
cmp_ok(info('query_text_memory_used'), '<=', 8192,
	'run 2: a backend brought text memory down to query_text_memory');

$off = log_mark($node);
$node->stop;
$log = log_since($node, $off);
is(scalar(() = $log =~ /LOG:  pg_stat_statements_ng: statistics were not saved: its keeper worker did not run/g),
	1, 'run 2: the log says nothing was saved');
is(scalar(() = $log =~ /LOG:  pg_stat_statements_ng: removed the statistics an earlier run saved, which no keeper restored/g),
	1, 'run 2: the log says the earlier file was removed');
ok(!-e $stat, 'run 2: the file of run 1 is gone');

# --- run 3: a slot becomes free, a backend starts the keeper ----------------
$off = log_mark($node);
ok(start_run(), 'run 3: server starts');
is(scalar(() = log_since($node, $off) =~ /$warning_re/g), 1, 'run 3: one WARNING');
my $leader = child_pid(qr/autoprewarm leader/);
ok(defined $leader, 'run 3: the autoprewarm leader runs');
kill 'TERM', $leader if $leader;
# wait (bounded) for the leader to exit and for a backend's maintenance to
# start the keeper in the slot it gave back
my $keeper;
for my $try (1 .. 40)
{
	maintain();
	$keeper = child_pid(qr/pg_stat_statements_ng keeper/);
	last if defined $keeper;
}
ok(defined $keeper, 'run 3: a backend started the keeper');
$log = log_since($node, $off);
is(scalar(() = $log =~ /LOG:  pg_stat_statements_ng: registered its keeper worker, a background worker slot being free/g),
	1, 'run 3: one line says so');
is(info('keeper_start_failures'), '1', 'run 3: the absence is counted once');
ng_tracked($node, 'postgres', 'SELECT pg_backend_pid()');
$off = log_mark($node);
$node->stop;
ok(-f $stat, 'run 3: the keeper saved the statistics');
is(count_since($node, $off, qr/statistics were not saved|removed the statistics/), 0,
	'run 3: no line about an absent keeper');

# --- run 4: what comes back is run 3's, nothing older -------------------------
$node->append_conf('postgresql.conf', "max_worker_processes = 8\n");
$off = log_mark($node);
ok(start_run(), 'run 4: server starts');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
is(calls_of('SELECT pg_backend_pid()'), '1', 'run 4: run 3 is restored');
is(calls_of('SELECT current_database()'), '0', 'run 4: run 1, from before a reset, is not');
is(info('keeper_start_failures'), '0', 'run 4: the keeper started');
$node->stop;

done_testing();
