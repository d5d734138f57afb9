#!/usr/bin/env bash
# bench/full.sh -- the full run that docs/benchmarks.md reports: PostgreSQL 15
# (Debian's packages) and a release build of 18, every part, one after the
# other.  About 45 minutes per major on a quiet 2-core machine, more on a busy
# one (disturbed runs are run again).  Extra arguments go to both runs.
#
# pg_stat_monitor joins when a local build of it for that major is named
# (its directory, holding pg_stat_monitor.so, .control and .sql files):
#
#   PGSM_DIR_15=~/src/pgsm-15 PGSM_DIR_18=~/src/pgsm-18 bench/full.sh
#
# NG_BASE_18=<commit> adds ours at that commit to the 18 run (contender
# ngbase), to measure what the commits since then cost.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/common.sh"

"$here/setup.sh"
workloads=hot:5,select1:5,dalibo-100:5,dalibo-400:3,unique:5,churn:5,multi:3
for major in 15 18; do
	case $major in
	15) bindir=/usr/lib/postgresql/15/bin ;;
	18) bindir=$PGSSNG_CACHE/pg18-release/bin ;;
	esac
	extra=()
	pgsm_var=PGSM_DIR_$major
	[ -n "${!pgsm_var:-}" ] && extra+=(--pgsm-lib "${!pgsm_var}")
	base_var=NG_BASE_$major
	[ -n "${!base_var:-}" ] && extra+=(--ng-base "${!base_var}")
	python3 "$here/run.py" --bindir "$bindir" --workloads "$workloads" \
		--duration 10 --idle-wait 30 "${extra[@]}" "$@"
done
