# The wait profile (pg_stat_statements_ng_waits): what the sampler counts
# for each top-level statement.  Sample counts are statistical: a statement
# that runs d ms at a 10 ms interval gets d / 10 samples, give or take one
# per execution, when the sampler keeps its schedule.  On a loaded machine
# it may not: the bounds are taken against each statement's own measured
# time (total_exec_time), and est_time_ms, which weighs every sample by its
# round's real interval, is checked against that time too.  What is exact
# is asserted exactly: idle and idle-in-transaction sessions count nothing,
# a nested statement counts nothing, resets empty the rows they match, a
# clean restart keeps the rows and a crash does not.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Copy;

use NgNode;

my $node = ng_node(
	'waits',
	-init => { allows_streaming => 1 },
	'pg_stat_statements_ng.wait_sample_interval' => '10ms');
$node->safe_psql('postgres', q{
CREATE TABLE rowlock (id int PRIMARY KEY, v int);
INSERT INTO rowlock VALUES (1, 0);
CREATE FUNCTION nap() RETURNS void LANGUAGE plpgsql
  AS $$ BEGIN PERFORM pg_sleep(1) FROM (VALUES (1)) AS nested (x); END $$;
SELECT pg_stat_statements_ng_reset();
});

# the queryid of the top-level statement whose text is $text
sub qid
{
	my ($text) = @_;
	return $node->safe_psql('postgres',
		"SELECT queryid FROM pg_stat_statements_ng WHERE toplevel AND query = '$text'");
}

# { 'type/event' => [samples, est_time_ms] } of a queryid
sub waits_of
{
	my ($queryid) = @_;
	my %w;
	for my $line (split /\n/, $node->safe_psql('postgres', qq{
SELECT wait_event_type || '/' || wait_event, samples, est_time_ms
FROM pg_stat_statements_ng_waits WHERE queryid = $queryid}))
	{
		my ($ev, $n, $ms) = split /\|/, $line;
		$w{$ev} = [ $n, $ms ];
	}
	return \%w;
}

sub total_samples
{
	my ($w) = @_;
	my $n = 0;
	$n += $_->[0] for values %$w;
	return $n;
}

sub exec_ms
{
	my ($queryid) = @_;
	return $node->safe_psql('postgres',
		"SELECT total_exec_time FROM pg_stat_statements_ng WHERE toplevel AND queryid = $queryid");
}

# $got within 15% of what $ms of running gives at 10 ms
sub near
{
	my ($got, $ms, $what) = @_;
	my $want = $ms / 10;
	$got //= 0;
	cmp_ok($got, '>=', 0.85 * $want, "$what: $got samples, at least 85% of $want");
	cmp_ok($got, '<=', 1.15 * $want, "$what: $got samples, at most 115% of $want");
}

# ---- a row lock, and the pg_sleep of its holder; idle sessions beside ----
my $idle = $node->background_psql('postgres');
my $idletx = $node->background_psql('postgres');
my $holder = $node->background_psql('postgres');
my $waiter = $node->background_psql('postgres');
$idle->query_safe("SELECT 'idle marker' AS marker");
$idletx->query_safe('BEGIN');
$idletx->query_safe("SELECT 'idle in transaction marker' AS marker");
$holder->query_safe('BEGIN');
$holder->query_safe('UPDATE rowlock SET v = v + 1 WHERE id = 1');
$waiter->query_until(qr/blocking/,
	"\\echo blocking\nUPDATE rowlock SET v = v * 10 WHERE id = 1;\n");
$node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'});
$holder->query_safe('SELECT pg_sleep(2)');
$holder->query_safe('COMMIT');
$waiter->query_safe('SELECT 1');
$idletx->query_safe('COMMIT');

my $lock_q = qid('UPDATE rowlock SET v = v * $1 WHERE id = $2');
my $sleep_q = qid('SELECT pg_sleep($1)');
my $lock = waits_of($lock_q);
my $lock_ms = exec_ms($lock_q);
ok(exists $lock->{'Lock/transactionid'}, 'the blocked UPDATE waited on Lock/transactionid')
  or diag explain $lock;
cmp_ok($lock_ms, '>=', 2000, "the UPDATE was blocked at least 2 s ($lock_ms ms)");
near($lock->{'Lock/transactionid'}[0], $lock_ms, 'Lock/transactionid');
cmp_ok(abs($lock->{'Lock/transactionid'}[1] - $lock_ms), '<=', 0.15 * $lock_ms,
	"Lock/transactionid est_time_ms $lock->{'Lock/transactionid'}[1] within 15% of $lock_ms");

my $sleep = waits_of($sleep_q);
my $sleep_ms = exec_ms($sleep_q);
near($sleep->{'Timeout/PgSleep'}[0], $sleep_ms, 'Timeout/PgSleep');
cmp_ok(total_samples($sleep) - $sleep->{'Timeout/PgSleep'}[0], '<=', 2,
	'pg_sleep: nothing but PgSleep, give or take a sample at each end');

# idle sessions: nothing, though their last statements stay published
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_statements_ng_waits WHERE wait_event_type = 'Client'}),
	'0', 'idle and idle-in-transaction sessions count no Client samples');
cmp_ok(total_samples(waits_of(qid('SELECT $1 AS marker'))), '<=', 2,
	'the idle sessions\' statements: at most a sample of their short runs');

# ---- a statement not yet published does not count under the one before ----
# The victim's second statement waits for a relation lock while it is
# parsed (its key is not known yet): those samples go nowhere, not to its
# first statement, whose key the victim still has published.
$node->safe_psql('postgres', 'CREATE TABLE locked (a int)');
my $locker = $node->background_psql('postgres');
my $victim = $node->background_psql('postgres');
$locker->query_safe('BEGIN');
$locker->query_safe('LOCK TABLE locked');
$victim->query_safe('SELECT pg_sleep(0.2) AS victim_first');
$victim->query_until(qr/parsing/, "\\echo parsing\nSELECT count(*) FROM locked;\n");
$node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM pg_locks WHERE NOT granted AND locktype = 'relation'});
$locker->query_safe('SELECT pg_sleep(1) AS locker');
$locker->query_safe('COMMIT');
$victim->query_safe('SELECT 1');
my $before = waits_of(qid('SELECT pg_sleep($1) AS victim_first'));
ok(!exists $before->{'Lock/relation'},
	'a lock wait while the next statement is parsed is not counted under the statement before')
  or diag explain $before;

# ---- CPU ----
my $cpu_sql = 'SELECT count(*) FROM generate_series(1, 3000000)';
$node->safe_psql('postgres', "SET work_mem = '1GB'; $cpu_sql");
my $cpu_q = qid('SELECT count(*) FROM generate_series($1, $2)');
my $cpu = waits_of($cpu_q);
my $cpu_n = total_samples($cpu);
cmp_ok($cpu_n, '>=', 10, "the CPU-bound statement was sampled ($cpu_n)");
cmp_ok($cpu->{'CPU/CPU'}[0], '>=', 0.9 * $cpu_n,
	"mostly CPU: $cpu->{'CPU/CPU'}[0] of $cpu_n samples");

# ---- track = all: a top-level statement gets the same, nested ones none ----
my %nap;
for my $track ('top', 'all')
{
	$node->safe_psql('postgres', qq{
ALTER SYSTEM SET pg_stat_statements_ng.track = '$track';
SELECT pg_reload_conf();});
	$node->poll_query_until('postgres',
		"SELECT current_setting('pg_stat_statements_ng.track') = '$track'");
	$node->safe_psql('postgres', 'SELECT nap()');
	my $q = qid('SELECT nap()');
	my $w = waits_of($q);
	near($w->{'Timeout/PgSleep'}[0], exec_ms($q), "track = $track: SELECT nap()");
	$nap{$track} = $w->{'Timeout/PgSleep'}[0];
	$node->safe_psql('postgres', "SELECT pg_stat_statements_ng_reset(0, 0, $q)");
}
my $nested = $node->safe_psql('postgres',
	q{SELECT coalesce(sum(samples), 0) FROM pg_stat_statements_ng_waits w
	  JOIN pg_stat_statements_ng s USING (userid, dbid, queryid)
	  WHERE s.query LIKE '%AS nested%'});
is($nested, '0', 'the nested statement (track = all) has no samples');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_statements_ng WHERE query LIKE '%AS nested%'}),
	'1', 'the nested statement has a row (track = all) to join to');

# ---- resets ----
my $ids = "$lock_q, $sleep_q, $cpu_q";
my $rows = $node->safe_psql('postgres',
	"SELECT queryid, wait_event, samples FROM pg_stat_statements_ng_waits WHERE queryid IN ($ids) ORDER BY 1, 2");
$node->safe_psql('postgres', "SELECT pg_stat_statements_ng_reset(0, 0, $sleep_q)");
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_statements_ng_waits WHERE queryid = $sleep_q"),
	'0', 'a partial reset empties the rows of its statement');
isnt(
	$node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_statements_ng_waits WHERE queryid = $lock_q"),
	'0', 'and leaves the others');
$node->safe_psql('postgres',
	"SELECT pg_stat_statements_ng_reset(0, 0, $lock_q, minmax_only => true)");
isnt(
	$node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_statements_ng_waits WHERE queryid = $lock_q"),
	'0', 'a min/max reset leaves the wait profile');
is( $node->safe_psql('postgres', 'SELECT wait_samples_evicted FROM pg_stat_statements_ng_info'),
	'0', 'info: no wait samples evicted');

# ---- a clean restart keeps the profile, a crash does not ----
$rows = $node->safe_psql('postgres',
	"SELECT queryid, wait_event, samples, est_time_ms FROM pg_stat_statements_ng_waits WHERE queryid IN ($ids) ORDER BY 1, 2");
$node->restart;
is( $node->safe_psql('postgres',
		"SELECT queryid, wait_event, samples, est_time_ms FROM pg_stat_statements_ng_waits WHERE queryid IN ($ids) ORDER BY 1, 2"),
	$rows, 'a clean restart keeps every row');

# a sampler killed by hand is started again, and keeps the rows
sub sampler_pid
{
	open my $pf, '<', $node->data_dir . '/postmaster.pid' or die;
	my $ppid = <$pf>;
	chomp $ppid;
	close $pf;
	my $pids = `ps -o pid=,args= --ppid $ppid`;
	return ($pids =~ /^\s*(\d+)\s+postgres: (?:\S+: )?pg_stat_statements_ng waits sampler/m)
	  ? $1 : 0;
}
my $pid = sampler_pid();
ok($pid > 0, "the sampler runs ($pid)");
kill 'TERM', $pid;
my $newpid = 0;
for (1 .. 100)
{
	$newpid = sampler_pid();
	last if $newpid && $newpid != $pid;
	$node->safe_psql('postgres', 'SELECT pg_sleep(0.1)');
}
isnt($newpid, $pid, "a new sampler runs ($newpid) after the first was killed");
is( $node->safe_psql('postgres',
		"SELECT queryid, wait_event, samples, est_time_ms FROM pg_stat_statements_ng_waits WHERE queryid IN ($ids) ORDER BY 1, 2"),
	$rows, 'the new sampler keeps every row');
$node->safe_psql('postgres', 'SELECT pg_sleep(0.5), 1');
cmp_ok(total_samples(waits_of(qid('SELECT pg_sleep($1), $2'))), '>=', 25,
	'and samples');

# a bad file is ignored, with a LOG line, and the server starts
$node->stop;
my $file = $node->data_dir . '/pg_stat/pg_stat_statements_ng_waits.stat';
ok(-f $file, 'the profile is saved at a clean shutdown');
open my $fh, '+<', $file or die;
binmode $fh;
seek $fh, 40, 0;
print $fh "\xff\xfe";
close $fh;
my $log_offset = -s $node->logfile;
$node->start;
ok($node->wait_for_log(qr/saved wait profile ignored: CRC mismatch/, $log_offset),
	'a corrupt file is ignored');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_statements_ng_waits WHERE queryid IN ($ids)"),
	'0', 'and nothing of it is loaded');

# a crash: the profile starts empty, and a file left beside is not loaded.
# The sampler is started by the postmaster: wait for it before the sleep it
# must see.  Only the PgSleep row is counted (a sample may also catch the
# statement's start on CPU).
for (1 .. 100)
{
	last if sampler_pid();
	$node->safe_psql('postgres', 'SELECT pg_sleep(0.1)');
}
$node->safe_psql('postgres', 'SELECT pg_sleep(0.3) AS before_crash');
my ($crash_q) = $node->safe_psql('postgres',
	'EXPLAIN (VERBOSE, COSTS OFF) SELECT pg_sleep(0.3) AS before_crash') =~
  /Query Identifier: (-?\d+)/;
my $crash_rows =
  "SELECT count(*) FROM pg_stat_statements_ng_waits WHERE queryid = $crash_q AND wait_event = 'PgSleep'";
is($node->safe_psql('postgres', $crash_rows), '1', 'the sleep has its PgSleep row');
$node->stop;
copy($file, "$file.kept") or die;
$node->start;
is($node->safe_psql('postgres', $crash_rows), '1', 'a clean stop keeps the row');
$node->stop('immediate');
copy("$file.kept", $file) or die;
$node->start;
is($node->safe_psql('postgres', $crash_rows), '0',
	'after a crash the profile starts empty');
ok(!-f $file, 'and a file found beside is removed, not loaded');

# ---- a standby samples its own statements ----
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('waits_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$standby->safe_psql('postgres', 'SELECT pg_sleep(1), 3');
my $sq = $standby->safe_psql('postgres',
	q{SELECT queryid FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep($1), $2'});
my $sw = $standby->safe_psql('postgres',
	"SELECT samples FROM pg_stat_statements_ng_waits WHERE queryid = $sq AND wait_event = 'PgSleep'");
my $sms = $standby->safe_psql('postgres',
	"SELECT total_exec_time FROM pg_stat_statements_ng WHERE queryid = $sq");
cmp_ok($sw, '>=', 0.85 * $sms / 10, "standby: $sw samples of a 1 s sleep");
cmp_ok($sw, '<=', 1.15 * $sms / 10, 'standby: not more than 115%');

$standby->stop;

# ---- a full profile gives rows up, counted, never an error ----
$node->append_conf('postgresql.conf', 'pg_stat_statements_ng.wait_profile_max = 100');
$node->restart;
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
# 150 statements of their own (1 to 150 columns), each sleeping 30 ms
$node->safe_psql('postgres',
	join('', map { 'SELECT pg_sleep(0.03)' . ', 1' x $_ . ";\n" } 1 .. 150));
is($node->safe_psql('postgres', 'SELECT count(*) <= 100 FROM pg_stat_statements_ng_waits'),
	't', 'the profile holds at most wait_profile_max rows');
cmp_ok($node->safe_psql('postgres', 'SELECT wait_samples_evicted FROM pg_stat_statements_ng_info'),
	'>', 0, 'the samples of the rows given up are counted in wait_samples_evicted');
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
is($node->safe_psql('postgres', 'SELECT wait_samples_evicted FROM pg_stat_statements_ng_info'),
	'0', 'a full reset clears wait_samples_evicted');

$node->stop;
done_testing();
