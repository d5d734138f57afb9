# Churn: workloads with more distinct statements than max (the seeds'
# dalibo, unique-join (admission all, then recurring) and hot+churn
# workloads, at a small scale).  After each
# phase, exactly: entries <= max, sum(calls) + evicted_calls = statements
# executed, no client error, text memory within its cap; the hot statements
# of the churn mix all present, never evicted, their calls exact; a full
# reset empties entries and text memory; and max and query_text_memory
# lowered by a reload during the churn mix are reached with no client error.
#
# The test's own SQL runs with pg_stat_statements_ng.track = none, so that
# every counted statement is one the workload ran.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Temp qw(tempdir);

use NgNode;

# the test's own SQL is not tracked
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
my $node = ng_node(
	'churn',
	max_connections => 30,
	autovacuum => 'off',
	'pg_stat_statements_ng.max' => 5000);
sub sql { return $node->safe_psql('postgres', $_[0]); }

my $dir = tempdir(CLEANUP => 1);

sub set_conf
{
	my (%settings) = @_;
	sql("ALTER SYSTEM SET pg_stat_statements_ng.$_ = '$settings{$_}'")
	  foreach keys %settings;
	sql('SELECT pg_reload_conf()');
	foreach my $name (keys %settings)
	{
		my $want = $settings{$name};
		$node->poll_query_until('postgres',
			"SELECT current_setting('pg_stat_statements_ng.$name') = '$want'")
		  or die "setting $name not applied";
	}
}

# wait until only this poll is connected: every workload backend has folded
# its slots and exited (not needed for exactness, which holds at any time,
# but so that nothing changes between two of our reads)
sub wait_for_quiet
{
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'client backend'})
	  or die 'workload backends did not exit';
}

# run pgbench (workload statements tracked: PGOPTIONS cleared); returns the
# number of transactions done and checks there were no failures
sub pgbench
{
	my ($name, @args) = @_;
	local $ENV{PGOPTIONS} = '';
	my ($out, $err);
	my $ok = IPC::Run::run([ 'pgbench', '-n', @args, '-h', $node->host,
			'-p', $node->port, 'postgres' ], '>', \$out, '2>', \$err);
	ok($ok, "$name: pgbench exits 0") or diag($err);
	unlike($err, qr/ERROR|error/, "$name: no client error");
	like($out, qr/number of failed transactions: 0 /, "$name: no failed transaction")
	  if $out =~ /number of failed transactions/;
	$out =~ /number of transactions actually processed: (\d+)/
	  or die "no transaction count in: $out";
	return $1;
}

sub info { return ng_value($node, $_[0]); }

# the identity every read must keep: sum(calls) + evicted_calls is every
# execution
sub check_exact
{
	my ($name, $executed) = @_;
	wait_for_quiet();
	is( sql(q{SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng)
	                 + evicted_calls FROM pg_stat_statements_ng_info}),
		$executed, "$name: sum(calls) + evicted_calls = $executed statements executed");
	is(info('counts_discarded'), '0', "$name: nothing discarded");
	cmp_ok(info('entries'), '<=', info('max'), "$name: entries <= max");
	cmp_ok(info('query_text_memory_used'), '<=', info('query_text_memory_max'),
		"$name: text memory within its cap");
}

sub write_file
{
	my ($file, $text) = @_;
	open my $fh, '>', $file or die "$file: $!";
	print $fh $text;
	close $fh;
}

# ---- 1. dalibo: 16 scripts of 8 selects over 128 tables ----
sql(join ';', map { "CREATE TABLE t$_ (a int); INSERT INTO t$_ VALUES (1)" } 1 .. 128);
my @scripts;
foreach my $s (0 .. 15)
{
	my $f = "$dir/dalibo_$s.sql";
	write_file($f, "BEGIN;\n"
		  . join('', map { "SELECT 1 FROM t" . ($s * 8 + $_) . ";\n" } 1 .. 8)
		  . "COMMIT;\n");
	push @scripts, '-f', $f;
}
foreach my $max (100, 400)
{
	set_conf(max => $max);
	sql('SELECT pg_stat_statements_ng_reset()');
	my $tx = pgbench("dalibo max=$max", '-c', 8, '-j', 2, '-t', 150, @scripts);
	check_exact("dalibo max=$max", $tx * 10);
	if ($max == 100)
	{
		cmp_ok(info('dealloc'), '>', 0, 'dalibo max=100: entries were evicted');
	}
	else
	{
		is(info('dealloc'), '0', 'dalibo max=400: everything fits, nothing evicted');
		is(sql(q{SELECT count(*) FROM pg_stat_statements_ng WHERE query LIKE 'SELECT $1 FROM t%'}),
			'128', 'dalibo max=400: all 128 statements present');
	}
}

# ---- 2. unique joins: 3 random tables of 200 per statement ----
# (aliases made of the table numbers: from 18 on, the queryid of a table
# reference comes from its alias, and one table may be picked twice)
sql(join ';', map { "CREATE TABLE j$_ (a int); INSERT INTO j$_ VALUES (1)" } 1 .. 200);
write_file("$dir/joins.sql", q{\set a random(1, 200)
\set b random(1, 200)
\set c random(1, 200)
SELECT 1 FROM j:a AS ja:a, j:b AS jb:b, j:c AS jc:c;
});
# with admission = all, each new statement evicts; with recurring (the
# default), statements run once on the full table get no entry
set_conf(max => 500, admission => 'all');
sql('SELECT pg_stat_statements_ng_reset()');
my $tx = pgbench('unique joins', '-c', 8, '-j', 2, '-t', 300, '-f', "$dir/joins.sql");
check_exact('unique joins', $tx);
cmp_ok(info('dealloc'), '>', 0, 'unique joins: entries were evicted')
  or diag(sql('SELECT * FROM pg_stat_statements_ng_info'));
set_conf(admission => 'recurring');
sql('SELECT pg_stat_statements_ng_reset()');
$tx = pgbench('unique joins, recurring', '-c', 8, '-j', 2, '-t', 300, '-f', "$dir/joins.sql");
check_exact('unique joins, recurring', $tx);
cmp_ok(info('unadmitted_calls'), '>', 0, 'unique joins, recurring: one-offs were not admitted')
  or diag(sql('SELECT * FROM pg_stat_statements_ng_info'));

# ---- 3. churn mix: 80% one of 100 hot statements, 20% one of 1000 ----
sql(join ';', map { "CREATE TABLE h$_ (a int); INSERT INTO h$_ VALUES (1)" } 1 .. 100);
sql(join ';', map { "CREATE TABLE c$_ (a int); INSERT INTO c$_ VALUES (1)" } 1 .. 1000);
my @mix;
foreach my $h (1 .. 100)
{
	write_file("$dir/hot_$h.sql", "SELECT a FROM h$h;\n");
	push @mix, '-f', "$dir/hot_$h.sql\@8";
}
write_file("$dir/churn.sql", "\\set n random(1, 1000)\nSELECT a FROM c:n;\n");
push @mix, '-f', "$dir/churn.sql\@200";

set_conf(max => 500);
sql('SELECT pg_stat_statements_ng_reset()');
# every hot statement exists before the run starts
{
	local $ENV{PGOPTIONS} = '';
	$node->safe_psql('postgres', join(';', map { "SELECT a FROM h$_" } 1 .. 100));
}
wait_for_quiet();
my $run_start = sql('SELECT clock_timestamp()');
$tx = pgbench('churn mix', '-c', 4, '-j', 2, '-t', 1500, '-l',
	"--log-prefix=$dir/mixlog", @mix);
check_exact('churn mix', $tx + 100);
cmp_ok(info('dealloc'), '>', 0, 'churn mix: entries were evicted');

# each hot statement's executions, from pgbench's per-transaction log:
# "client transaction time script_no epoch us"; script k-1 is hot_k
my %ran;
foreach my $log (glob("$dir/mixlog*"))
{
	open my $fh, '<', $log or die;
	while (<$fh>)
	{
		my @f = split;
		$ran{ $f[3] + 1 }++ if $f[3] < 100;
	}
	close $fh;
}
my $expected = join "\n", map { "SELECT a FROM h$_|" . (1 + ($ran{$_} // 0)) . '|t' }
  sort { $a <=> $b } 1 .. 100;
my $got = sql(qq{SELECT query, calls, stats_since < '$run_start' FROM pg_stat_statements_ng
                  WHERE query ~ '^SELECT a FROM h[0-9]+\$'
                  ORDER BY substr(query, 16)::int});
is($got, $expected,
	'churn mix: all 100 hot statements present, never evicted, calls exact');

# ---- a full reset empties everything ----
sql('SELECT pg_stat_statements_ng_reset()');
is(info('entries || \' \' || query_text_memory_used'), '0 0',
	'after a full reset, no entries and no text memory');

# ---- max and query_text_memory lowered during the churn mix ----
set_conf(max => 1000, query_text_memory => '64MB');
sql('SELECT pg_stat_statements_ng_reset()');
my ($bg_out, $bg_err) = ('', '');
my $bg;
{
	local $ENV{PGOPTIONS} = '';
	$bg = IPC::Run::start([ 'pgbench', '-n', '-c', 4, '-j', 2, '-T', 20, @mix,
			'-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$bg_out, '2>', \$bg_err);
}
# let the table fill up first
$node->poll_query_until('postgres',
	'SELECT entries >= 300 FROM pg_stat_statements_ng_info')
  or die 'the table did not fill';
# 1 kB holds fewer texts than the 150 entries have (each text is 17 to 19
# bytes with its terminator), so texts must be dropped whatever eviction does
set_conf(max => 150, query_text_memory => '1kB');
ok( $node->poll_query_until('postgres',
		q{SELECT entries <= 150 AND query_text_memory_used <= 1024
		    FROM pg_stat_statements_ng_info}),
	'lowered max and query_text_memory reached while clients run');
ok($bg->finish, 'lowering: pgbench exits 0');
unlike($bg_err, qr/ERROR|error/, 'lowering: no client error');
like($bg_out, qr/number of failed transactions: 0 /, 'lowering: no failed transaction')
  if $bg_out =~ /number of failed transactions/;
wait_for_quiet();
cmp_ok(info('entries'), '<=', 150, 'lowering: entries stay within the new max');
cmp_ok(info('query_text_memory_used'), '<=', 1024,
	'lowering: text memory stays within the new cap');
cmp_ok(info('texts_dropped'), '>', 0, 'lowering: dropped texts are counted');

$node->stop;
done_testing();
