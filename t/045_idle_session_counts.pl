# Reads skip the slot areas of processes with no slot in a partition (the
# partition masks, docs/design.md), and stay exact.
#
# A session runs 100 distinct statements, twice each, and stays connected:
# with 64 slots, binding the 65th statement and later ones folds the least
# recently used slots while other slots of the same partitions still count
# (100 statements over 32 partitions).  Another session then reads: every
# statement must show exactly 2 calls, whether its counts are in the entry or
# still in the idle session's slot.  A mask bit cleared while a slot of its
# partition still counts would leave those counts out.  max_connections is
# large, so most areas are unused.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $nstmts = 100;

my $node = ng_node(
	'idle_session_counts',
	max_connections => 300,
	'pg_stat_statements_ng.max' => 5000,
	'pg_stat_statements_ng.slots_per_backend' => 64);
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE m$_ (a int);\n" } 1 .. $nstmts));
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');

# all in one go, well within a second: the holder's maintenance (once a
# second) folds none of them as idle
my $holder = $node->background_psql('postgres', on_error_stop => 1);
$holder->query_safe(join("\n",
		map { "SELECT count(*) FROM m$_;" } (1 .. $nstmts, 1 .. $nstmts)));

# the holder is idle, its slots bound with counts in them
my $read = q{
SELECT count(*) FILTER (WHERE calls = 2), count(*), sum(calls)
FROM pg_stat_statements_ng
WHERE query ~ '^SELECT count\(\*\) FROM m[0-9]+$'};
is($node->safe_psql('postgres', $read),
	"$nstmts|$nstmts|" . 2 * $nstmts,
	'every statement counted exactly while its backend holds slots');

$holder->quit;
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
) or die 'the holder did not exit';
is($node->safe_psql('postgres', $read),
	"$nstmts|$nstmts|" . 2 * $nstmts,
	'every statement counted exactly once its backend folded at exit');

$node->stop;
done_testing();
