# After a clean restart the drop-in (the extension named pg_stat_statements)
# and the native view see the same restored statistics.
#
# Runs where the drop-in is installed (make install-dropin: in place of
# contrib's files on 15 to 17, in a directory of its own on 18, reached
# through extension_control_path); skipped otherwise.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;
use NgContrib;

use NgNode;

my $conf = dropin_conf();
plan skip_all => 'the drop-in is not installed' unless defined $conf;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $node = ng_init_node('dropin', @NG_SMALL, -conf => $conf,
	'pg_stat_statements_ng.track' => 'all');
ok(ng_start($node), 'server starts');
$node->safe_psql('postgres', q(
CREATE EXTENSION pg_stat_statements_ng;
CREATE EXTENSION pg_stat_statements;
CREATE TABLE d (a int, b text);
));
ng_tracked(
	$node, 'postgres',
	join("\n",
		(map { "INSERT INTO d SELECT g, 'v' FROM generate_series(1, $_) g;" } 1 .. 5),
		("SELECT count(*) FROM d WHERE a > 2;") x 4,
		"UPDATE d SET b = 'w' WHERE a = 1;",
		"DELETE FROM d WHERE a = 5;",
		(map { 'SELECT ' . join(' + ', (1) x $_) . ';' } 1 .. 20)));

# the columns both views have, in the drop-in's order
my $cols = $node->safe_psql('postgres', q(
	SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
	FROM pg_attribute a
	JOIN pg_attribute n ON n.attrelid = 'pg_stat_statements_ng'::regclass
	 AND n.attname = a.attname AND NOT n.attisdropped
	WHERE a.attrelid = 'pg_stat_statements'::regclass AND a.attnum > 0
	  AND NOT a.attisdropped));
like($cols, qr/\bqueryid\b.*\bcalls\b.*\bwal_bytes\b/, 'the views share the counters');
my $sql = "SELECT ROW($cols)::text FROM %s ORDER BY userid, dbid, toplevel, queryid";
my $native_before = $node->safe_psql('postgres', sprintf($sql, 'pg_stat_statements_ng'));
is($node->safe_psql('postgres', sprintf($sql, 'pg_stat_statements')),
	$native_before, 'before the restart: the drop-in shows the native rows');
my @n = split /\n/, $native_before;
is(scalar(@n), 24, '24 rows: 20 SELECTs of 1 to 20 terms, INSERT, count, UPDATE, DELETE');

my $off = log_mark($node);
$node->restart;
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
is($node->safe_psql('postgres', sprintf($sql, 'pg_stat_statements_ng')),
	$native_before, 'after the restart: the native view shows the same rows');
is($node->safe_psql('postgres', sprintf($sql, 'pg_stat_statements')),
	$native_before, 'after the restart: the drop-in shows the same rows');
is( $node->safe_psql('postgres',
		'SELECT dealloc, stats_reset FROM pg_stat_statements_info'),
	$node->safe_psql('postgres',
		'SELECT dealloc, stats_reset FROM pg_stat_statements_ng_info'),
	'pg_stat_statements_info agrees with the native info view');

$node->stop;
done_testing();
