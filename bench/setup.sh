#!/usr/bin/env bash
# bench/setup.sh -- what the benchmark runner needs beyond scripts/setup-postgres.sh
#
#   - Debian packages: python3-matplotlib (the plot; the runner works without it),
#     valgrind (instructions per statement), libkrb5-dev (Debian 15's server
#     headers include gssapi.h: building pg_stat_monitor against them needs
#     it), postgresql-15 and -contrib (through
#     scripts/setup-postgres.sh when missing);
#   - a RELEASE build of PostgreSQL 18 (no assertions, -O2, with debug symbols for
#     profiles), from Debian's source package, cached outside the repository under
#     $PGSSNG_CACHE/pg-<version>-release, with the symlink $PGSSNG_CACHE/pg18-release.
#     The pg17/pg18 trees of scripts/setup-postgres.sh are assertion builds, which
#     must never be benchmarked.
#
# Idempotent: a second run does nothing. Run as root (apt-get). Nothing else is
# downloaded: pg_stat_monitor, if wanted, is the user's own local build.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/common.sh"

RELEASE_MAJORS=${PGSSNG_BENCH_RELEASE_MAJORS:-18}

if ! dpkg -s postgresql-15 postgresql-contrib >/dev/null 2>&1; then
	"$here/../scripts/setup-postgres.sh"
fi

need=()
for pkg in python3-matplotlib valgrind bison flex zlib1g-dev make gcc libkrb5-dev; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
	log "installing Debian packages: ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -f /etc/apt/sources.list.d/pg-src.sources ]; then
	# the same deb-src entry scripts/setup-postgres.sh writes
	"$here/../scripts/setup-postgres.sh"
fi

mkdir -p "$PGSSNG_CACHE"

build_release() {
	local major=$1 srcpkg=postgresql-$1 ver dir prefix
	ver=$(apt-cache showsrc "$srcpkg" 2>/dev/null | awk '/^Version:/ {print $2}' | sort -V | tail -n 1)
	[ -n "$ver" ] || die "no source package $srcpkg reachable (apt-get update?)"
	ver=${ver%%-*}
	prefix="$PGSSNG_CACHE/pg-$ver-release"
	if [ -x "$prefix/bin/postgres" ] && [ -f "$prefix/.complete" ]; then
		log "release PostgreSQL $ver already built in $prefix"
	else
		log "building release PostgreSQL $ver into $prefix (about 3 minutes on 2 cores)"
		rm -rf "$prefix"
		dir=$(mktemp -d "$PGSSNG_CACHE/build-release-$major.XXXXXX")
		(
			cd "$dir"
			apt-get source --download-only "$srcpkg" >/dev/null 2>&1
			tar xjf "${srcpkg}_${ver}".orig.tar.bz2
			cd "postgresql-$ver"
			# no --enable-cassert: assertions cost 10-30%; --enable-debug only adds
			# symbols (-g), the code stays -O2
			./configure --prefix="$prefix" --without-icu --without-readline \
				--enable-debug >configure.log 2>&1 ||
				{ tail -n 30 configure.log; exit 1; }
			make -j3 >make.log 2>&1 || { tail -n 30 make.log; exit 1; }
			make install >/dev/null && make -C contrib install >/dev/null
		)
		rm -rf "$dir"
		if "$prefix/bin/pg_config" --configure | grep -q cassert; then
			die "$prefix is an assertion build"
		fi
		touch "$prefix/.complete"
	fi
	ln -sfn "$prefix" "$PGSSNG_CACHE/pg$major-release"
}

for major in $RELEASE_MAJORS; do
	build_release "$major"
done
log "benchmark trees: /usr/lib/postgresql/15/bin $(for m in $RELEASE_MAJORS; do printf '%s ' "$PGSSNG_CACHE/pg$m-release/bin"; done)"
