# Exact counts under concurrency, with no flush and no wait.
#
# 16 pgbench clients each run a script of 50 distinct statements 100 times,
# in each of pgbench's query modes (simple, extended, prepared).  Statement
# k reads table ng_t<k>, which holds k rows, so after a run each statement
# must show exactly 16 * 100 = 1600 calls and 1600 * k rows, read right
# after pgbench exits.  Every statement carries constants, so the texts
# must come out normalized.
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

my $node = ng_node(
	'exactness',
	max_connections => 40,
	'pg_stat_statements_ng.max' => 5000);

$node->safe_psql('postgres', 'CREATE DATABASE bench');
my $bench_oid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_database WHERE datname = 'bench'");

# statement k: distinct table (so a distinct queryid), k rows, constants
my @stmts;
my $setup = '';
for my $k (1 .. $nstmts)
{
	$setup .=
	  "CREATE TABLE ng_t$k (a int); INSERT INTO ng_t$k SELECT generate_series(1, $k);\n";
	push @stmts, "SELECT a, 'c$k' AS tag FROM ng_t$k WHERE a > 0 AND a <= 1000";
}
$node->safe_psql('bench', $setup);

# the queryid of each statement, as the core computes it
my %k_of_queryid;
for my $k (1 .. $nstmts)
{
	my $plan = $node->safe_psql('bench',
		"EXPLAIN (VERBOSE, COSTS OFF) $stmts[$k - 1]");
	$plan =~ /Query Identifier: (-?\d+)/
	  or die "no query identifier in EXPLAIN output:\n$plan";
	$k_of_queryid{$1} = $k;
}
is(scalar(keys %k_of_queryid), $nstmts, "$nstmts distinct queryids");

my $script = $node->basedir . '/exactness.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	join('', map { "$_;\n" } @stmts));

foreach my $mode ('simple', 'extended', 'prepared')
{
	$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');

	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'pgbench', '-n', '-M', $mode, '-c', $clients, '-j', '4',
			'-t', $per_client, '-f', $script, $node->connstr('bench')
		],
		'>', \$out, '2>', \$err);
	ok($ok, "$mode: pgbench exits 0") or diag("stdout:\n$out\nstderr:\n$err");
	like(
		$out,
		qr/number of transactions actually processed: $calls\/$calls/,
		"$mode: pgbench processed every transaction");
	like($out, qr/number of failed transactions: 0 /,
		"$mode: no failed transaction");
	unlike($err, qr/ERROR/, "$mode: no error from the clients");

	# right away: no flush call, no wait
	my $res = $node->safe_psql(
		'postgres', qq{
SELECT queryid, calls, rows, coalesce(query, '<null>')
FROM pg_stat_statements_ng
WHERE dbid = $bench_oid
ORDER BY queryid});

	my @rows = map { [ split /\|/, $_, 4 ] } split /\n/, $res;
	is(scalar(@rows), $nstmts, "$mode: exactly $nstmts rows for the database")
	  or diag($res);

	my %seen;
	my @wrong;
	for my $r (@rows)
	{
		my ($queryid, $c, $n, $text) = @$r;
		my $k = $k_of_queryid{$queryid};
		if (!defined $k)
		{
			push @wrong, "unexpected queryid $queryid: $text";
			next;
		}
		$seen{$k} = 1;
		my $want_rows = $calls * $k;
		push @wrong, "statement $k: calls $c, expected $calls"
		  if $c != $calls;
		push @wrong, "statement $k: rows $n, expected $want_rows"
		  if $n != $want_rows;
		my $want_text =
		  "SELECT a, \$1 AS tag FROM ng_t$k WHERE a > \$2 AND a <= \$3";
		push @wrong, "statement $k: text '$text', expected '$want_text'"
		  if $text ne $want_text;
	}
	is(scalar(keys %seen), $nstmts, "$mode: every statement has its row");
	is_deeply(\@wrong, [],
		"$mode: calls = $calls, rows = $calls * k and normalized text for each statement"
	);

	# the normalized text, explicitly, for one statement
	my $text = $node->safe_psql(
		'postgres', qq{
SELECT query FROM pg_stat_statements_ng
WHERE dbid = $bench_oid AND query LIKE '%ng_t17 %'});
	is( $text,
		'SELECT a, $1 AS tag FROM ng_t17 WHERE a > $2 AND a <= $3',
		"$mode: constants replaced by parameters");
	unlike($text, qr/'c17'|1000/, "$mode: no literal in the text");

	# nothing was lost or refused on the way
	is( $node->safe_psql(
			'postgres',
			'SELECT dealloc, entries_refused, counts_discarded, texts_dropped
			 FROM pg_stat_statements_ng_info'),
		'0|0|0|0',
		"$mode: no eviction, refusal, discarded count or dropped text");
}

$node->stop;
done_testing();
