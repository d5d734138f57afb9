# A saved statistics file that is truncated, corrupted, of another format,
# major or layout, or with bytes appended, is rejected as a whole: the
# server starts, the log says so in exactly one line, statistics are empty
# and the file is removed.
#
# One valid file is made once; then for each case: stop, put the damaged
# copy in place, start, check.  Where a header field or a length is changed
# on purpose, the CRC-32C trailer is recomputed, so that the check of that
# field (not the checksum) is the one that fires.
#
# PGSSNG_PERSIST_QUICK=1 runs a reduced set (scripts/asan-persist.sh runs it
# under AddressSanitizer); PGSSNG_SERVER_LD_PRELOAD is passed to the server.
use strict;
use warnings FATAL => 'all';

use Cwd ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;

use NgNode;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $quick = $ENV{PGSSNG_PERSIST_QUICK} ? 1 : 0;

# fsync on for the one clean shutdown that writes the valid file, so that
# the dump's fsync + rename path runs as in production; off afterwards
my $node = ng_init_node('corrupt', @NG_SMALL, fsync => 'on');
ok(ng_start($node), 'server starts');
my $pgdata = $node->data_dir;

# under scripts/asan-persist.sh: check that the server really runs with the
# ASan runtime and the instrumented library
if (my $pre = $ENV{PGSSNG_SERVER_LD_PRELOAD})
{
	my $maps = read_bytes("/proc/$node->{_pid}/maps");
	my $real = Cwd::realpath($pre);
	like($maps, qr/\Q$real\E/, "the server runs with $real");
	if (my $so = $ENV{PGSSNG_EXPECT_SO})
	{
		like($maps, qr/\Q$so\E/, "the server runs $so");
	}
}
my $stat = "$pgdata/$STAT_FILE";
my $count_sql = 'SELECT count(*) FROM pg_stat_statements_ng';

$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements_ng');
$node->safe_psql('postgres', 'CREATE TABLE t (a int)');
# about 60 entries of a few hundred bytes each: the file is well over 8 kB,
# so that the loader's buffer is a malloc block of its own (ASan sees its
# end)
ng_tracked(
	$node, 'postgres',
	join("\n",
		(map { "SELECT a FROM t WHERE a = 1" . (" OR a = $_" x $_) . ';' } 1 .. 30),
		(map { 'SELECT ' . join(', ', ("'text'") x $_) . ';' } 1 .. 20),
		("INSERT INTO t VALUES (1);") x 5,
		"UPDATE t SET a = 2;",
		"SELECT count(*) FROM t;"));
# one statement that fails (division by zero at execution): its SQLSTATE
# is saved after the entries
{
	local $ENV{PGOPTIONS} = '';
	$node->psql('postgres', 'SELECT 1 / (g - g) FROM generate_series(1, 3) g');
}
my $nrows = $node->safe_psql('postgres', $count_sql);
cmp_ok($nrows, '>=', 50, "workload tracked ($nrows rows)");
my $rows_before = $node->safe_psql('postgres',
	'SELECT queryid, calls FROM pg_stat_statements_ng ORDER BY queryid');

$node->stop;
ok(-f $stat, 'clean shutdown wrote the file');
my $valid = read_bytes($stat);
my $size = length($valid);
$node->append_conf('postgresql.conf', "fsync = off\n");

# the valid file restores
my $off = log_mark($node);
ok(ng_start($node), 'server restarts');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
is($node->safe_psql('postgres',
		'SELECT queryid, calls FROM pg_stat_statements_ng ORDER BY queryid'),
	$rows_before, 'the valid file restores every row');
my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 100);

# --- what the file looks like ------------------------------------------------

my ($magic, $format, $pg_major, $counters_size) = unpack('L4', $valid);
is(sprintf('%08X', $magic), '4E475353', 'magic at offset 0');
is($format, 7, 'format version 7 at offset 4');
is($pg_major, $major, "server major ($major) at offset 8");
is(crc32c(substr($valid, 0, -4)), unpack('L', substr($valid, -4)),
	'trailer is the CRC-32C of everything before it');
my $layout = ng_file_layout($valid);
ok(defined $layout, 'entries walk to the trailer')
  or BAIL_OUT('cannot make sense of the dump file; the tests below would not mean much');
my $H = $layout->{header_size};
my $E = $layout->{entry_size};
my $N = $layout->{nentries};
is($N, $nrows, "entry count ($N) in the header's last field, offset " . ($H - 8));
my $X = $layout->{errors_at};
is($layout->{nerrors}, 1, "one statement's SQLSTATEs after the entries, at $X");
my $P = $layout->{plans_at};
my @ptext = grep { $_->{text_len} > 0 } @{ $layout->{plans} };
cmp_ok(scalar(@ptext), '>', 0,
	"plan rows after the SQLSTATEs, at $P, some with text ($layout->{nplans} rows)");
note "header $H bytes, entry fixed part $E bytes, text length at $layout->{text_len_at}, file $size bytes";
cmp_ok($size, '>', 8192, 'the file is larger than 8 kB');

# A format version names one layout.  Format 1, the first, has a 96-byte
# header (magic, format, major, counters_size, the nine int64/timestamp
# info figures, the entry count) and entries of counters_size + 56 bytes before their text.  Format 2 has
# a tenth info figure (unadmitted_calls): a 104-byte header; and entries
# keep text_stored_at: counters_size + 64 bytes.  Format 3 has an eleventh
# info figure (dsa_failures): a 112-byte header.  Format 4 takes the
# histograms out of the counters: the fixed part ends with text_len and the
# histogram's group mask, and the groups (128 bytes each) come before the
# text.  Format 5 has a twelfth info figure (admissions_refused) and, before
# the entry count, the size and CRC of contrib's file written with it: a
# 136-byte header.  Format 6 has the same header and entries, and after the
# entries the failures by SQLSTATE (16 bytes, then 144 per entry that has
# failed); the loader also reads format 5.  Format 7 has the same header
# and entries, and after the failures the plan rows (24 bytes, then 96 per
# row and its text); the loader also reads formats 5 and 6.  A change to
# either must come with a new format version: the loader's checks read the
# entry count and lengths at fixed offsets, so a file of the old layout under
# the same version is misread (rejected, if at all, for the wrong reason).
# (Not checked in the reduced run under ASan, which is about memory safety.)
my %layout_of_format =
  (1 => [ 96, 56 ], 2 => [ 104, 64 ], 3 => [ 112, 64 ], 4 => [ 112, 64 ],
	5 => [ 136, 64 ], 6 => [ 136, 64 ], 7 => [ 136, 64 ]);
if ($quick)
{
	note "layout: header $H bytes, entry counters + " . ($E - $counters_size) . ' bytes';
}
elsif (my $l = $layout_of_format{$format})
{
	is( "$H/" . ($E - $counters_size),
		"$l->[0]/$l->[1]",
		"format $format: header $l->[0] bytes, entry fixed part counters + $l->[1] bytes"
	);
}
else
{
	pass("format $format is new to this test (header $H bytes, entry counters + "
		  . ($E - $counters_size) . ' bytes): add it to %layout_of_format');
}

# each entry starts with its key (userid, dbid, queryid, toplevel) and the
# counters (plans, calls, ...): check on one entry that it says what the
# view said, so that the field patches below hit the fields they mean to
my $first = $layout->{entries}[0];
my ($qid, $calls) = (unpack('q', substr($valid, $first->{at} + 8, 8)),
	unpack('q', substr($valid, $first->{at} + 32, 8)));
like($rows_before, qr/^\Q$qid\E\|\Q$calls\E$/m,
	'first entry: queryid at +8 and calls at +32 match the view');

# --- the cases -----------------------------------------------------------------

sub with_crc
{
	my ($body) = @_;
	return $body . pack('L', crc32c($body));
}

sub patch
{
	my ($data, $at, $bytes) = @_;
	substr($data, $at, length($bytes)) = $bytes;
	return $data;
}

my $body = substr($valid, 0, -4);
my @cases;    # [ name, bytes, expected reason (regexp) ]

# truncations: header, first entry, spread over the entries, trailer
my %cut;
$cut{$_} = 1 for (0, 1, 3, 4, 7, 8, 11, 12, 16, 40, $H - 9, $H - 8, $H - 1, $H,
	$H + 1, $H + 3, $H + 4, $H + 8, $H + 32, $H + $E - 8, $H + $E - 1, $H + $E,
	$H + $E + 1);
$cut{ $size - $_ } = 1 for 1 .. 5;
my $spread = 50 - scalar(keys %cut);
$cut{ int($H + $E + 2 + ($size - 7 - $H - $E) * $_ / $spread) } = 1 for 0 .. $spread;
my @cuts = sort { $a <=> $b } grep { $_ >= 0 && $_ < $size } keys %cut;
@cuts = @cuts[ 0 .. 49 ] if @cuts > 50;
@cuts = @cuts[ map { int($_ * @cuts / 20) } 0 .. 19 ] if $quick;
for my $len (@cuts)
{
	push @cases, [
		"truncated to $len bytes",
		substr($valid, 0, $len),
		$len < $H + 4 ? qr/file too short/ : qr/checksum mismatch/
	];
}

# byte flips (fixed seed): any single byte changed fails the CRC
srand(20240505);
for my $i (1 .. ($quick ? 50 : 200))
{
	my $at = int(rand($size));
	my $x = 1 + int(rand(255));
	my $bad = $valid;
	substr($bad, $at, 1) = chr(ord(substr($bad, $at, 1)) ^ $x);
	push @cases, [ sprintf('flip %d: byte %d ^ 0x%02x', $i, $at, $x),
		$bad, qr/checksum mismatch/ ];
}

# header fields, CRC recomputed
push @cases,
  [ 'wrong magic', with_crc(patch($body, 0, pack('L', 0x53534E47))),
	qr/not a pg_stat_statements_ng file/ ],
  [ 'wrong magic, zeros', with_crc(patch($body, 0, pack('L', 0))),
	qr/not a pg_stat_statements_ng file/ ],
  [ 'format version 8', with_crc(patch($body, 4, pack('L', 8))),
	qr/format version 8, expected 5 to 7/ ],
  [ 'format version 6 (no plan rows)', with_crc(patch($body, 4, pack('L', 6))),
	qr/trailing bytes after the entries/ ],
  [ 'format version 5 (no SQLSTATE counts)', with_crc(patch($body, 4, pack('L', 5))),
	qr/trailing bytes after the entries/ ],
  [ 'format version 4', with_crc(patch($body, 4, pack('L', 4))),
	qr/format version 4, expected 5 to 7/ ],
  [ 'format version 3', with_crc(patch($body, 4, pack('L', 3))),
	qr/format version 3, expected 5 to 7/ ],
  [ 'format version 2', with_crc(patch($body, 4, pack('L', 2))),
	qr/format version 2, expected 5 to 7/ ],
  [ 'format version 1', with_crc(patch($body, 4, pack('L', 1))),
	qr/format version 1, expected 5 to 7/ ],
  [ 'format version 0', with_crc(patch($body, 4, pack('L', 0))),
	qr/format version 0, expected 5 to 7/ ],
  [ 'previous major', with_crc(patch($body, 8, pack('L', $major - 100))),
	qr/written by PostgreSQL major @{[$major - 100]}, this is $major/ ],
  [ 'next major', with_crc(patch($body, 8, pack('L', $major + 100))),
	qr/written by PostgreSQL major @{[$major + 100]}, this is $major/ ],
  [ 'other counters layout', with_crc(patch($body, 12, pack('L', $counters_size + 8))),
	qr/counters of another layout/ ],
  # the same header cases without the CRC fixed: the checksum fires first
  [ 'wrong magic, CRC not fixed', patch($valid, 0, pack('L', 0x53534E47)),
	qr/checksum mismatch/ ],
  [ 'format version 8, CRC not fixed', patch($valid, 4, pack('L', 8)),
	qr/checksum mismatch/ ];

# lengths and counts, CRC recomputed: nothing read from the file is trusted
my $tl = $first->{at} + $layout->{text_len_at};
my $last = $layout->{entries}[-1];
my $last_tl = $last->{at} + $layout->{text_len_at};
push @cases,
  [ 'entry count 2^62', with_crc(patch($body, $H - 8, pack('Q', 1 << 62))),
	qr/entry count exceeds the file/ ],
  [ 'entry count 2^64-1', with_crc(patch($body, $H - 8, pack('q', -1))),
	qr/entry count exceeds the file/ ],
  [ 'entry count one too many', with_crc(patch($body, $H - 8, pack('Q', $N + 1))),
	qr/entry count exceeds the file|truncated entry|invalid text length|invalid encoding|invalid counters|invalid key|invalid timestamp|invalid text/ ],
  [ 'entry count one too few', with_crc(patch($body, $H - 8, pack('Q', $N - 1))),
	qr/trailing bytes after the entries|SQLSTATE count exceeds the file|invalid SQLSTATE counts|truncated SQLSTATE counts|plan/ ],
  [ 'entry count zero', with_crc(patch($body, $H - 8, pack('Q', 0))),
	qr/trailing bytes after the entries|SQLSTATE count exceeds the file|invalid SQLSTATE counts|truncated SQLSTATE counts|plan/ ],
  [ 'text length 2^31-1', with_crc(patch($body, $tl, pack('l', 0x7FFFFFFF))),
	qr/invalid text length/ ],
  [ 'text length -2', with_crc(patch($body, $tl, pack('l', -2))),
	qr/invalid text length/ ],
  [ 'text length -2^31', with_crc(patch($body, $tl, pack('l', -2147483648))),
	qr/invalid text length/ ],
  # (the byte after the last text is the SQLSTATE counts' first: a zero)
  [ 'last text one byte too long',
	with_crc(patch($body, $last_tl, pack('l', $last->{text_len} + 1))),
	qr/invalid text length|invalid text/ ],
  [ 'last text one byte too short',
	with_crc(patch($body, $last_tl, pack('l', $last->{text_len} - 1))),
	qr/trailing bytes after the entries|SQLSTATE count exceeds the file|invalid SQLSTATE counts|truncated SQLSTATE counts|plan/ ],
  [ 'encoding 255', with_crc(patch($body, $tl - 4, pack('l', 255))),
	qr/invalid encoding/ ],
  [ 'encoding -1', with_crc(patch($body, $tl - 4, pack('l', -1))),
	qr/invalid encoding/ ],
  [ 'negative calls', with_crc(patch($body, $first->{at} + 32, pack('q', -5))),
	qr/invalid counters/ ],
  [ 'NUL in a text',
	with_crc(patch($body, $first->{at} + $E + $first->{hist_len}, "\0")),
	qr/invalid text/ ],
  [ 'toplevel byte 2 (read into a bool)',
	with_crc(patch($body, $first->{at} + 16, "\x02")),
	qr/invalid key/ ],
  [ 'usage above the maximum', with_crc(patch($body, $tl - 8, pack('L', 0xFFFFFFFF))),
	qr/invalid counters/ ],
  # timestamps the views could not show (out of range, or infinite)
  # stats_reset ends the saved info figures, which contrib_size (8 bytes),
  # contrib_crc and pad (4 each) and the entry count (8) follow
  [ 'stats_reset out of range (INT64_MIN + 1)',
	with_crc(patch($body, $H - 32, pack('q', -9223372036854775807))),
	qr/invalid timestamp in the header/ ],
  [ 'last_eviction_time infinity',
	with_crc(patch($body, 40, pack('q', 9223372036854775807))),
	qr/invalid timestamp in the header/ ],
  [ 'stats_since out of range',
	with_crc(patch($body, $tl - 32, pack('q', -9223372036854775807))),
	qr/invalid timestamp/ ],
  [ 'minmax_stats_since out of range',
	with_crc(patch($body, $tl - 24, pack('q', 9223372036854775806))),
	qr/invalid timestamp/ ],
  [ 'text_stored_at -infinity',
	with_crc(patch($body, $last_tl - 16, pack('q', -9223372036854775807 - 1))),
	qr/invalid timestamp/ ],
  [ 'last_executed_at out of range',
	with_crc(patch($body, $first->{at} + 24 + $counters_size - 16,
			pack('q', -9223372036854775807))),
	qr/invalid timestamp/ ],
  [ 'histogram mask of every group',
	with_crc(patch($body, $first->{at} + $E - 4, pack('L', 0xFFFFFFFF))),
	qr/invalid text|truncated entry|invalid text length|invalid encoding|invalid counters|invalid key|invalid timestamp|trailing bytes|SQLSTATE|plan/ ];

# the failures by SQLSTATE: the lost figure, their count, one block (key,
# then 5 rows of sqlstate, pad, errors, last_error_at)
push @cases,
  [ 'sqlstates_lost negative', with_crc(patch($body, $X, pack('q', -1))),
	qr/invalid SQLSTATE counts/ ],
  [ 'SQLSTATE count 2^64-1', with_crc(patch($body, $X + 8, pack('q', -1))),
	qr/SQLSTATE count exceeds the file/ ],
  [ 'SQLSTATE count one too many', with_crc(patch($body, $X + 8, pack('Q', 2))),
	qr/SQLSTATE count exceeds the file|truncated SQLSTATE counts|invalid key of SQLSTATE counts|invalid SQLSTATE counts/ ],
  [ 'SQLSTATE count zero', with_crc(patch($body, $X + 8, pack('Q', 0))),
	qr/trailing bytes after the entries|plan/ ],
  [ 'toplevel byte 2 in SQLSTATE counts', with_crc(patch($body, $X + 32, "\x02")),
	qr/invalid key of SQLSTATE counts/ ],
  [ 'SQLSTATE of 31 bits', with_crc(patch($body, $X + 40, pack('l', 1 << 30))),
	qr/invalid SQLSTATE counts/ ],
  [ 'negative SQLSTATE errors', with_crc(patch($body, $X + 48, pack('q', -1))),
	qr/invalid SQLSTATE counts/ ],
  [ 'last_error_at infinity', with_crc(patch($body, $X + 56, pack('q', 9223372036854775807))),
	qr/invalid SQLSTATE counts/ ],
  [ 'a SQLSTATE in the row of the rest', with_crc(patch($body, $X + 40 + 4 * 24, pack('l', 1))),
	qr/invalid SQLSTATE counts/ ];

# the plan rows: two figures and their count, then rows (key, planid,
# calls, total, min and max time, rows, first and last seen, text length,
# encoding) and their texts
my $R = $layout->{plans}[0]{at};
my $T = $ptext[0]{at};
push @cases,
  [ 'plan_texts_dropped negative', with_crc(patch($body, $P, pack('q', -1))),
	qr/invalid plan statistics/ ],
  [ 'plan_calls_lost negative', with_crc(patch($body, $P + 8, pack('q', -1))),
	qr/invalid plan statistics/ ],
  [ 'plan count 2^64-1', with_crc(patch($body, $P + 16, pack('q', -1))),
	qr/plan count exceeds the file/ ],
  [ 'plan count one too many',
	with_crc(patch($body, $P + 16, pack('Q', $layout->{nplans} + 1))),
	qr/plan count exceeds the file|truncated plan|invalid plan/ ],
  [ 'plan count zero', with_crc(patch($body, $P + 16, pack('Q', 0))),
	qr/trailing bytes after the entries/ ],
  [ 'toplevel byte 2 in a plan row', with_crc(patch($body, $R + 16, "\x02")),
	qr/invalid key of plan/ ],
  [ 'plan row of queryid 0', with_crc(patch($body, $R + 8, pack('q', 0))),
	qr/invalid key of plan/ ],
  [ 'plan calls 0', with_crc(patch($body, $R + 32, pack('q', 0))),
	qr/invalid plan counters/ ],
  [ 'plan calls negative', with_crc(patch($body, $R + 32, pack('q', -3))),
	qr/invalid plan counters/ ],
  [ 'plan total time NaN', with_crc(patch($body, $R + 40, pack('d', 9**9**9 / 9**9**9))),
	qr/invalid plan counters/ ],
  [ 'plan max time infinity', with_crc(patch($body, $R + 56, pack('d', 9**9**9))),
	qr/invalid plan counters/ ],
  [ 'plan rows negative', with_crc(patch($body, $R + 64, pack('q', -1))),
	qr/invalid plan counters/ ],
  [ 'plan first_seen infinity',
	with_crc(patch($body, $R + 72, pack('q', 9223372036854775807))),
	qr/invalid plan timestamp/ ],
  [ 'plan text length 65537', with_crc(patch($body, $T + 88, pack('l', 65537))),
	qr/invalid plan text length/ ],
  [ 'plan text length 2^31-1', with_crc(patch($body, $T + 88, pack('l', 0x7FFFFFFF))),
	qr/invalid plan text length/ ],
  [ 'plan text length -2', with_crc(patch($body, $T + 88, pack('l', -2))),
	qr/invalid plan text length/ ],
  [ 'plan text encoding 255', with_crc(patch($body, $T + 92, pack('l', 255))),
	qr/invalid plan text encoding/ ],
  [ 'NUL in a plan text', with_crc(patch($body, $T + 96, "\0")),
	qr/invalid plan text/ ],
  [ 'a text in an "other" plan row', with_crc(patch($body, $T + 24, pack('Q', 0))),
	qr/invalid plan text length/ ];

# bytes appended
push @cases,
  [ '1 byte appended', $valid . "\x01", qr/checksum mismatch/ ],
  [ '7 bytes appended', $valid . "garbage", qr/checksum mismatch/ ],
  [ '4 kB appended', $valid . ("\xA5" x 4096), qr/checksum mismatch/ ],
  [ 'a valid file twice', $valid . $valid, qr/checksum mismatch/ ],
  [ '64 bytes appended, CRC fixed', with_crc($body . ("\0" x 64)),
	qr/trailing bytes after the entries/ ];

# --- run them --------------------------------------------------------------------

my $first_off = log_mark($node);
my ($n_ok, @bad) = (0);
for my $case (@cases)
{
	my ($name, $bytes, $reason) = @$case;
	$node->stop;
	write_bytes($stat, $bytes);
	$off = log_mark($node);
	my $started = ng_start($node);
	my @problems;
	if (!$started)
	{
		push @problems, 'server did not start';
	}
	else
	{
		$node->wait_for_log(
			qr/pg_stat_statements_ng: (ignoring saved statistics|restored statistics)/, $off);
		my @lines = grep { /pg_stat_statements_ng: (ignoring saved statistics|restored statistics)/ }
		  split /\n/, log_since($node, $off);
		push @problems, scalar(@lines) . ' lines: ' . join(' / ', @lines)
		  if @lines != 1;
		push @problems, "line does not match $reason: $lines[0]"
		  if @lines && $lines[0] !~ $reason;
		push @problems, 'not a LOG line: ' . $lines[0]
		  if @lines
		  && $lines[0] !~
		  /LOG:  pg_stat_statements_ng: ignoring saved statistics in "pg_stat\/pg_stat_statements_ng.stat": /;
		push @problems, 'file not removed' if -e $stat;
		my $count = $node->safe_psql('postgres', $count_sql);
		push @problems, "$count rows" if $count ne '0';
	}
	if (@problems) { push @bad, "$name: " . join('; ', @problems) }
	else { $n_ok++ }
	last unless $started;
}
is($n_ok, scalar(@cases),
	"every damaged file rejected with one line, empty, removed ($n_ok of "
	  . scalar(@cases) . ')')
  or diag join("\n", @bad[ 0 .. ($#bad < 20 ? $#bad : 19) ]);
is(count_since($node, $first_off, qr/ignoring saved statistics/), scalar(@cases),
	'one rejection line per case in the whole log');
is(count_since($node, $first_off, qr/restored statistics|TRAP|terminated by signal|server process .* was terminated/), 0,
	'nothing restored, no crash');
note scalar(@cases) . ' cases: ' . scalar(@cuts) . ' truncations, ' . ($quick ? 50 : 200) . ' flips';

# a format 5 file (this one without what follows the entries) restores
$node->stop;
write_bytes($stat, with_crc(patch(substr($body, 0, $X), 4, pack('L', 5))));
$off = log_mark($node);
ok(ng_start($node), 'server starts with a format 5 file');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of $N statements/, $off);
is($node->safe_psql('postgres',
		'SELECT queryid, calls FROM pg_stat_statements_ng ORDER BY queryid'),
	$rows_before, 'a format 5 file restores every row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements_ng_errors'),
	'0', 'and no SQLSTATE (it has none)');

# a format 6 file (this one without the plan rows) restores, without plans
$node->stop;
write_bytes($stat, with_crc(patch(substr($body, 0, $P), 4, pack('L', 6))));
$off = log_mark($node);
ok(ng_start($node), 'server starts with a format 6 file');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of $N statements/, $off);
is($node->safe_psql('postgres',
		'SELECT queryid, calls FROM pg_stat_statements_ng ORDER BY queryid'),
	$rows_before, 'a format 6 file restores every row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements_ng_plans'),
	'0', 'and no plan row (it has none)');

# and the valid file still restores at the end
$node->stop;
write_bytes($stat, $valid);
$off = log_mark($node);
ok(ng_start($node), 'server starts');
$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of $N statements/, $off);
is($node->safe_psql('postgres',
		'SELECT queryid, calls FROM pg_stat_statements_ng ORDER BY queryid'),
	$rows_before, 'the valid file still restores every row');
is( $node->safe_psql('postgres',
		'SELECT sqlstate, errors FROM pg_stat_statements_ng_errors'),
	'22012|1', 'and the SQLSTATE of the statement that failed');

$node->stop;
done_testing();
