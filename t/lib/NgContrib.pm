# NgContrib.pm -- what the tests of the drop-in and of contrib's
# pg_stat_statements beside ours share (t/030_dropin_compare.pl to
# t/038): where contrib's library and the drop-in are, the drop-in's
# configuration lines, contrib's view columns.  Loaded with "use NgContrib;"
# (t/lib is on prove's include path); it changes nothing of the test process.
#
# Where contrib's files are: on 18 they stay where contrib installed them
# (the drop-in has a directory of its own).  On 15 to 17, make install-dropin
# moves them into a backup directory and puts the drop-in in their place;
# contrib's library still loads from there by its absolute path, and the
# SQL functions of an extension named pg_stat_statements (then the
# drop-in's, which have exactly contrib's signatures and C symbols) can be
# pointed at it.  So both tests run on every major that has contrib's
# library, and skip, saying so, where it is missing.
package NgContrib;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils ();

our @EXPORT =
  qw(pg_config_value contrib_library dropin_conf point_at_contrib contrib_columns);

# pg_config_value(option): pg_config's answer, e.g. 'sharedir'
sub pg_config_value
{
	my ($option) = @_;
	my $out;
	IPC::Run::run([ 'pg_config', "--$option" ], '>', \$out)
	  or die "pg_config --$option failed";
	chomp $out;
	return $out;
}

# contrib_library(): (what shared_preload_libraries names to load contrib's
# library, the directory of its control file if it was moved aside, else
# undef), or () if contrib's library is not installed at all.
sub contrib_library
{
	my $lib = pg_config_value('pkglibdir') . '/pg_stat_statements.so';
	my $backup = pg_config_value('sharedir')
	  . '/extension/pg_stat_statements_contrib_backup';
	return ('pg_stat_statements', undef) if -f $lib && !-l $lib;
	return ("$backup/pg_stat_statements.so", $backup)
	  if -f "$backup/pg_stat_statements.so";
	return ();
}

# dropin_conf(): the configuration lines a cluster needs to find the
# drop-in (18: its own directory; 15 to 17: none, it is in contrib's place),
# or undef if the drop-in is not installed.
sub dropin_conf
{
	my $share = pg_config_value('sharedir');
	my $own = "$share/pg_stat_statements_ng_dropin";
	return "extension_control_path = '$own:\$system'\n"
	  . "dynamic_library_path = '$own/lib:\$libdir'\n"
	  if -f "$own/extension/pg_stat_statements.control";
	my $control = "$share/extension/pg_stat_statements.control";
	return ''
	  if -f $control
	  && PostgreSQL::Test::Utils::slurp_file($control) =~ /pg_stat_statements_ng/;
	return undef;
}

# point_at_contrib(node, db, library): after CREATE EXTENSION
# pg_stat_statements created the drop-in's objects, make its C functions
# call contrib's library at that absolute path (already preloaded from
# there, so the same loaded library answers).  A catalog update, for the
# test only: no DDL can change a C function's library.
sub point_at_contrib
{
	my ($node, $db, $lib) = @_;
	$node->safe_psql($db,
		"UPDATE pg_proc SET probin = '$lib' WHERE probin = '\$libdir/pg_stat_statements'");
	return;
}

# contrib_columns(dir): the OUT columns of pg_stat_statements(boolean), and
# so of the view, that contrib's own scripts in dir create at the default
# version of its control file: ([name, type], ...) in order, types as
# written.  Read from the last script up to that version defining it.
sub contrib_columns
{
	my ($dir) = @_;
	my $vnum = sub { my @p = split /\./, shift; return $p[0] * 1000 + $p[1]; };
	my ($default) = PostgreSQL::Test::Utils::slurp_file("$dir/pg_stat_statements.control")
	  =~ /^default_version = '([^']+)'/m;
	my ($best, $best_v);
	foreach my $f (glob("$dir/pg_stat_statements--*.sql"))
	{
		my ($v) = $f =~ /--([0-9.]+)\.sql$/ or next;
		next if $vnum->($v) > $vnum->($default);
		next if defined $best_v && $vnum->($v) < $best_v;
		my $sql = PostgreSQL::Test::Utils::slurp_file($f);
		next unless $sql =~ /CREATE FUNCTION pg_stat_statements\(IN showtext boolean,(.*?)\)\s*RETURNS/s;
		($best, $best_v) = ($1, $vnum->($v));
	}
	die "no script in $dir defines pg_stat_statements(boolean)" unless defined $best;
	my @cols;
	push @cols, [ $1, $2 ] while $best =~ /\bOUT\s+(\w+)\s+([^,]+?)\s*(?:,|$)/g;
	return @cols;
}

1;
