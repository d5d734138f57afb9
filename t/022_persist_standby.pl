# On a hot standby the extension tracks read-only statements, exactly; a
# base backup of a primary carries no saved statistics file; a clean restart
# of the standby keeps its statistics.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;

use NgNode;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $primary =
  ng_init_node('primary', @NG_SMALL, -init => { allows_streaming => 1 });
ok(ng_start($primary), 'primary starts');
$primary->safe_psql('postgres', q(
CREATE EXTENSION pg_stat_statements_ng;
CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 100) g;
));
ng_tracked($primary, 'postgres', 'SELECT count(*) FROM t WHERE a <= 10;');

# a clean restart: the file is written, then restored and removed, so the
# running primary has none
my $off = log_mark($primary);
$primary->restart;
$primary->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
ok(!-e $primary->data_dir . "/$STAT_FILE", 'the running primary has no file');

$primary->backup('b');
my $backup = $primary->backup_dir . '/b';
ok(-d "$backup/pg_stat" || !-e "$backup/pg_stat", 'backup taken');
is(join(',', glob("$backup/pg_stat/pg_stat_statements_ng*")), '',
	'the base backup carries no saved statistics');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
ok(ng_start($standby), 'standby starts');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'it is a standby');

# the primary's statistics stay on the primary
is( $standby->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_statements_ng WHERE query LIKE '%a <= \$1%'"),
	'0', 'the standby starts without the primary\'s statistics');

# read-only statements on the standby, from several sessions
ng_tracked($standby, 'postgres', 'SELECT count(*) FROM t WHERE a > 50;' x 4);
ng_tracked($standby, 'postgres', 'SELECT count(*) FROM t WHERE a > 50;' x 3);
ng_tracked($standby, 'postgres', 'SELECT a FROM t WHERE a < 6 ORDER BY a;' x 2);
{
	local $ENV{PGOPTIONS} = '';    # tracked, like work_psql
	my ($ret, $out, $err) = $standby->psql('postgres', 'INSERT INTO t VALUES (1)');
	like($err, qr/cannot execute INSERT in a read-only transaction/,
		'a write fails on the standby');
}

my $rows_sql = q(SELECT query, calls, rows FROM pg_stat_statements_ng
	WHERE query LIKE '%FROM t %' ORDER BY query);
is( $standby->safe_psql('postgres', $rows_sql),
	"SELECT a FROM t WHERE a < \$1 ORDER BY a|2|10\n"
	  . "SELECT count(*) FROM t WHERE a > \$1|7|7",
	'the standby counts its read-only statements exactly');
is( $standby->safe_psql('postgres',
		q(SELECT coalesce(sum(calls), 0) FROM pg_stat_statements_ng
		  WHERE query LIKE 'INSERT%')),
	'0', 'a write refused on the standby is not counted');

# a clean restart of the standby keeps its statistics
$off = log_mark($standby);
$standby->restart;
$standby->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
is($standby->safe_psql('postgres', $rows_sql),
	"SELECT a FROM t WHERE a < \$1 ORDER BY a|2|10\n"
	  . "SELECT count(*) FROM t WHERE a > \$1|7|7",
	'the standby\'s statistics survive its clean restart');
ok(!-e $standby->data_dir . "/$STAT_FILE", 'and its file is removed');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'still a standby');

# streaming still works: a row written on the primary is read on the standby
$primary->safe_psql('postgres', 'INSERT INTO t VALUES (1000)');
$primary->wait_for_catchup($standby);
ng_tracked($standby, 'postgres', 'SELECT count(*) FROM t WHERE a > 50;');
is( $standby->safe_psql('postgres',
		q(SELECT calls || '|' || rows FROM pg_stat_statements_ng
		  WHERE query = 'SELECT count(*) FROM t WHERE a > $1')),
	'8|8', 'and keeps counting after the restart');

$standby->stop;
$primary->stop;
done_testing();
