#!/usr/bin/env bash
# asan-persist.sh -- the persistence loader under AddressSanitizer, fed
# damaged files; passes only with zero ASan reports.
#
#   scripts/asan-persist.sh            # PostgreSQL 18 (PGSSNG_ASAN_MAJOR=17 for 17)
#
# Builds the extension with -fsanitize=address -fno-omit-frame-pointer and
# runs t/021_persist_corrupt.pl in its reduced mode (PGSSNG_PERSIST_QUICK=1:
# 20 truncations, 50 byte flips, every header, length and count case) with
# the server, and only the server, started under LD_PRELOAD of gcc's libasan
# (PostgreSQL itself is not instrumented; the preload makes the ASan runtime
# come first, as an instrumented library loaded by dlopen requires), with
# ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:log_path=<dir>/asan.
#
# The instrumented build goes into a private copy of that major's
# installation (PostgreSQL installations are relocatable), never into the
# shared tree: other test runs using the tree keep the normal build
# throughout, and there is nothing to reinstall afterwards.  The copy is
# removed at the end unless the run failed.
#
# What ASan can see: the loader reads the file into one palloc'd buffer.
# Files over 8 kB (the test's valid file is about 30 kB) get a malloc block
# of their own, so a read past the end of the buffer is caught (give or take
# the MAXALIGN padding); for smaller ones (short truncations) the buffer sits
# inside a larger block, and only the test's own checks apply.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"

major=${PGSSNG_ASAN_MAJOR:-18}
bindir=$(pg_bindir "$major")
install=$(readlink -f "$bindir/..")

libasan=$(gcc -print-file-name=libasan.so)
[ -e "$libasan" ] || die "gcc has no libasan.so (gcc -print-file-name=libasan.so: $libasan)"
libasan=$(readlink -f "$libasan")

work=$(mktemp -d /tmp/pgssng-asan.XXXXXX)
log "AddressSanitizer: private copy of $install in $work/pg"
cp -a "$install" "$work/pg" || die "could not copy $install"
pgc="$work/pg/bin/pg_config"
[ "$("$pgc" --pkglibdir)" = "$work/pg/lib/postgresql" ] ||
	[ "$("$pgc" --pkglibdir)" = "$work/pg/lib" ] ||
	die "the copy is not relocatable: pkglibdir is $("$pgc" --pkglibdir)"

mkdir "$work/src"
(cd "$top" && tar cf - --exclude=.git --exclude='*.o' --exclude='*.so' \
	--exclude=tmp_check --exclude=results .) | tar xf - -C "$work/src"

log "AddressSanitizer: build against $("$pgc" --version)"
if ! make -C "$work/src" PG_CONFIG="$pgc" \
	COPT="-fsanitize=address -fno-omit-frame-pointer -g -Wall -Werror" \
	>"$work/build.log" 2>&1 ||
	! make -C "$work/src" PG_CONFIG="$pgc" install >>"$work/build.log" 2>&1; then
	tail -n 40 "$work/build.log"
	echo "asan-persist: build failed ($work)" >&2
	exit 1
fi
so="$("$pgc" --pkglibdir)/pg_stat_statements_ng.so"
if [ "$(nm -D "$so" | grep -c '__asan_')" = 0 ]; then
	echo "asan-persist: $so is not instrumented" >&2
	exit 1
fi

mkdir "$work/asan"
chown -R postgres: "$work"
log "AddressSanitizer: t/021_persist_corrupt.pl (reduced) with LD_PRELOAD=$libasan"
runuser -u postgres -- env PATH="$work/pg/bin:$PATH" \
	PGSSNG_PERSIST_QUICK=1 \
	PGSSNG_SERVER_LD_PRELOAD="$libasan" \
	PGSSNG_EXPECT_SO="$so" \
	ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:log_path=$work/asan/asan" \
	make -C "$work/src" PG_CONFIG="$pgc" installcheck REGRESS= \
	PROVE_TESTS=t/021_persist_corrupt.pl PROVE_FLAGS="--timer" \
	>"$work/test.log" 2>&1
rc=$?
grep -E '^(\[[0-9:]+\] )?t/|^Files=|^Result' "$work/test.log"

reports=$(grep -l 'ERROR: AddressSanitizer' "$work"/asan/asan* 2>/dev/null)
others=$(ls "$work"/asan/ 2>/dev/null | wc -l)
ok=1
if [ -n "$reports" ]; then
	ok=0
	echo "asan-persist: AddressSanitizer reports in: $reports" >&2
	for f in $reports; do
		echo "---- $f"
		head -n 60 "$f"
	done
elif [ "$others" != 0 ]; then
	echo "asan-persist: $others ASan log file(s) without an error report:" >&2
	head -n 20 "$work"/asan/* >&2
fi
if [ "$rc" != 0 ]; then
	ok=0
	echo "asan-persist: the test failed under ASan (exit $rc)" >&2
	tail -n 60 "$work"/src/tmp_check/log/regress_log_021_persist_corrupt 2>/dev/null
fi

if [ "$ok" = 1 ]; then
	rm -rf "$work"
	exit 0
fi
echo "asan-persist: kept $work" >&2
exit 1
