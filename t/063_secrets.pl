# No literal of a secret-bearing statement is stored anywhere: the view,
# changed_since's rows, the file written at a clean shutdown, the server
# log.  Each statement carries a marker SECRET_<n> (passwords, FDW options,
# subscriptions, SET and ALTER SYSTEM, COPY, DO and CALL, PREPARE and a
# twin without constants, errors, multi-statement strings, PL/pgSQL's
# EXECUTE, standard_conforming_strings changed in the same string, constants
# the jumble does not record), run under track = top and track = all, in
# the simple protocol (psql) and the extended one (pgbench -M extended and
# -M prepared).  Core is told not to log statements (log_statement = none,
# log_min_error_statement = panic) and the failing statements are chosen so
# that core's own error messages do not quote the marker: what the log is
# checked for is what the extension writes.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;

use NgNode;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $node = ng_init_node(
	'secrets', @NG_SMALL,
	log_statement => 'none',
	log_min_error_statement => 'panic',
	max_prepared_transactions => 0);
ok(ng_start($node), 'server starts');
my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 100);
my $xml = $node->psql('postgres', q{SELECT xmlparse(content '<a/>')}) == 0;

$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements_ng;
CREATE ROLE sec_alice;
CREATE FOREIGN DATA WRAPPER sec_w;
CREATE SERVER sec_s FOREIGN DATA WRAPPER sec_w;
CREATE TABLE sec_t (a int, b text);
CREATE TABLE sec_x (doc xml);
CREATE PROCEDURE sec_p(t text) LANGUAGE plpgsql AS $$BEGIN END$$;
CREATE FOREIGN TABLE sec_ft (a int) SERVER sec_s;
});

# the statements, one per line; "\;" joins a multi-statement string.  Run
# twice (track = top, then all): the second run's DDL fails on objects the
# first made, which runs the failure paths too, with messages that do not
# quote the marker.
my @simple = (
	# a twin without constants, parsed between resets (run first: the resets
	# clear the view)
	q{PREPARE sec_q1 AS SELECT CASE WHEN a IS NULL THEN b ELSE 'SECRET_1' END FROM sec_t},
	q{PREPARE sec_q2 AS SELECT b FROM sec_t FETCH FIRST 31337317 ROWS ONLY},
	($xml ? q{PREPARE sec_q90 AS SELECT xmlroot(doc, version 'SECRET_90') FROM sec_x} : ()),
	q{SELECT pg_stat_statements_ng_reset() IS NOT NULL},
	q{SELECT CASE WHEN a IS NULL THEN b END FROM sec_t},
	q{SELECT b FROM sec_t FETCH FIRST ROW ONLY},
	($xml ? q{SELECT xmlroot(doc, version no value) FROM sec_x} : ()),
	q{SELECT pg_stat_statements_ng_reset() IS NOT NULL},
	q{EXECUTE sec_q1},
	q{EXECUTE sec_q2},
	($xml ? q{EXECUTE sec_q90} : ()),
	# passwords
	q{CREATE ROLE sec_r3 PASSWORD 'SECRET_3'},
	q{ALTER ROLE sec_alice PASSWORD 'SECRET_4'},
	q{ALTER USER sec_alice WITH ENCRYPTED PASSWORD E'SECRET_5'},
	q{CREATE USER sec_r6 WITH LOGIN PASSWORD $$SECRET_6$$},
	q{ALTER ROLE sec_alice PASSWORD U&'SECRET_7'},
	q{ALTER ROLE sec_alice VALID UNTIL '2100-01-01' PASSWORD 'SECRET_8'},
	q{CREATE ROLE sec_r9 PASSWORD $tag$SECRET_9$tag$},
	q{ALTER ROLE sec_alice WITH PASSWORD 'SECRET_10' /* a comment */},
	q{CREATE ROLE sec_r11 PASSWORD 'SECRET_11' IN ROLE sec_alice},
	q{ALTER ROLE sec_alice PASSWORD 'SECRET_12' VALID UNTIL 'infinity'},
	# foreign data wrappers, servers, user mappings, foreign tables
	q{CREATE SERVER sec_s13 FOREIGN DATA WRAPPER sec_w OPTIONS (host 'SECRET_13')},
	q{ALTER SERVER sec_s OPTIONS (ADD password 'SECRET_14')},
	q{ALTER SERVER sec_s OPTIONS (SET password 'SECRET_15')},
	q{CREATE USER MAPPING FOR sec_alice SERVER sec_s OPTIONS (user 'bob', password 'SECRET_16')},
	q{ALTER USER MAPPING FOR sec_alice SERVER sec_s OPTIONS (SET password 'SECRET_17')},
	q{CREATE USER MAPPING FOR PUBLIC SERVER sec_s OPTIONS (password E'SECRET_18')},
	q{ALTER FOREIGN DATA WRAPPER sec_w OPTIONS (ADD secret 'SECRET_19')},
	q{CREATE FOREIGN TABLE sec_ft20 (a int OPTIONS (col 'SECRET_20')) SERVER sec_s OPTIONS (tbl 'SECRET_20')},
	q{ALTER FOREIGN TABLE sec_ft OPTIONS (ADD x 'SECRET_21')},
	q{CREATE SERVER sec_s22 TYPE 'SECRET_22' VERSION '1' FOREIGN DATA WRAPPER sec_w},
	# subscriptions
	q{CREATE SUBSCRIPTION sec_sub CONNECTION 'dbname=x password=SECRET_23' PUBLICATION p WITH (connect = false)},
	q{ALTER SUBSCRIPTION sec_sub CONNECTION 'dbname=x password=SECRET_24'},
	q{CREATE SUBSCRIPTION sec_sub2 CONNECTION 'password=SECRET_25' PUBLICATION p WITH (connect = false, slot_name = NONE)},
	q{ALTER SUBSCRIPTION sec_sub2 CONNECTION $$host=h password=SECRET_26$$},
	q{COMMENT ON SUBSCRIPTION sec_sub IS 'SECRET_27'},
	# SET, ALTER SYSTEM, per-role and per-database settings
	q{SET application_name = 'SECRET_28'},
	q{SET SESSION application_name TO 'SECRET_29'},
	q{SELECT set_config('application_name', 'SECRET_30', false)},
	q{ALTER SYSTEM SET sec.sys = 'SECRET_31'},
	q{ALTER SYSTEM RESET sec.sys},
	q{ALTER SYSTEM SET application_name = 'SECRET_32'},
	q{ALTER SYSTEM RESET application_name},
	q{ALTER DATABASE postgres SET sec.db = 'SECRET_33'},
	q{ALTER ROLE sec_alice SET sec.role = 'SECRET_34'},
	q{ALTER ROLE sec_alice IN DATABASE postgres SET sec.rdb TO 'SECRET_35'},
	q{SET sec.z = 'SECRET_36'},
	q{SET search_path = 'SECRET_37', public},
	q{SET sec.w TO $$SECRET_38$$},
	q{RESET search_path},
	# COPY
	q{COPY (SELECT 'SECRET_39') TO STDOUT},
	q{COPY (SELECT a FROM sec_t WHERE b = 'SECRET_40') TO PROGRAM 'cat >/dev/null'},
	q{COPY (SELECT 1) TO PROGRAM 'cat >/dev/null # SECRET_41'},
	q{COPY sec_t TO '/dev/null' WITH (FORMAT csv, NULL 'SECRET_42')},
	q{COPY sec_t FROM PROGRAM 'echo 1,x # SECRET_43' WITH (FORMAT csv)},
	q{COPY (SELECT 'SECRET_44' FROM sec_t) TO STDOUT WITH (FORMAT csv, HEADER)},
	q{COPY sec_t (a, b) TO PROGRAM 'cat >/dev/null; : SECRET_45'},
	q{COPY (SELECT * FROM sec_t) TO '/dev/null' (FORMAT csv, DELIMITER '|', FORCE_QUOTE *, NULL 'SECRET_46')},
	# DO and CALL, PL/pgSQL's EXECUTE (nested under track = all)
	q{DO $$BEGIN PERFORM 'SECRET_47'; END$$},
	q{DO LANGUAGE plpgsql $b$BEGIN RAISE NOTICE '%', 'SECRET_48'; END$b$},
	q{DO 'BEGIN PERFORM ''SECRET_49''; END'},
	q{CALL sec_p('SECRET_50')},
	q{CALL sec_p(E'SECRET_51')},
	q{DO $$DECLARE v text := 'SECRET_52'; BEGIN EXECUTE 'SELECT $1' USING v; END$$},
	q{DO $$BEGIN EXECUTE 'ALTER ROLE sec_alice PASSWORD ''SECRET_53'''; END$$},
	q{DO $$BEGIN EXECUTE 'SET application_name = ''SECRET_54''; ALTER USER MAPPING FOR sec_alice SERVER sec_s OPTIONS (SET password ''SECRET_54'')'; END$$},
	q{DO $$BEGIN EXECUTE 'SET standard_conforming_strings = off; ALTER USER MAPPING FOR sec_alice SERVER sec_s OPTIONS (SET user ''u\'', SET password ''SECRET_55'' /* '' */); RESET standard_conforming_strings'; END$$},
	# PREPARE and EXECUTE
	q{PREPARE sec_q56 AS SELECT 'SECRET_56'::text},
	q{EXECUTE sec_q56},
	q{PREPARE sec_q57(text) AS SELECT $1 || 'SECRET_57'},
	q{EXECUTE sec_q57('SECRET_58')},
	q{PREPARE sec_q59 AS INSERT INTO sec_t VALUES (1, 'SECRET_59')},
	q{EXECUTE sec_q59},
	q{PREPARE sec_q60 AS SELECT * FROM sec_t WHERE b = 'SECRET_60'},
	q{EXECUTE sec_q60},
	# errors
	q{SELECT 'SECRET_61' FROM sec_nosuch},
	q{ALTER ROLE sec_nosuch PASSWORD 'SECRET_62'},
	q{SELECT 1/0, 'SECRET_63'},
	q{CREATE USER MAPPING FOR sec_nosuch SERVER sec_s OPTIONS (password 'SECRET_64')},
	q{SELECT 'SECRET_65' FROM},
	q{INSERT INTO sec_t VALUES ('x', 'SECRET_66')},
	q{COPY (SELECT 'SECRET_67', 1/0) TO STDOUT},
	q{DO $$BEGIN PERFORM 'SECRET_68'; RAISE EXCEPTION 'boom'; END$$},
	q{CALL sec_nosuchproc('SECRET_69')},
	# multi-statement strings
	q{SELECT 'SECRET_70' \; SELECT 'SECRET_70b'},
	q{SET application_name = 'SECRET_71' \; ALTER ROLE sec_alice PASSWORD 'SECRET_71b'},
	q{SET standard_conforming_strings = off \; ALTER USER MAPPING FOR sec_alice SERVER sec_s OPTIONS (SET user 'u\', SET password 'SECRET_72' /* ' */) \; RESET standard_conforming_strings},
	q{SET standard_conforming_strings = off \; SELECT 'u\', 'SECRET_73' /* ' */ \; RESET standard_conforming_strings},
	q{BEGIN \; ALTER ROLE sec_alice PASSWORD 'SECRET_74' \; COMMIT},
	q{SET standard_conforming_strings = off \; ALTER ROLE sec_alice PASSWORD 'a\\SECRET_75' \; RESET standard_conforming_strings},
	q{SELECT 'SECRET_76' \; SELECT 1/0},
	q{BEGIN \; DECLARE sec_c CURSOR FOR SELECT 'SECRET_77' \; FETCH 1 FROM sec_c \; COMMIT},
	# constants the jumble does not record, nested queries
	q{WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2) CYCLE n SET c TO 'SECRET_78' DEFAULT 'SECRET_78b' USING p SELECT n FROM r},
	q{SELECT pg_notify('sec', 'SECRET_79')},
	q{NOTIFY sec, 'SECRET_80'},
	q{CREATE FUNCTION sec_f() RETURNS text LANGUAGE sql AS $$SELECT 'SECRET_81'$$},
	q{COMMENT ON TABLE sec_t IS 'SECRET_82'},
	q{CREATE VIEW sec_v AS SELECT 'SECRET_83'::text AS c},
	q{ALTER TABLE sec_t ALTER b SET DEFAULT 'SECRET_84'},
	q{CREATE TABLE sec_t85 AS SELECT 'SECRET_85' AS c},
	q{EXPLAIN (COSTS OFF) SELECT 'SECRET_86'},
	q{EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT 'SECRET_87'},
	q{SELECT 'SECRET_88'::varchar(20), 1::numeric(10, 2) ORDER BY 1},
);
if ($xml)
{
	push @simple,
	  q{SELECT * FROM XMLTABLE(XMLNAMESPACES('http://SECRET_89' AS x), '/x:r' PASSING '<r xmlns="http://SECRET_89"/>' COLUMNS a text PATH 'x:a' DEFAULT 'SECRET_89b') AS xt};
}
if ($major >= 17)
{
	push @simple,
	  q{SELECT * FROM JSON_TABLE('{"a": 1}'::jsonb, '$' PASSING 'SECRET_91' AS p COLUMNS (a int PATH '$.a', b text PATH '$.b' DEFAULT 'SECRET_91b' ON EMPTY)) AS jt},
	  q{SELECT JSON_VALUE('{}'::jsonb, '$.a' DEFAULT 'SECRET_92' ON EMPTY)},
	  q{SELECT JSON_QUERY('{}'::jsonb, '$.a' RETURNING text DEFAULT 'SECRET_93' ON EMPTY)};
}

# the extended protocol: one statement per command, none failing
my @extended = (
	q{SET application_name = 'SECRET_E1'},
	q{SELECT set_config('application_name', 'SECRET_E2', false)},
	q{ALTER ROLE sec_alice PASSWORD 'SECRET_E3'},
	q{ALTER USER MAPPING FOR sec_alice SERVER sec_s OPTIONS (SET password 'SECRET_E4')},
	q{DO $$BEGIN EXECUTE 'ALTER ROLE sec_alice PASSWORD ''SECRET_E5'''; END$$},
	q{CALL sec_p('SECRET_E6')},
	q{COPY (SELECT 'SECRET_E7') TO PROGRAM 'cat >/dev/null # SECRET_E7b'},
	q{WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2) CYCLE n SET c TO 'SECRET_E8' DEFAULT 'SECRET_E8b' USING p SELECT n FROM r},
	q{SELECT CASE WHEN a > 0 THEN b ELSE 'SECRET_E9' END FROM sec_t},
	q{ALTER SUBSCRIPTION sec_sub CONNECTION 'password=SECRET_E10'},
	q{COMMENT ON TABLE sec_t IS 'SECRET_E11'},
	q{ALTER SERVER sec_s OPTIONS (SET password 'SECRET_E12')},
);

my $markers = scalar(grep { /SECRET_/ } @simple, @extended);
cmp_ok($markers, '>=', 80, "$markers secret-bearing statements");

sub no_marker
{
	my ($what, $data) = @_;
	my @found = ($data =~ /(secret_\w+|31337317)/gi);
	is(join(' ', @found), '', "no marker in $what");
	return;
}

for my $track ('top', 'all')
{
	{
		local $ENV{PGOPTIONS} = "-c pg_stat_statements_ng.track=$track";
		# psql runs each line as one query string, and goes on after errors
		$node->psql('postgres', join(";\n", @simple) . ";\n", on_error_stop => 0);
		for my $mode ('extended', 'prepared')
		{
			my $script = $node->basedir . "/sec_$mode.sql";
			open(my $fh, '>', $script) or die "$script: $!";
			print $fh join(";\n", @extended) . ";\n";
			close $fh;
			ok( run_log(
					[
						'pgbench', '-n', '-t', '1', '-M', $mode,
						'-h', $node->host, '-p', $node->port, '-f', $script,
						'postgres'
					]),
				"pgbench -M $mode, track = $track");
		}
	}

	# positive controls: texts are stored, normalized
	my $texts = $node->safe_psql('postgres',
		q{SELECT query FROM pg_stat_statements_ng ORDER BY query COLLATE "C"});
	my %have = map { $_ => 1 } split /\n/, $texts;
	for my $want (
		'PREPARE sec_q1 AS SELECT CASE WHEN a IS NULL THEN b ELSE $1 END FROM sec_t',
		'PREPARE sec_q2 AS SELECT b FROM sec_t FETCH FIRST $1 ROWS ONLY',
		'ALTER ROLE sec_alice PASSWORD $1',
		'COPY (SELECT $1) TO PROGRAM $2',
		'ALTER SUBSCRIPTION sec_sub CONNECTION $1',
		($xml ? 'PREPARE sec_q90 AS SELECT xmlroot(doc, version $1) FROM sec_x' : ()))
	{
		ok($have{$want}, "track = $track: stored: $want") or diag $texts;
	}
	cmp_ok(scalar(keys %have), '>=', 60, "track = $track: many texts are stored");

	no_marker("the view, track = $track", $texts);
	no_marker("changed_since, track = $track",
		$node->safe_psql('postgres',
			q{SELECT query FROM pg_stat_statements_ng_changed_since(0, true)}));
}

# a clean stop saves every text
$node->stop;
my $file = read_bytes($node->data_dir . "/$STAT_FILE");
ok(index($file, 'ALTER ROLE sec_alice PASSWORD $1') >= 0,
	'the saved file holds the normalized texts');
no_marker('the saved file', $file);
no_marker('the server log', slurp_file($node->logfile));

done_testing();
