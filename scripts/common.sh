# common.sh -- shared shell definitions for scripts/ and .ci/ (sourced, not run)

# Where built PostgreSQL trees are cached: outside any clone, keyed by version.
PGSSNG_CACHE=${PGSSNG_CACHE:-/var/cache/pg_stat_statements_ng}
PGSSNG_MAJORS=${PGSSNG_MAJORS:-15 16 17 18}

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# pg_bindir MAJOR: the bin directory of that major's installation
pg_bindir() {
	local d="$PGSSNG_CACHE/pg$1/bin"
	[ -x "$d/pg_config" ] || d="/usr/lib/postgresql/$1/bin"
	[ -x "$d/pg_config" ] || die "PostgreSQL $1 is not installed; run scripts/setup-postgres.sh"
	printf '%s\n' "$d"
}
