# contrib's saved file is untrusted input to the drop-in's import.  Files
# written here in contrib's layout of the running major (as
# persist_contrib_format.c describes it) and put in place of contrib's:
# - a sound file: texts go through our normalizer (a literal contrib left
#   becomes $n), a text holding \' or invalid in its encoding is dropped
#   and its counts kept, an entry never run is skipped, stats_reset is the
#   file's;
# - damaged files (truncated, a text length past the end, a text without
#   its zero byte, an invalid encoding, another major, a trailing byte):
#   each ignored with one LOG line naming why, nothing imported, the file
#   removed, the server up.
#
# Runs where the drop-in is installed.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use NgContrib;
use NgNode;

my $paths = dropin_conf();
plan skip_all => 'the drop-in is not installed (make install-dropin)'
  unless defined $paths;

my $node = ng_node(
	'contrib_file',
	-preload => 'pg_stat_statements',
	-conf => $paths,
	shared_buffers => '1MB',
	max_connections => 20,
	autovacuum => 'off',
	-extension => 'pg_stat_statements');
my $major = $node->pg_version->major;
my $dbid = $node->safe_psql('postgres',
	"SELECT oid FROM pg_database WHERE datname = 'postgres'");
my $userid = $node->safe_psql('postgres',
	'SELECT oid FROM pg_roles WHERE rolname = current_user');
$node->stop;
my $file = $node->data_dir . '/pg_stat/pg_stat_statements.stat';
my $ng_file = $node->data_dir . '/pg_stat/pg_stat_statements_ng.stat';

# contrib's counters: 8-byte words, how many and where usage is, per major
my ($words, $usage_at) = $major >= 18 ? (46, 29) : $major >= 17 ? (43, 29) : (39, 27);

# one entry: key, counters (calls, rows, usage), tail, text and its zero byte
sub entry
{
	my (%e) = @_;
	my @w = (pack('q', 0)) x $words;
	$w[1] = pack('q', $e{calls});
	$w[12] = pack('q', $e{rows} // 0);
	$w[$usage_at] = pack('d', 1.0);
	my $len = $e{len} // length($e{text});
	my $tail =
	  $major >= 17
	  ? pack('Q l l q q Q', 0, $len, $e{encoding} // 6, 0, 0, 0)
	  : pack('Q l l Q', 0, $len, $e{encoding} // 6, 0);
	return pack('L L Q C x7', $userid, $dbid, $e{queryid}, 1)
	  . join('', @w) . $tail . $e{text} . ($e{nul} // "\0");
}

# 800000000 s after 2000-01-01, in microseconds
my $reset = 800000000 * 1000000;

sub contrib_file
{
	my ($count, @entries) = @_;
	return pack('L L l', 0x20220408, $major * 100, $count)
	  . join('', @entries) . pack('q q', 7, $reset);
}

my @sound = (
	entry(queryid => 1001, calls => 5, rows => 5,
		text => q(SELECT a FROM t WHERE b = 'secret')),
	entry(queryid => 1002, calls => 6, text => q(SELECT 'it\'s' AS c)),
	entry(queryid => 1003, calls => 7, text => "SELECT \xff\xfe AS c"),
	entry(queryid => 1004, calls => 0, text => 'SELECT 4'),
	entry(queryid => 1005, calls => 8, rows => 16,
		text => q(SELECT $1 + $2 FROM generate_series(1, 2))));

sub start_with
{
	my ($bytes) = @_;
	# no file of ours (each clean stop writes one): contrib's alone decides
	unlink $ng_file;
	open(my $fh, '>:raw', $file) or die "cannot write $file: $!";
	print $fh $bytes;
	close $fh;
	my $off = -s $node->logfile // 0;
	$node->start;
	# the keeper imports (or not) once the server runs
	$node->wait_for_log(qr/pg_stat_statements_ng: (imported|ignoring)/, $off);
	return substr(slurp_file($node->logfile), $off);
}

my $log = start_with(contrib_file(scalar(@sound), @sound));
like($log, qr/imported statistics of 4 statements from contrib's/,
	'the sound file: 4 statements imported (the one never run skipped)');
is( $node->safe_psql(
		'postgres', q(SELECT string_agg(format('%s %s %s %s', queryid, calls, rows,
			coalesce(nullif(query, ''), '<none>')), E'\n' ORDER BY queryid)
			FROM pg_stat_statements WHERE queryid BETWEEN 1001 AND 1005)),
	join("\n",
		'1001 5 5 SELECT a FROM t WHERE b = $1',
		'1002 6 0 <none>',
		'1003 7 0 <none>',
		'1005 8 16 SELECT $1 + $2 FROM generate_series($3, $4)'),
	'counts kept; literals replaced; texts with \\\' or invalid bytes dropped');
is( $node->safe_psql(
		'postgres', q(SELECT dealloc, stats_reset = timestamptz '2000-01-01 00:00:00+00'
			+ interval '800000000 seconds' FROM pg_stat_statements_info)),
	'7|t', "the file's dealloc and stats_reset");
ok(!-e $file, 'the file is removed');
$node->safe_psql('postgres', 'SELECT pg_stat_statements_reset()');
$node->stop;

my $one = entry(queryid => 2001, calls => 3, text => 'SELECT 1');
my $whole = contrib_file(2, $one, $one);
my @damaged = (
	[ 'truncated', substr($whole, 0, length($whole) - 20), qr/truncated entry|trailing bytes|invalid text|entry count/ ],
	[ 'header only', substr($whole, 0, 12), qr/file too short/ ],
	[ 'count past the end', contrib_file(1000, $one), qr/entry count exceeds the file/ ],
	[ 'text length past the end', contrib_file(1, entry(queryid => 2002, calls => 1, text => 'SELECT 1', len => 100000)),
	  qr/invalid text length/ ],
	[ 'negative text length', contrib_file(1, entry(queryid => 2002, calls => 1, text => 'SELECT 1', len => -5)),
	  qr/invalid text length/ ],
	[ 'text without its zero byte', contrib_file(1, entry(queryid => 2002, calls => 1, text => 'SELECT 1', nul => 'x')),
	  qr/invalid text/ ],
	[ 'invalid encoding', contrib_file(1, entry(queryid => 2002, calls => 1, text => 'SELECT 1', encoding => 1000)),
	  qr/invalid encoding/ ],
	[ 'negative calls', contrib_file(1, entry(queryid => 2002, calls => -1, text => 'SELECT 1')),
	  qr/invalid counters/ ],
	[ 'another major', pack('L L l', 0x20220408, ($major - 1) * 100, 0) . pack('q q', 0, 0),
	  qr/written by PostgreSQL major @{[$major - 1]}, this is $major/ ],
	[ 'another magic', pack('L L l', 0x20220407, $major * 100, 0) . pack('q q', 0, 0),
	  qr/not a file of contrib's pg_stat_statements/ ],
	[ 'a trailing byte', $whole . 'x', qr/trailing bytes after the entries/ ]);
foreach my $case (@damaged)
{
	my ($name, $bytes, $why) = @$case;
	$log = start_with($bytes);
	my @lines =
	  grep { /pg_stat_statements_ng:/ && !/wait profile rows/ } split /\n/, $log;
	is(scalar(@lines), 1, "$name: one line") or diag(join("\n", @lines));
	like($lines[0] // '',
		qr/ignoring contrib's saved statistics in "pg_stat\/pg_stat_statements.stat": $why/,
		"$name: says why");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements'),
		'0', "$name: nothing imported");
	ok(!-e $file, "$name: the file is removed");
	$node->stop;
}

done_testing();
