#!/bin/bash
# callgrind_single.sh: instructions per statement of one installation, by
# hand (bench/run.py's callgrind part, which refuses assertion builds):
# postgres --single, with pg_stat_statements_ng preloaded, fed N and then
# 3N copies of STMT (after PREP, if set) under valgrind --tool=callgrind,
# its clock counting readings (bench/fixed_clock.c, as bench/run.py's);
# prints (I(3N) - I(N)) / 2N.
#
#   [PREP='PREPARE p AS SELECT 1;'] [STMT='EXECUTE p;'] bench/callgrind_single.sh BINDIR [N]
#
# Run it as a user that may run initdb (not root).
set -euo pipefail
bin=$1
n=${2:-2000}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$bin/initdb" -D "$d/data" >/dev/null 2>&1
cc -shared -fPIC -O2 -o "$d/fixed_clock.so" "$(dirname "$0")/fixed_clock.c"
echo "shared_preload_libraries = 'pg_stat_statements_ng'" >> "$d/data/postgresql.conf"
ir() {
	{ echo "${PREP:-}"; yes "${STMT:-SELECT 1;}" | head -n "$1"; } > "$d/in.sql"
	LD_PRELOAD="$d/fixed_clock.so" NG_CLOCK_STEP_NS=1000 \
		valgrind --tool=callgrind --callgrind-out-file="$d/out" \
		"$bin/postgres" --single -D "$d/data" postgres < "$d/in.sql" 2>&1 >/dev/null |
		grep -o 'Collected : [0-9]*' | awk '{print $3}'
}
a=$(ir "$n")
b=$(ir $((3 * n)))
echo $(((b - a) / (2 * n)))
