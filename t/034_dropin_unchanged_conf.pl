# A contrib user switches with make install-dropin and a restart, and
# changes nothing else: shared_preload_libraries still names
# pg_stat_statements (alone, or with pg_stat_kcache where Debian's package is
# installed), and every setting is written under its pg_stat_statements.*
# name.  The server must start with our library (the name now resolves to
# it), honor every setting, show it in pg_settings with its source, and count
# exactly.  On 18 the drop-in lives in a directory of its own, so the
# configuration also has the two path settings make install-dropin prints.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgContrib;

my $share = pg_config_value('sharedir');
my $probe = PostgreSQL::Test::Cluster->new('probe');
my $major = $probe->pg_version->major;
# the lines a cluster needs to find the drop-in (18: its own directory;
# 15 to 17: none, it is in contrib's place)
my $paths = dropin_conf();
plan skip_all => 'the drop-in is not installed (make install-dropin)'
  unless defined $paths;

my @preloads = ('pg_stat_statements');
if (-f "$share/extension/pg_stat_kcache.control")
{
	push @preloads, 'pg_stat_statements, pg_stat_kcache';
}
else
{
	diag('pg_stat_kcache is not installed for this major: only the '
		  . 'configuration without it is tested');
}

# contrib's rows for a query read in several fetches: from 16 on, all rows
# fetched (es_total_processed); before, those of the last fetch (a PL/pgSQL
# FOR loop fetches 10, 50, 50, and a last 50 that finds no more rows).  A
# cursor's own query is jumbled, so counted, from 18 on.
my $loop_rows = $major >= 16 ? 100 : 0;
# and before 17, a utility statement not counted (DO, with track_utility =
# off) opens no nesting level: what it runs is top-level
my $loop_level = $major >= 17 ? 'f' : 't';
my @cursor_entry =
  $major >= 18
  ? ('f|1|1|60|DECLARE uc_cur CURSOR FOR SELECT g AS uc_g FROM generate_series($1, $2) g;')
  : ();

my $n = 0;
foreach my $preload (@preloads)
{
	my $node = PostgreSQL::Test::Cluster->new('unchanged' . ++$n);
	$node->init;
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = '$preload'
pg_stat_statements.max = 2000
pg_stat_statements.track = all
pg_stat_statements.track_utility = off
pg_stat_statements.track_planning = on
pg_stat_statements.save = off
$paths});
	$node->start;

	# our library is what the name loaded; pg_settings lists the five
	# settings with two names once, under the name in effect (contrib's):
	# of ours, the 4 others, the wait profile's 2, the history's 4 and
	# the plans' 3 (track_plans, plans_per_statement, plan_text_memory)
	is( $node->safe_psql('postgres',
			q{SELECT count(*) FROM pg_settings WHERE name LIKE 'pg\_stat\_statements\_ng.%'}),
		'13', "$preload: our library is loaded");

	# every pg_stat_statements.* setting is a real setting, with its source,
	# and is the value in effect (ours shows it too)
	is( $node->safe_psql(
			'postgres', q{
SELECT string_agg(a.name || '=' || a.setting || ' (' || a.source || ') '
                  || current_setting(replace(a.name, 'pg_stat_statements.', 'pg_stat_statements_ng.')),
                  ', ' ORDER BY a.name)
  FROM pg_settings a
 WHERE a.name LIKE 'pg\_stat\_statements.%'}),
		'pg_stat_statements.max=2000 (configuration file) 2000, '
		  . 'pg_stat_statements.save=off (configuration file) off, '
		  . 'pg_stat_statements.track=all (configuration file) all, '
		  . 'pg_stat_statements.track_planning=on (configuration file) on, '
		  . 'pg_stat_statements.track_utility=off (configuration file) off',
		"$preload: every setting honored, shown with its source");

	$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_kcache')
	  if $preload =~ /kcache/;
	is( $node->safe_psql('postgres',
			q{SELECT probin FROM pg_proc WHERE proname = 'pg_stat_statements'}),
		'$libdir/pg_stat_statements', "$preload: the extension is contrib's name");
	$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');

	$node->safe_psql(
		'postgres', q{
CREATE TABLE uc (a int);
CREATE FUNCTION uc_f(i int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RETURN (SELECT count(*) FROM uc WHERE a <= i); END $$;
});
	$node->safe_psql('postgres', 'INSERT INTO uc SELECT generate_series(1, 100)');
	$node->safe_psql('postgres', 'SELECT uc_f(10)') for 1 .. 4;
	$node->safe_psql('postgres', 'SELECT count(*) AS uc_top FROM uc') for 1 .. 6;
	$node->safe_psql(
		'postgres', q{
BEGIN;
DECLARE uc_cur CURSOR FOR SELECT g AS uc_g FROM generate_series(1, 100) g;
FETCH 10 FROM uc_cur;
FETCH 20 FROM uc_cur;
FETCH 30 FROM uc_cur;
CLOSE uc_cur;
COMMIT;
});
	$node->safe_psql('postgres',
		'DO $$ DECLARE r record; BEGIN FOR r IN SELECT g AS uc_loop FROM generate_series(1, 100) g WHERE g > 0 LOOP END LOOP; END $$'
	);

	my $rows = $node->safe_psql(
		'postgres', q{
SELECT toplevel, calls, plans, rows, query FROM pg_stat_statements
 WHERE query NOT LIKE '%pg_stat_statements%'
 ORDER BY query, toplevel});
	is( $rows, join("\n",
			'f|4|4|4|(SELECT count(*) FROM uc WHERE a <= i)',
			@cursor_entry,
			't|1|1|100|INSERT INTO uc SELECT generate_series($1, $2)',
			't|6|6|6|SELECT count(*) AS uc_top FROM uc',
			"$loop_level|1|1|$loop_rows|SELECT g AS uc_loop FROM generate_series(\$1, \$2) g WHERE g > \$3",
			't|4|4|4|SELECT uc_f($1)'),
		"$preload: counts exact, nested statements seen (track = all), "
		  . 'planning counted, no utility statement (track_utility = off), '
		  . 'rows of queries read in several fetches as contrib counts them');

	if ($preload =~ /kcache/)
	{
		is( $node->safe_psql('postgres',
				q{SELECT count(*) FROM pg_stat_kcache_detail
				   WHERE query = 'SELECT count(*) AS uc_top FROM uc' AND top
				     AND exec_user_time + exec_system_time >= 0}),
			'1', "$preload: pg_stat_kcache's view joins its counters to our entry");
	}

	# save = off: nothing survives a restart
	$node->restart;
	is( $node->safe_psql('postgres',
			q{SELECT count(*) FROM pg_stat_statements WHERE query LIKE '%uc_top%'}),
		'0', "$preload: save = off is honored");

	# the log does not claim that contrib's library is loaded
	ok( slurp_file($node->logfile) !~
		  /contrib's pg_stat_statements library is preloaded as well/,
		"$preload: no word of contrib's library in the log");
	$node->stop;
}

done_testing();
