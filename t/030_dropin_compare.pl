# The drop-in against contrib's pg_stat_statements, on the same workload in
# two fresh clusters: every column but the timings (and shared block hits
# of planned statements, see below) is the same for every statement,
# utility statements (PREPARE, EXECUTE, DEALLOCATE, DO, VACUUM) included.
# The workload has cursors read in several FETCHes, PREPARE/EXECUTE, a
# forced parallel scan, temporary tables and errors (top-level, in a
# transaction, and caught in PL/pgSQL).
#
# Needs the drop-in (make install-dropin) and contrib's library, wherever
# the drop-in left it (see t/lib/NgContrib.pm); skipped otherwise.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgContrib;

my $dropin_conf = dropin_conf();
plan skip_all => 'the drop-in is not installed (make install-dropin)'
  unless defined $dropin_conf;
my ($contrib_lib, $moved_to) = contrib_library();
plan skip_all => "contrib's pg_stat_statements library is not installed"
  unless defined $contrib_lib;

my $common = qq(
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '1GB'
compute_query_id = on
jit = off
pg_stat_statements.track = 'all'
pg_stat_statements.track_planning = on
);
my $contrib = PostgreSQL::Test::Cluster->new('contrib');
$contrib->init;
$contrib->append_conf('postgresql.conf',
	"shared_preload_libraries = '$contrib_lib'\n$common");
$contrib->start;

my $ours = PostgreSQL::Test::Cluster->new('dropin');
$ours->init;
$ours->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements_ng'\n"
	  . $dropin_conf
	  . $common);
$ours->start;

foreach my $node ($contrib, $ours)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
}
# on 15 to 17, the same catalog update in both (an identity one in ours),
# so that both clusters have the same pages of pg_proc in shared buffers
if (defined $moved_to)
{
	point_at_contrib($contrib, 'postgres', $contrib_lib);
	point_at_contrib($ours, 'postgres', '$libdir/pg_stat_statements');
}

my $workload = q{
SELECT pg_stat_statements_reset() IS NOT NULL AS t;
CREATE TABLE cmp_a (id int PRIMARY KEY, v text, n numeric);
CREATE TEMP TABLE cmp_t (x int);
INSERT INTO cmp_a SELECT g, 'value ' || g, g * 1.5 FROM generate_series(1, 2000) g;
INSERT INTO cmp_t SELECT generate_series(1, 500);
SELECT count(*) FROM cmp_a WHERE id < 100;
SELECT count(*) FROM cmp_a WHERE id < 200;
SELECT v FROM cmp_a WHERE id = 42;
SELECT v FROM cmp_a WHERE id IN (1, 2, 3);
SELECT sum(x) FROM cmp_t;
UPDATE cmp_a SET n = n + 1 WHERE id % 10 = 0;
DELETE FROM cmp_a WHERE id > 1900;
PREPARE cmp_p(int) AS SELECT v FROM cmp_a WHERE id = $1;
EXECUTE cmp_p(5);
EXECUTE cmp_p(6);
EXECUTE cmp_p(7);
DEALLOCATE cmp_p;
PREPARE cmp_q AS SELECT 1;
DEALLOCATE PREPARE cmp_q;
PREPARE cmp_r AS SELECT 2;
DEALLOCATE ALL;
CREATE FUNCTION cmp_f(i int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RETURN (SELECT count(*) FROM cmp_a WHERE id <= i); END $$;
SELECT cmp_f(10);
SELECT cmp_f(20);
DO $$ BEGIN PERFORM cmp_f(30); END $$;
CREATE INDEX cmp_i ON cmp_a (n);
VACUUM cmp_a;
BEGIN;
SELECT count(*) FROM cmp_a;
COMMIT;
WITH w AS (SELECT id FROM cmp_a WHERE id < 50) SELECT count(*) FROM w;
SELECT 'a literal', 42, 4.2;
BEGIN;
DECLARE cmp_c CURSOR FOR SELECT id, v FROM cmp_a ORDER BY id;
FETCH 10 FROM cmp_c;
FETCH 20 FROM cmp_c;
FETCH 30 FROM cmp_c;
MOVE 5 IN cmp_c;
FETCH NEXT FROM cmp_c;
CLOSE cmp_c;
COMMIT;
DECLARE cmp_h CURSOR WITH HOLD FOR SELECT x FROM cmp_t WHERE x < 100;
FETCH 40 FROM cmp_h;
FETCH 40 FROM cmp_h;
CLOSE cmp_h;
DO $$ DECLARE r record; BEGIN FOR r IN SELECT id FROM cmp_a WHERE id < 300 LOOP END LOOP; END $$;
PREPARE cmp_q(int, int) AS SELECT count(*) FROM cmp_a WHERE id BETWEEN $1 AND $2;
EXECUTE cmp_q(1, 10);
EXECUTE cmp_q(5, 500);
DEALLOCATE cmp_q;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FROM cmp_a WHERE v LIKE 'value 1%';
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
CREATE TEMP TABLE cmp_tt AS SELECT g AS y FROM generate_series(1, 3000) g;
UPDATE cmp_tt SET y = y + 1 WHERE y % 3 = 0;
SELECT count(*) FROM cmp_tt WHERE y > 1000;
DROP TABLE cmp_tt;
CREATE FUNCTION cmp_safe(i int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    PERFORM 1 / (i - i) FROM cmp_a WHERE id = 1;
  EXCEPTION WHEN division_by_zero THEN
    RETURN -1;
  END;
  RETURN 0;
END $$;
SELECT cmp_safe(3);
SELECT cmp_safe(4);
};

# statements that fail: each in its own transaction, one inside a
# transaction block that is rolled back
my @failing = (
	'SELECT 1 / (id - id) FROM cmp_a WHERE id = 1',
	'INSERT INTO cmp_a VALUES (1, NULL, NULL)',
	'SELECT * FROM cmp_missing',
	"BEGIN;\nSELECT count(*) FROM cmp_a WHERE id < 7;\nSELECT 1 / (id - id) FROM cmp_a WHERE id = 2;\nROLLBACK;",
	"SET statement_timeout = '10ms';\nSELECT pg_sleep(1);");
foreach my $node ($contrib, $ours)
{
	$node->safe_psql('postgres', $workload);
	foreach my $sql (@failing)
	{
		my ($ret) = $node->psql('postgres', $sql);
		die "no error from: $sql" if $ret == 0;
	}
	$node->safe_psql('postgres', 'SELECT count(*) FROM cmp_a WHERE id < 7');
}

# Every column but the timings.  Shared buffer hits are compared only for
# entries never planned whose own work reads no catalog: the hits of
# planning, of DDL and of utility statements that analyze or plan a query
# (DECLARE, PREPARE, EXPLAIN, CREATE TABLE AS, DO) include catalog lookups,
# whose number depends on the state of each cluster's catalog caches (CI
# runs saw 6 hits with ours and 11 with contrib for one planned statement,
# 643 against 645 for CREATE TABLE, 192 against 195 for DROP TABLE, 17
# against 13 for DECLARE CURSOR, every other column equal).
my $columns_query = q{
SELECT string_agg(CASE WHEN attname = 'shared_blks_hit'
                       THEN 'CASE WHEN plans = 0 AND query ~* ''^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|FETCH|MOVE|CLOSE|SET|RESET|BEGIN|COMMIT|ROLLBACK|DEALLOCATE)\M'' THEN shared_blks_hit END AS unplanned_hits'
                       ELSE quote_ident(attname) END, ', ' ORDER BY attnum)
  FROM pg_attribute
 WHERE attrelid = 'pg_stat_statements'::regclass AND attnum > 0
   AND attname NOT LIKE '%\_time' AND attname NOT LIKE '%stats\_since'};
my $columns = $contrib->safe_psql('postgres', $columns_query);
# the last counter of each major's view: jit_emission_count before 17,
# jit_deform_count in 17, parallel_workers_launched from 18 on
my $last_counter =
    $contrib->pg_version->major >= 18 ? 'parallel_workers_launched'
  : $contrib->pg_version->major >= 17 ? 'jit_deform_count'
  :                                     'jit_emission_count';
like($columns, qr/\bcalls\b.*\brows\b.*\bwal_bytes\b.*\b$last_counter$/,
	'the comparison covers the counters (' . scalar(split(/, /, $columns)) . ' columns)');
# the query text on one line, so that each entry is one line of the report
$columns =~ s/\bquery\b/replace(query, E'\\n', ' ') AS query/;
my $report = qq{
SELECT $columns
  FROM pg_stat_statements
 WHERE query NOT LIKE '%FROM pg_stat_statements%'
 ORDER BY queryid, toplevel;
};
$ours->safe_psql('postgres', $columns_query);
my $from_contrib = $contrib->safe_psql('postgres', $report);
my $from_ours = $ours->safe_psql('postgres', $report);

# Ours shows every literal of a utility statement as $n (docs/compatibility.md,
# intended difference 1), where contrib keeps them: on 15 every utility text
# is verbatim, from 16 on core's jumble replaces some (on 18 also the
# constants of a DECLARE's query, whose top-level entry contrib creates at
# execution with the literal).  Where the two texts of an entry differ,
# contrib's must become ours once each literal it still has is written as
# $n, numbered after the highest $n already in the text, in order.
sub literals_as_params
{
	my ($text) = @_;
	my $n = 0;
	while ($text =~ /\$(\d+)/g) { $n = $1 if $1 > $n; }
	$text =~ s/(\$(\w*)\$.*?\$\2\$|(?:[EeBbXxNn]|[Uu]&)?'(?:[^']|'')*'|(?<![\w\$.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.]))/'$' . ++$n/gse;
	return $text;
}
my $literal = 'DECLARE cmp_h CURSOR WITH HOLD FOR SELECT x FROM cmp_t WHERE x < 100;';
like($from_contrib, qr/\|\Q$literal\E\|/,
	'contrib stores the literal of the DECLARE (a documented difference)')
  if $contrib->pg_version->major >= 18;
# contrib's report with the query text of each entry whose row differs from
# ours written in our form; and how many texts that changed
sub contrib_in_our_form
{
	my ($ours_report, $contrib_report) = @_;
	my %ours_by_key = map { my @f = split /\|/, $_, -1; ("$f[2]|$f[3]" => $_) }
	  split /\n/, $ours_report;
	my $changed = 0;
	my $mapped = join "\n", map {
		my @f = split /\|/, $_, -1;
		my $o = $ours_by_key{"$f[2]|$f[3]"};
		if (defined $o && $o ne $_)
		{
			my $q = literals_as_params($f[4]);
			$changed++ if $q ne $f[4];
			$f[4] = $q;
		}
		join '|', @f;
	} split /\n/, $contrib_report;
	return ($mapped, $changed);
}
(my $mapped_contrib, my $mapped) = contrib_in_our_form($from_ours, $from_contrib);
$from_contrib = $mapped_contrib;
cmp_ok($mapped, '>=', 3, "contrib's literals of utility statements found ($mapped texts)");

if ($from_ours ne $from_contrib)
{
	# show the entries that differ, one per line
	my $tmp = PostgreSQL::Test::Utils::tempdir;
	PostgreSQL::Test::Utils::append_to_file("$tmp/contrib", "$from_contrib\n");
	PostgreSQL::Test::Utils::append_to_file("$tmp/ours", "$from_ours\n");
	IPC::Run::run([ 'diff', "$tmp/contrib", "$tmp/ours" ], '>', \my $diff);
	diag("contrib (<) and ours (>) differ:\n$diff");
}

my @rows = split /\n/, $from_contrib;
cmp_ok(scalar(@rows), '>=', 50, 'the workload gave a meaningful number of entries');
is($from_ours, $from_contrib, 'every non-timing column is the same for every entry');
is( $ours->safe_psql('postgres',
		"SELECT sum(calls) || ' ' || sum(rows) FROM pg_stat_statements WHERE query LIKE 'FETCH % FROM cmp_c'"),
	'4 61', 'FETCH was counted, with its rows (10 + 20 + 30 + 1)');

# Without track_utility, what a DO block or CALL runs is top-level on 15
# and 16 and nested from 17 on: the same in both on each major.
my $untracked = q{
SELECT pg_stat_statements_reset() IS NOT NULL AS t;
SET pg_stat_statements.track = 'top';
SET pg_stat_statements.track_utility = off;
DO $$ BEGIN PERFORM cmp_f(40); END $$;
CREATE PROCEDURE cmp_proc() LANGUAGE plpgsql AS $$
BEGIN PERFORM count(*) FROM cmp_a WHERE id < 7; END $$;
CALL cmp_proc();
SELECT count(*) FROM cmp_a WHERE id < 300;
};
foreach my $node ($contrib, $ours)
{
	$node->safe_psql('postgres', $untracked);
}
my $untracked_ours = $ours->safe_psql('postgres', $report);
is( $untracked_ours,
	(contrib_in_our_form($untracked_ours, $contrib->safe_psql('postgres', $report)))[0],
	'track_utility off: the same statements counted, top-level as in contrib');

# the same columns, in the same order, of the same types; on 15 to 17
# contrib's cluster has the drop-in's SQL objects too (contrib's scripts are
# moved aside), so contrib's columns are read from its scripts there
my $shape = q{
SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
  FROM pg_attribute WHERE attrelid = 'pg_stat_statements'::regclass AND attnum > 0;
};
my $contrib_shape;
if (defined $moved_to)
{
	my $o = 0;
	my $values = join(', ',
		map { sprintf("(%d, '%s', '%s')", ++$o, $_->[0], $_->[1]) }
		  contrib_columns($moved_to));
	$contrib_shape = $ours->safe_psql('postgres',
		"SELECT string_agg(n || ' ' || format_type(t::regtype, NULL), ', ' ORDER BY o)"
		  . " FROM (VALUES $values) v(o, n, t)");
}
else
{
	$contrib_shape = $contrib->safe_psql('postgres', $shape);
}
is($ours->safe_psql('postgres', $shape), $contrib_shape, "the view has contrib's shape");
my $contrib_version =
  defined $moved_to
  ? (slurp_file("$moved_to/pg_stat_statements.control") =~ /^default_version = '([^']+)'/m)[0]
  : $contrib->safe_psql('postgres',
	"SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'");
is( $ours->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'"),
	$contrib_version,
	'the same extension version');

$contrib->stop;
$ours->stop;
done_testing();
