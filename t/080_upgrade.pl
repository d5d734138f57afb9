# Upgrades between versions of our own SQL objects: an extension
# created at an older version and brought to the default version with
# ALTER EXTENSION ... UPDATE has exactly the objects and grants of a fresh
# install of the default version.
#
# 1. pg_stat_statements_ng: from every installable version older than the
#    default (pg_available_extension_versions), updated, against a fresh
#    install.
# 2. The drop-in (the extension named pg_stat_statements, when make
#    install-dropin installed it): from its oldest installable version,
#    updated, against a fresh install of its default version; and its fresh
#    install against contrib's own fresh install of the same major, from
#    contrib's files: on 18 those beside the drop-in (left in place), on 15 to
#    17 those install-dropin moved into its backup directory, put back in a
#    private copy of the installation (bin, share, lib: links to the
#    original files, real copies of the programs that locate their
#    installation from their own path) that a second node runs from, so the
#    shared tree is not touched.
#
# The comparison is a dump of each member of the extension: a function's
# full signature with argument names and defaults, result type, kind,
# volatility, parallel safety, strictness, security, set-returning, cost and
# rows, language, C symbol and library, ACL; a relation's kind, columns and
# their types, view definition, ACL; any other member by its description;
# and the initial privileges (pg_init_privs) of every member.  The test
# also checks that the dump sees a changed grant and an added member.
use strict;
use warnings FATAL => 'all';

use File::Copy;
use FindBin;
use File::Path qw(make_path rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# the dump of extension $ext's members in database $db, one line each
sub ext_dump
{
	my ($node, $db, $ext, $pre) = @_;
	my $members = qq{
		SELECT d.classid, d.objid FROM pg_depend d
		JOIN pg_extension e ON e.oid = d.refobjid
		WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		  AND e.extname = '$ext'};
	return $node->safe_psql(
		$db, ($pre // '') . qq{
		WITH m AS ($members)
		SELECT 'function ' || p.oid::regprocedure::text
			|| ' (' || pg_get_function_arguments(p.oid) || ')'
			|| ' returns ' || pg_get_function_result(p.oid)
			|| ' kind=' || p.prokind::text || ' volatile=' || p.provolatile::text
			|| ' parallel=' || p.proparallel::text || ' strict=' || p.proisstrict
			|| ' secdef=' || p.prosecdef || ' retset=' || p.proretset
			|| ' cost=' || p.procost || ' rows=' || p.prorows
			|| ' lang=' || l.lanname || ' src=' || p.prosrc
			|| ' bin=' || coalesce(p.probin, '-')
			|| ' acl=' || coalesce(p.proacl::text, 'default')
		FROM m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
		JOIN pg_language l ON l.oid = p.prolang
		UNION ALL
		SELECT 'relation ' || c.oid::regclass::text || ' kind=' || c.relkind::text
			|| ' acl=' || coalesce(c.relacl::text, 'default')
			|| ' columns=' || (SELECT string_agg(a.attname || ' '
					|| format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
				FROM pg_attribute a
				WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
			|| ' definition=' || coalesce(regexp_replace(pg_get_viewdef(c.oid), '\\s+', ' ', 'g'), '-')
		FROM m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
		UNION ALL
		SELECT 'member ' || pg_describe_object(m.classid, m.objid, 0)
		FROM m WHERE m.classid NOT IN ('pg_proc'::regclass, 'pg_class'::regclass)
		UNION ALL
		SELECT 'initial privileges ' || pg_describe_object(i.classoid, i.objoid, i.objsubid)
			|| ' ' || i.privtype::text || ' ' || i.initprivs::text
		FROM pg_init_privs i JOIN m ON m.classid = i.classoid AND m.objid = i.objoid
		ORDER BY 1});
}

# same_dump(got, expected, name): one test; on a difference, the lines only
# one side has
sub same_dump
{
	my ($got, $expected, $name) = @_;
	return pass($name) if $got eq $expected;
	my %e = map { $_ => 1 } split /\n/, $expected;
	my %g = map { $_ => 1 } split /\n/, $got;
	fail($name);
	diag("only in got: $_") for grep { !$e{$_} } split /\n/, $got;
	diag("only in expected: $_") for grep { !$g{$_} } split /\n/, $expected;
	return 0;
}

# installable versions of $ext, oldest first, and its default version
sub versions
{
	my ($node, $db, $ext, $pre) = @_;
	my @v = split /\n/, $node->safe_psql(
		$db, ($pre // '') . qq{
		SELECT version FROM pg_available_extension_versions
		WHERE name = '$ext'
		ORDER BY string_to_array(version, '.')::int[]});
	my $default = $node->safe_psql($db, ($pre // '')
		  . "SELECT default_version FROM pg_available_extensions WHERE name = '$ext'");
	return ($default, @v);
}

my ($stdout, $stderr);
IPC::Run::run([ 'pg_config', '--sharedir' ], '>', \$stdout);
chomp(my $share = $stdout);
my $own_dir = "$share/pg_stat_statements_ng_dropin";
my $control = "$share/extension/pg_stat_statements.control";
my $dropin = '';
my $dropin_conf = '';
if (-f "$own_dir/extension/pg_stat_statements.control")
{
	$dropin = 'own directory';
	$dropin_conf = "extension_control_path = '$own_dir:\$system'\n"
	  . "dynamic_library_path = '$own_dir/lib:\$libdir'\n";
}
elsif (-f $control && slurp_file($control) =~ /pg_stat_statements_ng/)
{
	$dropin = 'in place';
}

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf(
	'postgresql.conf', qq(
shared_preload_libraries = 'pg_stat_statements_ng'
shared_buffers = 1MB
max_connections = 20
autovacuum = off
) . $dropin_conf);
$node->start;

# ---- 1. our extension
my ($default, @all) = versions($node, 'postgres', 'pg_stat_statements_ng');
my @older = grep { $_ ne $default } @all;
ok(scalar(@older) >= 1, "versions older than $default: @older");
is($all[-1], $default, "the default version $default is the newest");

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION pg_stat_statements_ng');
my $fresh = ext_dump($node, 'fresh', 'pg_stat_statements_ng');
like($fresh, qr/^function pg_stat_statements_ng\(boolean\)/m,
	'the dump lists functions with their signatures');
like($fresh, qr/^relation pg_stat_statements_ng kind=v .*columns=userid oid, dbid oid/m,
	'the dump lists views with their columns');

for my $from (@older)
{
	my $db = 'from_' . ($from =~ s/\./_/gr);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db,
		"CREATE EXTENSION pg_stat_statements_ng VERSION '$from'");
	is($node->safe_psql($db,
			"SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements_ng'"),
		$from, "created at $from");
	$node->safe_psql($db, 'ALTER EXTENSION pg_stat_statements_ng UPDATE');
	is($node->safe_psql($db,
			"SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements_ng'"),
		$default, "$from updated to $default");
	same_dump(ext_dump($node, $db, 'pg_stat_statements_ng'),
		$fresh, "$from updated to $default: the objects and grants of a fresh $default");
	# the updated extension works
	is($node->safe_psql($db,
			"SELECT count(*) >= 0 FROM pg_stat_statements_ng; SELECT entries >= 0 FROM pg_stat_statements_ng_info"),
		"t\nt", "$from updated: its views read");
}

# the dump sees a grant and a member that a fresh install does not have
$node->safe_psql('postgres', 'CREATE DATABASE changed');
$node->safe_psql('changed', 'CREATE EXTENSION pg_stat_statements_ng');
$node->safe_psql('changed',
	'GRANT EXECUTE ON FUNCTION pg_stat_statements_ng_reset(oid, oid, bigint, boolean) TO pg_monitor');
isnt(ext_dump($node, 'changed', 'pg_stat_statements_ng'),
	$fresh, 'the dump sees a grant');
$node->safe_psql('changed',
	'REVOKE EXECUTE ON FUNCTION pg_stat_statements_ng_reset(oid, oid, bigint, boolean) FROM pg_monitor');
is(ext_dump($node, 'changed', 'pg_stat_statements_ng'),
	$fresh, 'and its revoke');
$node->safe_psql('changed',
	'CREATE FUNCTION extra() RETURNS int LANGUAGE sql AS $$SELECT 1$$;'
	  . ' ALTER EXTENSION pg_stat_statements_ng ADD FUNCTION extra()');
isnt(ext_dump($node, 'changed', 'pg_stat_statements_ng'),
	$fresh, 'the dump sees an added member');

# ---- 2. the drop-in
SKIP:
{
	skip 'the drop-in is not installed (make install-dropin)', 1 unless $dropin;

	my ($pdefault, @pall) = versions($node, 'postgres', 'pg_stat_statements');
	my $oldest = $pall[0];
	is($pall[-1], $pdefault, "drop-in: the default version $pdefault is the newest");
	ok(scalar(@pall) >= 2, "drop-in: installable versions @pall");

	$node->safe_psql('postgres', 'CREATE DATABASE pgss_fresh');
	$node->safe_psql('pgss_fresh', 'CREATE EXTENSION pg_stat_statements');
	my $pfresh = ext_dump($node, 'pgss_fresh', 'pg_stat_statements');
	like($pfresh, qr/^function pg_stat_statements\(boolean\)/m,
		'drop-in: the dump lists pg_stat_statements(boolean)');

	$node->safe_psql('postgres', 'CREATE DATABASE pgss_updated');
	$node->safe_psql('pgss_updated',
		"CREATE EXTENSION pg_stat_statements VERSION '$oldest'");
	$node->safe_psql('pgss_updated', 'ALTER EXTENSION pg_stat_statements UPDATE');
	is($node->safe_psql('pgss_updated',
			"SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'"),
		$pdefault, "drop-in: $oldest updated to $pdefault");
	same_dump(ext_dump($node, 'pgss_updated', 'pg_stat_statements'),
		$pfresh, "drop-in: $oldest updated to $pdefault: the objects and grants of a fresh $pdefault");
	is($node->safe_psql('pgss_updated', 'SELECT count(*) >= 0 FROM pg_stat_statements'),
		't', 'drop-in: the updated view reads');

	# From contrib 1.0, the oldest version a database carried over by
	# pg_upgrade can have (no one can create it: neither contrib nor the
	# drop-in ships its base script).  Where extension files can be looked
	# up in a directory of our own (18's extension_control_path), a private
	# copy of the drop-in's files plus 1.0's base script, written by
	# scripts/gen-dropin.py --oldest, creates it; then the update chain
	# must give a fresh install's objects.  The scripts are the same on
	# every major.
	SKIP:
	{
		skip 'creating 1.0 needs extension_control_path (18 and later)', 3
		  unless $dropin eq 'own directory';
		my $priv = PostgreSQL::Test::Utils::tempdir . '/dropin10';
		make_path("$priv/extension");
		copy($_, "$priv/extension/") or die "copy $_: $!"
		  for glob("$own_dir/extension/pg_stat_statements*");
		my $gen = "$FindBin::RealBin/../scripts/gen-dropin.py";
		IPC::Run::run([ 'python3', $gen, '--oldest', "$priv/extension" ],
			'>', \$stdout, '2>', \$stderr)
		  or die "gen-dropin.py --oldest: $stderr";
		my $pre10 = "SET extension_control_path = '$priv:\$system'; ";
		$node->safe_psql('postgres', 'CREATE DATABASE pgss_from_1_0');
		$node->safe_psql('pgss_from_1_0',
			$pre10 . "CREATE EXTENSION pg_stat_statements VERSION '1.0'");
		is($node->safe_psql('pgss_from_1_0',
				"SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'"),
			'1.0', 'drop-in: created at contrib 1.0');
		$node->safe_psql('pgss_from_1_0',
			$pre10 . 'ALTER EXTENSION pg_stat_statements UPDATE');
		same_dump(ext_dump($node, 'pgss_from_1_0', 'pg_stat_statements'),
			$pfresh, "drop-in: 1.0 updated to $pdefault: the objects and grants of a fresh $pdefault");
		is($node->safe_psql('pgss_from_1_0', 'SELECT count(*) >= 0 FROM pg_stat_statements'),
			't', 'drop-in: the view updated from 1.0 reads');
	}

	# contrib's own fresh install of this major
	my ($cnode, $cdb, $cpre);
	if ($dropin eq 'own directory')
	{
		# contrib's files are where they were: a session without the
		# drop-in's paths finds them
		($cnode, $cdb) = ($node, 'contrib');
		$cpre = q{SET extension_control_path = '$system'; SET dynamic_library_path = '$libdir'; };
		$node->safe_psql('postgres', 'CREATE DATABASE contrib');
	}
	else
	{
		my $copy = private_contrib_install();
		if ($copy)
		{
			$cnode = PostgreSQL::Test::Cluster->new('contrib', install_path => $copy);
			$cnode->init;
			$cnode->start;
			$cdb = 'postgres';
			$cpre = '';
		}
	}
	SKIP:
	{
		skip "no copy of contrib's pg_stat_statements files found", 3 unless $cnode;
		is($cnode->safe_psql($cdb, $cpre
				  . "SELECT comment NOT LIKE '%pg_stat_statements_ng%', default_version"
				  . " FROM pg_available_extensions WHERE name = 'pg_stat_statements'"),
			"t|$pdefault", "contrib's own pg_stat_statements $pdefault, not the drop-in");
		$cnode->safe_psql($cdb, $cpre . 'CREATE EXTENSION pg_stat_statements');
		is($cnode->safe_psql($cdb, $cpre
				  . "SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'"),
			$pdefault, "contrib's extension created at $pdefault");
		same_dump(ext_dump($cnode, $cdb, 'pg_stat_statements', $cpre),
			$pfresh, "drop-in $pdefault: the objects and grants of contrib's $pdefault");
		$cnode->stop if $cnode != $node;
	}
}

$node->stop;
done_testing();

# A private copy of this installation's bin, share and lib directories
# (their layout kept relative to each other, so the copied server finds its
# share directory), with contrib's pg_stat_statements files moved back from
# install-dropin's backup directory in place of the drop-in's.  Returns the
# directory to use as a node's install_path (the parent of bin), or undef if
# there is no backup of contrib's files.
sub private_contrib_install
{
	my %dir;
	for my $what (qw(bindir sharedir pkglibdir))
	{
		IPC::Run::run([ 'pg_config', "--$what" ], '>', \$stdout);
		chomp($dir{$what} = $stdout);
	}
	my $backup = "$dir{sharedir}/extension/pg_stat_statements_contrib_backup";
	return undef unless -f "$backup/pg_stat_statements.control";

	# the longest common parent of the three
	my @common = split m{/}, $dir{bindir};
	for my $d (values %dir)
	{
		my @p = split m{/}, $d;
		my $i = 0;
		$i++ while $i < @common && $i < @p && $common[$i] eq $p[$i];
		splice(@common, $i);
	}
	my $prefix = join('/', @common);
	my $root = PostgreSQL::Test::Utils::tempdir('contrib_install');
	my %copy;
	for my $what (keys %dir)
	{
		(my $rel = $dir{$what}) =~ s{^\Q$prefix\E}{};
		$copy{$what} = "$root$rel";
		make_path($copy{$what} =~ s{/[^/]+$}{}r);
		# symbolic links to every file (cheap), then real copies of the
		# programs that find their installation from their own path
		system('cp', '-as', $dir{$what}, $copy{$what}) == 0
		  or die "cp -as $dir{$what} $copy{$what} failed";
	}
	for my $prog (qw(postgres initdb pg_ctl pg_config))
	{
		unlink "$copy{bindir}/$prog";
		copy("$dir{bindir}/$prog", "$copy{bindir}/$prog")
		  or die "copy $prog: $!";
		chmod 0755, "$copy{bindir}/$prog";
	}
	my $ext = "$copy{sharedir}/extension";
	unlink "$ext/pg_stat_statements.control", glob("$ext/pg_stat_statements--*.sql"),
	  "$copy{pkglibdir}/pg_stat_statements.so";
	for my $f (glob("$ext/pg_stat_statements_contrib_backup/*"))
	{
		my $to = ($f =~ /\.so$/ ? $copy{pkglibdir} : $ext) . '/' . ($f =~ s{.*/}{}r);
		unlink $to;
		copy($f, $to) or die "copy $f to $to: $!";
	}
	rmtree("$ext/pg_stat_statements_contrib_backup");
	return $copy{bindir} =~ s{/bin$}{}r;
}
