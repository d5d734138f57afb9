# A query text that cannot be shown in the reader's database encoding is
# shown in a safe form, never an ERROR for the whole read:
# the bytes that have no equivalent are written as \xNN.  Texts come from a
# SQL_ASCII database (bytes that are not UTF-8), a UTF-8 database (Chinese,
# and an e-acute that LATIN1 has); they are read from a UTF-8, a LATIN1 and
# a SQL_ASCII database, through the native view, changed_since and, where
# it is installed, the drop-in's view.  Every row is read, and each text is
# compared byte for byte (hex) with the expected form.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use NgPersist;
use NgContrib;

use NgNode;

# the drop-in, where installed
my $conf = dropin_conf();
my $dropin = defined $conf;

# the test's own reads are not tracked (its workload runs through ng_tracked)
$ENV{PGOPTIONS} = '-c pg_stat_statements_ng.track=none';

my $node = ng_init_node('foreign_encoding', @NG_SMALL, -conf => $conf // '');
ok(ng_start($node), 'server starts');

my %dbs = (ascii_db => 'SQL_ASCII', utf8_db => 'UTF8', latin1_db => 'LATIN1');
for my $db (sort keys %dbs)
{
	$node->safe_psql('postgres',
		"CREATE DATABASE $db ENCODING '$dbs{$db}' LOCALE 'C' TEMPLATE template0");
	$node->safe_psql($db, 'CREATE EXTENSION pg_stat_statements_ng');
	$node->safe_psql($db, 'CREATE EXTENSION pg_stat_statements') if $dropin;
}

# psql's client encoding is the database's (no terminal): the bytes below
# reach the server as they are
ng_tracked($node, 'ascii_db', qq{SELECT 1 AS "col\xe9\xff";});
ng_tracked($node, 'utf8_db',
	qq{SELECT 2 AS "\xe4\xb8\xad\xe6\x96\x87"; SELECT 3, 4 AS "caf\xc3\xa9";});
my $nrows = 3;

# expected texts, as bytes in the reader's encoding
my %expect = (
	utf8_db => [
		'SELECT $1 AS "col\xe9\xff"',                   # not UTF-8: escaped
		qq{SELECT \$1 AS "\xe4\xb8\xad\xe6\x96\x87"},   # as it is
		qq{SELECT \$1, \$2 AS "caf\xc3\xa9"},
	],
	latin1_db => [
		qq{SELECT \$1 AS "col\xe9\xff"},    # any byte is LATIN1
		'SELECT $1 AS "\xe4\xb8\xad\xe6\x96\x87"',    # no LATIN1 equivalent
		qq{SELECT \$1, \$2 AS "caf\xe9"},        # converted
	],
	ascii_db => [
		qq{SELECT \$1 AS "col\xe9\xff"},    # SQL_ASCII shows any byte
		qq{SELECT \$1 AS "\xe4\xb8\xad\xe6\x96\x87"},
		qq{SELECT \$1, \$2 AS "caf\xc3\xa9"},
	],
);

my @reads = (
	[ 'view', 'pg_stat_statements_ng' ],
	[ 'changed_since', 'pg_stat_statements_ng_changed_since(0)' ],
	[ 'view without text', 'pg_stat_statements_ng(false)' ],
);
push @reads, [ 'drop-in view', 'pg_stat_statements' ] if $dropin;

for my $db (sort keys %dbs)
{
	my $want = join("\n", sort map { unpack('H*', $_) } @{ $expect{$db} });
	for my $r (@reads)
	{
		my ($name, $from) = @$r;
		my ($ret, $out, $err) = $node->psql($db, qq{
SELECT count(*) FROM $from});
		is("$ret/$err", '0/', "$db, $name: read without error");
		next if $name eq 'view without text';
		($ret, $out, $err) = $node->psql($db, qq{
SELECT encode(convert_to(query, getdatabaseencoding()), 'hex') FROM $from
 WHERE query LIKE 'SELECT \$1%' ORDER BY 1});
		is($out . $err, $want, "$db, $name: every text in its safe form");
	}
	my ($ret, $out, $err) = $node->psql($db, 'SELECT count(*) FROM pg_stat_statements_ng
		WHERE query LIKE \'SELECT $1%\'');
	is($out . $err, $nrows, "$db: $nrows rows");
}

$node->stop;
done_testing();
