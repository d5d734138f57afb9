#!/usr/bin/env bash
# setup-sanitizers.sh -- the two instrumented PostgreSQL trees the sanitizer
# modes of scripts/test.sh run on, built when absent.
#
#   scripts/setup-sanitizers.sh            # both
#   scripts/setup-sanitizers.sh asan       # or: valgrind
#
# Both are built from the same Debian source tarball, and the same version,
# as the major's normal tree (scripts/setup-postgres.sh: $PGSSNG_CACHE/pgMAJOR,
# MAJOR from PGSSNG_SAN_MAJOR, 18 unless set), with assertions and TAP
# support, and cached beside it, keyed by version:
#
#   $PGSSNG_CACHE/pg-<version>-asan       -fsanitize=address,undefined, -O1;
#                                         every library and program of the
#                                         server instrumented, so ASan sees
#                                         malloc'd memory, the stack and
#                                         globals of the whole server
#   $PGSSNG_CACHE/pg-<version>-valgrind   -DUSE_VALGRIND, -O1: the memory
#                                         contexts tell memcheck where each
#                                         chunk ends and what is undefined;
#                                         run under valgrind by the wrapper
#                                         bin/postgres (see below)
#
# and linked as $PGSSNG_CACHE/pgMAJOR-asan and pgMAJOR-valgrind.  The
# tarball is kept in $PGSSNG_CACHE/src.  A build takes 15 to 30 minutes on
# two cores; it is done once per version.
#
# The valgrind tree's bin/postgres is a wrapper: with PGSSNG_VALGRIND set
# to a directory, it runs the real server (bin/postgres.bin) under memcheck,
# children traced, one log per process in that directory, PostgreSQL's own
# suppressions (share/valgrind.supp); without it, and for initdb's bootstrap
# and single-user runs (nothing of ours is loaded there), the server runs as
# is.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

major=${PGSSNG_SAN_MAJOR:-18}
base=$(readlink -f "$PGSSNG_CACHE/pg$major") ||
	die "PostgreSQL $major is not set up; run scripts/setup-postgres.sh"
ver=${base##*/pg-}
[ -x "$base/bin/postgres" ] || die "no server in $base"
kinds=${1:-asan valgrind}

# src_tarball: the orig tarball of $ver, downloaded once into $PGSSNG_CACHE/src
src_tarball() {
	local file="postgresql-${major}_$ver.orig.tar.bz2" dir="$PGSSNG_CACHE/src" full pin sha uri
	mkdir -p "$dir"
	if [ ! -s "$dir/$file" ]; then
		log "fetching the source of PostgreSQL $ver"
		(
			cd "$dir"
			# the Debian source package of exactly this upstream version
			for full in $(apt-cache showsrc "postgresql-$major" 2>/dev/null |
				awk '/^Version:/ {print $2}' | sort -V -r -u); do
				[ "${full%%-*}" = "$ver" ] || continue
				apt-get source --download-only "postgresql-$major=$full" >/dev/null 2>&1 && break
			done
			if [ ! -s "$file" ]; then
				# the tarball setup-postgres.sh pins, from the mirror's pool
				pin=$(sed -n "s/^PINNED_$major=\"\(.*\)\"/\1/p" "$here/setup-postgres.sh")
				[ "${pin%% *}" = "$ver" ] || exit 1
				sha=${pin#* }
				uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/pg-src.sources)
				python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
					"$uri/pool/main/p/postgresql-$major/$file" "$file" || exit 1
				echo "$sha  $file" | sha256sum -c --quiet - || { rm -f "$file"; exit 1; }
			fi
			rm -f postgresql-"$major"_*.debian.tar.* postgresql-"$major"_*.dsc
		) || die "could not fetch $file"
	fi
	echo "$dir/$file"
}

# build KIND PREFIX CFLAGS CPPFLAGS LDFLAGS
build() {
	local kind=$1 prefix=$2 cflags=$3 cppflags=$4 ldflags=$5 tarball dir rc=0
	tarball=$(src_tarball)
	dir=$(mktemp -d "$PGSSNG_CACHE/build-$major-$kind.XXXXXX")
	log "building PostgreSQL $ver ($kind) into $prefix (15 to 30 minutes)"
	(
		cd "$dir"
		tar xjf "$tarball"
		cd "postgresql-$ver"
		# programs built and run during configure and the build leak by
		# design: LeakSanitizer would fail them
		export ASAN_OPTIONS=detect_leaks=0
		./configure --prefix="$prefix" --without-icu --without-readline \
			--enable-debug --enable-cassert --enable-tap-tests \
			CFLAGS="$cflags" CPPFLAGS="$cppflags" LDFLAGS="$ldflags" \
			>configure.log 2>&1 || { tail -n 30 configure.log; exit 1; }
		make -j2 >make.log 2>&1 || { tail -n 30 make.log; exit 1; }
		make install >/dev/null
		make -C contrib/pg_stat_statements install >/dev/null
		make -C src/test/perl install >/dev/null 2>&1 || true
		mkdir -p "$prefix/share/pgssng-src"
		cp -r contrib/pg_stat_statements "$prefix/share/pgssng-src/"
		cp src/tools/valgrind.supp "$prefix/share/valgrind.supp"
	) || rc=1
	rm -rf "$dir"
	[ $rc = 0 ] || { rm -rf "$prefix"; die "PostgreSQL $ver ($kind) did not build"; }
}

# the server under memcheck when PGSSNG_VALGRIND names a log directory
valgrind_wrapper() {
	local prefix=$1
	mv "$prefix/bin/postgres" "$prefix/bin/postgres.bin"
	cat >"$prefix/bin/postgres" <<'WRAP'
#!/bin/sh
# postgres under valgrind memcheck when PGSSNG_VALGRIND names a log
# directory (scripts/setup-sanitizers.sh); the real server is postgres.bin
# (initdb's bootstrap and single-user runs, and version checks, run as is)
bin=$(dirname "$(readlink -f "$0")")
case "${1:-}" in --boot | --single | -V | --version | -C | --describe-config) PGSSNG_VALGRIND= ;; esac
if [ -n "${PGSSNG_VALGRIND:-}" ]; then
	exec valgrind --quiet --tool=memcheck --trace-children=yes \
		--track-origins=yes --read-var-info=no --num-callers=30 \
		--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END \
		--suppressions="$bin/../share/valgrind.supp" \
		--log-file="$PGSSNG_VALGRIND/%p.log" \
		"$bin/postgres.bin" "$@"
fi
exec "$bin/postgres.bin" "$@"
WRAP
	chmod 755 "$prefix/bin/postgres"
}

for kind in $kinds; do
	prefix="$PGSSNG_CACHE/pg-$ver-$kind"
	if [ -f "$prefix/.complete" ]; then
		log "PostgreSQL $ver ($kind) already built in $prefix"
	else
		rm -rf "$prefix"
		case "$kind" in
			asan)
				build asan "$prefix" \
					"-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined" \
					"" "-fsanitize=address,undefined" ;;
			valgrind)
				command -v valgrind >/dev/null || {
					apt-get update -qq
					DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
				}
				build valgrind "$prefix" "-O1 -g" "-DUSE_VALGRIND" ""
				valgrind_wrapper "$prefix" ;;
			*) die "unknown kind $kind (asan or valgrind)" ;;
		esac
		touch "$prefix/.complete"
	fi
	ln -sfn "$prefix" "$PGSSNG_CACHE/pg$major-$kind"
done
