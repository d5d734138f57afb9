# Persistence across restarts: a clean restart keeps every entry
# byte for byte; save = off keeps nothing; an immediate stop or a crash
# starts empty even with a valid file in place; a keeper terminated by hand
# does not make a later restart restore stale statistics; an unwritable
# pg_stat/ or a full disk at shutdown costs the file, never the shutdown.
use strict;
use warnings FATAL => 'all';

use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use NgNode;
use NgPersist;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $node = ng_init_node(
	'persist', @NG_SMALL,
	'pg_stat_statements_ng.max' => 10000,
	'pg_stat_statements_ng.track' => 'all',
	'pg_stat_statements_ng.track_planning' => 'on',
	track_io_timing => 'on',
	restart_after_crash => 'on');
ok(ng_start($node), 'server starts');

my $pgdata = $node->data_dir;
my $stat = "$pgdata/$STAT_FILE";
my $tmp = "$pgdata/$TMP_FILE";

# every column of the view, the row as one text value, in key order; the
# column list comes from the catalog so that columns added later are
# compared too
my $rows_sql;
my $info_sql = q(SELECT dealloc, stats_reset, evicted_calls,
	evicted_exec_time, last_eviction_time, texts_dropped, entries_refused,
	counts_discarded, max FROM pg_stat_statements_ng_info);
my $count_sql = 'SELECT count(*) FROM pg_stat_statements_ng';

# --- setup, untracked -------------------------------------------------------

$node->safe_psql('postgres', q(
CREATE EXTENSION pg_stat_statements_ng;
CREATE ROLE alice LOGIN;
CREATE DATABASE work;
CREATE DATABASE evict;
));
# one transaction each: a single one would need 1000 locks
$node->safe_psql('work',
	join("\n", map { "CREATE TABLE t$_ (a int, b text);" } 0 .. 999));
$node->safe_psql('work', q(
GRANT ALL ON ALL TABLES IN SCHEMA public TO alice;
CREATE FUNCTION nested(i int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	SELECT count(*) INTO n FROM t0 WHERE a > i;
	RETURN n;
END
$$;
));
is($node->safe_psql('postgres', $count_sql), '0',
	'sessions with track = none add nothing');
my $cols = $node->safe_psql('postgres', q(
	SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum)
	FROM pg_attribute
	WHERE attrelid = 'pg_stat_statements_ng'::regclass AND attnum > 0
	  AND NOT attisdropped));
$rows_sql = "SELECT ROW($cols)::text FROM pg_stat_statements_ng
	ORDER BY userid, dbid, toplevel, queryid";
note "compared columns: $cols";

# --- evictions first, so that the info figures are not all zero ------------

# (admission = all: statements run once evict too)
$node->safe_psql('postgres',
	"ALTER SYSTEM SET pg_stat_statements_ng.max = 100;
ALTER SYSTEM SET pg_stat_statements_ng.admission = 'all'; SELECT pg_reload_conf()");
ok( $node->poll_query_until(
		'evict', 'SHOW pg_stat_statements_ng.max', '100'),
	'max lowered to 100');
ng_tracked($node, 'evict',
	join("\n", map { 'SELECT 1' . (' + 1' x $_) . ';' } 1 .. 300));
ok( $node->poll_query_until(
		'postgres',
		'SELECT dealloc > 0 FROM pg_stat_statements_ng_info'),
	'entries were evicted');
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET pg_stat_statements_ng.max; SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'work', 'SHOW pg_stat_statements_ng.max', '10000'),
	'max back to 10000');

# --- 5000 distinct statements, some run several times, two users ----------

my @work;
for my $i (0 .. 999)
{
	my @stmts = (
		"INSERT INTO t$i SELECT g, 'x' || g FROM generate_series(1, 20) g;",
		"SELECT count(*) FROM t$i WHERE a > 5;",
		"UPDATE t$i SET b = 'y' WHERE a = 3;",
		"SELECT a, b FROM t$i ORDER BY a LIMIT 3;",
		"DELETE FROM t$i WHERE a = 20;");
	push @stmts, ("SELECT count(*) FROM t$i WHERE a > 5;") x 3 if $i % 7 == 0;
	push @stmts, ("UPDATE t$i SET b = 'z' WHERE a = 4;") x 2 if $i % 11 == 0;
	push @{ $work[ $i < 800 ? 0 : 1 ] }, @stmts;
}
ng_tracked($node, 'work', join("\n", @{ $work[0] }));
ng_tracked($node, 'work', join("\n", @{ $work[1] }), 'alice');
ng_tracked($node, 'work', 'SELECT nested(1); SELECT nested(2); SELECT nested(3);');
# statements that fail (counted where the view has errors columns)
{
	local $ENV{PGOPTIONS} = '';
	$node->psql('postgres', 'SELECT 1 / (g - g) FROM generate_series(1, 3) g')
	  for 1 .. 3;
}

ok( $node->poll_query_until(
		'postgres',
		q(SELECT count(*) = 0 FROM pg_stat_activity
		  WHERE datname IN ('work', 'evict'))),
	'workload sessions have exited');

my $work_rows = $node->safe_psql(
	'postgres', q(
SELECT count(*) FILTER (WHERE toplevel),
       count(*) FILTER (WHERE NOT toplevel),
       count(*) FILTER (WHERE userid = 'alice'::regrole)
FROM pg_stat_statements_ng WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'work')));
is($work_rows, '5001|1|1000',
	'work: 5000 statements + nested() at top level, 1 nested, 1000 of alice');

if ($cols =~ /\berrors\b/)
{
	is( $node->safe_psql('postgres',
			q(SELECT errors FROM pg_stat_statements_ng WHERE query LIKE '%/ (g - g)%')),
		'3', 'failed executions are counted (errors = 3)');
}

# a collector's token, then a statement that changes after it
my $token = $node->safe_psql('postgres',
	'SELECT max(generation) FROM pg_stat_statements_ng_changed_since(0, false)');
ng_tracked($node, 'work', 'SELECT count(*) FROM t3 WHERE a > 7;');
my $changed_sql = q(SELECT string_agg(query, ' | ' ORDER BY query)
	FROM pg_stat_statements_ng_changed_since(%s, true)
	WHERE query LIKE 'SELECT count(*) FROM t_ WHERE a > $1');

my $before = $node->safe_psql('postgres', $rows_sql);
my $info_before = $node->safe_psql('postgres', $info_sql);
my @before = split /\n/, $before;
cmp_ok(scalar(@before), '>=', 5002, 'rows before the restart: ' . scalar(@before));
is($node->safe_psql('postgres', $rows_sql), $before,
	'reading the view twice gives the same bytes');

# --- clean restart -----------------------------------------------------------

my $off = log_mark($node);
$node->stop;
ok(-f $stat, 'a clean shutdown wrote the file');
ok(!-e $tmp, 'no temporary file left after the shutdown');
is(count_since($node, $off, qr/could not save statistics/), 0,
	'no save failure logged');
my $valid = read_bytes($stat);
copy($stat, "$pgdata/../valid.stat") or die "copy: $!";

$off = log_mark($node);
ok(ng_start($node), 'server restarts');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
my ($nrestored) = log_since($node, $off)
  =~ /pg_stat_statements_ng: restored statistics of (\d+) statements/;
is($nrestored, scalar(@before), 'the log counts every row as restored');
ok(!-e $stat, 'the file is removed after the restore');

my $after = $node->safe_psql('postgres', $rows_sql);
my @after = split /\n/, $after;
is(scalar(@after), scalar(@before), 'as many rows after the restart');
my $identical = 0;
my @diff;
for my $i (0 .. $#before)
{
	if (defined $after[$i] && $after[$i] eq $before[$i]) { $identical++ }
	elsif (@diff < 5)
	{
		push @diff, "before: $before[$i]\nafter:  " . ($after[$i] // '(none)');
	}
}
is($identical, scalar(@before),
	"every row byte-identical after the restart ($identical of "
	  . scalar(@before) . ')')
  or diag join("\n", @diff);
is($node->safe_psql('postgres', $info_sql), $info_before,
	'info view figures (dealloc, stats_reset, evictions, losses) restored');
unlike($info_before, qr/^0\|/, 'dealloc was not zero');
is(count_since($node, $off, qr/statistics start empty|ignoring saved statistics/),
	0, 'no rejection or unclean-start line');

# the collector's token from before the restart still works: the entry
# changed after it is returned, those unchanged since (t0's) are not
is($node->safe_psql('postgres', sprintf($changed_sql, $token)),
	'SELECT count(*) FROM t3 WHERE a > $1',
	'changed_since with a token from before a clean restart: what changed after it, only');

# the restored entries keep counting
ng_tracked($node, 'work', 'SELECT count(*) FROM t0 WHERE a > 5;');
is( $node->safe_psql(
		'postgres', q(SELECT calls FROM pg_stat_statements_ng
		WHERE query = 'SELECT count(*) FROM t0 WHERE a > $1'
		AND dbid = (SELECT oid FROM pg_database WHERE datname = 'work'))),
	'5', 'a restored entry keeps counting (4 before the restart, 1 after)');

# --- a restart with a smaller max: every execution stays counted, and the
# most used entries are the ones kept ----------------------------------------

ng_tracked($node, 'work', 'SELECT 42 AS hot;' x 50);
my $conserved_sql = q(SELECT (SELECT sum(calls) FROM pg_stat_statements_ng) +
	evicted_calls FROM pg_stat_statements_ng_info);
my $untracked = sub {
	local $ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
	return $node->safe_psql('postgres', $_[0]);
};
my $calls_before = $untracked->($conserved_sql);
$node->safe_psql('postgres',
	'ALTER SYSTEM SET pg_stat_statements_ng.max = 100');
$off = log_mark($node);
$node->stop;
ok(ng_start($node), 'server restarts with max = 100');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
# bounded: the keeper evicts down to max right after the restore
my $down = 0;
for (1 .. 100)
{
	last if ($down = $untracked->(
			'SELECT entries <= 100 FROM pg_stat_statements_ng_info') eq 't');
	usleep(50_000);
}
ok($down, 'the restored table is brought down to max');
is($untracked->($conserved_sql), $calls_before,
	'sum(calls) + evicted_calls is what it was before the restart');
is($untracked->(q(SELECT calls FROM pg_stat_statements_ng
	WHERE query = 'SELECT $1 AS hot')), '50',
	'the most used statement is among those kept');
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET pg_stat_statements_ng.max; SELECT pg_reload_conf()');
ok($node->poll_query_until('postgres', 'SHOW pg_stat_statements_ng.max', '10000'),
	'max back to 10000');

# --- save = off: nothing written, nothing kept -----------------------------

$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_stat_statements_ng.save = off');
$node->stop;
unlink $stat;    # written by this stop, which still had save = on
ok(ng_start($node), 'server starts with save = off');
ng_tracked($node, 'work', 'SELECT count(*) FROM t1 WHERE a > 5;');
cmp_ok($node->safe_psql('postgres', $count_sql), '>', 0, 'statements are tracked');
$off = log_mark($node);
$node->stop;
ok(!-e $stat, 'save = off: no file written at shutdown');
ok(!-e $tmp, 'save = off: no temporary file');
is(count_since($node, $off, qr/pg_stat_statements_ng/), 0,
	'save = off: nothing logged at shutdown');
ok(ng_start($node), 'server restarts with save = off');
is($node->safe_psql('postgres', $count_sql), '0', 'save = off: empty after the restart');
is(count_since($node, $off, qr/restored statistics/), 0, 'save = off: nothing restored');

$node->safe_psql('postgres', 'ALTER SYSTEM RESET pg_stat_statements_ng.save');
$node->restart;
is($node->safe_psql('postgres', 'SHOW pg_stat_statements_ng.save'), 'on', 'save back on');

# --- immediate stop, with a stale valid file copied back -------------------

ng_tracked($node, 'work', 'SELECT count(*) FROM t2 WHERE a > 5;');
cmp_ok($node->safe_psql('postgres', $count_sql), '>', 0, 'statements are tracked');
$token = $node->safe_psql('postgres',
	'SELECT max(generation) FROM pg_stat_statements_ng_changed_since(0, false)');
$node->stop('immediate');
ok(!-e $stat, 'an immediate stop writes no file');
write_bytes($stat, $valid);
$off = log_mark($node);
ok(ng_start($node), 'server starts after an immediate stop');
$node->wait_for_log(
	qr/pg_stat_statements_ng: statistics start empty after an unclean shutdown/, $off);
ok(!-e $stat, 'the stale file is removed');
is($node->safe_psql('postgres', $count_sql), '0', 'immediate stop: statistics start empty');
is(count_since($node, $off, qr/statistics start empty after an unclean shutdown/),
	1, 'immediate stop: the log says so once');
ng_tracked($node, 'work', 'SELECT count(*) FROM t1 WHERE a > 5;');
is($node->safe_psql('postgres', sprintf($changed_sql, $token)),
	'SELECT count(*) FROM t1 WHERE a > $1',
	'changed_since with a token from before an unclean stop returns what ran since');
is(count_since($node, $off, qr/restored statistics|ignoring saved statistics/),
	0, 'immediate stop: nothing restored, nothing rejected');

# --- a crash (a process killed): same -------------------------------------

ng_tracked($node, 'work', 'SELECT count(*) FROM t3 WHERE a > 5;');
write_bytes($stat, $valid);    # as if left behind
$off = log_mark($node);
my $victim = $node->safe_psql('postgres', q(
	SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'));
kill 'KILL', $victim;
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $off);
$node->wait_for_log(
	qr/pg_stat_statements_ng: statistics start empty after an unclean shutdown/, $off);
ok($node->poll_query_until('postgres', 'SELECT true'), 'server back after the crash');
ok(!-e $stat, 'crash: the stale file is removed');
is($node->safe_psql('postgres', $count_sql), '0', 'crash: statistics start empty');
is(count_since($node, $off, qr/statistics start empty after an unclean shutdown/),
	1, 'crash: the log says so once');
is(count_since($node, $off, qr/restored statistics/), 0, 'crash: nothing restored');
# a clean restart after the crash restart behaves normally
$node->restart;

# --- the keeper terminated by hand ------------------------------------------
#
# README: "If the keeper is terminated by hand it writes the file too; a later
# keeper removes it."  What must hold for a user: a later clean restart
# restores the statistics as they were at that shutdown, not the ones of the
# moment the keeper was terminated.

sub keeper_pid
{
	for my $proc (glob('/proc/[0-9]*'))
	{
		my $cmd = eval { read_bytes("$proc/cmdline") } // next;
		my ($ppid) = (eval { read_bytes("$proc/stat") } // '') =~ /^\d+ \(.*?\) \S (\d+)/;
		next unless defined $ppid && $ppid == $node->{_pid};
		return ($proc =~ m{(\d+)$})[0] if $cmd =~ /pg_stat_statements_ng keeper/;
	}
	return undef;
}

ng_tracked($node, 'work', 'SELECT count(*) FROM t4 WHERE a > 5;');
my $keeper = keeper_pid();
ok(defined $keeper, 'the keeper runs');
$off = log_mark($node);
# a bgworker without a database connection is not a "PostgreSQL backend
# process" for pg_terminate_backend: by hand means kill
kill 'TERM', $keeper;
# poll: the keeper exits (it may first wait up to 10 s for backends), then
# a new one should start (bgw_restart_time is 5 s); give up after 30 s
my ($second, $exited);
for (my $waited = 0; $waited < 300; $waited++)
{
	$second = keeper_pid();
	$exited = 1 if !defined $second || $second != $keeper;
	last if defined $second && $second != $keeper;
	usleep(100_000);
}
ok($exited, 'the terminated keeper exits');
ok(defined $second && $second != $keeper,
	'a new keeper starts after the keeper was terminated');
ng_tracked($node, 'work', 'SELECT count(*) FROM t4 WHERE a > 5;' x 2);
$off = log_mark($node);
$node->restart;
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
is( $node->safe_psql(
		'postgres',
		q(SELECT calls FROM pg_stat_statements_ng
		  WHERE query = 'SELECT count(*) FROM t4 WHERE a > $1')),
	'3',
	'after termination of the keeper and a clean restart, counts are current (3 calls)');
ok(!-e $stat, 'no file left while running');

# --- read-only pg_stat/ at shutdown -----------------------------------------

ng_tracked($node, 'work', 'SELECT count(*) FROM t5 WHERE a > 5;');
chmod 0500, "$pgdata/pg_stat" or die "chmod: $!";
SKIP:
{
	# root could write anyway: then this case proves nothing
	skip 'running as root: a mode 0500 directory stays writable', 5
	  if $> == 0;
	$off = log_mark($node);
	ok($node->stop('fast', fail_ok => 1), 'read-only pg_stat/: shutdown completes');
	chmod 0700, "$pgdata/pg_stat";
	ok(!-e $tmp && !-e $stat, 'read-only pg_stat/: no file, no temporary file');
	is(count_since($node, $off,
		qr/LOG:  pg_stat_statements_ng: could not save statistics/),
		1, 'read-only pg_stat/: one LOG line');
	ok(ng_start($node), 'server starts after that');
	is($node->safe_psql('postgres', $count_sql), '0', 'nothing was saved, nothing restored');
}
chmod 0700, "$pgdata/pg_stat";

# --- a full disk at shutdown (injected: the dump's writes fail, ENOSPC) ---

SKIP:
{
	skip 'pg_stat_statements_ng.debug_fault exists only in assertion builds', 4
	  if $node->safe_psql('postgres',
		"SELECT current_setting('pg_stat_statements_ng.debug_fault', true) IS NULL") eq 't';
	# in the file, so that the keeper has it from its start
	$node->append_conf('postgresql.conf', "pg_stat_statements_ng.debug_fault = 'dump_full'\n");
	$node->restart;
	ng_tracked($node, 'work', join("\n", map { "SELECT count(*) FROM t$_ WHERE a > 5;" } 0 .. 199));
	$off = log_mark($node);
	ok($node->stop('fast', fail_ok => 1), 'full disk: shutdown completes');
	ok(!-e $tmp && !-l $tmp && !-e $stat, 'full disk: no file, no temporary file');
	my @lines = grep { /pg_stat_statements_ng: could not save statistics/ }
	  split /\n/, log_since($node, $off);
	is(scalar(@lines), 1, 'full disk: one LOG line');
	like($lines[0] // '', qr/No space left on device/, 'full disk: the line says why')
	  or diag "line: " . ($lines[0] // '(none)');
	$node->append_conf('postgresql.conf', "pg_stat_statements_ng.debug_fault = 'none'\n");
	ng_start($node);
}

$node->stop;
done_testing();
