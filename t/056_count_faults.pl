# Counts that survive faults, shown with pg_stat_statements_ng.debug_fault
# (assertion builds only), which stops a process at a point where a real one
# can be stopped (a debugger, the scheduler) while a file exists:
#  - an ERROR inside the recording of failures does not stop failure
#    counting (the failure being recorded is counted as discarded);
#  - an entry kept without text (text memory full) costs no partition lock
#    per parse, and texts_dropped counts it once;
#  - failure-only counts in an unbound slot are shown, and kept at exit;
#  - changed_since delivers each change at least once, a row at most once
#    more with the same counts;
#  - a count written while a reset removes its entry is kept;
#  - a reader blocked by a writer stopped mid-write answers
#    pg_terminate_backend, and gives up on that slot after 5 s, saying so;
#  - losses counted before the keeper restores the saved file survive it.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

use NgNode;

my $node = ng_node('count_faults', 'pg_stat_statements_ng.track' => 'top');

if (!ng_has_debug_fault($node))
{
	$node->stop;
	plan skip_all => 'pg_stat_statements_ng.debug_fault exists only in assertion builds';
}

# the test's own sessions (the bootstrap superuser) are not tracked; every
# counted statement runs under one of the roles rNNN
$node->safe_psql('postgres', q{
ALTER ROLE CURRENT_USER SET pg_stat_statements_ng.track = 'none';
CREATE ROLE r113 SUPERUSER LOGIN;
CREATE ROLE r114 SUPERUSER LOGIN;
CREATE ROLE r115 SUPERUSER LOGIN;
CREATE ROLE r116 SUPERUSER LOGIN;
CREATE ROLE r119 SUPERUSER LOGIN;
CREATE ROLE r172 SUPERUSER LOGIN;
CREATE TABLE r_out (g bigint, calls bigint);
CREATE FUNCTION f_fail() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'f_fail';
END $$;
CREATE FUNCTION f_nested_fail() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 / (g - g) FROM generate_series(1, 1) g;
  RETURN 1;
END $$;
});

my $stall = $node->data_dir . '/pgssng_stall';

sub stall_on { open(my $fh, '>', $stall) or die "$stall: $!"; close($fh); }
sub stall_off { unlink($stall) or die "$stall: $!"; }

sub sql { return $node->safe_psql('postgres', $_[0]); }

sub info { return ng_value($node, $_[0]); }

sub as_role
{
	my ($role, $sql) = @_;
	my ($ret, $out, $err) =
	  $node->psql('postgres', $sql, on_error_stop => 0,
		extra_params => [ '-U', $role ]);
	return $out;
}

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

# poll for a condition, at most $secs seconds (wall clock), from a session
# kept open for it, so that no connection time counts
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

sub sleeping
{
	return "SELECT wait_event IS NOT DISTINCT FROM 'PgSleep' FROM pg_stat_activity WHERE pid = $_[0]";
}

sub idle
{
	return "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $_[0]";
}

sub rows_of
{
	my ($role, $cols, $where) = @_;
	$where //= "query IS DISTINCT FROM 'SELECT pg_backend_pid()'";
	return sql(
		"SELECT string_agg(($cols)::text, ',' ORDER BY ($cols)::text COLLATE \"C\") FROM pg_stat_statements_ng WHERE userid = '$role'::regrole AND $where");
}

# ---- an ERROR inside the recording of failures ----
sql('SELECT pg_stat_statements_ng_reset()');
as_role('r113', qq{SET pg_stat_statements_ng.debug_fault = 'failures_record_error';
SELECT f_fail();
SELECT f_fail();
SELECT f_fail();
});
is(sql(q{SELECT errors FROM pg_stat_statements_ng WHERE userid = 'r113'::regrole AND query = 'SELECT f_fail()'}),
	'2', 'failures are counted after an error inside their recording');
is(info('counts_discarded'), '1', 'the failure being recorded is counted as discarded');

# ---- the same with two failures pending (a nested statement's and its
# caller's): both are discarded, counted, so that the abort that follows
# has nothing left to record and no error to raise again ----
sql('SELECT pg_stat_statements_ng_reset()');
as_role('r113', qq{SET pg_stat_statements_ng.track = 'all';
SET pg_stat_statements_ng.debug_fault = 'failures_record_error';
SELECT f_nested_fail();
SELECT f_nested_fail();
});
is(info('counts_discarded'), '2',
	'an error while recording: the failures still pending are discarded too, counted');
is(sql(q{SELECT string_agg(toplevel || ':' || errors, ',' ORDER BY toplevel)
	FROM pg_stat_statements_ng WHERE userid = 'r113'::regrole AND errors > 0}),
	'false:1,true:1', 'the next execution records both failures');
unlike(slurp_file($node->logfile), qr/PANIC|TRAP:/, 'no PANIC, no assertion failure');

# ---- entries without text: one loss each, no lock per parse ----
$node->append_conf('postgresql.conf', "pg_stat_statements_ng.query_text_memory = 0\n");
$node->reload;
sql('SELECT pg_stat_statements_ng_reset()');
my $three = "SELECT 1 AS a; SELECT 1, 2 AS b; SELECT 'x' AS c;\n" x 100;
as_role('r114', $three) for 1 .. 2;
is(rows_of('r114', 'calls'), '200,200,200', 'statements without text counted');
is(info('texts_dropped'), '3', 'texts_dropped counts statements, not parses');

my ($b, $bpid) = bg('r114');
$b->query_safe('SELECT 1 AS a');
my ($s, $spid) = bg('r119');
$s->query_safe('SELECT 4 AS s');
my ($f, $fpid) = bg('r116');
my $g1 = sql('SELECT max(generation) FROM pg_stat_statements_ng_changed_since(0, false)');

# a reader stopped while it holds every partition lock shared, just after
# changed_since advanced the generation
my ($r, $rpid) = bg('postgres');
$r->query_safe("SET pg_stat_statements_ng.debug_fault = 'stall_read'");
stall_on();
start($r, qq{INSERT INTO r_out SELECT generation - $g1, calls FROM pg_stat_statements_ng_changed_since($g1, false) WHERE userid = 'r119'::regrole;});
ok(within(10, sleeping($rpid)), 'the reader stopped holding the partition locks');

# a parse of a statement kept without text takes no lock
start($b, 'SELECT 1 AS a;');
ok(within(10, idle($bpid)), 'a parse of a statement kept without text does not wait for a lock');

# failures of a statement that cannot get an entry now (its partition is
# busy): counted unbound, and shown
$f->query('SELECT f_fail()') for 1 .. 3;
# (without text, as all statements now: the other row is SELECT pg_backend_pid())
is(rows_of('r116', q{calls || ':' || errors}, 'true'), '0:3,1:0', 'failure-only counts in an unbound slot are shown');

# an execution stamped with the generation of a call still reading
$s->query_safe('SELECT 4 AS s');

stall_off();
ok(within(10, idle($rpid)), 'the reader finished');
$r->quit;
is(sql('SELECT g, calls FROM r_out'), '1|2',
	'the stopped call returned the execution that ran while it was stopped');

# ---- changed_since: at least once ----
# the stopped call returned the row of r119; the generation it returned
# (g1 + 1) brings it once more, with the same counts, and then not again
is(sql(qq{SELECT generation - $g1, calls FROM pg_stat_statements_ng_changed_since($g1 + 1, false) WHERE userid = 'r119'::regrole}),
	'2|2', 'a change seen by a call is returned by the next call once more, unchanged');
is(sql(qq{SELECT count(*) FROM pg_stat_statements_ng_changed_since($g1 + 2, false) WHERE userid = 'r119'::regrole}),
	'0', 'and not by the call after');

# when their backend exits, the unbound failures can get no entry (a
# process allocates no shared memory while it exits, store.c): they are
# counted as discarded, where the info view shows them
$f->quit;
ok(within(10, "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $fpid"), 'the failing session exited');
is(rows_of('r116', q{calls || ':' || errors}, 'true'), '1:0', 'failure-only counts without an entry leave at exit');
is(info('counts_discarded'), '3', 'and are counted as discarded, all three');
$b->quit;
$s->quit;

$node->append_conf('postgresql.conf', "pg_stat_statements_ng.query_text_memory = '64MB'\n");
$node->reload;

# ---- a reset while a count is being written ----
sql('SELECT pg_stat_statements_ng_reset()');
my ($w, $wpid) = bg('r115');
$w->query_safe('SELECT 2 AS w');
$w->query_safe("SET pg_stat_statements_ng.debug_fault = 'stall_write'");
stall_on();
start($w, 'SELECT 2 AS w;');
ok(within(10, sleeping($wpid)), 'the writer stopped inside its write section');
sql(q{SELECT pg_stat_statements_ng_reset('r115'::regrole::oid)});
stall_off();
ok(within(10, idle($wpid)), 'the writer finished');
is(rows_of('r115', q{query || ':' || calls}), 'SELECT $1 AS w:1',
	'the count written across the reset is kept, once');
$w->quit;

# ---- a reader and a writer stopped mid-write ----
my ($w2, $w2pid) = bg('r172');
$w2->query_safe('SELECT 3 AS x');
$w2->query_safe("SET pg_stat_statements_ng.debug_fault = 'stall_write'");
stall_on();
start($w2, 'SELECT 3 AS x;');
ok(within(10, sleeping($w2pid)), 'the writer stopped inside its write section');

my ($r2, $r2pid) = bg('postgres');
start($r2, 'SELECT count(*) FROM pg_stat_statements_ng;');
ok(within(10, sleeping($r2pid)), 'the reader waits for the writer, sleeping');
sql("SELECT pg_terminate_backend($r2pid)");
ok(within(1, "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $r2pid"),
	'the waiting reader answers pg_terminate_backend within a second');
eval { $r2->quit };

# (the first execution is in the slot, the entry holds no call yet)
my $x_calls = q{SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng
 WHERE userid = 'r172'::regrole AND query = 'SELECT $1 AS x'};
my ($ret, $out, $err) = $node->psql('postgres', $x_calls);
is($out, '0', 'after 5 s, a read omits the slot being written');
like($err, qr/WARNING:.*omits its counts/, 'and says so');
stall_off();
ok(within(10, idle($w2pid)), 'the writer finished');
is(sql($x_calls), '2', 'then every count is read');
$w2->quit;

# ---- losses counted before the keeper restores the saved file ----
$poller->quit;
undef $poller;
$node->append_conf('postgresql.conf', "pg_stat_statements_ng.query_text_memory = 0\n");
$node->reload;
sql('SELECT pg_stat_statements_ng_reset()');
as_role('r114', 'SELECT 5 AS p');
my $before_stop = info('texts_dropped');
cmp_ok($before_stop, '>', 0, 'a text was dropped before the shutdown');
$node->stop;
$node->append_conf('postgresql.conf', "pg_stat_statements_ng.debug_fault = 'stall_restore'\n");
stall_on();
my $off = -s $node->logfile;
$node->start;
as_role('r114', "SELECT 6 AS q;\nSELECT 7 AS r;\n");
my $before_restore = info('texts_dropped');
cmp_ok($before_restore, '>', 0, 'texts dropped while the keeper has not restored yet');
stall_off();
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
is(info('texts_dropped'), $before_stop + $before_restore,
	'the restore adds the saved losses to those counted before it');

# ---- a statement run before the keeper restores its saved entry: the
# entry a backend made is merged with the saved one, and covers both
# periods from the saved start ----
$node->append_conf('postgresql.conf', "pg_stat_statements_ng.query_text_memory = '64MB'\n");
$node->reload;
ok($node->poll_query_until('postgres',
		'SHOW pg_stat_statements_ng.query_text_memory', '64MB'),
	'text memory back');
as_role('r114', "SELECT 8 - 1 AS m;\n" x 3);
my $m_sql = q{SELECT calls || ' ' || stats_since || ' ' || query FROM pg_stat_statements_ng
	WHERE userid = 'r114'::regrole AND query LIKE '%AS m'};
my ($m_since) = sql($m_sql) =~ /^3 (.*) SELECT \$1 - \$2 AS m$/;
ok(defined $m_since, 'the statement ran three times, with its text');
$node->stop;
stall_on();
$off = -s $node->logfile;
$node->start;
as_role('r114', "SELECT 8 - 1 AS m;\n" x 2);
stall_off();
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
is(sql($m_sql), "5 $m_since SELECT \$1 - \$2 AS m",
	'merged at the restore: five calls, since the saved start, with the text');

# ---- a full reset before the keeper restores: the saved statistics must
# not come back after it ----
$node->stop;
stall_on();
$off = -s $node->logfile;
$node->start;
sql('SELECT pg_stat_statements_ng_reset()');
stall_off();
$node->wait_for_log(qr/a reset during the restore discarded the rest of the saved statistics/, $off);
is(sql(q{SELECT count(*) FROM pg_stat_statements_ng WHERE query LIKE '%AS m'}), '0',
	'a reset before the restore is not undone by it');

$node->stop;
done_testing();
