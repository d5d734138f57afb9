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
$r->quit;
$x->quit;
$node->stop;
done_testing();
