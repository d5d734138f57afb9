# Reading while 16 clients count: no counter ever goes backwards, no
# execution is ever seen twice, and the final counts are exact.
#
# A reader session loops in a procedure that, each iteration, copies the
# view's rows for the benchmark database into a table (one snapshot per
# iteration, committed) until the test tells it pgbench has exited; then
# one last snapshot.  Meanwhile 16 pgbench clients run 50 distinct
# statements, 100 times each per client.  Afterwards, in SQL over the
# snapshots: per statement, calls and rows never decrease from one
# snapshot to the next and never exceed the exact final figures, and the
# last snapshot is exact.
#
# Two rounds: with the default slots per backend (every statement keeps its
# slot, the reader races the lock-free slot writes), and with the minimum of
# 8 (a backend cycling through 50 statements folds a slot into the shared
# table at nearly every statement, so the reader races the folds too).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

use NgNode;

my $nstmts = 50;
my $clients = 16;
my $per_client = 100;
my $calls = $clients * $per_client;
my $total_calls = $calls * $nstmts;

my $node = ng_node('reader', max_connections => 40);

$node->safe_psql('postgres', 'CREATE DATABASE bench');
my $bench_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_database WHERE datname = 'bench'");

# statement k reads ng_t<k>, which holds k rows
my @stmts;
my $setup = '';
for my $k (1 .. $nstmts)
{
	$setup .=
	  "CREATE TABLE ng_t$k (a int); INSERT INTO ng_t$k SELECT generate_series(1, $k);\n";
	push @stmts, "SELECT a, 'c$k' AS tag FROM ng_t$k WHERE a > 0 AND a <= 1000";
}
$node->safe_psql('bench', $setup);
my $script = $node->basedir . '/reader.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	join('', map { "$_;\n" } @stmts));

# the expected final figures, by queryid as the core computes it
my $expect = '';
for my $k (1 .. $nstmts)
{
	my $plan = $node->safe_psql('bench',
		"EXPLAIN (VERBOSE, COSTS OFF) $stmts[$k - 1]");
	$plan =~ /Query Identifier: (-?\d+)/
	  or die "no query identifier in EXPLAIN output:\n$plan";
	$expect .= "INSERT INTO expect VALUES ($1, $k, $calls, " . ($calls * $k) . ");\n";
}

$node->safe_psql(
	'postgres', qq{
CREATE TABLE expect (queryid bigint PRIMARY KEY, k int, calls bigint, rows bigint);
$expect
CREATE TABLE ctl (stop bool NOT NULL);
CREATE TABLE iters (iter int PRIMARY KEY, after_exit bool NOT NULL);
CREATE TABLE snaps (iter int, queryid bigint, calls bigint, rows bigint,
                    PRIMARY KEY (iter, queryid));
-- snapshot until told to stop; the snapshot taken after the stop flag was
-- seen is the last one
CREATE PROCEDURE reader(db oid, maxiter int) LANGUAGE plpgsql AS \$\$
DECLARE
  i int := 0;
  done bool;
BEGIN
  LOOP
    i := i + 1;
    SELECT stop INTO done FROM ctl;
    INSERT INTO iters VALUES (i, done);
    INSERT INTO snaps
      SELECT i, queryid, calls, rows FROM pg_stat_statements_ng WHERE dbid = db;
    COMMIT;
    EXIT WHEN done OR i >= maxiter;
  END LOOP;
END
\$\$;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM expect'),
	$nstmts, "$nstmts distinct queryids");

sub run_round
{
	my ($label) = @_;

	$node->safe_psql(
		'postgres', qq{
TRUNCATE ctl, iters, snaps;
INSERT INTO ctl VALUES (false);
SELECT pg_stat_statements_ng_reset();
});

	my ($rout, $rerr) = ('', '');
	my $timer = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	my $reader = IPC::Run::start(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-c',
			"CALL reader($bench_oid, 1000000)"
		],
		'>', \$rout, '2>', \$rerr, $timer);

	# let the reader take its first snapshot before the clients start
	$node->poll_query_until('postgres', 'SELECT count(*) > 0 FROM iters')
	  or die "the reader does not run";

	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'pgbench', '-n', '-M', 'simple', '-c', $clients, '-j', '4',
			'-t', $per_client, '-f', $script, $node->connstr('bench')
		],
		'>', \$out, '2>', \$err);
	ok($ok, "$label: pgbench exits 0") or diag("stdout:\n$out\nstderr:\n$err");
	like(
		$out,
		qr/number of transactions actually processed: $calls\/$calls/,
		"$label: pgbench processed every transaction");
	like($out, qr/number of failed transactions: 0 /,
		"$label: no failed transaction");
	unlike($err, qr/ERROR/, "$label: no error from the clients");

	$node->safe_psql('postgres', 'UPDATE ctl SET stop = true');
	ok($reader->finish, "$label: reader exits 0")
	  or diag("stdout:\n$rout\nstderr:\n$rerr");

	my $q = sub { $node->safe_psql('postgres', shift) };

	is($q->('SELECT count(*) FROM iters WHERE after_exit'),
		1, "$label: the reader took its last snapshot after pgbench exited");

	# the reader saw the clients at work: snapshots with some, not all, of
	# the executions, and many different totals
	my ($midrun, $totals) = split /\|/, $q->(
		qq{
SELECT count(*) FILTER (WHERE total > 0 AND total < $total_calls),
       count(DISTINCT total)
FROM (SELECT i.iter, coalesce(sum(s.calls), 0) AS total
      FROM iters i LEFT JOIN snaps s USING (iter) GROUP BY i.iter) t});
	cmp_ok($midrun, '>=', 20,
		"$label: at least 20 snapshots while the clients ran ($midrun)");
	cmp_ok($totals, '>=', 10,
		"$label: at least 10 different totals seen ($totals)");

	is($q->('SELECT count(*) FROM snaps WHERE queryid NOT IN (SELECT queryid FROM expect)'),
		0, "$label: no unexpected statement in any snapshot");

	# every snapshot, with a statement absent from it counting as 0
	my $grid = qq{
WITH grid AS (
  SELECT i.iter, e.queryid, coalesce(s.calls, 0) AS calls,
         coalesce(s.rows, 0) AS rows
  FROM iters i CROSS JOIN expect e
  LEFT JOIN snaps s ON s.iter = i.iter AND s.queryid = e.queryid)};

	my $decreases = $q->(
		qq{$grid
SELECT count(*), string_agg(format('iter %s queryid %s: calls %s -> %s, rows %s -> %s',
                                   iter, queryid, pcalls, calls, prows, rows), E'\\n')
FROM (SELECT *, lag(calls) OVER w AS pcalls, lag(rows) OVER w AS prows
      FROM grid WINDOW w AS (PARTITION BY queryid ORDER BY iter)) x
WHERE calls < pcalls OR rows < prows});
	my ($ndec, $details) = split /\|/, $decreases, 2;
	is($ndec, 0, "$label: no counter ever decreases between snapshots")
	  or diag(substr($details, 0, 3000));

	my $over = $q->(
		qq{
SELECT count(*), string_agg(format('iter %s statement %s: calls %s rows %s',
                                   s.iter, e.k, s.calls, s.rows), E'\\n')
FROM snaps s JOIN expect e USING (queryid)
WHERE s.calls > e.calls OR s.rows > e.rows});
	my ($nover, $odetails) = split /\|/, $over, 2;
	is($nover, 0, "$label: no snapshot shows more than the final counts")
	  or diag(substr($odetails, 0, 3000));

	my $exact = qq{
SELECT count(*) FILTER (WHERE x.calls = e.calls AND x.rows = e.rows),
       count(*) FILTER (WHERE x.queryid IS NULL)
FROM expect e LEFT JOIN (%s) x USING (queryid)};
	is( $q->(
			sprintf($exact,
				'SELECT * FROM snaps WHERE iter = (SELECT max(iter) FROM iters)')
		),
		"$nstmts|0",
		"$label: the last snapshot is exact for every statement");
	is( $q->(
			sprintf($exact,
				"SELECT * FROM pg_stat_statements_ng WHERE dbid = $bench_oid")),
		"$nstmts|0",
		"$label: a fresh read is exact for every statement");
	is( $q->(
			"SELECT count(*) FROM pg_stat_statements_ng WHERE dbid = $bench_oid"),
		$nstmts,
		"$label: exactly $nstmts rows for the database");

	my $nsnaps = $q->('SELECT count(*) FROM iters');
	note("$label: $nsnaps snapshots, $midrun while clients ran, $totals totals");
}

run_round('128 slots');

$node->append_conf('postgresql.conf',
	'pg_stat_statements_ng.slots_per_backend = 8');
$node->restart;
run_round('8 slots');

$node->stop;
done_testing();
