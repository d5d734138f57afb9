# The history's wait samples (pg_stat_statements_ng_history_waits): each
# closed window carries the wait samples the sampler counted while it was
# open, per statement the window keeps and wait event, the others summed
# per wait event in rows with queryid NULL.
#
# Sampling is statistical, but what a window gets of the samples is exact:
# the test's own SQL is not tracked (pg_stat_statements_ng.track = none),
# so between the workloads nothing is sampled, and the samples of a window
# must equal, per (statement, wait event), what the wait profile gained
# over the same period (pg_stat_statements_ng_waits read after each
# take_window), samples and estimated time alike:
# 1. across a full reset of the statistics inside the window (the view's
#    rows before the reset plus those after it);
# 2. with a wait profile of 100 rows that four clients of 150 statements
#    overflow all the time while the keeper is stopped (the rows given up
#    are counted in wait_samples_evicted, the window keeps their samples);
# 3. a clean restart keeps the windows' wait rows, the restored profile's
#    samples are in no window; a history file of format 1 (without wait
#    rows) is restored; history_reset clears the wait rows.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;

use NgNode;

$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
my $node = ng_node(
	'history_waits',
	autovacuum => 'off',
	'pg_stat_statements_ng.wait_sample_interval' => '10ms',
	'pg_stat_statements_ng.history_statements' => 1,
	'pg_stat_statements_ng.history_interval' => 3600);
sub sql { return $node->safe_psql('postgres', $_[0]); }

# a tracked session's statement
sub tracked { return ng_tracked($node, 'postgres', $_[0]); }

sql('SELECT pg_stat_statements_ng_take_window()');

# { "queryid|type|event" => [samples, time in us] } of a query's rows
sub rows_of
{
	my ($query) = @_;
	my %r;
	foreach my $line (split /\n/, sql($query))
	{
		my ($q, $type, $event, $n, $ms) = split /\|/, $line;
		$r{"$q|$type|$event"} = [ $n, int($ms * 1000 + 0.5) ];
	}
	return \%r;
}

sub profile
{
	return rows_of(q{
SELECT queryid, wait_event_type, wait_event, samples, est_time_ms
  FROM pg_stat_statements_ng_waits});
}

# close the open window; returns the time just before
sub take_window
{
	my $since = sql('SELECT clock_timestamp()');
	sql('SELECT pg_stat_statements_ng_take_window()');
	return $since;
}

# the wait rows of the window closed after $since, queryid 'others' for the
# others' rows
sub window_after
{
	my ($since) = @_;
	return rows_of(qq{
SELECT coalesce(queryid::text, 'others'), wait_event_type, wait_event,
       samples, est_time_ms
  FROM pg_stat_statements_ng_history_waits
 WHERE window_end > '$since'});
}

# $acc += sign * (the rows of $p), each statement but $kept as 'others'
sub add_rows
{
	my ($acc, $p, $sign, $kept) = @_;
	foreach my $k (keys %$p)
	{
		my ($q, $ev) = split /\|/, $k, 2;
		my $key = (defined $kept && $q eq $kept ? $q : 'others') . "|$ev";
		$acc->{$key}[$_] += $sign * $p->{$k}[$_] foreach 0 .. 1;
	}
}

sub render
{
	my ($h) = @_;
	return join("\n",
		map { "$_ $h->{$_}[0] $h->{$_}[1]" }
		  grep { $h->{$_}[0] != 0 || $h->{$_}[1] != 0 } sort keys %$h);
}

sub total
{
	my ($h) = @_;
	my $n = 0;
	$n += $h->{$_}[0] foreach keys %$h;
	return $n;
}

# ---- 1. a reset inside the window ----
my $nap = "SELECT pg_sleep(0.5)";
my $short = "SELECT pg_sleep(0.2), 1";
my $cpu = "SELECT count(*) FROM generate_series(1, 200000)";

my $before = profile();
tracked($_) foreach ($nap, $short, $cpu);
my $at_reset = profile();
sql('SELECT pg_stat_statements_ng_reset()');
is(total(profile()), 0, 'the reset empties the wait profile');
tracked($_) foreach ($nap, $short, $cpu);
my $since = take_window();
my $after = profile();

# the window keeps one statement: the nap's, the most exec time
my $kept = sql(qq{
SELECT queryid FROM pg_stat_statements_ng_history
 WHERE window_end > '$since' AND queryid IS NOT NULL});
is(sql(q{SELECT queryid FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep($1)'}),
	$kept, 'the window keeps the nap');
my %want;
add_rows(\%want, $at_reset, 1, $kept);
add_rows(\%want, $before, -1, $kept);
add_rows(\%want, $after, 1, $kept);
my $got = window_after($since);
cmp_ok(total($got), '>', 0, 'the window has samples');
ok(exists $got->{"$kept|Timeout|PgSleep"} &&
	  exists $got->{"others|Timeout|PgSleep"} &&
	  exists $got->{"others|CPU|CPU"},
	'the kept statement and the others have rows');
is(render($got), render(\%want),
	'across a reset, the window has exactly the samples the profile counted');

# ---- 2. a profile that overflows ----
$node->append_conf('postgresql.conf', 'pg_stat_statements_ng.wait_profile_max = 100');
my $digest_q = q{
SELECT string_agg(concat_ws(' ', window_start, window_end, queryid,
                            wait_event_type, wait_event, samples, est_time_ms),
                  E'\n' ORDER BY window_start, queryid, wait_event_type, wait_event)
  FROM pg_stat_statements_ng_history_waits};
# the windows closed by now, and their rows: a window the keeper closes
# meanwhile (on the hour) is in neither
my $last_end = sql('SELECT max(window_end) FROM pg_stat_statements_ng_history');
my $digest = sql("$digest_q WHERE window_end <= '$last_end'");
$node->restart;
# the keeper restores the windows, and the sampler the profile, once they run
ok( $node->poll_query_until('postgres', "$digest_q WHERE window_end <= '$last_end'",
		$digest),
	'a clean restart keeps the windows\' wait rows');
ok( $node->poll_query_until('postgres',
		'SELECT count(*) > 0 FROM pg_stat_statements_ng_waits'),
	'the wait profile is restored');
$since = take_window();
is(scalar(keys %{ window_after($since) }), 0,
	'the restored profile\'s samples are in no window');

my $script = $node->basedir . '/naps.sql';
open(my $fh, '>', $script) or die "$script: $!";
print $fh 'SELECT pg_sleep(0.01)' . ', 1' x $_ . ";\n" foreach 1 .. 150;
close($fh);

# the keeper, stopped while the clients run, takes none of the profile's
# samples meanwhile: the rows the sampler gives up are given up before the
# keeper saw their samples, which it then has from the sampler's handover
my $evicted_q = 'SELECT wait_samples_evicted FROM pg_stat_statements_ng_info';
my $keeper;
for my $dir (glob('/proc/[0-9]*'))
{
	my $st = eval { slurp_file("$dir/stat") } // next;
	my $cmd = eval { slurp_file("$dir/cmdline") } // next;
	next unless $st =~ /^\d+ \(.*\) \S (\d+) / && $1 == $node->{_pid};
	$keeper = ($dir =~ m{/(\d+)$})[0] if $cmd =~ /pg_stat_statements_ng keeper/;
}
ok(defined $keeper, 'the keeper runs');
$before = profile();
my $evicted_before = sql($evicted_q);
kill 'STOP', $keeper;
{
	local $ENV{PGOPTIONS} = '';
	$node->command_ok(
		[ 'pgbench', '-n', '-c', 4, '-j', 2, '-t', 2, '-f', $script, 'postgres' ],
		'four clients ran 150 statements twice');
}
kill 'CONT', $keeper;
$since = take_window();
$after = profile();
my $evicted = sql($evicted_q) - $evicted_before;
cmp_ok($evicted, '>', 0, 'the profile gave rows up');
%want = ();
add_rows(\%want, $after, 1, undef);
add_rows(\%want, $before, -1, undef);
is(total(window_after($since)), total(\%want) + $evicted,
	'the window has every sample counted, those of rows given up too');
is(sql('SELECT history_counts_lost FROM pg_stat_statements_ng_info'), '0',
	'nothing was lost');

# ---- 3. a history file of format 1 (no wait rows) is read ----
# the file a clean stop wrote, made a format 1 file: its wait rows dropped,
# their count and size zeroed, the CRC made again
my $hq = q{
SELECT string_agg(concat_ws(' ', window_start, window_end, queryid, calls),
                  E'\n' ORDER BY window_start, queryid)
  FROM pg_stat_statements_ng_history};
my $history = sql($hq);
$node->stop;
my $hfile = $node->data_dir . '/pg_stat/pg_stat_statements_ng_history.stat';
my ($nwindows, $waits_dropped) = ng_history_file_downgrade($hfile, 1);
cmp_ok($waits_dropped, '>', 0, 'the file had wait rows');
$node->start;
# the keeper restores the windows once it runs
ok( $node->poll_query_until('postgres',
		"SELECT history_windows = $nwindows FROM pg_stat_statements_ng_info"),
	'every window of the format 1 file is restored');
is(sql($hq), $history, 'with its statements\' rows');
is(sql('SELECT count(*) FROM pg_stat_statements_ng_history_waits'), '0',
	'with no wait rows');

# ---- 4. history_reset ----
sql('SELECT pg_stat_statements_ng_history_reset()');
is(sql('SELECT count(*) FROM pg_stat_statements_ng_history_waits'), '0',
	'history_reset clears the wait rows');

$node->stop;
done_testing();
