# Failed executions by SQLSTATE (pg_stat_statements_ng_errors), exact,
# under track = top and all: division by zero, unique violations, statement
# timeouts and cancels (both 57014; the statements view tells them apart),
# a deadlock and a serialization failure between two sessions, and a
# statement raising more SQLSTATEs than it keeps apart.  The sum over a
# statement's SQLSTATEs is its errors + cancels + timeouts.  Resets, full
# and partial, take the SQLSTATEs with the statistics; a clean restart
# keeps them.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node('errors_sqlstate', deadlock_timeout => '50ms');
$node->safe_psql('postgres', q{
CREATE TABLE u (a int PRIMARY KEY);
INSERT INTO u VALUES (1);
CREATE TABLE d (a int);
INSERT INTO d VALUES (0);
CREATE TABLE acct (id int PRIMARY KEY, v int);
INSERT INTO acct VALUES (1, 0), (2, 0);
CREATE FUNCTION div_in() RETURNS int LANGUAGE plpgsql AS $$
DECLARE r int;
BEGIN
  SELECT 10 / a INTO r FROM d;
  RETURN r;
END $$;
CREATE FUNCTION raise_as(code text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'failing' USING ERRCODE = code;
END $$;
});

# every statement's failures by SQLSTATE, with its text and level
my $rows_query = q{
SELECT string_agg(format('%s %s %s %s', s.query, e.toplevel,
                         coalesce(e.sqlstate, 'rest'), e.errors),
                  E'\n' ORDER BY s.query COLLATE "C", e.toplevel,
                                 e.sqlstate COLLATE "C" NULLS LAST)
  FROM pg_stat_statements_ng_errors e
  JOIN pg_stat_statements_ng s USING (userid, dbid, queryid, toplevel)};

# statements whose failures (errors + cancels + timeouts) differ from the
# sum over their SQLSTATEs, either way
my $mismatch_query = q{
SELECT count(*)
  FROM (SELECT userid, dbid, queryid, toplevel,
               errors + cancels + timeouts AS failed
          FROM pg_stat_statements_ng
         WHERE errors + cancels + timeouts > 0) s
  FULL JOIN (SELECT userid, dbid, queryid, toplevel, sum(errors) AS failed
               FROM pg_stat_statements_ng_errors
              GROUP BY 1, 2, 3, 4) e
    USING (userid, dbid, queryid, toplevel)
 WHERE s.failed IS DISTINCT FROM e.failed};

# wait until the session with pid waits for a lock
sub wait_for_lock
{
	my ($pid) = @_;
	$node->poll_query_until('postgres',
		"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid")
	  or die "session $pid never waited for a lock";
}

# the mix of failures; returns nothing, the views say what happened
sub run_mix
{
	# 3 divisions by zero at execution (a table's 0), 2 unique violations
	$node->psql('postgres', 'SELECT 10 / a AS q FROM d') for 1 .. 3;
	$node->psql('postgres', 'INSERT INTO u VALUES (1)') for 1 .. 2;

	# a division by zero two levels down, uncaught, twice
	$node->psql('postgres', 'SELECT div_in()') for 1 .. 2;

	# 2 statement timeouts and 1 cancel of the same statement
	$node->psql('postgres',
		"SET statement_timeout = '100ms'; SELECT pg_sleep(5)") for 1 .. 2;
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	$bg->query_until(qr/sleeping/, q{\echo sleeping
SELECT pg_sleep(30);
});
	# cancel only once it sleeps: a cancel that comes first is ignored
	$node->poll_query_until('postgres',
		"SELECT wait_event = 'PgSleep' FROM pg_stat_activity WHERE pid = $pid")
	  or die 'the session never slept';
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$bg->quit;

	# one statement raising 6 SQLSTATEs: 4 kept apart, the rest in one row
	$node->psql('postgres', "SELECT raise_as('$_')")
	  for qw(22012 23505 22012 40001 42P01 P0001 22003 22003 23505);

	# a deadlock: each session holds a row the other one wants
	my $s1 = $node->background_psql('postgres', on_error_stop => 0);
	my $s2 = $node->background_psql('postgres', on_error_stop => 0);
	my $pid1 = $s1->query_safe('SELECT pg_backend_pid()');
	$s1->query_safe('BEGIN');
	$s1->query_safe('UPDATE acct SET v = v + 1 WHERE id = 1');
	$s2->query_safe('BEGIN');
	$s2->query_safe('UPDATE acct SET v = v + 1 WHERE id = 2');
	$s1->query_until(qr/locking/, q{\echo locking
UPDATE acct SET v = v + 1 WHERE id = 2;
});
	wait_for_lock($pid1);
	$s2->query('UPDATE acct SET v = v + 1 WHERE id = 1');
	$s2->query('ROLLBACK');
	$s1->query('ROLLBACK');
	$s1->quit;
	$s2->quit;

	# a serialization failure: a row changed after the snapshot was taken
	$s1 = $node->background_psql('postgres', on_error_stop => 0);
	$s2 = $node->background_psql('postgres', on_error_stop => 0);
	$s1->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$s1->query_safe('SELECT count(*) AS snap FROM acct');
	$s2->query_safe('UPDATE acct SET v = v * 2 WHERE id = 1');
	$s1->query('UPDATE acct SET v = v * 2 WHERE id = 1');
	$s1->query('ROLLBACK');
	$s1->quit;
	$s2->quit;
}

foreach my $track ('top', 'all')
{
	$node->append_conf('postgresql.conf',
		"pg_stat_statements_ng.track = '$track'");
	$node->restart;
	$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
	run_mix();

	# PL/pgSQL's INTO is blanked out of the nested statement's text
	my @nested = $track eq 'all'
	  ? ('SELECT $1 / a        FROM d f 22012 2')
	  : ();
	is($node->safe_psql('postgres', $rows_query),
		join("\n",
			'INSERT INTO u VALUES ($1) t 23505 2',
			@nested,
			'SELECT $1 / a AS q FROM d t 22012 3',
			'SELECT div_in() t 22012 2',
			'SELECT pg_sleep($1) t 57014 3',
			'SELECT raise_as($1) t 22012 2',
			'SELECT raise_as($1) t 23505 2',
			'SELECT raise_as($1) t 40001 1',
			'SELECT raise_as($1) t 42P01 1',
			'SELECT raise_as($1) t rest 3',
			'UPDATE acct SET v = v * $1 WHERE id = $2 t 40001 1',
			'UPDATE acct SET v = v + $1 WHERE id = $2 t 40P01 1'),
		"track = $track: every failure under its SQLSTATE, exactly");
	is( $node->safe_psql('postgres', q{
SELECT format('e=%s x=%s t=%s', errors, cancels, timeouts)
  FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep($1)'}),
		'e=0 x=1 t=2',
		"track = $track: 57014 is one row; cancels and timeouts tell it apart");
	is($node->safe_psql('postgres', $mismatch_query), '0',
		"track = $track: each statement's SQLSTATEs sum to its failures");
	is( $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE last_error_at IS NULL
                           OR last_error_at > now()
                           OR last_error_at < now() - interval '10 min')
  FROM pg_stat_statements_ng_errors}),
		'0', "track = $track: every row has the time of its last failure");
	is($node->safe_psql('postgres',
			'SELECT sqlstates_lost FROM pg_stat_statements_ng_info'),
		'0', "track = $track: no SQLSTATE lost");
}

# a clean restart keeps them
my $before = $node->safe_psql('postgres', $rows_query);
$node->restart;
is($node->safe_psql('postgres', $rows_query), $before,
	'a clean restart keeps every statement\'s SQLSTATEs');
is($node->safe_psql('postgres', $mismatch_query), '0',
	'after the restart, SQLSTATEs still sum to the failures');

# a partial reset takes the SQLSTATEs of the statements it removes only
my $raise_qid = $node->safe_psql('postgres',
	q{SELECT queryid FROM pg_stat_statements_ng WHERE query = 'SELECT raise_as($1)'});
$node->safe_psql('postgres',
	"SELECT pg_stat_statements_ng_reset(0, 0, $raise_qid)");
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_statements_ng_errors WHERE queryid = $raise_qid"),
	'0', 'a partial reset removes the statement\'s SQLSTATEs');
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_statements_ng_errors
 WHERE sqlstate = '40P01'}),
	'1', 'and keeps the others');
is($node->safe_psql('postgres', $mismatch_query), '0',
	'after a partial reset, SQLSTATEs still sum to the failures');

# a full reset takes them all
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements_ng_errors'),
	'0', 'a full reset removes every SQLSTATE');

$node->stop;
done_testing();
