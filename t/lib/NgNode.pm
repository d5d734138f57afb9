# NgNode.pm -- the node setup the TAP tests share, and the few helpers they
# all use.  The Makefile puts t/lib on prove's include path (PROVE_FLAGS),
# so a test says:
#
#   use NgNode;
#   my $node = ng_node('name', 'pg_stat_statements_ng.track' => 'all');
#
# Loading this module changes nothing of the test process (no environment
# variable, no setting): a test that wants its own reads left out of the
# statistics says so itself, e.g.
#   $ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';
# and runs its workload through ng_tracked().
#
# Functions (all exported):
#
# ng_init_node(name, settings and options)
#     A PostgreSQL::Test::Cluster, initialized, not started, whose
#     postgresql.conf has shared_preload_libraries = 'pg_stat_statements_ng'
#     and then each setting, in the order given, as name = 'value'.
#     Settings are pairs (name => value); the pairs whose name starts with
#     '-' are options instead:
#       -init => { ... }     parameters for init (e.g. allows_streaming => 1)
#       -conf => 'text'      lines appended as they are, before the settings
#                            (e.g. the drop-in's paths, see NgContrib)
#       -preload => 'lib'    what shared_preload_libraries names (default
#                            pg_stat_statements_ng; '' for none)
#       -extension => 'name' for ng_node: the extension created
#                            (default pg_stat_statements_ng; '' for none)
#
# @NG_SMALL
#     Settings pairs for a node that restarts fast: small shared buffers,
#     few connections, no autovacuum, LOG messages in the log.  Settings
#     given after them win (the last line of postgresql.conf does).
#
# ng_start(node)
#     Starts it; with PGSSNG_SERVER_LD_PRELOAD set (scripts/asan-persist.sh),
#     the server, and only the server, gets that LD_PRELOAD.  Returns true if
#     the server started (a failure to start is the caller's to report).
#
# ng_node(name, settings and options)
#     ng_init_node, ng_start (dying if the server does not start), and
#     CREATE EXTENSION in database postgres.  Returns the started node.
#
# ng_tracked(node, db, sql, user)
#     Runs sql in db (safe_psql) in a session whose statements are tracked:
#     PGOPTIONS cleared for it; user, if given, is the session's PGUSER.
#     Returns the output.
#
# ng_value(node, column, from)
#     One value: SELECT column FROM from (default pg_stat_statements_ng_info)
#     in database postgres, e.g. ng_value($node, 'dealloc').
#
# ng_has_debug_fault(node)
#     Whether the server has pg_stat_statements_ng.debug_fault (assertion
#     builds only): the tests that inject faults skip without it.
package NgNode;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(
  @NG_SMALL ng_init_node ng_start ng_node ng_tracked ng_value
  ng_has_debug_fault
);

our @NG_SMALL = (
	shared_buffers => '1MB',
	max_connections => 20,
	autovacuum => 'off',
	log_min_messages => 'log');

# the pairs of @args split into (options hash, settings list)
sub split_args
{
	my (@args) = @_;
	die 'settings come in pairs' if @args % 2;
	my (%opt, @settings);
	while (my ($k, $v) = splice(@args, 0, 2))
	{
		if ($k =~ /^-/) { $opt{$k} = $v; }
		else { push @settings, $k, $v; }
	}
	return (\%opt, @settings);
}

sub ng_init_node
{
	my ($name, @args) = @_;
	my ($opt, @settings) = split_args(@args);
	my %known = map { $_ => 1 } qw(-init -conf -preload -extension);
	$known{$_} or die "ng_init_node: unknown option $_" for keys %$opt;

	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opt->{-init} // {} });
	my $preload = $opt->{-preload} // 'pg_stat_statements_ng';
	my $conf = "\n";
	$conf .= "shared_preload_libraries = '$preload'\n" if $preload ne '';
	$conf .= $opt->{-conf} // '';
	while (my ($k, $v) = splice(@settings, 0, 2))
	{
		(my $quoted = $v) =~ s/'/''/g;
		$conf .= "$k = '$quoted'\n";
	}
	$node->append_conf('postgresql.conf', $conf);
	return $node;
}

sub ng_start
{
	my ($node) = @_;
	local $ENV{LD_PRELOAD} = $ENV{PGSSNG_SERVER_LD_PRELOAD}
	  if $ENV{PGSSNG_SERVER_LD_PRELOAD};
	return $node->start(fail_ok => 1);
}

sub ng_node
{
	my ($name, @args) = @_;
	my ($opt) = split_args(@args);
	my $node = ng_init_node($name, @args);
	ng_start($node) or die "node $name did not start";
	my $ext = $opt->{-extension} // 'pg_stat_statements_ng';
	$node->safe_psql('postgres', "CREATE EXTENSION $ext") if $ext ne '';
	return $node;
}

sub ng_tracked
{
	my ($node, $db, $sql, $user) = @_;
	local $ENV{PGOPTIONS} = '';
	local $ENV{PGUSER} = $user if defined $user;
	return $node->safe_psql($db, $sql);
}

sub ng_value
{
	my ($node, $column, $from) = @_;
	$from //= 'pg_stat_statements_ng_info';
	return $node->safe_psql('postgres', "SELECT $column FROM $from");
}

sub ng_has_debug_fault
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT current_setting('pg_stat_statements_ng.debug_fault', true) IS NULL"
	) ne 't';
}

1;
