#!/usr/bin/env bash
# deb-package.sh -- build the Debian packages (debian/) with
# dpkg-buildpackage -us -uc, install them with dpkg into Debian's
# PostgreSQL 15, use them, purge them, and check nothing is left behind.
# Run as root; prints "ok - ..." / "not ok - ..." lines and exits non-zero
# if any check failed.
#
#   scripts/deb-package.sh
#
# 1. installs the build tools it needs (debhelper, postgresql-server-dev-all)
#    from Debian's packages, and builds in a scratch copy of the tree;
# 2. moves aside a source build of ours found in Debian's 15 (scripts/test.sh
#    installs one there when the cache's pg15 is Debian's own tree) and puts
#    it back at the end, whatever happens;
# 3. dpkg -i postgresql-15-pg-stat-statements-ng: contrib's files untouched
#    (dpkg -V postgresql-15 as before); the package's pg_regress suite
#    (debian/tests/installcheck); a throwaway cluster of Debian's 15 with the
#    library preloaded counts a pgbench workload exactly;
# 4. dpkg -i the drop-in package: contrib's files diverted, dpkg -V still as
#    before, CREATE EXTENSION pg_stat_statements gives ours with the same
#    exact counts; dpkg -P of it puts contrib's files back;
# 5. dpkg -P the extension's package: no file of either package left (every
#    path dpkg -L listed before the purge is gone, or is a directory or a
#    file that another package owns and dpkg -V finds intact).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"

[ "$(id -u)" = 0 ] || die "deb-package.sh must run as root"
v=15
bindir=/usr/lib/postgresql/$v/bin
[ -x "$bindir/postgres" ] || die "Debian's PostgreSQL $v is not installed"
pkg=postgresql-$v-pg-stat-statements-ng
dropin=$pkg-dropin
contrib_owner=$(dpkg-query -S /usr/share/postgresql/$v/extension/pg_stat_statements.control 2>/dev/null | cut -d: -f1)
[ -n "$contrib_owner" ] || die "no package owns contrib's pg_stat_statements.control"

fails=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fails=$((fails + 1)); }
check() { # check NAME GOT EXPECTED
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$2', expected '$3'"; fi
}

# dpkg, waiting (bounded) while another dpkg or apt holds its lock
dpkg_locked() {
	local i out rc
	for i in $(seq 1 90); do
		out=$(dpkg "$@" 2>&1); rc=$?
		if [ "$rc" != 0 ] && grep -q 'lock' <<<"$out"; then
			sleep 2; continue
		fi
		printf '%s\n' "$out"
		return "$rc"
	done
	printf '%s\n' "$out"
	return 1
}

need=()
for p in debhelper postgresql-server-dev-all dpkg-dev; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=180 "${need[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			-o DPkg::Lock::Timeout=180 "${need[@]}" >/dev/null; } ||
		die "could not install ${need[*]}"
fi

work=$(mktemp -d /tmp/pgssng-deb.XXXXXX)
chmod 755 "$work"
data=$work/data
run=$work/run
saved=$work/source-build.tar

verify_before=$(dpkg -V "$contrib_owner" 2>&1)

# a source build of ours in Debian's tree: files of our names no package owns
ours_unowned() {
	find /usr/lib/postgresql/$v/lib /usr/share/postgresql/$v/extension -maxdepth 2 \
		\( -name 'pg_stat_statements_ng*' -o -path '*/bitcode/pg_stat_statements_ng*' \) -print |
		while read -r f; do dpkg-query -S "$f" >/dev/null 2>&1 || echo "$f"; done
}
restore() {
	if [ -f "$data/postmaster.pid" ]; then
		runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1
	fi
	for p in "$dropin" "$pkg"; do
		if dpkg -s "$p" >/dev/null 2>&1; then
			dpkg_locked -P "$p" >/dev/null || echo "deb-package.sh: could not purge $p" >&2
		fi
	done
	if [ -f "$saved" ]; then
		tar xpf "$saved" -C / && log "source build of ours put back into Debian's $v"
	fi
	if [ "$fails" = 0 ]; then rm -rf "$work"; else echo "deb-package.sh: kept $work" >&2; fi
}
trap restore EXIT

mapfile -t prior < <(ours_unowned)
if [ ${#prior[@]} -gt 0 ]; then
	log "moving aside a source build of ours in Debian's $v (${#prior[@]} paths)"
	tar cpf "$saved" -C / "${prior[@]#/}" && rm -rf "${prior[@]}" || die "could not save ${prior[*]}"
fi
for p in "$dropin" "$pkg"; do
	dpkg -s "$p" >/dev/null 2>&1 && die "$p is installed already: purge it first"
done

# ---- build
log "dpkg-buildpackage -us -uc (in $work/src)"
mkdir "$work/src"
(cd "$top" && tar cf - --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	--exclude=tmp_check --exclude=results --exclude=bench/results .) | tar xf - -C "$work/src"
if (cd "$work/src" && dpkg-buildpackage -us -uc) >"$work/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc"
else
	tail -n 40 "$work/build.log"
	notok "dpkg-buildpackage -us -uc"
	exit 1
fi
deb=$(ls "$work"/${pkg}_*.deb)
debdropin=$(ls "$work"/${dropin}_*.deb)

# ---- the extension's package
if dpkg_locked -i "$deb" >"$work/dpkg.log"; then ok "dpkg -i $(basename "$deb")"; else
	cat "$work/dpkg.log"; notok "dpkg -i $(basename "$deb")"; exit 1; fi
dpkg -L "$pkg" >"$work/files-$pkg"
check "dpkg -V $contrib_owner unchanged with $pkg installed" "$(dpkg -V "$contrib_owner" 2>&1)" "$verify_before"
check "the package installs the default version's script" \
	"$(grep -c "^/usr/share/postgresql/$v/extension/pg_stat_statements_ng--$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$top/pg_stat_statements_ng.control").sql$" "$work/files-$pkg")" 1

log "debian/tests/installcheck (the pg_regress suite against the package)"
if sh "$work/src/debian/tests/installcheck" >"$work/installcheck.log" 2>&1; then
	ok "debian/tests/installcheck"
else
	tail -n 40 "$work/installcheck.log"
	notok "debian/tests/installcheck"
fi

psql_() { runuser -u postgres -- "$bindir/psql" -X -h "$run" -p 5432 -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
mkdir "$data" "$run" && chown postgres: "$data" "$run"
runuser -u postgres -- "$bindir/initdb" -D "$data" -A trust >"$work/initdb.log" 2>&1 || {
	cat "$work/initdb.log"; notok "initdb"; exit 1; }
cat >>"$data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$run'
port = 5432
shared_preload_libraries = 'pg_stat_statements_ng'
CONF
runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -l "$run/server.log" -w start >/dev/null ||
	{ tail -n 20 "$run/server.log"; notok "start a cluster of Debian's $v"; exit 1; }

psql_ -c "CREATE EXTENSION pg_stat_statements_ng" \
	-c "CREATE TABLE counted (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)" \
	-c "INSERT INTO counted SELECT g FROM generate_series(1, 10) g" \
	-c "SELECT pg_stat_statements_ng_reset()" >/dev/null || notok "create the extension"
cat >"$work/workload.sql" <<'SQL'
\set id random(1, 10)
UPDATE counted SET n = n + 1 WHERE id = :id;
SELECT n FROM counted WHERE id = :id;
SQL
chmod 644 "$work/workload.sql"
runuser -u postgres -- "$bindir/pgbench" -h "$run" -p 5432 -n -c 2 -t 60 -f "$work/workload.sql" postgres \
	>"$work/pgbench.log" 2>&1 || { cat "$work/pgbench.log"; notok "pgbench"; }
counts="SELECT string_agg(calls || '/' || rows, ' ' ORDER BY query) FROM %s
	WHERE query IN ('UPDATE counted SET n = n + \$1 WHERE id = \$2', 'SELECT n FROM counted WHERE id = \$1')"
# 2 clients x 60 transactions: 120 of each statement, one row each
check "the workload counted exactly (pg_stat_statements_ng)" \
	"$(psql_ -c "$(printf "$counts" pg_stat_statements_ng)")" "120/120 120/120"
check "the table agrees" "$(psql_ -c "SELECT sum(n) FROM counted")" 120
check "extension version" "$(psql_ -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements_ng'")" \
	"$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$top/pg_stat_statements_ng.control")"

# ---- the drop-in's package, on top
if dpkg_locked -i "$debdropin" >"$work/dpkg.log"; then ok "dpkg -i $(basename "$debdropin")"; else
	cat "$work/dpkg.log"; notok "dpkg -i $(basename "$debdropin")"; fi
dpkg -L "$dropin" >"$work/files-$dropin"
diverted() { dpkg-divert --list "*" | sed -n "s/^diversion of \([^ ]*\) to [^ ]* by $dropin\$/\1/p" | sort; }
contrib_files() {
	dpkg-query -L "$contrib_owner" | grep -E '/pg_stat_statements(\.so|\.control|--[0-9.-]+\.sql)$' | sort
}
check "every contrib file of pg_stat_statements is diverted" \
	"$(comm -23 <(contrib_files) <(diverted) | tr '\n' ' ')" ""
check "pg_stat_statements files in the extension directory: the drop-in's only" \
	"$(ls /usr/share/postgresql/$v/extension/ | grep -E '^pg_stat_statements(\.control|--.*\.sql)$' | sort | tr '\n' ' ')" \
	"$(sed -n "s,^/usr/share/postgresql/$v/extension/,,p" "$work/files-$dropin" | grep -E '^pg_stat_statements(\.control|--.*\.sql)$' | sort | tr '\n' ' ')"
check "dpkg -V $contrib_owner unchanged with the drop-in (diverted files intact)" \
	"$(dpkg -V "$contrib_owner" 2>&1)" "$verify_before"
psql_ -c "CREATE EXTENSION pg_stat_statements" >/dev/null || notok "CREATE EXTENSION pg_stat_statements"
check "pg_stat_statements is the drop-in" \
	"$(psql_ -c "SELECT comment LIKE '%(pg_stat_statements_ng)' FROM pg_available_extensions WHERE name = 'pg_stat_statements'")" t
check "the workload counted exactly (pg_stat_statements, the drop-in)" \
	"$(psql_ -c "$(printf "$counts" pg_stat_statements)")" "120/120 120/120"
psql_ -c "DROP EXTENSION pg_stat_statements" >/dev/null

if dpkg_locked -P "$dropin" >"$work/dpkg.log"; then ok "dpkg -P $dropin"; else
	cat "$work/dpkg.log"; notok "dpkg -P $dropin"; fi
check "no diversion left" "$(dpkg-divert --list "*" | grep -c "by $dropin\$")" 0
check "dpkg -V $contrib_owner unchanged after the drop-in's purge" "$(dpkg -V "$contrib_owner" 2>&1)" "$verify_before"
check "pg_stat_statements is contrib's again" \
	"$(psql_ -c "SELECT comment NOT LIKE '%pg_stat_statements_ng%' FROM pg_available_extensions WHERE name = 'pg_stat_statements'")" t

runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -w stop >/dev/null || notok "stop the cluster"

# ---- purge, and look for what is left
if dpkg_locked -P "$pkg" >"$work/dpkg.log"; then ok "dpkg -P $pkg"; else
	cat "$work/dpkg.log"; notok "dpkg -P $pkg"; fi
left=()
while read -r f; do
	[ "$f" != /. ] || continue
	[ -e "$f" ] || [ -L "$f" ] || continue
	if [ -d "$f" ] && [ ! -L "$f" ]; then
		# a directory may stay only if another package has it too
		dpkg-query -S "$f" >/dev/null 2>&1 || left+=("$f")
	else
		# a file may stay only as another package's, intact (contrib's)
		owner=$(dpkg-query -S "$f" 2>/dev/null | cut -d: -f1)
		if [ -z "$owner" ] || dpkg -V "$owner" 2>/dev/null | grep -q " $f\$"; then
			left+=("$f")
		fi
	fi
done < <(cat "$work/files-$pkg" "$work/files-$dropin")
check "dpkg -L listed the files" "$(grep -c '/pg_stat_statements_ng\.so$' "$work/files-$pkg")" 1
check "no file of the packages left after purge (${left[*]:-})" "${#left[@]}" 0
check "no file of our names left in Debian's $v" "$(ours_unowned | wc -l)" 0

[ "$fails" = 0 ] && log "deb-package: every check passed"
[ "$fails" = 0 ]
