# The saved statistics file is read without blocking and in bounded memory:
# a FIFO in its place is refused without opening it for
# good (the keeper never blocks, and a fast stop completes); a file larger
# than the settings could have written (max entries and slots, their fixed
# parts, query_text_memory of texts) is refused by its size, without being
# read; a file just within that bound is read in bounded pieces, its
# checksum fails, and the keeper's peak memory stays far below the file's
# size.  Each refusal is one LOG line; statistics start empty; the file is
# removed.
#
# The writer at shutdown: a FIFO or a symbolic link at the temporary file's
# name, or a directory at the stats file's name, is removed with one LOG line, and the
# statistics are saved (a fast stop completes).
use strict;
use warnings FATAL => 'all';

use POSIX ();
use Time::HiRes ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;

use NgNode;

# a stop that does not finish fails the test instead of waiting minutes
$ENV{PGCTLTIMEOUT} = 60;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $node = ng_init_node('special_files', @NG_SMALL);
ok(ng_start($node), 'server starts');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements_ng');
$node->stop;
my $stat = $node->data_dir . "/$STAT_FILE";
my $line_re = qr/pg_stat_statements_ng: (ignoring saved statistics|restored statistics)/;

# the keeper's pid: the postmaster's child that says it is the keeper
sub keeper_pid
{
	my $pm = $node->{_pid};
	for my $dir (glob('/proc/[0-9]*'))
	{
		my $stat = eval { read_bytes("$dir/stat") } // next;
		my $cmd = eval { read_bytes("$dir/cmdline") } // next;
		next unless $stat =~ /^\d+ \(.*\) \S (\d+) / && $1 == $pm;
		return ($dir =~ m{/(\d+)$})[0] if $cmd =~ /pg_stat_statements_ng keeper/;
	}
	return undef;
}

# peak resident memory of a process, in kB
sub peak_kb
{
	my ($pid) = @_;
	my $status = eval { read_bytes("/proc/$pid/status") } // return undef;
	return $status =~ /^VmHWM:\s+(\d+) kB/m ? $1 : undef;
}

# start with the file in place; wait (bounded) for the keeper's line; check
# one line, its reason, an empty view and the file removed; then a fast
# stop must complete.  Returns the line and the keeper's peak memory.
sub run_case
{
	my ($name, $reason, $unblock) = @_;
	my $off = log_mark($node);
	ok(ng_start($node), "$name: server starts");
	my $deadline = Time::HiRes::time() + 60;
	my @lines;
	while (Time::HiRes::time() < $deadline)
	{
		@lines = grep { /$line_re/ } split /\n/, log_since($node, $off);
		last if @lines;
		Time::HiRes::sleep(0.1);
	}
	is(scalar(@lines), 1, "$name: one line in the log");
	like($lines[0] // '', $reason, "$name: the reason");
	my $peak = peak_kb(keeper_pid() // 0);
	is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_statements_ng'),
		'0', "$name: statistics start empty");
	ok(!-e $stat && !-l $stat, "$name: the file is removed");
	my $t0 = Time::HiRes::time();
	my $stopped = $node->stop('fast', fail_ok => 1);
	ok($stopped, "$name: a fast stop completes");
	note sprintf('%s: stop took %.1f s, keeper peak %s kB',
		$name, Time::HiRes::time() - $t0, $peak // '?');
	if (!$stopped)
	{
		# let a keeper blocked in open() go, so that the server can stop
		$unblock->() if $unblock;
		$node->stop('fast');
	}
	return ($lines[0] // '', $peak);
}

sub sparse_file
{
	my ($size) = @_;
	open(my $fh, '>', $stat) or die "could not create $stat: $!";
	truncate($fh, $size) or die "could not extend $stat: $!";
	close $fh;
	return;
}

# --- a FIFO ------------------------------------------------------------------
unlink($stat);
POSIX::mkfifo($stat, 0600) or die "mkfifo $stat: $!";
my (undef, $base_peak) = run_case(
	'FIFO',
	qr/ignoring saved statistics in "pg_stat\/pg_stat_statements_ng.stat": not a regular file$/,
	sub {
		# a writer that opens and closes: the reader's open() returns
		if (sysopen(my $w, $stat, POSIX::O_WRONLY | POSIX::O_NONBLOCK)) { close $w }
	});

# --- too large, by its size alone -------------------------------------------
sparse_file(3 * 1024 * 1024 * 1024);
my ($line) = run_case('3 GB sparse file',
	qr/ignoring saved statistics in "pg_stat\/pg_stat_statements_ng.stat": file too large \(3221225472 bytes, at most \d+ bytes for these settings\)$/);
my ($bound) = $line =~ /at most (\d+) bytes/;
$bound //= 64 * 1024 * 1024;
note "bound: $bound bytes";

sparse_file($bound + 1);
run_case('one byte over the bound',
	qr/file too large \(@{[$bound + 1]} bytes, at most $bound bytes for these settings\)$/);

# --- just within the bound: read, in pieces --------------------------------
sparse_file($bound);
my (undef, $peak) = run_case('a file of exactly the bound', qr/: checksum mismatch$/);
SKIP:
{
	skip 'cannot read the keeper\'s peak memory', 1
	  unless defined $peak && defined $base_peak;
	cmp_ok($peak - $base_peak, '<', $bound / 1024 / 8,
		"reading $bound bytes raised the keeper's peak memory by less than 1/8 of that ($base_peak kB -> $peak kB)");
}

# --- the writer: what it finds at the names it writes ----------------------

my $tmp = $node->data_dir . "/$TMP_FILE";

# start, track a statement, put the obstacle in place, then a fast stop
# must complete, log one line about the obstacle, and save a regular file
sub save_case
{
	my ($name, $path, $make, $unblock) = @_;
	unlink($stat);
	ok(ng_start($node), "$name: server starts");
	ng_tracked($node, 'postgres', 'SELECT 1 AS saved_statement');
	$make->();
	my $off = log_mark($node);
	my $stopped = $node->stop('fast', fail_ok => 1);
	ok($stopped, "$name: a fast stop completes");
	if (!$stopped)
	{
		$unblock->() if $unblock;
		$node->stop('fast');
	}
	my $log = log_since($node, $off);
	my @removed = grep { /pg_stat_statements_ng: removed "\Q$path\E", which was not a regular file/ }
	  split /\n/, $log;
	is(scalar(@removed), 1, "$name: one line says it was removed");
	is(scalar(grep { /could not .*pg_stat_statements_ng\.stat/ } split /\n/, $log), 0,
		"$name: no failure logged");
	my $saved = -f $stat && !-l $stat;
	ok($saved, "$name: the statistics were saved in a regular file");
	ok(!-e $tmp && !-l $tmp, "$name: no temporary file is left");
	return unless $saved;
	$off = log_mark($node);
	ok(ng_start($node), "$name: server restarts");
	$node->wait_for_log(qr/pg_stat_statements_ng: restored statistics of \d+ statements/, $off);
	is($node->safe_psql('postgres',
			"SELECT calls FROM pg_stat_statements_ng WHERE query = 'SELECT \$1 AS saved_statement'"),
		'1', "$name: the saved statement is restored");
	$node->stop;
	return;
}

save_case(
	'FIFO at the temporary name', $TMP_FILE,
	sub { POSIX::mkfifo($tmp, 0600) or die "mkfifo $tmp: $!" },
	sub {
		# a reader that opens and drains: the writer's open() returns
		if (sysopen(my $r, $tmp, POSIX::O_RDONLY | POSIX::O_NONBLOCK))
		{
			my $buf;
			1 while sysread($r, $buf, 65536);
			close $r;
		}
	});
# a link is not followed: removed, and the file written in its place
save_case('symbolic link at the temporary name',
	$TMP_FILE, sub { symlink('/dev/null', $tmp) or die "symlink $tmp: $!" });
save_case('directory at the stats file\'s name',
	$STAT_FILE, sub { unlink($stat); mkdir($stat) or die "mkdir $stat: $!" });

done_testing();
