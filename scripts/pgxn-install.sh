#!/usr/bin/env bash
# pgxn-install.sh -- the PGXN distribution: make dist, then the real pgxn
# client installs that zip into a PostgreSQL tree and the extension is
# created in a throwaway cluster of it.  Run as root; prints "ok - ..." /
# "not ok - ..." lines and exits non-zero if any check failed.
#
#   scripts/pgxn-install.sh            # PostgreSQL 18 (PGSSNG_PGXN_MAJOR=17 for 17)
#
# - pgxnclient (PyPI, pinned to $pgxn_version) in a virtual environment
#   cached under $PGSSNG_CACHE;
# - META.json: valid JSON with the keys PGXN requires, its version equal to
#   debian/changelog's, its provided file the control file's default version;
# - make dist: the committed tree at HEAD as <name>-<version>.zip, every
#   entry under <name>-<version>/;
# - pgxn install --pg_config into a private copy of that major's installation
#   (as scripts/asan-persist.sh does: the shared tree keeps the build that
#   scripts/test.sh installed);
# - initdb, shared_preload_libraries, CREATE EXTENSION at the default
#   version, and a statement counted exactly.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"

[ "$(id -u)" = 0 ] || die "pgxn-install.sh must run as root"
major=${PGSSNG_PGXN_MAJOR:-18}
pgxn_version=1.3.2

fails=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fails=$((fails + 1)); }
check() { # check NAME GOT EXPECTED
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$2', expected '$3'"; fi
}

# ---- the client
venv="$PGSSNG_CACHE/pgxnclient-$pgxn_version"
if [ ! -x "$venv/bin/pgxn" ]; then
	log "pgxnclient $pgxn_version into $venv"
	py=/usr/bin/python3
	[ -x "$py" ] || py=python3
	rm -rf "$venv"
	if ! "$py" -m venv "$venv" >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=180 python3-venv >/dev/null
		"$py" -m venv "$venv" || die "could not create a virtual environment"
	fi
	"$venv/bin/pip" install -q "pgxnclient==$pgxn_version" || die "could not install pgxnclient $pgxn_version"
fi
check "pgxn client version" "$("$venv/bin/pgxn" --version 2>&1)" "pgxnclient $pgxn_version"

# ---- META.json
meta=$(python3 - "$top" <<'PY'
import json, re, sys
top = sys.argv[1]
m = json.load(open(top + "/META.json"))
missing = [k for k in ("name", "abstract", "version", "maintainer", "license",
                       "provides", "meta-spec") if k not in m]
ext = m["provides"].get(m["name"], {})
default = re.search(r"^default_version = '(.*)'", open(top + "/pg_stat_statements_ng.control").read(), re.M).group(1)
deb = re.match(r"\S+ \(([^)-]+)", open(top + "/debian/changelog").readline()).group(1)
print(m["name"], m["version"], ",".join(missing) or "-",
      ext.get("file") == "pg_stat_statements_ng--%s.sql" % default,
      ext.get("version") == m["version"], deb == m["version"],
      m["prereqs"]["runtime"]["requires"].get("PostgreSQL", "-").replace(" ", ""))
PY
)
read -r name version missing file_ok extver_ok deb_ok pgreq <<<"$meta"
check "META.json: name" "$name" pg_stat_statements_ng
check "META.json: no required key missing" "$missing" -
check "META.json: provides the default version's script" "$file_ok" True
check "META.json: provides the distribution's version" "$extver_ok" True
check "META.json: version equals debian/changelog's" "$deb_ok" True
check "META.json: PostgreSQL 15 to 18" "$pgreq" ">=15.0.0,<19.0.0"

work=$(mktemp -d /tmp/pgssng-pgxn.XXXXXX)
chmod 755 "$work"
cleanup() {
	if [ -f "$work/data/postmaster.pid" ]; then
		runuser -u postgres -- "$work/pg/bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1
	fi
	if [ "$fails" = 0 ]; then rm -rf "$work"; else echo "pgxn-install.sh: kept $work" >&2; fi
}
trap cleanup EXIT

# ---- make dist
bindir=$(pg_bindir "$major")
if make -s -C "$top" PG_CONFIG="$bindir/pg_config" DISTDIR="$work" dist >"$work/dist.log" 2>&1; then
	ok "make dist"
else
	cat "$work/dist.log"; notok "make dist"; exit 1
fi
zip="$work/$name-$version.zip"
check "make dist wrote $name-$version.zip" "$([ -f "$zip" ] && echo yes)" yes
check "every entry under $name-$version/" \
	"$(unzip -Z1 "$zip" | grep -cv "^$name-$version/")" 0
check "the zip has META.json, the Makefile and the control file" \
	"$(unzip -Z1 "$zip" | grep -cxE "$name-$version/(META.json|Makefile|pg_stat_statements_ng.control)")" 3

# ---- pgxn install into a private copy of the installation
install=$(readlink -f "$bindir/..")
cp -a "$install" "$work/pg" || die "could not copy $install"
pgc="$work/pg/bin/pg_config"
pkglib=$("$pgc" --pkglibdir)
case "$pkglib" in "$work/pg"/*) ;; *) die "the copy is not relocatable: pkglibdir is $pkglib" ;; esac
rm -f "$pkglib/pg_stat_statements_ng.so" "$("$pgc" --sharedir)"/extension/pg_stat_statements_ng*
log "pgxn install --pg_config $pgc $name-$version.zip"
if (cd "$work" && "$venv/bin/pgxn" install --pg_config "$pgc" "./$name-$version.zip") >"$work/pgxn.log" 2>&1; then
	ok "pgxn install $name-$version.zip"
else
	tail -n 30 "$work/pgxn.log"; notok "pgxn install"; exit 1
fi
check "pgxn installed the library" "$([ -f "$pkglib/pg_stat_statements_ng.so" ] && echo yes)" yes

# ---- a throwaway cluster of that tree
mkdir "$work/data" "$work/run" && chown postgres: "$work/data" "$work/run"
runuser -u postgres -- "$work/pg/bin/initdb" -D "$work/data" -A trust >"$work/initdb.log" 2>&1 ||
	{ cat "$work/initdb.log"; notok "initdb"; exit 1; }
cat >>"$work/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$work/run'
shared_preload_libraries = 'pg_stat_statements_ng'
CONF
runuser -u postgres -- "$work/pg/bin/pg_ctl" -D "$work/data" -l "$work/run/server.log" -w start >/dev/null ||
	{ tail -n 20 "$work/run/server.log"; notok "start the cluster"; exit 1; }
psql_() { runuser -u postgres -- "$work/pg/bin/psql" -X -h "$work/run" -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
psql_ -c "CREATE EXTENSION pg_stat_statements_ng" >/dev/null || notok "CREATE EXTENSION"
check "created at the default version" \
	"$(psql_ -c "SELECT extversion = default_version FROM pg_extension, pg_available_extensions WHERE extname = name AND name = 'pg_stat_statements_ng'")" t
psql_ -c "SELECT pg_stat_statements_ng_reset()" -c "SELECT 7 * 6 AS answer" -c "SELECT 8 * 6 AS answer" \
	-c "SELECT 9 * 6 AS answer" >/dev/null
check "a statement counted exactly" \
	"$(psql_ -c "SELECT calls || '/' || rows FROM pg_stat_statements_ng WHERE query = 'SELECT \$1 * \$2 AS answer'")" 3/3
runuser -u postgres -- "$work/pg/bin/pg_ctl" -D "$work/data" -w stop >/dev/null || notok "stop the cluster"

[ "$fails" = 0 ] && log "pgxn-install: every check passed"
[ "$fails" = 0 ]
