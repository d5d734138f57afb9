# Literals in utility statements are never stored: a
# password, the OPTIONS of a server or user mapping, a DO body, a comment,
# the constants of COPY (SELECT ...), CREATE VIEW, CALL, EXPLAIN, CREATE
# TABLE AS, ... are shown as $n.  A marker string written in each of them
# appears in no row of the view, in no saved statistics file after a clean
# restart, and nowhere in our shared memory: the extension's region of main
# shared memory and the DSA segments (/dev/shm) a backend has attached after
# reading every text.  Shared memory is read by a backend through
# /proc/self/mem (pg_read_binary_file, superuser): a process may always read
# its own memory, whoever runs the test; where that is not possible the
# check is skipped with the reason.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;

use NgNode;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $node = ng_init_node('utility_literals', @NG_SMALL, max_connections => 10);
ok(ng_start($node), 'server starts');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements_ng');
my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 100);

my $m = 'NgMarker4711';

# every statement carries the marker in a string or the number 4711 in a
# numeric constant; each is followed by the text expected in the view
my @cases = (
	[ "CREATE ROLE alice LOGIN PASSWORD '${m}a'",
		'CREATE ROLE alice LOGIN PASSWORD $1' ],
	[ "ALTER ROLE alice PASSWORD '${m}b'", 'ALTER ROLE alice PASSWORD $1' ],
	[ "ALTER USER alice WITH ENCRYPTED PASSWORD E'${m}c' VALID UNTIL '2100-01-01'",
		'ALTER USER alice WITH ENCRYPTED PASSWORD $1 VALID UNTIL $2' ],
	[ 'CREATE FOREIGN DATA WRAPPER ngw', 'CREATE FOREIGN DATA WRAPPER ngw' ],
	[ "CREATE SERVER ngs FOREIGN DATA WRAPPER ngw OPTIONS (host '${m}d', port '4711')",
		'CREATE SERVER ngs FOREIGN DATA WRAPPER ngw OPTIONS (host $1, port $2)' ],
	[ "CREATE USER MAPPING FOR alice SERVER ngs OPTIONS (user 'bob', password '${m}e')",
		'CREATE USER MAPPING FOR alice SERVER ngs OPTIONS (user $1, password $2)' ],
	[ "ALTER USER MAPPING FOR alice SERVER ngs OPTIONS (SET password U&'${m}f')",
		'ALTER USER MAPPING FOR alice SERVER ngs OPTIONS (SET password $1)' ],
	[ "DO \$\$BEGIN PERFORM '${m}g'; END\$\$", 'DO $1' ],
	[ "DO LANGUAGE plpgsql \$body\$BEGIN PERFORM 4711; END\$body\$",
		'DO LANGUAGE plpgsql $1' ],
	[ "COMMENT ON ROLE alice IS '${m}h'", 'COMMENT ON ROLE alice IS $1' ],
	[ "COPY (SELECT '${m}i', 4711) TO STDOUT", 'COPY (SELECT $1, $2) TO STDOUT' ],
	[ "CREATE VIEW ngv AS SELECT '${m}j'::text AS c, 4711.5 AS n",
		'CREATE VIEW ngv AS SELECT $1::text AS c, $2 AS n' ],
	[ "CREATE TABLE ngt AS SELECT '${m}k' AS c", 'CREATE TABLE ngt AS SELECT $1 AS c' ],
	[ "EXPLAIN (COSTS OFF) SELECT '${m}l'", 'EXPLAIN (COSTS OFF) SELECT $1' ],
	[ "CREATE PROCEDURE ngp(t text) LANGUAGE sql AS 'SELECT 1'",
		'CREATE PROCEDURE ngp(t text) LANGUAGE sql AS $1' ],
	[ "CALL ngp('${m}m')", 'CALL ngp($1)' ],
	[ "CREATE SEQUENCE ngq START 4711 INCREMENT BY 3", 'CREATE SEQUENCE ngq START $1 INCREMENT BY $2' ],
	[ "SET application_name = '${m}n'", 'SET application_name = $1' ],
	[ "SELECT set_config('application_name', 'x', false)",
		'SELECT set_config($1, $2, $3)' ],
);

# a session that is tracked runs them all; one failing statement too (its
# failure is recorded with the text of its parse)
ng_tracked($node, 'postgres', join(";\n", map { $_->[0] } @cases) . ';');
{
	local $ENV{PGOPTIONS} = '';
	my ($ret) = $node->psql('postgres', "ALTER ROLE nosuchrole PASSWORD '${m}o'");
	isnt($ret, 0, 'the failing statement failed');
}
# positive control: the failing statement's text is the one shown
my $failing = 'ALTER ROLE nosuchrole PASSWORD $1';
# and one text stored the same whatever the treatment of utility statements
my $control = 'SELECT set_config($1, $2, $3)';

my $texts_sql = q{SELECT query FROM pg_stat_statements_ng ORDER BY query COLLATE "C"};

sub check_view
{
	my ($when) = @_;
	my $texts = $node->safe_psql('postgres', $texts_sql);
	my %have = map { $_ => 1 } split /\n/, $texts;
	my @missing = grep { !$have{$_} } (map { $_->[1] } @cases), $failing;
	is(join("\n", @missing), '', "$when: every utility statement shown with \$n")
	  or diag $texts;
	is($node->safe_psql('postgres',
			qq{SELECT count(*) FROM pg_stat_statements_ng
			   WHERE query LIKE '%$m%' OR query LIKE '%4711%'}),
		'0', "$when: no row holds the marker");
	return;
}

# find needle in our shared memory; returns (regions, bytes, hits) or the
# reason it cannot be done
sub shm_hits
{
	my ($needle) = @_;
	my $hex = unpack('H*', $needle);
	my ($r, $o, $e) = $node->psql(
		'postgres', qq{
WITH maps AS (
  SELECT regexp_match(l, '^([0-9a-f]+)-([0-9a-f]+) ...s \\S+ \\S+ \\S+\\s*(.*)\$') AS f
    FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\\n') AS l),
ranges AS (
  SELECT ('x' || lpad(f[1], 16, '0'))::bit(64)::bigint AS lo,
         ('x' || lpad(f[2], 16, '0'))::bit(64)::bigint AS hi, f[3] AS path
    FROM maps WHERE f IS NOT NULL),
main AS (
  SELECT lo FROM ranges WHERE path NOT LIKE '/dev/shm/%' ORDER BY hi - lo DESC LIMIT 1),
ours AS (
  SELECT main.lo + a.off AS at, a.size AS len
    FROM main, pg_shmem_allocations a WHERE a.name = 'pg_stat_statements_ng'
  UNION ALL
  SELECT lo, hi - lo FROM ranges WHERE path LIKE '/dev/shm/PostgreSQL.%')
SELECT count(*), sum(len),
       count(*) FILTER (WHERE position('\\x$hex'::bytea IN
                                       pg_read_binary_file('/proc/self/mem', at, len)) > 0)
  FROM ours});
	return (undef, undef, undef, $e || 'no answer') if $r != 0 || $o eq '';
	return (split(/\|/, $o), undef);
}

sub check_shm
{
	my ($when) = @_;
	# read every text first, so that this backend attaches every segment
	# that holds one
	my ($regions, $bytes, $hits, $why) = shm_hits($control);
  SKIP:
	{
		skip "$when: cannot read shared memory through /proc/self/mem: $why", 2
		  if defined $why;
		cmp_ok($hits, '>=', 1,
			"$when: a stored text is found in our shared memory ($regions regions, $bytes bytes)");
		my @h = shm_hits($m);
		is($h[2], 0, "$when: the marker is nowhere in our shared memory");
	}
	return;
}

check_view('before restart');
check_shm('before restart');

# a clean stop saves every text: the file has them, without the marker
$node->stop;
my $file = read_bytes($node->data_dir . "/$STAT_FILE");
ok(index($file, 'CREATE USER MAPPING FOR alice SERVER ngs OPTIONS (user $1, password $2)') >= 0,
	'the saved file holds the normalized texts');
is(index($file, $m), -1, 'the saved file does not hold the marker');
is(index($file, '4711'), -1, 'the saved file does not hold the number');

my $off = log_mark($node);
ok(ng_start($node), 'server restarts');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
check_view('after restart');
check_shm('after restart');

$node->stop;
done_testing();
