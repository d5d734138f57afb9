# A backend whose exit callback fails part way (an ERROR there is FATAL and
# skips the rest of it) leaves its unfolded slots in use: readers still count
# them, the next backend with the same process number takes them over (it
# neither trips over them nor overwrites them; readers still count them while
# it holds them, through its partition mask), folds them at its own exit,
# and so releases their pins: the entries can be evicted again.
#
# The failure is injected with pg_stat_statements_ng.debug_fail_at_exit, a
# setting that exists on assertion builds only (the exit callback raises an
# ERROR after folding its first slot).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

# few connection slots: a freed PGPROC goes to the tail of the free list, so
# at most max_connections sessions later one of them gets it again
my $node = ng_node('exit_failure', max_connections => 5);
$node->safe_psql('postgres', q{
CREATE TABLE exit_t (a int);
});

my ($ret, $out, $err) = $node->psql('postgres',
	'SET pg_stat_statements_ng.debug_fail_at_exit = on');
if ($ret != 0)
{
	$node->stop;
	plan skip_all =>
	  'pg_stat_statements_ng.debug_fail_at_exit exists on assertion builds only';
}

$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');

# One session runs the SET and three statements (four bound slots), then
# exits with the failure injected: the first slot (the SET's) is folded,
# three are left in use.
$node->safe_psql('postgres', q{
SET pg_stat_statements_ng.debug_fail_at_exit = on;
SELECT count(*) FROM exit_t WHERE a = 1;
SELECT count(*) FROM exit_t WHERE a = 1;
SELECT count(*) FROM exit_t WHERE a = 1;
SELECT count(*) FROM exit_t WHERE a = 1;
SELECT count(*) FROM exit_t WHERE a = 1;
SELECT sum(a) FROM exit_t;
SELECT sum(a) FROM exit_t;
SELECT sum(a) FROM exit_t;
SELECT max(a) FROM exit_t;
SELECT max(a) FROM exit_t;
});
$node->poll_query_until('postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE '%max(a) FROM exit_t%'
  AND pid <> pg_backend_pid()}) or die 'the session did not exit';
like(slurp_file($node->logfile), qr/FATAL:  pg_stat_statements_ng: failure injected at exit/,
	'the exit callback failed');

my $calls_query = q{
SELECT string_agg(query || ' ' || calls, E'\n' ORDER BY query COLLATE "C")
  FROM pg_stat_statements_ng WHERE query LIKE '%exit_t%' AND query NOT LIKE '%pg_stat%'};
my $expected = "SELECT count(*) FROM exit_t WHERE a = \$1 5\n"
  . "SELECT max(a) FROM exit_t 2\n"
  . "SELECT sum(a) FROM exit_t 3";
is($node->safe_psql('postgres', $calls_query), $expected,
	'the slots left in use are counted by readers');

# Sessions come and go until one gets that process number and takes over;
# it stays connected, idle, holding the slots it took over.
my $took_over = 0;
my $heir;
for (1 .. 8)
{
	$heir = $node->background_psql('postgres', on_error_stop => 1);
	$heir->query_safe('SELECT 1 AS probe');
	if (slurp_file($node->logfile) =~ /took over (\d+) slots that the previous backend/)
	{
		$took_over = $1;
		last;
	}
	$heir->quit;
	$heir = undef;
}
is($took_over, 3, 'the next backend with that process number took over the three slots');
# read while the heir holds them: its partition mask says where they are
is($node->safe_psql('postgres', $calls_query), $expected,
	'nothing was overwritten or lost');
$heir->quit if defined $heir;
is($node->safe_psql('postgres', $calls_query), $expected,
	'nothing was lost at the exit of the backend that took over');

# Their pins are gone with the fold at that backend's exit: with max at its
# minimum and a stream of new statements, the entries are evicted (a pinned
# entry never is; admission = all, so that statements run once evict too).
# Bounded: at most 10 rounds of 200 new statements.
$node->append_conf('postgresql.conf',
	"pg_stat_statements_ng.max = 100\npg_stat_statements_ng.admission = all");
$node->reload;
my $left;
for my $round (1 .. 10)
{
	$node->safe_psql('postgres',
		join('', map { "CREATE TEMP TABLE evict_${round}_$_ (a int);\n" } 1 .. 200));
	$left = $node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_statements_ng
 WHERE query IN ('SELECT sum(a) FROM exit_t', 'SELECT max(a) FROM exit_t')});
	last if $left eq '0';
}
is($left, '0', 'the entries of the taken-over slots could be evicted: no pin leaked');

unlike(slurp_file($node->logfile), qr/TRAP:|PANIC:/, 'no assertion failure');
$node->stop;
done_testing();
