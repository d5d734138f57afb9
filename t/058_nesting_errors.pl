# The nesting level after errors that skip a hook's restore: planning has no
# PG_TRY frame, so an error raised while planning (1/0 folded as a constant)
# leaves the level raised until a (sub)transaction abort, or one of our
# catches further out, restores it.  Statements that follow must be counted
# at their true level.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('nesting_errors', 'pg_stat_statements_ng.track' => 'all');
$node->safe_psql('postgres', q{
CREATE FUNCTION caught() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    PERFORM 1/0;
  EXCEPTION WHEN division_by_zero THEN
    NULL;
  END;
  RETURN 7;
END $$;
SELECT pg_stat_statements_ng_reset();
});

# each statement with its level, calls and errors
my $rows_query = q{
SELECT string_agg(format('%s %s c=%s e=%s', query, toplevel, calls, errors),
                  E'\n' ORDER BY query COLLATE "C", toplevel)
  FROM pg_stat_statements_ng
 WHERE query ~ '^(SELECT|RETURN)' AND query !~ 'pg_stat_statements_ng'};

# a planning error at top level, then a statement (top-level abort)
$node->psql('postgres', q{SELECT 1/0 AS plan_error;
SELECT 2 AS after_top;}, on_error_stop => 0);

# in a savepoint (subtransaction abort), then in the same transaction
$node->psql('postgres', q{BEGIN; SAVEPOINT s;
SELECT 1/0 AS plan_error;
ROLLBACK TO s;
SELECT 3, 3 AS after_savepoint;
COMMIT;}, on_error_stop => 0);

# caught inside a function (subtransaction), then the function's statement
# and the next top-level one
$node->safe_psql('postgres', 'SELECT caught() AS after_caught; SELECT 4, 4, 4 AS after_call');

is($node->safe_psql('postgres', $rows_query),
	join("\n",
		'SELECT $1 AS after_top t c=1 e=0',
		'SELECT $1, $2 AS after_savepoint t c=1 e=0',
		'SELECT $1, $2, $3 AS after_call t c=1 e=0',
		'SELECT caught() AS after_caught t c=1 e=0'),
	'statements after planning errors are counted at their own level');

# The same after errors raised while executing: the executor hooks have no
# PG_TRY frame either (timers.h), so such an error too leaves the level
# raised (by ExecutorRun's hook, and by the function call's) until an abort
# restores it.
$node->safe_psql('postgres', q{
CREATE FUNCTION caught_at_run() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    PERFORM 1 / (g - 1) FROM generate_series(1, 1) g;
  EXCEPTION WHEN division_by_zero THEN
    NULL;
  END;
  PERFORM 5 AS in_function_after;
  RETURN 7;
END $$;
SELECT pg_stat_statements_ng_reset();
});
$node->psql('postgres', q{SELECT 1 / (g - 1) AS run_error FROM generate_series(1, 1) g;
SELECT 2 AS after_top;}, on_error_stop => 0);
$node->psql('postgres', q{BEGIN; SAVEPOINT s;
SELECT 1 / (g - 1) AS run_error FROM generate_series(1, 1) g;
ROLLBACK TO s;
SELECT 3, 3 AS after_savepoint;
COMMIT;}, on_error_stop => 0);
$node->safe_psql('postgres',
	'SELECT caught_at_run() AS after_caught; SELECT 4, 4, 4 AS after_call');

is($node->safe_psql('postgres', $rows_query),
	join("\n",
		'SELECT $1 / (g - $2) AS run_error FROM generate_series($3, $4) g t c=0 e=2',
		'SELECT $1 / (g - $2) FROM generate_series($3, $4) g f c=0 e=1',
		'SELECT $1 AS after_top t c=1 e=0',
		'SELECT $1 AS in_function_after f c=1 e=0',
		'SELECT $1, $2 AS after_savepoint t c=1 e=0',
		'SELECT $1, $2, $3 AS after_call t c=1 e=0',
		'SELECT caught_at_run() AS after_caught t c=1 e=0'),
	'statements after execution errors are counted at their own level');

$node->stop;
done_testing();
