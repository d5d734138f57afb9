# The DSA area cannot grow: /dev/shm is full.  No client query fails, the
# refusals are counted in pg_stat_statements_ng_info (dsa_failures; texts
# not stored in texts_dropped, logged as the area's failure, not as query
# text memory being full), every
# execution is either a call or in evicted_calls, no entry reservation leaks
# (entries equals the rows of the view), once space returns new
# statements are counted again, exactly, and the count of refusals
# survives a restart.
#
# This needs a /dev/shm of its own: scripts/test.sh, as root, runs this file
# in a private mount namespace with a small tmpfs on /dev/shm
# (PGSSNG_PRIVATE_SHM=1); the test then fills that tmpfs with a file of its
# own and removes the file to give the space back.  Anywhere else it skips:
# filling a shared /dev/shm would break every other cluster on the machine.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

plan skip_all =>
  'needs a private /dev/shm: scripts/test.sh runs this as root in a mount namespace (PGSSNG_PRIVATE_SHM=1)'
  unless $ENV{PGSSNG_PRIVATE_SHM};

# nothing else may need dynamic shared memory: no parallel query, and no
# relation statistics (pgstat's own DSA area would need to grow too)
my $node = ng_node(
	'dev_shm_full',
	'pg_stat_statements_ng.track_utility' => 'on',
	max_parallel_workers_per_gather => 0,
	max_parallel_maintenance_workers => 0,
	track_counts => 'off');
$node->safe_psql('postgres', q{
SELECT pg_stat_statements_ng_reset();
});

# Fill /dev/shm: write until the tmpfs refuses.
my $filler = '/dev/shm/pgssng_053_filler';
open(my $fh, '>', $filler) or die "cannot create $filler: $!";
binmode $fh;
my $block = "\0" x 65536;
my $filled = 0;
while (1)
{
	my $n = syswrite($fh, $block);
	last unless defined $n && $n > 0;
	$filled += $n;
}
close($fh);
note "filled /dev/shm with $filled bytes";

# A text larger than the area's first segment (1 MB), which cannot grow
# now: its statement gets an entry (there is room for one) without it,
# counted in texts_dropped, and the log blames the area, not
# query_text_memory (64 MB, far from full).
my $comment = 'x' x (1536 * 1024);
$node->safe_psql('postgres', "SELECT 1 AS big_text /* $comment */");
is($node->safe_psql('postgres', q{
SELECT (SELECT texts_dropped FROM pg_stat_statements_ng_info),
       (SELECT count(*) FROM pg_stat_statements_ng
         WHERE query IS NULL OR query = '')}), '1|1',
	'the statement is kept without its text, counted in texts_dropped');

# 3000 distinct statements in 4 sessions, each its own statement: their
# entries alone (640 bytes each on x86-64) take twice the initial 1 MB
# segment, so the area must grow.  safe_psql dies on any error: none may
# reach the client.
my $n_sessions = 4;
my $per_session = 750;
my $n_statements = $n_sessions * $per_session;
for my $s (0 .. $n_sessions - 1)
{
	my $sql = join('', map {
			my $i = $s * $per_session + $_;
			"CREATE TABLE tab_$i (a int);\n"
	} 1 .. $per_session);
	$node->safe_psql('postgres', $sql);
}
pass('no client error while the DSA area cannot grow');

# Read from a session that exited: its slots are folded.
# The checks below are not counted (track = none from the session's start):
# a check's own statement, counted while the area is full in an unbound slot
# of its backend, would show as a row without an entry until that backend's
# exit folds it, which may come after the next check has read
sub untracked
{
	local $ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
	return $node->safe_psql('postgres', $_[0]);
}
my ($failures, $entries, $rows, $shown_calls, $evicted, $textbytes_diff) = split /\|/,
  untracked(q{
SELECT i.dsa_failures,
       i.entries,
       (SELECT count(*) FROM pg_stat_statements_ng),
       (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng
         WHERE query LIKE 'CREATE TABLE tab_%'),
       i.evicted_calls,
       i.query_text_memory_used -
       (SELECT coalesce(sum(16 + octet_length(query) + 1), 0) FROM pg_stat_statements_ng)
  FROM pg_stat_statements_ng_info i});
note "dsa_failures=$failures entries=$entries rows=$rows calls=$shown_calls evicted=$evicted";
cmp_ok($failures, '>', 0, 'the refused allocations are counted in dsa_failures');
cmp_ok($shown_calls, '<', $n_statements, 'not every statement got an entry');
is($shown_calls + $evicted, $n_statements,
	'every CREATE TABLE is a call or in evicted_calls');
is(untracked(q{
SELECT (SELECT entries FROM pg_stat_statements_ng_info) -
       (SELECT count(*) FROM pg_stat_statements_ng)}), '0',
	'entries equals the rows of the view: no reservation leaked');
is($textbytes_diff, '0', 'text memory equals the texts shown');

my $log = slurp_file($node->logfile);
like($log, qr/its shared memory area could not grow.*\n.*DETAIL:  The last error was: could not resize shared memory segment/,
	'the failure is logged with its cause');
my @logged = ($log =~ /its shared memory area could not grow/g);
is(scalar(@logged), 1, 'and logged once');
# the text the area could not hold is not blamed on query_text_memory
is(scalar(() = $log =~ /query text memory is full|Raise pg_stat_statements_ng.query_text_memory/g),
	0, 'no line says query text memory is full');
unlike($log, qr/TRAP:|PANIC:|ERROR:/, 'no assertion failure, no error in the log');
unlike($log, qr/dynamic shared memory leak/,
	'no segment left to the transaction: no leak warning to the client');

# Failed statements are recorded from the transaction abort callback, where
# an allocation error is contained too: the client sees its own error only.
my ($ret, $out, $err) = $node->psql('postgres',
	join('', map { "DROP TABLE missing_$_;\n" } 1 .. 100),
	on_error_stop => 0);
my @errs = ($err =~ /^.*ERROR:.*$/mg);
is(scalar(@errs), 100, 'each failing statement reports one error');
is(scalar(grep { !/table "missing_\d+" does not exist/ } @errs), 0,
	'and only its own');
unlike(slurp_file($node->logfile), qr/ERROR:  could not resize|TRAP:|PANIC:/,
	'no allocation error reached the log');

# A growth retried for real fails inside a transaction that goes on to pin
# buffers: dsa.c makes the area's resource owner (none: our mapping is
# pinned) current around dsm_create, and the error is caught before it
# restores the caller's; ours restores it, or the next buffer pin would find
# no resource owner (a segfault).  Each round first lets the retry time
# (one second after the last failure) pass.
for my $round (1 .. 3)
{
	$node->safe_psql('postgres', qq{
SELECT pg_sleep(1.2);
BEGIN;
CREATE TABLE retry_$round (a int);
INSERT INTO retry_$round SELECT generate_series(1, 1000);
SELECT count(*) FROM retry_$round;
COMMIT;
});
}
pass('statements after a retried growth that failed run in the same transaction');
unlike(slurp_file($node->logfile), qr/terminated by signal|TRAP:|PANIC:/,
	'no backend crashed');
unlike(slurp_file($node->logfile), qr/dynamic shared memory leak/,
	'and no leak warning after a retried growth failed');

# Space returns.  Growth is retried one second after the last failure: poll
# (bounded) until a new statement gets its entry again.
unlink($filler) or die "cannot remove $filler: $!";
my $probe = 0;
# bounded: each round runs one new statement and looks for it
for (1 .. 100)
{
	$probe++;
	$node->safe_psql('postgres', "CREATE TABLE probe_$probe (a int)");
	last if $node->safe_psql('postgres', qq{
SELECT count(*) FROM pg_stat_statements_ng
 WHERE query = 'CREATE TABLE probe_$probe (a int)' AND calls = 1}) eq '1';
	select(undef, undef, undef, 0.1);
}
is($node->safe_psql('postgres', qq{
SELECT count(*) FROM pg_stat_statements_ng
 WHERE query = 'CREATE TABLE probe_$probe (a int)' AND calls = 1}), '1',
	'a new statement gets an entry once space returns');

my $failures_before = $node->safe_psql('postgres',
	'SELECT dsa_failures FROM pg_stat_statements_ng_info');
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE after_$_ (a int);\n" } 1 .. 200));
is($node->safe_psql('postgres', q{
SELECT count(*) || ' ' || sum(calls) FROM pg_stat_statements_ng
 WHERE query LIKE 'CREATE TABLE after_%' AND query IS NOT NULL}), '200 200',
	'then every new statement is counted, with its text');
is($node->safe_psql('postgres',
		'SELECT dsa_failures FROM pg_stat_statements_ng_info'),
	$failures_before, 'and nothing more is refused');
is(untracked(q{
SELECT (SELECT entries FROM pg_stat_statements_ng_info) -
       (SELECT count(*) FROM pg_stat_statements_ng)}), '0',
	'entries still equals the rows');

# The refusals are a loss like the others: a clean restart keeps the count
# (the dump saves it; loading it adds it to what was counted since start).
$node->restart;
is($node->safe_psql('postgres',
		'SELECT dsa_failures FROM pg_stat_statements_ng_info'),
	$failures_before, 'dsa_failures survives a restart');

$node->stop;
done_testing();
