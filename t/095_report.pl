# The report: pg_stat_statements_ng_report(since, until), one HTML document.
#
# A small workload runs in two history windows (closed with take_window()):
# statements whose stored texts hold markup (a quoted identifier with
# </script><script>, a comment with <img onerror>), a plain one, one that
# fails, one that sleeps (so it has wait samples).  The report of a period
# holding both windows is checked as text (exact calls and failures, every
# stored text escaped, nothing that could fetch anything), then opened in
# headless chromium: the DOM has no script and no img element, the hostile
# texts are text, every top-list link has its section, every plan text is text
# in its collapsed details element, and every chart has one bar per window.
# The sleeping statement's waits are its windows' samples
# (pg_stat_statements_ng_history_waits), with a stacked bar in the window it
# ran in.  The report of a period without windows says so and
# shows the cumulative figures (its waits since the last reset).  A user without pg_read_all_stats gets a
# report without other users' texts.  With evictions, the report warns that
# the data is incomplete.  A statement run with two plans in the period (index
# scans off, then on) has both in its section, with their calls and shares
# and their texts escaped, and is marked "2 plans" in the top lists; a
# statement with one plan is not marked.  A statement run with 7 plans (one
# per partition it prunes to) has its 5 most run plans in rows and the 2
# others summed in one.  With plans_per_statement = 2 (after a restart), a
# statement run with three plans has its third plan's calls in the row
# labelled "other", and is marked "3+ plans" in the top lists.
#
# The test's own SQL runs with pg_stat_statements_ng.track = none, so that
# every counted statement is one of the workload's.  The workload's
# statements differ in shape (their aliases alone would not: a query's
# identity ignores them).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgNode;

$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
my $node = ng_node(
	'report',
	autovacuum => 'off',
	'pg_stat_statements_ng.admission' => 'all',
	'pg_stat_statements_ng.history_interval' => 3600,
	'pg_stat_statements_ng.wait_sample_interval' => '10ms');
sub sql { return $node->safe_psql('postgres', $_[0]); }

# a workload statement: counted (the test's own SQL is not)
sub run
{
	my ($stmt, $times, $user) = @_;
	local $ENV{PGOPTIONS} = '';
	my @conn = defined $user ? (connstr => $node->connstr('postgres') . " user=$user") : ();
	$node->psql('postgres', $stmt, @conn) for 1 .. $times;
	return;
}

sql('CREATE ROLE reader LOGIN');
sql(q{
CREATE TABLE t (id int PRIMARY KEY, v int);
INSERT INTO t SELECT g, g FROM generate_series(1, 10000) g;
VACUUM ANALYZE t;
CREATE TABLE p (k int, v int) PARTITION BY LIST (k);
});
sql("CREATE TABLE p$_ PARTITION OF p FOR VALUES IN ($_)") foreach 1 .. 7;
sql('SELECT pg_stat_statements_ng_reset()');
sql('SELECT pg_stat_statements_ng_take_window()');

my $script_id = 'SELECT 1 AS "</script><script>alert(1)</script>"';
my $img_comment = 'SELECT /* <img src=x onerror=alert(2)> */ 2, 2 AS hostile_comment';

# window 1
run($script_id, 3);
run($img_comment, 2);
run('SELECT 1 / (SELECT 0) AS fails', 2);
sql('SELECT pg_stat_statements_ng_take_window()');
# window 2
run($script_id, 2);
run('SELECT 3, 3, 3 AS plain', 5);
run('SELECT 1 / (SELECT 0) AS fails', 1);
run('SELECT pg_sleep(0.3) AS napping', 1);
# a plan flip: 3 executions without index scans, then 2 with
my $flipq = "SELECT count(*) FROM t WHERE id < 10;\n";
run('SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;'
	  . ($flipq x 3)
	  . 'RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan;'
	  . ($flipq x 2),
	1);
# 7 plans, the one scanning partition k run k times
run(join('', map { "SELECT count(v) FROM p WHERE k = $_;\n" x $_ } 1 .. 7), 1);
sql('SELECT pg_stat_statements_ng_take_window()');
# after the windows: only in the cumulative statistics
run('SELECT 4, 4, 4, 4 AS secret_marker_text', 1);
run('SELECT 5, 5, 5, 5, 5 AS reader_own', 2, 'reader');
# a session's plan texts are installed when it exits: wait for the
# workload's sessions to have exited
$node->poll_query_until('postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()})
  or die 'a session did not exit';

my $windowed = sql(
	q{SELECT pg_stat_statements_ng_report(now() - interval '1 day', now() + interval '1 minute')});
my $cumulative = sql(
	q{SELECT pg_stat_statements_ng_report(now() + interval '1 day', now() + interval '2 days')});

# the section of the statement whose escaped text holds $needle
sub section_of
{
	my ($html, $needle) = @_;
	my @s = split(/<section /, $html);
	shift @s;    # the top lists
	@s = grep { index($_, $needle) >= 0 } @s;
	return scalar(@s) == 1 ? $s[0] : "(" . scalar(@s) . " sections hold $needle)";
}

sub figure
{
	my ($section, $name) = @_;
	return $section =~ m{<th>\Q$name\E</th><td>([^<]*)</td>} ? $1 : '(none)';
}

# kept for reading after the test
my $file = $node->basedir . '/report.html';
open(my $fh, '>', $file) or die "$file: $!";
print $fh $windowed;
close($fh);

# -- the report as text --
like($windowed, qr{^<!DOCTYPE html>.*</html>$}s, 'one HTML document');
like($windowed, qr{2 history windows starting in the period}, 'the period comes from 2 windows');
like($windowed, qr{<th>cluster name</th><td>report</td>}, 'the cluster name');
my $sec = section_of($windowed, 'alert(1)');
is(figure($sec, 'calls'), '5', 'calls of the </script> statement over both windows');
like($sec, qr{\Q&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;\E}, '</script> escaped');
is(figure(section_of($windowed, 'hostile_comment'), 'calls'), '2', 'calls of the <img> statement');
like($windowed, qr{\Q/* &lt;img src&#61;x onerror&#61;alert(2)&gt; */\E}, '<img> comment escaped');
is(figure(section_of($windowed, 'AS plain'), 'calls'), '5', 'calls of the plain statement');
is(figure(section_of($windowed, 'AS fails'), 'failures'), '3', 'failures of the failing statement');
like($windowed, qr{<h3>By failures[^<]*</h3><table class="top">(?:(?!</table>).)*AS fails}s,
	'the failing statement is in the failures list');
unlike($windowed, qr{secret_marker_text}, 'a statement after the period is not in the windows report');
like(section_of($windowed, 'napping'), qr{<div class="bar"><span class="w" style="width:[0-9.]+%;background:#[0-9a-f]+" title="Timeout / PgSleep: }, 'the sleeping statement has its waits bar');
# the waits of a windows report are the windows' (history_waits): exactly
# their samples, with a stacked bar per window that has any
my $nap_samples = sql(q{
SELECT sum(w.samples) FROM pg_stat_statements_ng_history_waits w
  JOIN pg_stat_statements_ng s USING (userid, dbid, queryid)
 WHERE s.query LIKE '%napping%'});
cmp_ok($nap_samples, '>', 0, 'the sleeping statement has wait samples in its window');
like(section_of($windowed, 'napping'),
	qr{<h4>Waits \(\Q$nap_samples\E samples in the period's windows\)</h4>},
	'its waits are its windows\' samples');
my ($wchart) = section_of($windowed, 'napping') =~ m{<svg class="waits"(.*?)</svg>}s;
my @wx = ($wchart // '') =~ m{<rect x="([0-9.]+)"}g;
my %wx = map { $_ => 1 } @wx;
is_deeply([ sort keys %wx ], ['450.00'], 'its waits chart has a bar in the second window only');
like($cumulative, qr{samples since the last reset}, 'a period without windows shows the waits since the last reset');
like($windowed, qr{<p class="ok">}, 'nothing lost: no warning');
foreach my $bad ('http://', 'https://', 'src=', 'url(', '@import', '<script', '<img')
{
	is(index(lc($windowed), $bad), -1, "the report holds no $bad");
}

like($cumulative, qr{no history window covers the period}, 'a period without windows says so');
unlike($cumulative, qr{<svg}, 'and has no chart');
is(figure(section_of($cumulative, 'alert(1)'), 'calls'), '5', 'cumulative calls of the </script> statement');
is(figure(section_of($cumulative, 'secret_marker_text'), 'calls'), '1', 'cumulative calls of a later statement');

# -- plans: the flipped statement's two plans, with their calls and shares --
my ($seq, $idx) = split(/\|/, sql(q{
SELECT string_agg(planid::text, '|' ORDER BY plan LIKE '%Index%')
  FROM pg_stat_statements_ng_plans p JOIN pg_stat_statements_ng s USING (userid, dbid, queryid, toplevel)
 WHERE s.query = 'SELECT count(*) FROM t WHERE id < $1'}));
ok(defined $idx && $seq ne $idx, 'the flip has two plans, each with its text');
my $w2 = sql(q{SELECT to_char(max(window_start), 'YYYY-MM-DD HH24:MI:SS') FROM pg_stat_statements_ng_history});

# a section's plan rows, most calls first: "planid,calls,share,first,last"
# each, with the planids and times of %$names shown as their names
sub plan_rows
{
	my ($section, $names) = @_;
	my ($tbl) = $section =~ m{<table class="plans">(.*?)</table>}s;
	my @rows = ($tbl // '') =~ m{<tr><td>(.*?)</td></tr>}sg;
	return join(' ; ', map {
		my @c = split(m{</td><td>}, $_);
		join(',', map { $names->{$_} // $_ } @c[ 0, 1, 3, 4, 5 ]);
	} @rows);
}
my $flipsec = section_of($windowed, 'count(*) FROM t WHERE id &lt; $1');
is(plan_rows($flipsec, { $seq => 'seq', $idx => 'idx', $w2 => 'w2' }),
	'seq,3,60.0%,w2,w2 ; idx,2,40.0%,w2,w2',
	'the flipped statement\'s section: both plans, their calls and shares, in the second window');
like($flipsec, qr{<details><summary>plan</summary><pre>Aggregate\n  -&gt;  Seq Scan on t\n        Filter: \(id &lt; \$1\)</pre></details>},
	'the sequential plan\'s text, escaped');
like($flipsec, qr{<details><summary>plan</summary><pre>Aggregate\n  -&gt;  Index Only Scan using t_pkey on t\n        Index Cond: \(id &lt; \$1\)</pre></details>},
	'the index plan\'s text, escaped');
my @pres = $windowed =~ m{<pre>(.*?)</pre>}sg;
is(scalar(grep { /[<>]/ } @pres), 0, 'no raw < or > in any text of the report');
like($windowed, qr{<td><a href="#s[0-9a-z_]+">SELECT count\(\*\) FROM t WHERE id &lt; \$1</a> <span class="nplans">2 plans</span></td></tr>},
	'the flipped statement is marked "2 plans" in the top lists');
like($windowed, qr{AS plain</a></td></tr>}, 'a statement with one plan is in the top lists');
unlike($windowed, qr{AS plain</a> <span}, 'and has no marker');
my $plain = sql(q{
SELECT planid FROM pg_stat_statements_ng_plans p JOIN pg_stat_statements_ng s USING (userid, dbid, queryid, toplevel)
 WHERE s.query LIKE '%AS plain'});
is(plan_rows(section_of($windowed, 'AS plain'), { $plain => 'p', $w2 => 'w2' }),
	'p,5,100.0%,w2,w2', 'its section has its one plan, with all its calls');
my $seen = sql(qq{
SELECT string_agg(CASE planid WHEN $seq THEN 'seq' ELSE 'idx' END || ',' || calls || ','
                  || round(100.0 * calls / 5, 1) || '%,'
                  || to_char(first_seen, 'YYYY-MM-DD HH24:MI:SS') || ','
                  || to_char(last_seen, 'YYYY-MM-DD HH24:MI:SS'), ' ; ' ORDER BY calls DESC)
  FROM pg_stat_statements_ng_plans WHERE planid IN ($seq, $idx)});
like($seen, qr{^seq,3,60\.0%,[^;]+ ; idx,2,40\.0%,}, 'the cumulative plan rows of the flip');
is(plan_rows(section_of($cumulative, 'count(*) FROM t WHERE id &lt; $1'), { $seq => 'seq', $idx => 'idx' }),
	$seen, 'without windows: both plans from the cumulative plan rows, first and last seen');
like($cumulative, qr{<th>first seen</th><th>last seen</th>}, 'without windows: the times they were first and last seen');
my %part = map { split(/\|/) } split(/\n/, sql(q{
SELECT planid || '|' || substring(plan FROM 'Seq Scan on (p[0-9])')
  FROM pg_stat_statements_ng_plans p JOIN pg_stat_statements_ng s USING (userid, dbid, queryid, toplevel)
 WHERE s.query = 'SELECT count(v) FROM p WHERE k = $1'}));
is(join(' ', sort values %part), 'p1 p2 p3 p4 p5 p6 p7', 'pruning: a plan per partition');
my $parts = section_of($windowed, 'count(v) FROM p WHERE k');
is(plan_rows($parts, { %part, $w2 => 'w2' }),
	'p7,7,25.0%,w2,w2 ; p6,6,21.4%,w2,w2 ; p5,5,17.9%,w2,w2 ; p4,4,14.3%,w2,w2 ; p3,3,10.7%,w2,w2 ; 2 more plans,3,10.7%,w2,w2',
	'7 plans: the 5 most run in rows, the 2 others summed in one');
is(scalar(() = $parts =~ /<details>/g), 5, 'a plan text for each of the 5');
like($windowed, qr{FROM p WHERE k &#61; \$1</a> <span class="nplans">7 plans</span>}, 'marked "7 plans" in the top lists');

# -- permissions: the reader sees its own texts only --
{
	local $ENV{PGOPTIONS} = '';
	foreach my $period ("now() + interval '1 day', now() + interval '2 days'",
		"now() - interval '1 day', now() + interval '1 minute'")
	{
		my $r = $node->safe_psql('postgres', "SELECT pg_stat_statements_ng_report($period)",
			connstr => $node->connstr('postgres') . ' user=reader');
		unlike($r, qr{secret_marker_text|alert\(1\)|hostile_comment}, "the reader sees no other user's text ($period)");
		like($r, qr{reader_own}, "the reader sees its own text ($period)")
		  if $period =~ /2 days/;
	}
}

# -- in the browser --
SKIP:
{
	my $chromium = `command -v chromium 2>/dev/null`;
	chomp $chromium;
	skip 'chromium is not installed (apt-get install chromium): the browser checks are skipped', 8
	  unless $chromium ne '';

	my $home = $node->basedir . '/chromium';
	my ($stdout, $stderr) = ('', '');
	# a script that ran (an alert() waits for a click) would hang chromium
	eval {
		IPC::Run::run(
			[
				$chromium, '--headless', '--no-sandbox', '--disable-gpu',
				"--user-data-dir=$home", '--host-resolver-rules=MAP * ~NOTFOUND',
				'--dump-dom', "file://$file"
			],
			'>', \$stdout, '2>', \$stderr,
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	};
	diag("chromium did not finish: $@") if $@;
	like($stdout, qr{<body>.*</body>}s, 'chromium rendered the report')
	  or diag($stderr);
	is(scalar(() = $stdout =~ /<script/g), 0, 'the DOM has no script element');
	is(scalar(() = $stdout =~ /<img/g), 0, 'the DOM has no img element');
	ok( index($stdout, 'AS "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"') >= 0
		  && index($stdout, '/* &lt;img src=x onerror=alert(2)&gt; */') >= 0,
		'the hostile texts are text in the DOM');
	my @links = $stdout =~ m{<a href="#(s[0-9a-z_]+)">}g;
	my @missing = grep { index($stdout, qq{<section id="$_">}) < 0 } @links;
	ok(@links > 0 && !@missing, 'every top-list link has its section')
	  or diag("missing: @missing");
	my @charts = $stdout =~ m{<svg class="chart"(.*?)</svg>}sg;
	my @sections = $stdout =~ m{<section }g;
	is(scalar(@charts), scalar(@sections), 'one chart per section');
	my @bars = map { scalar(() = /<rect /g) } @charts;
	is_deeply(\@bars, [ (2) x scalar(@charts) ], 'every chart has one bar per window');
	my @dom_plans = $stdout =~ m{<details><summary>plan</summary><pre>([^<]*)</pre></details>}g;
	is(scalar(@dom_plans), scalar(() = $windowed =~ /<details>/g),
		'every plan text is text in its collapsed details element');
}

# -- "other": the plans beyond plans_per_statement, and the "N+ plans" marker --
$node->append_conf('postgresql.conf', q{
pg_stat_statements_ng.max = 100
pg_stat_statements_ng.plans_per_statement = 2
});
$node->restart;
# 3 executions without index scans, 2 with an index only scan, then 4 with
# an index scan: the third plan has no record of its own
my $threeq = "SELECT sum(id) FROM t WHERE id < 10;\n";
my $noscans = 'enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';
run("SET $noscans" . ($threeq x 3) . 'RESET ALL;' . ($threeq x 2)
	  . 'SET enable_indexonlyscan = off; SET enable_bitmapscan = off;' . ($threeq x 4),
	1);
my %three = map { split(/\|/) } split(/\n/, sql(q{
SELECT coalesce(planid::text, 'other') || '|'
       || coalesce(substring(plan FROM '(Seq Scan|Index Only Scan|Index Scan) '), '-')
  FROM pg_stat_statements_ng_plans p JOIN pg_stat_statements_ng s USING (userid, dbid, queryid, toplevel)
 WHERE s.query = 'SELECT sum(id) FROM t WHERE id < $1'}));
is(join(' ', sort values %three), '- Index Only Scan Seq Scan',
	'two plans with a record, the third in "other"');
my $other = sql(q{SELECT pg_stat_statements_ng_report(now() + interval '1 day', now() + interval '2 days')});
my $threesec = section_of($other, 'sum(id) FROM t WHERE id &lt; $1');
is( join(' ; ',
		map { join(',', (split /,/)[ 0 .. 2 ]) } split(/ ; /,
			plan_rows($threesec, { %three, other => 'other' }))),
	'other,4,44.4% ; Seq Scan,3,33.3% ; Index Only Scan,2,22.2%',
	'the plans beyond plans_per_statement in a row labelled "other"');
like($other, qr{sum\(id\) FROM t WHERE id &lt; \$1</a> <span class="nplans">3\+ plans</span>},
	'marked "3+ plans" in the top lists');

# -- incomplete data: evictions make the report warn --
my $many = $node->basedir . '/many.sql';
open(my $mh, '>', $many) or die "$many: $!";
print $mh 'SELECT ' . join(', ', (1) x $_) . ";\n" foreach 1 .. 150;
close($mh);
{
	local $ENV{PGOPTIONS} = '';
	$node->command_ok([ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $many ],
		'150 distinct statements in a table of 100');
}
my $evicted = sql(q{SELECT pg_stat_statements_ng_report(now() + interval '1 day', now() + interval '2 days')});
like($evicted, qr{<p class="warn">Warning: the data is incomplete}, 'evictions: the report warns');
like($evicted, qr{<span>dealloc</span> <b>[1-9][0-9]*</b>}, 'and shows the evictions');

$node->stop;
done_testing();
