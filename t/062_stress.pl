# Stress: 16 pgbench clients run hot statements and ever-new ones while a
# chaos session loops every form of reset, reads of the view and of
# changed_since, max shrunk and grown again with a reload, and
# query_text_memory shrunk and restored.  Bounded: two phases of a few
# seconds each.
#
# Phase 1 (chaos) asserts: no TRAP or PANIC in the log, no client error
# (pgbench would count failed transactions, and aborts a client on error),
# and no counter that decreases between two reads without a reset in
# between: for every statement present in both reads, calls, rows and
# errors never decrease, provided nothing left the table in between
# (evicted_calls unchanged: an evicted entry comes back with fewer calls).
#
# Phase 2 (no resets; max at its minimum, so entries are evicted and new
# statements are refused while the table is full of entries in use) asserts
# the exact balance: sum(calls) of the clients' rows + evicted_calls +
# counts_discarded = the statements pgbench executed.  The test's own
# sessions are not tracked: a poll refused an entry on the full table
# (admission) would add its call to evicted_calls.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);

use NgNode;

my $clients = 16;
my $chaos_seconds = $ENV{PGSSNG_STRESS_SECONDS} // 20;

my $node = ng_node(
	'stress',
	max_connections => 40,
	'pg_stat_statements_ng.slots_per_backend' => 8,
	track_counts => 'off');
$node->safe_psql('postgres', q{
ALTER ROLE CURRENT_USER SET pg_stat_statements_ng.track = 'none';
CREATE ROLE stress LOGIN;
CREATE TABLE stress_t (a int);
INSERT INTO stress_t SELECT generate_series(1, 100);
GRANT SELECT ON stress_t TO stress;
GRANT CREATE ON SCHEMA public TO stress;
});
my $stress_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_roles WHERE rolname = 'stress'");
my $db_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_database WHERE datname = 'postgres'");

# Two scripts of two statements each: hot ones (a few queryids, run by
# everyone), and new ones (a temporary table of a random name: a new
# queryid nearly every time).  pgbench substitutes :r into the text.
my $hot = $node->basedir . '/hot.sql';
append_to_file($hot, q{\set r random(1, 100)
SELECT count(*) FROM stress_t WHERE a = :r;
SELECT :r AS v;
});
my $new = $node->basedir . '/new.sql';
append_to_file($new, q{\set r random(1, 1000000000)
CREATE TEMP TABLE u_:r (a int);
DROP TABLE u_:r;
});

sub pgbench_start
{
	my ($args, $out, $err) = @_;
	return IPC::Run::start(
		[
			'pgbench', '-n', '-M', 'simple', '-c', $clients, '-j', '4',
			@$args, '-f', "$hot\@3", '-f', "$new\@1",
			$node->connstr('postgres') . ' user=stress'
		],
		'>', $out, '2>', $err);
}

# The chaos session: its own statements are not tracked.
my $chaos = $node->background_psql('postgres', on_error_stop => 1);
$chaos->query_safe('SET pg_stat_statements_ng.track = none');

# ---- phase 1: chaos ----
my ($out1, $err1) = ('', '');
my $h1 = pgbench_start([ '-T', $chaos_seconds ], \$out1, \$err1);

# one read: evicted_calls before, every row, evicted_calls after
sub read_state
{
	my $res = $chaos->query_safe(q{
SELECT (SELECT evicted_calls FROM pg_stat_statements_ng_info) AS ev_before \gset
SELECT string_agg(format('%s/%s/%s/%s %s %s %s', userid, dbid, queryid, toplevel,
                         calls, rows, errors), E'\n')
  FROM pg_stat_statements_ng;
SELECT (SELECT evicted_calls FROM pg_stat_statements_ng_info) - :ev_before AS moved,
       :ev_before AS ev_before, (SELECT evicted_calls FROM pg_stat_statements_ng_info) AS ev_after;
});
	my @lines = split /\n/, $res;
	my $last = pop @lines;
	my ($moved, $ev_before, $ev_after) = split /\|/, $last;
	my %rows;
	foreach my $l (@lines)
	{
		next unless $l =~ /^(\S+) (\d+) (\d+) (\d+)$/;
		$rows{$1} = [ $2, $3, $4 ];
	}
	return { rows => \%rows, ev_before => $ev_before, ev_after => $ev_after };
}

my @actions = map { ('read', 'changed_since', 'read', 'read', $_) } (
	'full_reset', 'user_reset', 'max_shrink', 'db_reset', 'max_grow',
	'query_reset', 'text_shrink', 'minmax_reset', 'text_grow');
my $prev;
my ($reads, $compared, $decreases, $resets, $gen) = (0, 0, 0, 0, 0);
my @decrease_notes;
my $deadline = time() + $chaos_seconds;
my $i = 0;
while ($h1->pumpable && time() < $deadline + 30)
{
	my $a = $actions[ $i++ % @actions ];
	$h1->pump_nb;
	if ($a eq 'read')
	{
		my $cur = read_state();
		$reads++;
		if (defined $prev && $prev->{ev_before} == $cur->{ev_after})
		{
			$compared++;
			foreach my $k (keys %{ $prev->{rows} })
			{
				next unless exists $cur->{rows}{$k};
				for my $f (0 .. 2)
				{
					if ($cur->{rows}{$k}[$f] < $prev->{rows}{$k}[$f])
					{
						$decreases++;
						push @decrease_notes,
						  "$k field $f: $prev->{rows}{$k}[$f] -> $cur->{rows}{$k}[$f]"
						  if @decrease_notes < 10;
					}
				}
			}
		}
		$prev = $cur;
		next;
	}
	if ($a eq 'changed_since')
	{
		$gen = $chaos->query_safe(qq{
SELECT coalesce(max(generation), $gen) FROM pg_stat_statements_ng_changed_since($gen, false)});
		next;
	}
	# everything else changes what a read may see: no comparison across it
	undef $prev;
	$resets++;
	if ($a eq 'full_reset')
	{
		$chaos->query_safe('SELECT pg_stat_statements_ng_reset()');
	}
	elsif ($a eq 'user_reset')
	{
		$chaos->query_safe("SELECT pg_stat_statements_ng_reset($stress_oid)");
	}
	elsif ($a eq 'db_reset')
	{
		$chaos->query_safe("SELECT pg_stat_statements_ng_reset(0, $db_oid)");
	}
	elsif ($a eq 'query_reset')
	{
		$chaos->query_safe(q{
SELECT pg_stat_statements_ng_reset(0, 0, queryid) FROM pg_stat_statements_ng
 WHERE query LIKE 'SELECT count(*) FROM stress_t%'});
	}
	elsif ($a eq 'minmax_reset')
	{
		$chaos->query_safe('SELECT pg_stat_statements_ng_reset(0, 0, 0, true)');
	}
	elsif ($a eq 'max_shrink' || $a eq 'max_grow')
	{
		my $max = $a eq 'max_shrink' ? 100 : 5000;
		$chaos->query_safe(
			"ALTER SYSTEM SET pg_stat_statements_ng.max = $max");
		$chaos->query_safe('SELECT pg_reload_conf()');
	}
	elsif ($a eq 'text_shrink' || $a eq 'text_grow')
	{
		my $mem = $a eq 'text_shrink' ? "'64kB'" : "'64MB'";
		$chaos->query_safe(
			"ALTER SYSTEM SET pg_stat_statements_ng.query_text_memory = $mem");
		$chaos->query_safe('SELECT pg_reload_conf()');
	}
}
my $ok1 = $h1->finish;
note "phase 1: $reads reads, $compared compared, $resets resets and setting changes";
ok($ok1, 'phase 1: pgbench exits 0')
  or diag("stdout:\n$out1\nstderr:\n$err1");
like($out1, qr/number of failed transactions: 0 /,
	'phase 1: no failed transaction');
unlike($err1, qr/ERROR|error/, 'phase 1: no error from the clients');
cmp_ok($compared, '>', 5, 'phase 1: reads were compared');
is($decreases, 0, 'phase 1: no counter decreased between reads without a reset')
  or diag(join("\n", @decrease_notes));

# ---- phase 2: the exact balance, with evictions and refusals ----
$chaos->query_safe(
	"ALTER SYSTEM SET pg_stat_statements_ng.max = 100");
$chaos->query_safe(
	"ALTER SYSTEM SET pg_stat_statements_ng.query_text_memory = '64MB'");
$chaos->query_safe('SELECT pg_reload_conf()');
# the clients of phase 1 have exited (and folded); start from nothing
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = 'stress'")
  or die 'phase 1 clients did not exit';
$chaos->query_safe('SELECT pg_stat_statements_ng_reset()');

my $per_client = 300;
my ($out2, $err2) = ('', '');
my $h2 = pgbench_start([ '-t', $per_client ], \$out2, \$err2);
# reads meanwhile (no resets): they must not disturb the balance
while ($h2->pumpable)
{
	read_state();
	$chaos->query_safe(q{
SELECT count(*) FROM pg_stat_statements_ng_changed_since(0, false)});
	last unless $h2->pumpable;
	$h2->pump_nb;
}
ok($h2->finish, 'phase 2: pgbench exits 0')
  or diag("stdout:\n$out2\nstderr:\n$err2");
my $tx = $clients * $per_client;
like($out2, qr/number of transactions actually processed: $tx\/$tx/,
	'phase 2: every transaction ran');
unlike($err2, qr/ERROR|error/, 'phase 2: no error from the clients');
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = 'stress'")
  or die 'phase 2 clients did not exit';

my ($calls, $evicted, $discarded) = split /\|/, $chaos->query_safe(qq{
SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng WHERE userid = $stress_oid),
       evicted_calls, counts_discarded
  FROM pg_stat_statements_ng_info});
note "phase 2: calls $calls, evicted_calls $evicted, counts_discarded $discarded";
cmp_ok($evicted, '>', 0, 'phase 2: entries were evicted');
is($calls + $evicted + $discarded, 2 * $tx,
	'phase 2: sum(calls) + evicted_calls + counts_discarded = statements executed');

$chaos->quit;
my $log = slurp_file($node->logfile);
unlike($log, qr/TRAP:|PANIC:/, 'no assertion failure, no PANIC');
my @errors = grep { !/pg_stat_statements_ng_reset|canceling/ }
  ($log =~ /^.*(?:ERROR|FATAL):.*$/mg);
is(join("\n", @errors), '', 'no error in the log');
$node->stop;
done_testing();
