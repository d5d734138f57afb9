# Failed executions, counted exactly: errors, a cancel sent from another
# session while the statement runs, statement_timeout, and failures in
# nested statements caught by PL/pgSQL; none of them is a call.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('failures');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'pg_stat_statements_ng'
pg_stat_statements_ng.track = 'all'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements_ng;
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
	$node->poll_query_until('postgres',
		"SELECT pg_cancel_backend($pid) AND true")
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

$node->stop;
done_testing();
