# NgPersist.pm -- what the tests of the saved statistics file share
# (t/020_persist.pl to t/025, t/060, t/061, t/063, t/091, t/094): the log read
# per server start, the file's bytes, its CRC and its layout.  Loading it
# changes nothing of the test process; the node itself comes from NgNode.
#
# - $STAT_FILE, $TMP_FILE: the saved file and its temporary, relative to the
#   data directory.
# - log_mark(node) before a start; log_since(node, offset) and
#   count_since(node, offset, regexp) after it: the log, or the number of
#   its lines matching, written since.
# - read_bytes(path), write_bytes(path, bytes): a file's bytes.
# - crc32c(bytes): the CRC PostgreSQL's CRC-32C macros compute.
# - ng_file_layout(bytes): the layout of a saved file (below).
# - ng_history_file_downgrade(path, format): the history's file (format 3)
#   rewritten as an older format (below), for t/091 and t/094.
package NgPersist;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(
  $STAT_FILE $TMP_FILE
  log_mark log_since count_since
  read_bytes write_bytes crc32c ng_file_layout
  ng_history_file_downgrade
);


# relative to the data directory
our $STAT_FILE = 'pg_stat/pg_stat_statements_ng.stat';
our $TMP_FILE = 'pg_stat/pg_stat_statements_ng.stat.tmp';

sub log_mark
{
	my ($node) = @_;
	return -s $node->logfile // 0;
}

sub log_since
{
	my ($node, $offset) = @_;
	return slurp_file($node->logfile, $offset);
}

# count_since(node, offset, regexp): lines of the log after offset that match
sub count_since
{
	my ($node, $offset, $re) = @_;
	return scalar(grep { /$re/ } split /\n/, log_since($node, $offset));
}

sub read_bytes
{
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or die "could not open $path: $!";
	local $/;
	my $data = <$fh>;
	close $fh;
	return $data;
}

sub write_bytes
{
	my ($path, $data) = @_;
	open(my $fh, '>:raw', $path) or die "could not create $path: $!";
	print $fh $data or die "could not write $path: $!";
	close $fh or die "could not close $path: $!";
	return;
}

# CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as PostgreSQL's
# INIT_CRC32C / COMP_CRC32C / FIN_CRC32C compute it
my @crc_table;
for my $i (0 .. 255)
{
	my $c = $i;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	push @crc_table, $c;
}

sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	$crc = $crc_table[ ($crc ^ $_) & 0xFF ] ^ ($crc >> 8)
	  for unpack('C*', $data);
	return $crc ^ 0xFFFFFFFF;
}

# ng_file_layout(bytes): find the layout of a dump file without trusting
# the C structs to stay as they are today: the header's size (its last
# field is the uint64 entry count) and each entry's fixed size, with its
# int32 text length at the end of the fixed part (before any padding), are
# the ones for which walking the entries ends exactly at the CRC trailer
# (from format 6, at the failures by SQLSTATE that follow them: the lost
# figure, their count, and 144 bytes each; from format 7, at the plan rows
# that follow those: two figures, their count, and 96 bytes each and
# their texts).
# Returns a hash (header_size, entry_size, text_len_at, nentries, entries
# => [ { at, text_len, text } ], errors_at, nerrors, plans_at, nplans,
# plans => [ { at, text_len } ]) or undef.
sub ng_file_layout
{
	my ($data) = @_;
	my $size = length($data);
	my $body = $size - 4;
	return undef if $body < 24;
	my $format = unpack('L', substr($data, 4, 4));
	my $counters_size = unpack('L', substr($data, 12, 4));

	for (my $h = 24; $h <= 1024 && $h <= $body; $h += 8)
	{
		my $n = unpack('Q', substr($data, $h - 8, 8));
		next if $n > $body;
		for my $e ($counters_size + 32 .. $counters_size + 128)
		{
			next if $e % 8;
			# from format 4 the fixed part ends with text_len and hist_mask,
			# and the histogram groups (128 bytes each) come before the text
			for my $tl ($format >= 4 ? ($e - 8) : ($e - 4, $e - 8))
			{
				my $pos = $h;
				my @entries;
				my $ok = 1;
				for my $i (1 .. $n)
				{
					if ($pos + $e > $body) { $ok = 0; last; }
					my $len = unpack('l', substr($data, $pos + $tl, 4));
					my $hist = 0;
					if ($format >= 4)
					{
						my $mask = unpack('L', substr($data, $pos + $e - 4, 4));
						$hist = 128 * unpack('%32b*', pack('L', $mask));
					}
					if ($len < -1
						|| $pos + $e + $hist + ($len > 0 ? $len : 0) > $body)
					{
						$ok = 0;
						last;
					}
					my $text =
					  $len > 0 ? substr($data, $pos + $e + $hist, $len) : '';
					push @entries,
					  {
						at => $pos,
						hist_len => $hist,
						text_len => $len,
						text => $text
					  };
					$pos += $e + $hist + ($len > 0 ? $len : 0);
				}
				next unless $ok;
				my ($errors_at, $nerrors) = ($pos, 0);
				if ($format >= 6)
				{
					next if $pos + 16 > $body;
					$nerrors = unpack('Q', substr($data, $pos + 8, 8));
					next if $nerrors > $body;
					$pos += 16 + 144 * $nerrors;
				}
				my ($plans_at, $nplans, @plans) = ($pos, 0);
				if ($format >= 7)
				{
					# the plan info figures, the count, then 96 bytes per
					# plan row (its text length at +88), each with its text
					next if $pos + 24 > $body;
					$nplans = unpack('Q', substr($data, $pos + 16, 8));
					next if $nplans > $body;
					$pos += 24;
					for my $i (1 .. $nplans)
					{
						if ($pos + 96 > $body) { $ok = 0; last; }
						my $len = unpack('l', substr($data, $pos + 88, 4));
						if ($len < -1 || $pos + 96 + ($len > 0 ? $len : 0) > $body)
						{
							$ok = 0;
							last;
						}
						push @plans, { at => $pos, text_len => $len };
						$pos += 96 + ($len > 0 ? $len : 0);
					}
					next unless $ok;
				}
				next unless $pos == $body;
				return {
					header_size => $h,
					entry_size => $e,
					text_len_at => $tl,
					nentries => $n,
					entries => \@entries,
					errors_at => $errors_at,
					nerrors => $nerrors,
					plans_at => $plans_at,
					nplans => $nplans,
					plans => \@plans,
				};
			}
		}
	}
	return undef;
}

# ng_history_file_downgrade(path, format): the history's file at path, of
# format 3 (a header of 64 bytes; windows of a 32-byte header, their
# statement rows, wait rows and plan rows; a CRC-32C), rewritten as format 2
# (no plan rows: window headers of 24 bytes) or 1 (no wait rows either, the
# wait row size 0), its CRC made again.  Returns the number of windows and
# of the wait and plan rows dropped; dies unless the walk ends at the CRC.
sub ng_history_file_downgrade
{
	my ($path, $format) = @_;
	my $bytes = read_bytes($path);
	my @h = unpack('L6 q4 L2', $bytes);
	die "$path is of format $h[1], not 3" unless $h[1] == 3;
	my ($row_size, $wait_size, $nwindows, $plan_size) = @h[ 3, 5, 6, 10 ];
	my $keep_waits = $format >= 2;
	my $old = pack('L6 q4', $h[0], $format, @h[ 2 .. 4 ],
		$keep_waits ? $wait_size : 0, @h[ 6 .. 9 ]);
	my ($at, $waits_dropped, $plans_dropped) = (64, 0, 0);
	for (1 .. $nwindows)
	{
		my ($start, $end, $nrows, $nwaits, $nplans) =
		  unpack('q2 l3', substr($bytes, $at, 32));
		my $kept_waits = $keep_waits ? $nwaits : 0;
		$old .= pack('q2 l2', $start, $end, $nrows, $kept_waits);
		$old .= substr($bytes, $at + 32,
			$nrows * $row_size + $kept_waits * $wait_size);
		$at += 32 + $nrows * $row_size + $nwaits * $wait_size +
		  $nplans * $plan_size;
		$waits_dropped += $nwaits - $kept_waits;
		$plans_dropped += $nplans;
	}
	die "$path: the walk of its windows ended at $at, not at its CRC"
	  unless $at == length($bytes) - 4;
	write_bytes($path, $old . pack('L', crc32c($old)));
	return ($nwindows, $waits_dropped, $plans_dropped);
}

1;
