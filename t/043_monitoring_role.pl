# A monitoring role, as README's recipe makes it, on an install whose
# reading functions and views were revoked from PUBLIC: pg_read_all_stats,
# EXECUTE on the reading functions, SELECT on the views, and a SECURITY
# DEFINER reset wrapper owned by a superuser.  As that role, exactly: every
# view and reading function (statements, changed_since, texts, histogram,
# info, waits, history) returns what it returns to a superuser, texts of
# another user's statements included; the wrapper resets (all, or one
# statement); the raw reset, take_window and the history reset are denied.
# A user without the recipe's grants cannot read the statements at all, and
# one with them but without pg_read_all_stats does not see other users'
# texts.
#
# Only the workload's user is tracked (pg_stat_statements_ng.track = none
# but for it).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $node = ng_node(
	'monitoring',
	autovacuum => 'off',
	'pg_stat_statements_ng.wait_sample_interval' => '10ms',
	'pg_stat_statements_ng.history_interval' => 3600,
	'pg_stat_statements_ng.track_utility' => 'off',
	'pg_stat_statements_ng.track' => 'none');


sub as
{
	my ($user, $sql) = @_;
	return $node->safe_psql('postgres', $sql,
		connstr => $node->connstr('postgres') . " user=$user");
}

sub fails_as
{
	my ($user, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		connstr => $node->connstr('postgres') . " user=$user");
	return $ret != 0 ? $err : "succeeded: $out";
}

# the functions and views a reader uses, every one revoked from PUBLIC
my @functions = (
	'pg_stat_statements_ng(boolean)',
	'pg_stat_statements_ng_changed_since(bigint, boolean)',
	'pg_stat_statements_ng_texts(bigint[])',
	'pg_stat_statements_ng_histogram(bigint, text)',
	'pg_stat_statements_ng_info()',
	'pg_stat_statements_ng_waits()',
	'pg_stat_statements_ng_history()',
	'pg_stat_statements_ng_history_info()',
	'pg_stat_statements_ng_history_waits()');
my @views = qw(pg_stat_statements_ng pg_stat_statements_ng_info
  pg_stat_statements_ng_waits pg_stat_statements_ng_history
  pg_stat_statements_ng_history_waits);
$node->safe_psql('postgres',
	join('',
		map { "REVOKE ALL ON FUNCTION $_ FROM PUBLIC;\n" } @functions)
	  . join('', map { "REVOKE ALL ON $_ FROM PUBLIC;\n" } @views)
	  . "CREATE ROLE app LOGIN; CREATE ROLE nobody LOGIN;\n"
	  . "ALTER ROLE app SET pg_stat_statements_ng.track = top;\n"
	  . "CREATE ROLE ungranted LOGIN;\n"
	  . "CREATE TABLE t (a int); GRANT ALL ON t TO app;\n");

# README's recipe (the role, its grants, the wrapper), as a superuser
my $recipe = q{
CREATE ROLE ng_monitor LOGIN;
GRANT pg_read_all_stats TO ng_monitor;
GRANT SELECT ON pg_stat_statements_ng, pg_stat_statements_ng_info,
  pg_stat_statements_ng_waits, pg_stat_statements_ng_history,
  pg_stat_statements_ng_history_waits TO ng_monitor;
GRANT EXECUTE ON FUNCTION pg_stat_statements_ng(boolean),
  pg_stat_statements_ng_changed_since(bigint, boolean),
  pg_stat_statements_ng_texts(bigint[]),
  pg_stat_statements_ng_histogram(bigint, text),
  pg_stat_statements_ng_info(), pg_stat_statements_ng_waits(),
  pg_stat_statements_ng_history(), pg_stat_statements_ng_history_info(),
  pg_stat_statements_ng_history_waits() TO ng_monitor;
CREATE SCHEMA ng_admin;
REVOKE ALL ON SCHEMA ng_admin FROM PUBLIC;
GRANT USAGE ON SCHEMA ng_admin TO ng_monitor;
CREATE FUNCTION ng_admin.reset_statements(userid oid DEFAULT 0,
    dbid oid DEFAULT 0, queryid bigint DEFAULT 0,
    minmax_only boolean DEFAULT false)
RETURNS timestamptz
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT public.pg_stat_statements_ng_reset(userid, dbid, queryid, minmax_only) $$;
REVOKE ALL ON FUNCTION ng_admin.reset_statements(oid, oid, bigint, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ng_admin.reset_statements(oid, oid, bigint, boolean) TO ng_monitor;
};
$node->safe_psql('postgres', $recipe);

# the same grants, without pg_read_all_stats, for a user who sees only his own
(my $partial = $recipe) =~ s/^GRANT pg_read_all_stats TO ng_monitor;\n//m;
$partial =~ s/^CREATE SCHEMA.*//ms;
$partial =~ s/ng_monitor/nobody/g;
$partial =~ s/^CREATE ROLE nobody LOGIN;\n//m;
$node->safe_psql('postgres', $partial);

# the workload: another user's statements, one of them waiting (samples)
as('app', 'INSERT INTO t VALUES (1); SELECT count(*) FROM t; SELECT pg_sleep(0.3)');
$node->safe_psql('postgres', 'SELECT pg_stat_statements_ng_take_window()');
my $qid = $node->safe_psql('postgres',
	"SELECT queryid FROM pg_stat_statements_ng WHERE query = 'SELECT pg_sleep(\$1)'");
like($qid, qr/^-?\d+$/, 'the waiting statement has an entry');

my @reads = (
	'SELECT * FROM pg_stat_statements_ng ORDER BY queryid',
	'SELECT userid, dbid, queryid, toplevel, query, calls FROM pg_stat_statements_ng_changed_since(0) ORDER BY queryid',
	'SELECT * FROM pg_stat_statements_ng_texts(ARRAY(SELECT queryid FROM pg_stat_statements_ng)) ORDER BY queryid',
	"SELECT * FROM pg_stat_statements_ng_histogram($qid)",
	'SELECT * FROM pg_stat_statements_ng_info',
	'SELECT * FROM pg_stat_statements_ng_waits ORDER BY queryid, wait_event_type, wait_event',
	'SELECT * FROM pg_stat_statements_ng_history ORDER BY queryid',
	'SELECT * FROM pg_stat_statements_ng_history_waits ORDER BY queryid, wait_event_type, wait_event');
for my $sql (@reads)
{
	my $super = $node->safe_psql('postgres', $sql);
	(my $name = $sql) =~ s/-?\d{6,}/:qid/;
	is(as('ng_monitor', $sql), $super, "as the monitoring role: $name");
}
is( as('ng_monitor',
		q{SELECT count(*) FROM pg_stat_statements_ng s JOIN pg_roles r ON r.oid = s.userid
		   WHERE r.rolname = 'app' AND s.query IN ('INSERT INTO t VALUES ($1)', 'SELECT count(*) FROM t', 'SELECT pg_sleep($1)')}
	),
	3,
	'the monitoring role reads the texts of another user\'s statements');
is( as('ng_monitor',
		"SELECT count(*) > 0 FROM pg_stat_statements_ng_waits WHERE queryid = $qid"
	),
	't',
	'and their waits');
is( as('ng_monitor',
		"SELECT count(*) FROM pg_stat_statements_ng_history WHERE queryid = $qid"),
	1,
	'and their history');
is( as('ng_monitor',
		"SELECT count(*) > 0 FROM pg_stat_statements_ng_history_waits WHERE queryid = $qid"
	),
	't',
	'and their waits in the history');

# without pg_read_all_stats: only one's own texts; without grants: nothing
is( as('nobody',
		q{SELECT count(*) FILTER (WHERE query = '<insufficient privilege>'), count(queryid),
		         count(*) FROM pg_stat_statements_ng}),
	'3|0|3',
	'with the grants but without pg_read_all_stats: other users\' texts hidden');
is( as('nobody',
		"SELECT count(*) FROM pg_stat_statements_ng_texts(ARRAY[$qid])"),
	0,
	'and pg_stat_statements_ng_texts returns none of them');
like(fails_as('ungranted', 'SELECT count(*) FROM pg_stat_statements_ng'),
	qr/permission denied/, 'a user without the grants cannot read');

# resets: through the wrapper only
like(fails_as('ng_monitor', 'SELECT pg_stat_statements_ng_reset()'),
	qr/permission denied for function pg_stat_statements_ng_reset/,
	'the raw reset is denied');
like(fails_as('ng_monitor', 'SELECT pg_stat_statements_ng_take_window()'),
	qr/permission denied for function pg_stat_statements_ng_take_window/,
	'take_window is denied');
like(fails_as('ng_monitor', 'SELECT pg_stat_statements_ng_history_reset()'),
	qr/permission denied for function pg_stat_statements_ng_history_reset/,
	'the history reset is denied');
like(fails_as('ungranted', 'SELECT ng_admin.reset_statements()'),
	qr/permission denied for schema ng_admin/,
	'the wrapper is denied to others');
as('ng_monitor', "SELECT ng_admin.reset_statements(queryid => $qid)");
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements_ng'),
	2, 'the wrapper resets one statement');
as('ng_monitor', 'SELECT ng_admin.reset_statements()');
is( $node->safe_psql('postgres',
		'SELECT count(*), sum(calls) FROM pg_stat_statements_ng'),
	'0|', 'the wrapper resets everything');

$node->stop;
done_testing();
