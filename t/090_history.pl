# The history: time windows of per-statement deltas.
#
# 1. Exactness under load: 16 clients run 150 distinct statements (max =
#    100: evictions all the time; slots that find no entry) while another
#    session resets the statistics in a loop (full resets, and partial ones
#    by queryid); windows are closed with take_window() between phases.
#    Each client runs a fixed number of transactions, each statement once a
#    transaction, so every statement ran exactly clients x transactions
#    times in each window: each window's calls for each statement are
#    exactly that.  With history_statements below 150, the rows (the kept
#    statements and the one with queryid NULL) add up to the same total.
# 2. Percentiles of a window's own: a window whose executions of one
#    statement have a 2% tail of 50 ms sleeps shows it in its p99; the
#    windows before and after, without the tail, do not.
# 3. A statistics reset leaves the history alone; history_reset clears it;
#    a clean restart keeps the windows; an immediate stop keeps the closed
#    windows (the open one is lost); a settings' invalid value is rejected
#    naming the valid range.
#
# The test's own SQL runs with pg_stat_statements_ng.track = none, so that
# every counted statement is one the clients ran.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $clients = 16;
my $xacts = 20;
my $nstmts = 150;

# the test's own SQL is not tracked
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
my $node = ng_node(
	'history',
	-init => { allows_streaming => 1 },
	max_connections => 40,
	autovacuum => 'off',
	'pg_stat_statements_ng.max' => 100,
	'pg_stat_statements_ng.admission' => 'all',
	'pg_stat_statements_ng.history_statements' => 1000,
	'pg_stat_statements_ng.history_interval' => 3600);
sub sql { return $node->safe_psql('postgres', $_[0]); }

sql('CREATE ROLE bench LOGIN SUPERUSER');
sql('CREATE ROLE tail LOGIN');

# statement k selects k constants: 150 distinct queryids
my $script = $node->basedir . '/stmts.sql';
open(my $fh, '>', $script) or die "$script: $!";
print $fh 'SELECT ' . join(', ', (1) x $_) . ";\n" foreach 1 .. $nstmts;
close($fh);

# the queryid of each statement, as EXPLAIN VERBOSE shows it
my %qid;
foreach my $k (1 .. $nstmts)
{
	my $plan = sql('EXPLAIN (VERBOSE, COSTS OFF) SELECT ' . join(', ', (1) x $k));
	$plan =~ /Query Identifier: (-?\d+)/ or die "no queryid in $plan";
	$qid{$1} = $k;
}
is(scalar(keys %qid), $nstmts, 'the statements have distinct queryids');

sub take_window { sql('SELECT pg_stat_statements_ng_take_window()'); }

# pgbench, its statements counted (the test's own are not)
sub pgbench
{
	my ($name, @args) = @_;
	local $ENV{PGOPTIONS} = '';
	$node->command_ok(
		[ 'pgbench', '-n', '-M', 'simple', '-j', 2, @args, 'postgres' ],
		$name);
}

# the rows of user $user in the windows opened since $since: "queryid
# calls" lines.  A phase's counts are in one window, or in two when the
# clock reached a multiple of history_interval (an hour) while it ran.
sub phase_rows
{
	my ($user, $since) = @_;
	return sql(qq{
SELECT coalesce(queryid::text, 'others') || ' ' || calls
  FROM pg_stat_statements_ng_history
 WHERE window_start >= '$since'
   AND (userid = '$user'::regrole OR queryid IS NULL)
 ORDER BY queryid});
}

# run the clients while a session resets in a loop; close the window after;
# returns when the open window the phase began in opened
sub loaded_phase
{
	my ($name) = @_;
	my $since = sql('SELECT history_open_since FROM pg_stat_statements_ng_info');
	my $resetter = $node->background_psql('postgres', on_error_stop => 0);
	my $rpid = $resetter->query_safe('SELECT pg_backend_pid()');
	my $some = (keys %qid)[0];
	$resetter->query_until(qr/looping/, qq{\\echo looping
DO \$\$
BEGIN
  LOOP
    PERFORM pg_stat_statements_ng_reset();
    PERFORM pg_sleep(0.05);
    PERFORM pg_stat_statements_ng_reset(0, 0, $some);
    PERFORM pg_sleep(0.05);
  END LOOP;
END \$\$;
});
	pgbench("$name: the clients ran", '-c', $clients, '-t', $xacts, '-f',
		$script, '-U', 'bench');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($rpid)");
	$resetter->quit;
	take_window();
	return $since;
}

# ---- 1. exactness ----
take_window();
foreach my $phase (1 .. 2)
{
	my $since = loaded_phase("phase $phase");
	my %calls;
	my $others = 0;
	foreach my $line (split /\n/, phase_rows('bench', $since))
	{
		my ($q, $c) = split / /, $line;
		if ($q eq 'others') { $others += $c; next; }
		$calls{$q} += $c;
	}
	my @wrong = grep { ($calls{$_} // 0) != $clients * $xacts } keys %qid;
	is(scalar(@wrong), 0,
		"phase $phase: every statement's calls in its window are exactly what ran")
	  or diag(join(', ', map { "$qid{$_}: " . ($calls{$_} // 0) } sort { $qid{$a} <=> $qid{$b} } @wrong));
	is($others, 0, "phase $phase: no row sums others (every statement kept)");
}

sql('ALTER SYSTEM SET pg_stat_statements_ng.history_statements = 20');
sql('SELECT pg_reload_conf()');
$node->poll_query_until('postgres',
	q{SELECT current_setting('pg_stat_statements_ng.history_statements') = '20'})
  or die 'history_statements not applied';
my $since3 = loaded_phase('phase 3');
my ($nrows, $nothers) = split / /, sql(qq{
SELECT format('%s %s', count(*), count(*) FILTER (WHERE queryid IS NULL))
  FROM pg_stat_statements_ng_history WHERE window_start >= '$since3'
 GROUP BY window_end ORDER BY count(*) DESC LIMIT 1});
my $sum = sql(qq{SELECT sum(calls) FROM pg_stat_statements_ng_history
 WHERE window_start >= '$since3'});
my $ran = $nstmts * $clients * $xacts;
is("$nrows $nothers", '21 1', 'phase 3: 20 statements and one row of the others');
is($sum, $ran, 'phase 3: the rows add up to every execution');
is( sql(qq{
SELECT count(*) FROM pg_stat_statements_ng_history h
 WHERE window_start >= '$since3'
   AND queryid IS NOT NULL
   AND total_exec_time < (SELECT total_exec_time FROM pg_stat_statements_ng_history
                           WHERE queryid IS NULL AND window_end = h.window_end)
                         / 130}),
	'0', 'phase 3: the statements kept are those with the most exec time');

is(sql('SELECT history_counts_lost FROM pg_stat_statements_ng_info'), '0',
	'nothing that left the table during a window was lost to it');

# ---- 2. a window's own percentiles ----
sub sleeps
{
	my ($tail) = @_;
	my $f = $node->basedir . '/sleeps.sql';
	open(my $sfh, '>', $f) or die "$f: $!";
	print $sfh "SELECT pg_sleep(0.0);\n" foreach 1 .. 49;
	print $sfh 'SELECT pg_sleep(' . ($tail ? '0.05' : '0.0') . ");\n";
	close($sfh);
	pgbench('the sleeps ran', '-c', 4, '-t', 10, '-f', $f, '-U', 'tail');
	take_window();
	return sql(q{
SELECT format('%s %s %s', calls, exec_p95 < 25, exec_p99 >= 45)
  FROM pg_stat_statements_ng_history
 WHERE window_end = (SELECT max(window_end) FROM pg_stat_statements_ng_history)
   AND userid = 'tail'::regrole});
}
is(sleeps(0), '2000 t f', 'the window before: no tail in p99');
is(sleeps(1), '2000 t t', 'the window with a 2% tail of 50 ms: in p99, not p95');
is(sleeps(0), '2000 t f', 'the window after: no tail in p99');

# ---- 3. resets, restarts, settings ----
my $digest = sql(q{SELECT md5(string_agg(h::text, ',' ORDER BY window_end, queryid, userid))
  FROM pg_stat_statements_ng_history() h});
sql('SELECT pg_stat_statements_ng_reset()');
is(sql(q{SELECT md5(string_agg(h::text, ',' ORDER BY window_end, queryid, userid))
  FROM pg_stat_statements_ng_history() h}),
	$digest, 'a statistics reset leaves the history alone');

my $last_end = sql('SELECT max(window_end) FROM pg_stat_statements_ng_history');
{
	local $ENV{PGOPTIONS} = '';
	$node->safe_psql('postgres', 'SELECT 3', extra_params => ['-U', 'tail']);
}
my $nwin_before = sql('SELECT history_windows FROM pg_stat_statements_ng_info');
$node->restart;
# the keeper restores the windows once it runs (a clean stop closed one more)
$node->poll_query_until('postgres', 'SELECT history_windows = ' . ($nwin_before + 1) .
	  ' FROM pg_stat_statements_ng_info')
  or die 'the windows were not restored';
is(sql(qq{SELECT md5(string_agg(h::text, ',' ORDER BY window_end, queryid, userid))
  FROM pg_stat_statements_ng_history() h WHERE window_end <= '$last_end'}),
	$digest, 'a clean restart keeps every window');
is(sql(qq{SELECT format('%s %s', count(*), sum(calls))
  FROM pg_stat_statements_ng_history WHERE window_end > '$last_end'}),
	'1 1', 'a clean shutdown closes the open window, and keeps it');

{
	local $ENV{PGOPTIONS} = '';
	$node->safe_psql('postgres', 'SELECT 1', extra_params => ['-U', 'tail']);
}
take_window();
my $before_stop = sql('SELECT count(*) FROM pg_stat_statements_ng_history');
{
	local $ENV{PGOPTIONS} = '';
	$node->safe_psql('postgres', 'SELECT 2', extra_params => ['-U', 'tail']);
}
$node->stop('immediate');
$node->start;
# the keeper restores the closed windows once it runs: wait for them (the
# open window, lost, would make one more)
$node->poll_query_until('postgres',
	"SELECT count(*) >= $before_stop FROM pg_stat_statements_ng_history")
  or die 'the windows were not restored';
is(sql('SELECT count(*) FROM pg_stat_statements_ng_history'), $before_stop,
	'an immediate stop keeps the closed windows and loses the open one');

# lowering history_memory drops the oldest windows, counted
my ($nwin, $newest) = split /\|/, sql(q{SELECT history_windows || '|' || (SELECT max(window_end)
  FROM pg_stat_statements_ng_history()) FROM pg_stat_statements_ng_info});
sql(q{ALTER SYSTEM SET pg_stat_statements_ng.history_memory = '20kB'});
sql('SELECT pg_reload_conf()');
ok( $node->poll_query_until('postgres',
		q{SELECT history_memory_used <= 20480 FROM pg_stat_statements_ng_info}),
	'a lowered history_memory is reached');
is( sql(qq{SELECT format('%s %s', history_windows + history_windows_dropped = $nwin,
  (SELECT max(window_end) FROM pg_stat_statements_ng_history()) = '$newest')
  FROM pg_stat_statements_ng_info}),
	't t', 'the oldest windows were dropped and counted, the newest kept');
sql('ALTER SYSTEM RESET pg_stat_statements_ng.history_memory');
sql('SELECT pg_reload_conf()');

# a damaged file is refused as a whole
my $kept = sql('SELECT count(*) FROM pg_stat_statements_ng_history()');
ok($kept > 0, 'windows are kept');
$node->stop;
my $file = $node->data_dir . '/pg_stat/pg_stat_statements_ng_history.stat';
open(my $hf, '+<', $file) or die "$file: $!";
binmode $hf;
seek($hf, 100, 0);
print $hf 'damage';
close($hf);
my $log_at = -s $node->logfile;
$node->start;
ok( $node->wait_for_log(
		qr/ignored the saved history in "pg_stat\/pg_stat_statements_ng_history.stat": its checksum does not match/,
		$log_at),
	'the log says a damaged history file is refused');
is(sql('SELECT count(*) FROM pg_stat_statements_ng_history()'), '0',
	'and it restores nothing');

# on a standby
take_window();
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('history_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
{
	local $ENV{PGOPTIONS} = '';
	$standby->safe_psql('postgres', 'SELECT 42', extra_params => ['-U', 'tail']);
}
$standby->safe_psql('postgres', 'SELECT pg_stat_statements_ng_take_window()');
is( $standby->safe_psql('postgres', q{
SELECT format('%s %s', sum(calls), pg_is_in_recovery())
  FROM pg_stat_statements_ng_history WHERE userid = 'tail'::regrole
   AND window_end = (SELECT max(window_end) FROM pg_stat_statements_ng_history)}),
	'1 t', 'a standby keeps windows');
$standby->stop;

sql('SELECT pg_stat_statements_ng_history_reset()');
is(sql('SELECT count(*) FROM pg_stat_statements_ng_history'), '0',
	'history_reset clears the windows');

my ($ret, $out, $err) = $node->psql('postgres',
	'ALTER SYSTEM SET pg_stat_statements_ng.history_interval = 5');
like($err, qr/outside the valid range for parameter "pg_stat_statements_ng.history_interval" \(10( s)? \.\. 3600( s)?\)/,
	'an invalid interval is rejected, naming the valid range');

done_testing();
