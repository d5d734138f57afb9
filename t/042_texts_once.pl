# Texts once: a collector that reads every minute through a day of churn
# (1,440 reads; a minute is one turn of the loop) with max = 200 and
# admission = all.  Each minute a workload runs 10 hot statements
# and 10 of 3,000 others, each tagged with the minute in a comment, so that
# an entry re-created after its eviction has a text of its own; once an
# hour the hot statements are reset and run again, with another text,
# between two reads.  The
# collector is README's loop: rows without text from changed_since, the
# texts of the (key, text_stored_at) it does not hold from
# pg_stat_statements_ng_texts, and it forgets the keys that are gone.
# Exactly, every minute: every row of the statements view has the text the
# collector holds for its key, and the collector holds nothing else.  At
# the end: no text was fetched twice for one entry's lifetime, the texts
# fetched are as many as the lifetimes (key, stats_since) the test saw in
# the view, each hot statement's text was fetched once and again after each
# reset, and entries were re-created (and their texts fetched again)
# thousands of times.
#
# The test's own SQL runs with pg_stat_statements_ng.track = none.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

my $minutes = 1440;
my $hot = 10;
my $pool = 3000;
my $per_minute = 10;

$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
my $node = ng_node(
	'texts_once',
	autovacuum => 'off',
	'pg_stat_statements_ng.max' => 200,
	'pg_stat_statements_ng.admission' => 'all',
	'pg_stat_statements_ng.track_utility' => 'off');
$node->safe_psql('postgres',
	'CREATE TABLE w (' . join(', ', map { "c$_ int" } 0 .. 99) . ')');

# the collector's own tables (a collector keeps them elsewhere), and the
# test's: texts fetched, entry lifetimes seen, and what went wrong
$node->safe_psql('postgres', q{
CREATE SCHEMA collector;
SET search_path = collector;
CREATE TABLE collected (userid oid, dbid oid, queryid bigint,
  toplevel bool, text_stored_at timestamptz, query text,
  PRIMARY KEY (userid, dbid, queryid, toplevel));
CREATE TABLE fetched (minute int, userid oid, dbid oid, queryid bigint,
  toplevel bool, query text, text_stored_at timestamptz);
CREATE TABLE lifetimes (userid oid, dbid oid, queryid bigint,
  toplevel bool, stats_since timestamptz,
  PRIMARY KEY (userid, dbid, queryid, toplevel, stats_since));
CREATE TABLE bad (minute int, what text, n bigint);
});

# the statements of minute m: the hot ones, then 10 of the pool
sub minute_sql
{
	my ($m) = @_;
	my @sql = map { "SELECT c$_ /* m$m */ FROM w" } 0 .. $hot - 1;
	for my $j (0 .. $per_minute - 1)
	{
		my $id = (($m * $per_minute + $j) * 7) % $pool;
		my ($a, $b) = ($id % 100, int($id / 100));
		push @sql, "SELECT c$a, c$b /* m$m */ FROM w";
	}
	return join(";\n", @sql) . ";\n";
}

# README's collector loop: the rows that changed, without text; the texts
# of the (key, text_stored_at) it does not hold; the keys that are gone
my $collect = q{
WITH changed AS (
  SELECT * FROM pg_stat_statements_ng_changed_since(:gen, false)),
lacking AS (
  SELECT DISTINCT c.queryid FROM changed c
   WHERE c.text_stored_at IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM collected k
       WHERE (k.userid, k.dbid, k.queryid, k.toplevel, k.text_stored_at) =
             (c.userid, c.dbid, c.queryid, c.toplevel, c.text_stored_at))),
got AS (
  SELECT * FROM pg_stat_statements_ng_texts(ARRAY(SELECT queryid FROM lacking))),
logged AS (INSERT INTO fetched SELECT :m, * FROM got),
kept AS (
  INSERT INTO collected
    SELECT userid, dbid, queryid, toplevel, text_stored_at, query FROM got
  ON CONFLICT (userid, dbid, queryid, toplevel) DO UPDATE
    SET text_stored_at = excluded.text_stored_at, query = excluded.query)
SELECT coalesce(max(generation), :gen) AS gen FROM changed \gset
DELETE FROM collected k
 WHERE NOT EXISTS (SELECT 1 FROM pg_stat_statements_ng(false) s
   WHERE (s.userid, s.dbid, s.queryid, s.toplevel) =
         (k.userid, k.dbid, k.queryid, k.toplevel));
};

# the minute's checks: the view's rows against what the collector holds
my $check = q{
WITH v AS (SELECT * FROM pg_stat_statements_ng),
seen AS (
  INSERT INTO lifetimes
    SELECT userid, dbid, queryid, toplevel, stats_since FROM v
  ON CONFLICT DO NOTHING)
INSERT INTO bad
  SELECT :m, what, n FROM (
    SELECT 'a row of the view without its text' AS what, count(*) AS n
      FROM v LEFT JOIN collected k USING (userid, dbid, queryid, toplevel)
     WHERE k.query IS DISTINCT FROM v.query
    UNION ALL
    SELECT 'a key held that the view does not show', count(*)
      FROM collected k
     WHERE NOT EXISTS (SELECT 1 FROM v
       WHERE (v.userid, v.dbid, v.queryid, v.toplevel) =
             (k.userid, k.dbid, k.queryid, k.toplevel))) c
   WHERE n > 0;
};

my $hot_re = '^SELECT c[0-9]+ /\\* m[0-9]+( again)? \\*/ FROM w$';
my $reset_hot = "SELECT count(pg_stat_statements_ng_reset(0, 0, queryid)) "
  . "FROM pg_stat_statements_ng WHERE query ~ '$hot_re';\n";
my $hot_resets = int(($minutes + 29) / 60);

# a minute is a turn of the loop: the workload's statements (tracked),
# then the collector's and the checks (not tracked), in one psql session
my $script = "SET search_path = collector, public;\n\\set gen 0\n";
for my $m (0 .. $minutes - 1)
{
	$script .= "SET pg_stat_statements_ng.track = top;\n" . minute_sql($m)
	  . "SET pg_stat_statements_ng.track = none;\n";
	# once an hour, the hot statements are reset and run again with
	# another text, in the same minute: a key the collector holds whose
	# entry was re-created since its last read
	$script .= $reset_hot . "SET pg_stat_statements_ng.track = top;\n"
	  . join('', map { "SELECT c$_ /* m$m again */ FROM w;\n" } 0 .. $hot - 1)
	  . "SET pg_stat_statements_ng.track = none;\n"
	  if $m % 60 == 30;
	$script .= "\\set m $m\n$collect$check";
	$script .= "VACUUM collected;\n" if $m % 60 == 59;
}
my $file = $node->basedir . '/day.sql';
PostgreSQL::Test::Utils::append_to_file($file, $script);
my ($out, $err);
my $ok = IPC::Run::run(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $file,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
ok($ok, 'the day ran without error') or diag($err);

sub q1
{
	return $node->safe_psql('postgres',
		"SET search_path = collector, public; $_[0]");
}
is(q1('SELECT count(*) FROM bad'), 0,
	'every minute, every row of the view had its text, and no other key was held')
  or diag(q1('SELECT * FROM bad ORDER BY minute LIMIT 10'));
is( q1(
		'SELECT count(*) - count(DISTINCT (userid, dbid, queryid, toplevel, text_stored_at)) FROM fetched'
	),
	0,
	'no text crossed the wire twice for one entry lifetime');
my $fetched = q1('SELECT count(*) FROM fetched');
is($fetched, q1('SELECT count(*) FROM lifetimes'),
	'texts fetched: as many as the entry lifetimes seen in the view');
is(q1("SELECT count(*) FROM fetched WHERE query ~ '$hot_re'"),
	$hot * (1 + $hot_resets),
	'the texts of the hot statements: fetched once, and again after each reset');
is(q1('SELECT count(*) FROM fetched WHERE query IS NULL'), 0,
	'every text fetched was there');
my $recreated = q1(
	'SELECT count(*) FROM (SELECT 1 FROM lifetimes GROUP BY userid, dbid, queryid, toplevel HAVING count(*) > 1) r'
);
cmp_ok($recreated, '>=', 2000, "keys with more than one lifetime: $recreated");
my $created = $node->safe_psql('postgres',
	'SELECT dealloc + entries FROM pg_stat_statements_ng_info')
  + $hot * $hot_resets;    # evicted, present, and removed by the resets
cmp_ok($fetched, '<=', $created,
	"texts fetched ($fetched) at most the entries created ($created)");
is($fetched, $hot * (1 + $hot_resets) + $minutes * $per_minute,
	'texts fetched: one per hot statement lifetime and one per churn statement run');

$node->stop;
done_testing();
