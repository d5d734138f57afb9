#!/usr/bin/env bash
# bench/full.sh -- the full run that docs/benchmarks.md reports: PostgreSQL 15
# (Debian's packages) and a release build of 18, every part, one after the
# other.  About an hour per major on a quiet 2-core machine, more on a busy
# one (disturbed runs are run again).  Extra arguments go to both runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/common.sh"

"$here/setup.sh"
workloads=hot:5,select1:5,dalibo-100:5,dalibo-400:3,unique:5,churn:5,multi:3
for bindir in /usr/lib/postgresql/15/bin "$PGSSNG_CACHE/pg18-release/bin"; do
	python3 "$here/run.py" --bindir "$bindir" --workloads "$workloads" \
		--duration 10 --idle-wait 30 "$@"
done
