# The history's bounds in time and memory.
#
# 1. The first window of a run opens with shared memory, at the server's
#    start: what backends count before the keeper has restored the saved
#    statistics is in it, and what the restore puts back (counted in an
#    earlier run, in that run's windows) is not.  The keeper is held before
#    its restore (debug_fault stall_restore) while a client runs.
# 2. A window larger than history_memory allows is skipped, counted in
#    history_windows_skipped, without an error; the windows kept stay, and
#    the next window, small enough, is kept with its own counts only.
#
# The test's own SQL runs with pg_stat_statements_ng.track = none.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
my $node = ng_node(
	'history_bounds',
	'pg_stat_statements_ng.history_statements' => 1000,
	'pg_stat_statements_ng.history_interval' => 3600);
sub sql { return $node->safe_psql('postgres', $_[0]); }

# run statements as user app, counted
sub as_app
{
	my ($stmts) = @_;
	local $ENV{PGOPTIONS} = '';
	$node->safe_psql('postgres', $stmts, extra_params => [ '-U', 'app' ]);
}

sub info { return ng_value($node, $_[0]); }

# the newest window's calls of user app: "query-alias calls" pairs
sub newest_window
{
	return sql(q{
SELECT string_agg(coalesce(s.query, h.queryid::text) || '=' || h.calls, ', '
                  ORDER BY s.query)
  FROM pg_stat_statements_ng_history() h
  LEFT JOIN pg_stat_statements_ng s USING (userid, dbid, queryid, toplevel)
 WHERE h.window_end = (SELECT max(window_end) FROM pg_stat_statements_ng_history())
   AND h.userid = 'app'::regrole});
}

sql('CREATE ROLE app LOGIN');

# ---- 1. the first window of a run ----
is( sql(q{SELECT history_open_since <= backend_start
            FROM pg_stat_statements_ng_info, pg_stat_activity
           WHERE pid = pg_backend_pid()}),
	't', 'the first window opened before a client connected');
as_app("SELECT 11 AS a;\n" x 5);
$node->stop;

my $stall = $node->data_dir . '/pgssng_stall';
$node->append_conf('postgresql.conf',
	"pg_stat_statements_ng.debug_fault = 'stall_restore'\n");
open(my $fh, '>', $stall) or die "$stall: $!";
close($fh);
my $off = -s $node->logfile;
$node->start;
# the keeper is held before its restore: these run first
as_app("SELECT 11 AS a;\n" x 3 . "SELECT 12, 13 AS b;\n" x 4);
SKIP:
{
	# without the stall (a release build) the restore may have run first:
	# what follows holds either way
	skip 'pg_stat_statements_ng.debug_fault exists only in assertion builds', 1
	  if sql("SELECT current_setting('pg_stat_statements_ng.debug_fault', true) IS NULL")
	  eq 't';
	is(sql(q{SELECT count(*) FROM pg_stat_statements_ng WHERE query = 'SELECT $1 AS a'
	           AND calls = 3}), '1', 'the restore had not run yet');
}
unlink($stall) or die "$stall: $!";
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/,
	$off);
is(sql(q{SELECT calls FROM pg_stat_statements_ng WHERE query = 'SELECT $1 AS a'}),
	'8', 'the restore added the saved calls');
sql('SELECT pg_stat_statements_ng_take_window()');
is(newest_window(), 'SELECT $1 AS a=3, SELECT $1, $2 AS b=4',
	'the first window holds what ran before the restore, not what it restored');
is( sql(q{
WITH w AS (SELECT DISTINCT window_start, window_end FROM pg_stat_statements_ng_history())
SELECT format('%s %s', count(*),
  (SELECT window_start FROM w ORDER BY window_end DESC LIMIT 1) >
  (SELECT window_end FROM w ORDER BY window_end DESC OFFSET 1 LIMIT 1))
  FROM w}),
	'2 t', 'it starts after the window the shutdown closed');
is( sql(q{
SELECT sum(calls) FROM pg_stat_statements_ng_history()
 WHERE window_end < (SELECT max(window_end) FROM pg_stat_statements_ng_history())
   AND userid = 'app'::regrole}),
	'5', 'the previous run counted its own 5 in its window');

# ---- 2. a window larger than history_memory ----
# a row is 288 bytes: 8 kB holds 27 of them
sql(q{ALTER SYSTEM SET pg_stat_statements_ng.history_memory = '8kB'});
sql('SELECT pg_reload_conf()');
$node->poll_query_until('postgres',
	q{SELECT current_setting('pg_stat_statements_ng.history_memory') = '8kB'})
  or die 'history_memory not applied';
my $before = info(q{format('%s %s %s', history_windows, history_windows_dropped,
  history_windows_skipped)});
is($before, '2 0 0', 'two windows kept, none dropped or skipped');

# 40 distinct statements: a window of 40 rows (11.5 kB)
as_app(join('', map { 'SELECT ' . join(', ', (1) x $_) . ";\n" } 1 .. 40));
sql('SELECT pg_stat_statements_ng_take_window()');
is( info(q{format('%s %s %s', history_windows, history_windows_dropped,
  history_windows_skipped)}),
	'2 0 1', 'the window too large is skipped and counted; the others stay');

as_app("SELECT 12, 13 AS b;\n" x 2);
sql('SELECT pg_stat_statements_ng_take_window()');
is( info(q{format('%s %s %s', history_windows, history_windows_dropped,
  history_windows_skipped)}),
	'3 0 1', 'the next window is kept');
is(newest_window(), 'SELECT $1, $2 AS b=2', 'with its own counts only');

my $log = slurp_file($node->logfile);
unlike($log, qr/ERROR:|TRAP:/, 'no error in the log');

done_testing();
