# A reset that voids an unbound slot (a statement counted without an entry)
# and a write of that slot before the reset has copied it for the history:
# the counts the slot held before the reset stay in the open window, and
# the execution after it is counted once.  The reset is stopped between
# its void and its copy (debug_fault stall_reset, assertion builds only),
# as the scheduler can stop it, while the slot's backend runs again.
#
# The statement has no constants (its parse takes no lock) and first runs
# while a reader holds every partition lock (debug_fault stall_read), so it
# gets no entry and counts in an unbound slot.
#
# Then the fold of unbound slots without an entry, by plan: a join run in
# sessions planned differently, each session's executions in an unbound
# slot of one plan, folded at its exit with the statement still without an
# entry.  Two sessions of two plans (3 and 2 executions): the window's plan
# rows are 3 and 2, by plan.  Five sessions of five plans (1 to 5
# executions), folded one after the other while the keeper is stopped (so
# that it takes none of them before all are folded): the key's place keeps
# four plans, 1 to 4 calls, the fifth plan's 5 calls count in the window's
# row (15 calls) but in no plan row, and once in history_counts_lost.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

use NgNode;

my $node = ng_node(
	'history_reset_unbound',
	'pg_stat_statements_ng.history_statements' => 1000,
	'pg_stat_statements_ng.history_interval' => 3600);

if (!ng_has_debug_fault($node))
{
	$node->stop;
	plan skip_all => 'pg_stat_statements_ng.debug_fault exists only in assertion builds';
}

# the test's own sessions are not tracked; the counted ones run as r1
$node->safe_psql('postgres', q{
ALTER ROLE CURRENT_USER SET pg_stat_statements_ng.track = 'none';
CREATE ROLE r1 SUPERUSER LOGIN;
});
sub sql { return $node->safe_psql('postgres', $_[0]); }

my $stall = $node->data_dir . '/pgssng_stall';
sub stall_on { open(my $fh, '>', $stall) or die "$stall: $!"; close($fh); }
sub stall_off { unlink($stall) or die "$stall: $!"; }

sub bg
{
	my ($role) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0,
		extra_params => [ '-U', $role ]);
	return ($s, $s->query_safe('SELECT pg_backend_pid()'));
}

# start a statement in a background session without waiting for it
sub start
{
	my ($s, $sql) = @_;
	$s->query_until(qr/started/, "\\echo started\n$sql\n");
}

my $poller;
sub within
{
	my ($secs, $cond) = @_;
	my $deadline = time() + $secs;
	$poller //= $node->background_psql('postgres');
	while (1)
	{
		return 1 if $poller->query_safe($cond) eq 't';
		return 0 if time() > $deadline;
		usleep(20_000);
	}
}

sub activity
{
	my ($pid, $cond) = @_;
	return "SELECT $cond FROM pg_stat_activity WHERE pid = $pid";
}

my $k = q{SELECT current_database() AS k};
my $plan = sql("EXPLAIN (VERBOSE, COSTS OFF) $k");
$plan =~ /Query Identifier: (-?\d+)/ or die "no queryid in $plan";
my $kid = $1;
sub k_calls
{
	return sql(qq{SELECT calls || ' ' || (query IS NULL) FROM pg_stat_statements_ng
  WHERE userid = 'r1'::regrole AND queryid = $kid});
}

sql('SELECT pg_stat_statements_ng_take_window()');
my $since = sql('SELECT history_open_since FROM pg_stat_statements_ng_info');

# three executions of k, counted in an unbound slot of w's
my ($w, $wpid) = bg('r1');
my ($r, $rpid) = bg('postgres');
$r->query_safe("SET pg_stat_statements_ng.debug_fault = 'stall_read'");
stall_on();
start($r, 'SELECT count(*) FROM pg_stat_statements_ng_changed_since(0, false);');
ok(within(10, activity($rpid, q{wait_event IS NOT DISTINCT FROM 'PgSleep'})),
	'a reader holds every partition lock');
$w->query_safe($k) for 1 .. 3;
stall_off();
ok(within(10, activity($rpid, q{state = 'idle'})), 'the reader finished');
is(k_calls(), '3 true', 'k ran three times without an entry (a row without text)');

# a reset of r1's statements voids the slot, and stops before its copy
my ($x, $xpid) = bg('postgres');
$x->query_safe("SET pg_stat_statements_ng.debug_fault = 'stall_reset'");
stall_on();
start($x, q{SELECT 1 FROM pg_stat_statements_ng_reset('r1'::regrole::oid);});
ok(within(10, activity($xpid, q{wait_event IS NOT DISTINCT FROM 'PgSleep'})),
	'the reset stopped between its void and its copy');

# k runs again meanwhile: it finishes, or waits for the reset
start($w, "$k;");
ok( within(10,
		activity($wpid, q{state = 'idle' OR wait_event_type = 'LWLock'})),
	'k ran again, or waits for the reset');
stall_off();
ok(within(10, activity($xpid, q{state = 'idle'})), 'the reset finished');
ok(within(10, activity($wpid, q{state = 'idle'})), 'k finished');

sql('SELECT pg_stat_statements_ng_take_window()');
is( sql(qq{SELECT string_agg(calls::text, ',') FROM pg_stat_statements_ng_history()
  WHERE window_start >= '$since' AND userid = 'r1'::regrole
    AND queryid = $kid}),
	'4', 'the window counts k four times: three before the reset, one after');
is(k_calls(), '1 true', 'the statistics count the one after the reset');
is(sql('SELECT history_counts_lost FROM pg_stat_statements_ng_info'), '0',
	'nothing lost');

$w->quit;
$x->quit;

# ---- unbound folds without an entry, by plan ----
sql(q{
CREATE TABLE j1 (id int PRIMARY KEY);
INSERT INTO j1 SELECT generate_series(1, 10000);
CREATE TABLE j2 (id int);
INSERT INTO j2 SELECT generate_series(1, 10);
VACUUM ANALYZE j1;
VACUUM ANALYZE j2;
});
my $j = 'SELECT count(*) FROM j1 JOIN j2 USING (id)';
$plan = sql("EXPLAIN (VERBOSE, COSTS OFF) $j");
$plan =~ /Query Identifier: (-?\d+)/ or die "no queryid in $plan";
my $jid = $1;

# five plans of j: the settings of each (c1 to c5)
my $noidx = 'enable_indexscan=off enable_indexonlyscan=off enable_bitmapscan=off';
my @conf = (
	'enable_hashjoin=off enable_mergejoin=off',
	'enable_nestloop=off enable_mergejoin=off',
	'enable_nestloop=off enable_hashjoin=off',
	"enable_hashjoin=off enable_mergejoin=off $noidx",
	"enable_nestloop=off enable_hashjoin=off $noidx");

# sessions of r1, session i planned with $conf[$c[i]] and running j $n[i]
# times in an unbound slot (while a reader holds every partition lock)
sub unbound_sessions
{
	my ($c, $n) = @_;
	my @s;
	foreach my $ci (@$c)
	{
		local $ENV{PGOPTIONS} = join(' ', map { "-c $_" } split(/ /, $conf[$ci]));
		push @s, (bg('r1'))[0];
	}
	stall_on();
	start($r, 'SELECT count(*) FROM pg_stat_statements_ng_changed_since(0, false);');
	ok(within(10, activity($rpid, q{wait_event IS NOT DISTINCT FROM 'PgSleep'})),
		'a reader holds every partition lock');
	foreach my $i (0 .. $#s)
	{
		$s[$i]->query_safe($j) for 1 .. $n->[$i];
	}
	stall_off();
	ok(within(10, activity($rpid, q{state = 'idle'})), 'the reader finished');
	return @s;
}

# quit the sessions one after the other, each once its exit folded its
# slot (its calls counted as unadmitted)
sub fold_in_turn
{
	my ($n, @s) = @_;
	my $folded = 1;
	foreach my $i (0 .. $#s)
	{
		my $before = ng_value($node, 'unadmitted_calls',
			'pg_stat_statements_ng_info()');
		$s[$i]->quit;
		$folded &&= within(10, 'SELECT unadmitted_calls = ' . ($before + $n->[$i])
			  . ' FROM pg_stat_statements_ng_info()');
	}
	ok($folded, 'each session\'s exit folded its slot without an entry');
}

# j's plan rows in the last closed window ("planid:calls"), and its calls
sub last_window_j
{
	return sql(qq{
WITH w AS (SELECT history_open_since AS e FROM pg_stat_statements_ng_info)
SELECT (SELECT string_agg(coalesce(planid::text, 'other') || ':' || calls, ' '
                          ORDER BY calls)
          FROM pg_stat_statements_ng_history_plans, w
         WHERE queryid = $jid AND window_end = w.e),
       (SELECT sum(calls) FROM pg_stat_statements_ng_history, w
         WHERE queryid = $jid AND window_end = w.e)});
}

sql('SELECT pg_stat_statements_ng_take_window()');
my @s = unbound_sessions([ 0, 1 ], [ 3, 2 ]);
is(sql("SELECT calls || ' ' || (query IS NULL) FROM pg_stat_statements_ng
  WHERE userid = 'r1'::regrole AND queryid = $jid"),
	'5 true', 'j ran five times without an entry');
fold_in_turn([ 3, 2 ], @s);
sql('SELECT pg_stat_statements_ng_take_window()');
my $two = last_window_j();

# the keeper, stopped: with nothing to take (the close just took it all)
# and no close asked for, it holds no partition lock between its ticks
# (the history's lock, which it may hold, is not read until it runs again)
my $lost = ng_value($node, 'history_counts_lost');
my $keeper;
foreach my $dir (glob('/proc/[0-9]*'))
{
	my $stat = eval { slurp_file("$dir/stat") } // next;
	my $cmd = eval { slurp_file("$dir/cmdline") } // next;
	my ($pid, $ppid) = $stat =~ /^(\d+) \(.*\) \S (\d+) /;
	$keeper = $pid
	  if $ppid && $ppid == $node->{_pid} && $cmd =~ /pg_stat_statements_ng keeper/;
}
ok($keeper, 'the keeper runs');
kill 'STOP', $keeper;
@s = unbound_sessions([ 0 .. 4 ], [ 1 .. 5 ]);
fold_in_turn([ 1 .. 5 ], @s);
kill 'CONT', $keeper;
sql('SELECT pg_stat_statements_ng_take_window()');
my $five = last_window_j();
is(ng_value($node, 'history_counts_lost') - $lost, 1,
	'the fifth plan of the key\'s place counted in history_counts_lost');

# the planids of c1 to c5: j run 10, 20, ... 50 times, with an entry
$node->safe_psql('postgres',
	join('', map { my $c = $_; "RESET ALL;\n"
		  . join('', map { "SET $_;\n" } split(/ /, $conf[$c]))
		  . "$j;\n" x (10 * ($c + 1)) } 0 .. 4),
	extra_params => [ '-U', 'r1' ]);
my %cname = map { my ($p, $calls) = split /\|/; ($p => 'c' . $calls / 10) }
  split(/\n/, sql("SELECT planid, calls FROM pg_stat_statements_ng_plans
  WHERE queryid = $jid"));
is(join(' ', sort values %cname), 'c1 c2 c3 c4 c5', 'j has five plans');
s/(-?\d+):/($cname{$1} \/\/ $1) . ':'/ge for $two, $five;
is($two, 'c2:2 c1:3|5', 'two plans folded without an entry: a plan row each');
is($five, 'c1:1 c2:2 c3:3 c4:4|15',
	'five plans folded without an entry: four plan rows, the fifth\'s calls in the row only');

$r->quit;
$node->stop;
done_testing();
