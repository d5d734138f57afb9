#!/usr/bin/env bash
# pgindent.sh -- format src/ with PostgreSQL's pgindent (18's), using core's
# typedefs plus ours (typedefs.list).  --check: change nothing, fail if any
# file is not formatted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/common.sh"
tools="$PGSSNG_CACHE/pgindent"
[ -x "$tools/pg_bsd_indent" ] || die "pg_bsd_indent missing; run scripts/setup-postgres.sh"
typedefs=$(mktemp)
trap 'rm -f "$typedefs"' EXIT
sort -u "$tools/typedefs.list" "$top/typedefs.list" >"$typedefs"
args=(--typedefs="$typedefs" --indent="$tools/pg_bsd_indent")
[ "${1:-}" = --check ] && args+=(--check --diff)
# src/ and its folders (src/slots/)
perl "$tools/pgindent" "${args[@]}" "$top"/src/*.c "$top"/src/*.h "$top"/src/*/*.c "$top"/src/*/*.h
