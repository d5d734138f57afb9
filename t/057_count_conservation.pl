# Conservation under partial resets that match nothing, and the top-level
# failure kept when nested failures overflow.
#  - 12 clients of role bench run hot, unique-table and function statements
#    (-M simple) while another session loops reset(10), reset(0, 1) and
#    reset(0, 0, 12345), none of which matches any of them: sum(calls) +
#    evicted_calls equals the statements executed, exactly, and nothing is
#    counted as lost.
#  - with track = all, a failure 30 levels deep notes 31 failures, more
#    than are kept until they can be recorded: the top-level statement's
#    failure is kept, and the displaced nested ones are counted as
#    discarded; the same with a stack overflow.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $clients = 12;
my $xacts = 250;
my $ntables = 1000;

my $node = ng_node(
	'count_conservation',
	'pg_stat_statements_ng.track' => 'top',
	'pg_stat_statements_ng.max' => 20000,
	max_connections => 40);
$node->safe_psql('postgres', qq{
ALTER ROLE CURRENT_USER SET pg_stat_statements_ng.track = 'none';
CREATE ROLE bench LOGIN;
DO \$\$
BEGIN
  FOR i IN 1 .. $ntables LOOP
    EXECUTE format('CREATE TABLE u_%s (a int)', i);
  END LOOP;
END \$\$;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO bench;
CREATE FUNCTION fx(i int) RETURNS int LANGUAGE plpgsql AS \$\$
BEGIN
  RETURN i + 1;
END \$\$;
CREATE FUNCTION f_nested(n int) RETURNS int LANGUAGE plpgsql AS \$\$
DECLARE
  r int;
BEGIN
  IF n = 0 THEN
    RAISE EXCEPTION 'bottom';
  END IF;
  EXECUTE 'SELECT f_nested(\$1)' INTO r USING n - 1;
  RETURN r;
END \$\$;
SELECT pg_stat_statements_ng_reset();
});

# ---- partial resets that match nothing ----
my $resetter = $node->background_psql('postgres', on_error_stop => 0);
my $rpid = $resetter->query_safe('SELECT pg_backend_pid()');
$resetter->query_until(qr/looping/, q{\echo looping
DO $$
BEGIN
  LOOP
    PERFORM pg_stat_statements_ng_reset(10);
    PERFORM pg_stat_statements_ng_reset(0, 1);
    PERFORM pg_stat_statements_ng_reset(0, 0, 12345);
  END LOOP;
END $$;
});

my $script = $node->basedir . '/bench.sql';
open(my $fh, '>', $script) or die "$script: $!";
print $fh qq{\\set k random(1, $ntables)
SELECT 1 AS hot;
SELECT count(*) FROM u_:k;
SELECT fx(:k);
};
close($fh);

$node->command_ok(
	[
		'pgbench', '-n', '-M', 'simple', '-c', $clients, '-j', 2,
		'-t', $xacts, '-f', $script, '-U', 'bench', 'postgres'
	],
	'the clients ran');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($rpid)");
$resetter->quit;
ok( $node->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = 'bench'}),
	'the clients exited');

is( $node->safe_psql('postgres', q{
SELECT (SELECT sum(calls) FROM pg_stat_statements_ng WHERE userid = 'bench'::regrole)
       + evicted_calls
  FROM pg_stat_statements_ng_info}),
	3 * $clients * $xacts,
	'sum(calls) + evicted_calls is every statement executed, under resets that match nothing');
# Statements that found their partition busy when they first ran count in
# unbound slots; those whose backend exits before they get an entry leave
# through evicted_calls as unadmitted_calls (a process allocates no shared
# memory while it exits): part of the sum above, not lost.
is( $node->safe_psql('postgres', q{
SELECT format('%s %s %s', counts_discarded, entries_refused,
              unadmitted_calls <= evicted_calls)
  FROM pg_stat_statements_ng_info}),
	'0 0 t', 'nothing counted as lost');

# ---- a failure deep in nested statements, with track = all ----
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
$node->psql('postgres', q{SET pg_stat_statements_ng.track = 'all';
SELECT f_nested(30);});
is( $node->safe_psql('postgres', q{
SELECT string_agg(format('%s %s', toplevel, errors), ', ' ORDER BY toplevel)
  FROM pg_stat_statements_ng WHERE query = 'SELECT f_nested($1)'}),
	'f 15, t 1',
	'the top-level failure is kept, the nested ones up to the limit');
is($node->safe_psql('postgres', 'SELECT counts_discarded FROM pg_stat_statements_ng_info'),
	'15', 'the displaced nested failures are counted as discarded');

$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_reset()');
my ($ret, $out, $err) = $node->psql('postgres', q{SET pg_stat_statements_ng.track = 'all';
SELECT f_nested(100000);});
like($err, qr/stack depth limit exceeded/, 'the nested calls overflowed the stack');
is( $node->safe_psql('postgres', q{
SELECT errors FROM pg_stat_statements_ng
 WHERE query = 'SELECT f_nested($1)' AND toplevel}),
	'1', 'the top-level failure is kept after a stack overflow');

$node->stop;
done_testing();
