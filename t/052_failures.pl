# Failed executions, counted exactly: errors, a cancel sent from another
# session while the statement runs, statement_timeout, and failures in
# nested statements caught by PL/pgSQL; none of them is a call.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('failures', 'pg_stat_statements_ng.track' => 'all');
$node->safe_psql('postgres', q{
CREATE TABLE f (a int PRIMARY KEY);
INSERT INTO f VALUES (1);
CREATE FUNCTION try_insert(v int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO f VALUES (v);
EXCEPTION WHEN unique_violation THEN
  NULL;
END $$;
SELECT pg_stat_statements_ng_reset();
});

# 5 errors, 3 successes of one statement
foreach my $v (1, 1, 2, 1, 3, 1, 4, 1)
{
	$node->psql('postgres', "INSERT INTO f VALUES ($v)");
}

# 3 cancels from another session, each while the statement sleeps
foreach my $i (1 .. 3)
{
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	$bg->query_until(qr/sleeping/, q{\echo sleeping
SELECT pg_sleep(30);
});
	# cancel it once it sleeps: a cancel that reached it before, while it
	# was idle after the echo, would be ignored
	$node->poll_query_until('postgres',
		"SELECT wait_event = 'PgSleep' FROM pg_stat_activity WHERE pid = $pid")
	  or die 'the statement did not start sleeping';
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)") eq 't'
	  or die 'cancel failed';
	$bg->quit;
}

# 2 statement timeouts
$node->psql('postgres', "SET statement_timeout = '100ms'; SELECT pg_sleep(5)")
  for 1 .. 2;

# 4 nested failures caught in PL/pgSQL (the calls succeed)
$node->safe_psql('postgres', "SELECT try_insert(1)") for 1 .. 4;

is( $node->safe_psql('postgres', q{
SELECT string_agg(format('%s %s c=%s e=%s x=%s t=%s', query, toplevel, calls, errors, cancels, timeouts),
                  E'\n' ORDER BY query COLLATE "C", toplevel)
  FROM pg_stat_statements_ng
 WHERE errors + cancels + timeouts > 0}),
	join("\n",
		'INSERT INTO f VALUES ($1) t c=3 e=5 x=0 t=0',
		'INSERT INTO f VALUES (v) f c=0 e=4 x=0 t=0',
		'SELECT pg_sleep($1) t c=0 e=0 x=3 t=2'),
	'errors, cancels and timeouts counted exactly, apart from calls');

cmp_ok($node->safe_psql('postgres',
		q{SELECT failed_exec_time FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep($1)'}),
	'>=', 200, 'the timeouts ran at least 2 x 100 ms');
is( $node->safe_psql('postgres',
		q{SELECT calls FROM pg_stat_statements_ng WHERE query = 'SELECT try_insert($1)'}),
	'4', 'the function calls whose nested statement failed succeeded');

# Failures without a PG_TRY frame in the executor hooks (timers.h): each is
# noted from the window the error left open, by the abort that follows or
# when the query's memory goes.
$node->safe_psql('postgres', q{
CREATE FUNCTION div_by(v int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  SELECT 10 / (a - v) INTO r FROM f WHERE a = 1;
  RETURN r;
END $$;
CREATE FUNCTION outer_caught(v int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    RETURN div_by(v) + 100;
  EXCEPTION WHEN division_by_zero THEN
    RETURN -1;
  END;
END $$;
CREATE FUNCTION loop_caught() RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; r record;
BEGIN
  BEGIN
    FOR r IN SELECT 10 / (3 - g) AS q FROM generate_series(1, 5) g LOOP
      n := n + 1;
    END LOOP;
  EXCEPTION WHEN division_by_zero THEN
    RETURN n;
  END;
  RETURN n;
END $$;
SELECT pg_stat_statements_ng_reset();
});

# an error two levels down, uncaught: the nested statement and the
# top-level one failed, once each
$node->psql('postgres', 'SELECT div_by(1) AS uncaught');

# caught one level up, in a subtransaction: the statements two levels down
# (div_by's) failed once and succeeded once, the top-level ones succeeded
$node->safe_psql('postgres',
	'SELECT outer_caught(1) AS caught; SELECT outer_caught(5) AS caught');

# a loop's query (a portal) that fails inside a subtransaction: its memory
# goes with the subtransaction's abort
$node->safe_psql('postgres', 'SELECT loop_caught() AS looped');

# a session terminated while its statement runs: that is not the
# statement's failure (a FATAL ends the process, not the execution), and
# the statement has no row (its parse made no entry: it has no text to keep
# before it runs)
my $bg = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/sleeping/, q{\echo sleeping
SELECT pg_sleep(30) AS terminated;
});
$node->poll_query_until('postgres',
	"SELECT pg_terminate_backend($pid) AND true")
  or die 'terminate failed';
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
  or die 'the session did not end';
eval { $bg->quit; };

is( $node->safe_psql('postgres', q{
SELECT string_agg(format('%s %s c=%s e=%s x=%s t=%s',
                         regexp_replace(query, '\s+', ' ', 'g'), toplevel,
                         calls, errors, cancels, timeouts),
                  E'\n' ORDER BY query COLLATE "C", toplevel)
  FROM pg_stat_statements_ng
 WHERE query !~ 'pg_stat_statements_ng|pg_backend_pid|pg_stat_activity|pg_terminate'}),
	join("\n",
		'SELECT $1 / ($2 - g) AS q FROM generate_series($3, $4) g f c=0 e=1 x=0 t=0',
		'SELECT $2 / (a - v) FROM f WHERE a = $3 f c=1 e=2 x=0 t=0',
		'SELECT div_by($1) AS uncaught t c=0 e=1 x=0 t=0',
		'SELECT loop_caught() AS looped t c=1 e=0 x=0 t=0',
		'SELECT outer_caught($1) AS caught t c=2 e=0 x=0 t=0'),
	'failures noted from open windows: nested, caught, in a loop, not at a FATAL');

$node->stop;
done_testing();
