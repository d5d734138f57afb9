# Real clients of pg_stat_statements against the drop-in: pg_stat_kcache
# (whose control file requires pg_stat_statements) and PoWA's archivist
# (whose snapshot function reads pg_stat_statements by its version).
#
# Runs where Debian's packages of both are installed (15, by
# scripts/setup-postgres.sh) and the drop-in is installed in place of
# contrib's files (make install-dropin); skipped otherwise.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($stdout, $stderr);
IPC::Run::run([ 'pg_config', '--sharedir' ], '>', \$stdout);
chomp(my $share = $stdout);
my $control = "$share/extension/pg_stat_statements.control";
plan skip_all => 'pg_stat_kcache and powa are not installed'
  unless -f "$share/extension/pg_stat_kcache.control"
  && -f "$share/extension/powa.control";
plan skip_all => 'the drop-in is not installed in place of contrib'
  unless -f $control && slurp_file($control) =~ /pg_stat_statements_ng/;

my $node = PostgreSQL::Test::Cluster->new('clients');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements_ng, pg_stat_kcache, powa'\n"
	  . "powa.frequency = -1\n");
$node->start;

# pg_stat_kcache: CREATE EXTENSION pulls in pg_stat_statements (the drop-in)
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_kcache CASCADE');
is( $node->safe_psql('postgres',
		q{SELECT e.extname || ' ' || p.probin FROM pg_extension e, pg_proc p
		   WHERE e.extname = 'pg_stat_statements' AND p.proname = 'pg_stat_statements'}),
	'pg_stat_statements $libdir/pg_stat_statements',
	'pg_stat_statements was created as a dependency');
$node->safe_psql('postgres',
	'SELECT pg_stat_statements_reset(); SELECT pg_stat_kcache_reset()');
$node->safe_psql('postgres', 'CREATE TABLE kc (a int)');
$node->safe_psql('postgres', 'INSERT INTO kc SELECT generate_series(1, 1000)')
  for 1 .. 3;
$node->safe_psql('postgres', 'SELECT count(*) FROM kc') for 1 .. 5;

# pg_stat_kcache_detail joins pg_stat_statements (for the text) with its own
# per-queryid counters
is( $node->safe_psql('postgres',
		q{SELECT d.query, s.calls, d.exec_user_time + d.exec_system_time >= 0
		    FROM pg_stat_kcache_detail d
		    JOIN pg_stat_statements s ON s.query = d.query AND s.toplevel = d.top
		   WHERE d.query IN ('SELECT count(*) FROM kc',
		                     'INSERT INTO kc SELECT generate_series($1, $2)')
		     AND d.top
		   ORDER BY 1}),
	"INSERT INTO kc SELECT generate_series(\$1, \$2)|3|t\nSELECT count(*) FROM kc|5|t",
	'pg_stat_kcache_detail returns rows joined to our entries');

# PoWA: a snapshot taken with its own function stores our statements
$node->safe_psql('postgres', 'CREATE EXTENSION powa CASCADE');
$node->safe_psql('postgres', 'SELECT powa_take_snapshot()');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM powa_statements p
		    JOIN pg_stat_statements s ON s.queryid = p.queryid AND s.userid = p.userid
		   WHERE p.query IN ('SELECT count(*) FROM kc',
		                     'INSERT INTO kc SELECT generate_series($1, $2)')}),
	'2', 'powa_take_snapshot stored our statements');
cmp_ok(
	$node->safe_psql('postgres',
		'SELECT count(*) FROM powa_statements_history_current'),
	'>=', 2, 'with their counters');

$node->stop;
done_testing();
