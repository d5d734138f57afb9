#!/usr/bin/env bash
# check-house.sh -- the shape of src/ (issue #14): fails when
#   - a C file has more than 600 lines,
#   - a function has more than 80 lines (pgindent-formatted, from the line
#     after its name line to its closing brace),
#   - src/ files include each other in a circle,
#   - src/ files call each other in a circle (at file level; a header's
#     static inline functions and macros count as the header's, so a header
#     whose inline code calls back into the files that use it is a circle),
#   - a file of src/ is missing from docs/design.md's file table.
# Calls are found in the source text, not in object files: no build is
# needed (scripts/check-house.py says how).  Exceptions being worked on are
# listed in scripts/check-house.allow.
#
#   scripts/check-house.sh             check src/
#   scripts/check-house.sh DIR [ALLOW] check another tree's src/ (DIR/src)
#   scripts/check-house.sh --self-test check that the checker fails on a tree
#                                      with each of the four faults
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

self_test() {
	local t rc out
	t=$(mktemp -d /tmp/check-house.XXXXXX)
	mkdir "$t/src"
	# a.c and b.c call each other; a.h and b.h include each other; long.c is
	# 601 lines with a function of 81 lines
	printf '#include "a.h"\n\nint\na_one(void)\n{\n\treturn b_two();\n}\n' >"$t/src/a.c"
	printf '#include "b.h"\n\nint\nb_two(void)\n{\n\treturn a_three();\n}\n\nint\na_unused(void)\n{\n\treturn 0;\n}\n' >"$t/src/b.c"
	printf '#include "a.h"\n\nint\na_three(void)\n{\n\treturn a_one();\n}\n' >>"$t/src/b.c"
	printf '#include "b.h"\nextern int a_one(void);\n' >"$t/src/a.h"
	printf '#include "a.h"\nextern int b_two(void);\n' >"$t/src/b.h"
	# d.h's inline function calls d.c, which uses it: a circle through a header
	printf 'extern int d_record(void);\n\nstatic inline int\nd_flush(void)\n{\n\treturn d_record();\n}\n' >"$t/src/d.h"
	printf '#include "d.h"\n\nint\nd_record(void)\n{\n\treturn 0;\n}\n\nint\nd_use(void)\n{\n\treturn d_flush();\n}\n' >"$t/src/d.c"
	{
		printf 'int\nlong_one(void)\n{\n'
		for i in $(seq 1 79); do printf '\tx++;\n'; done
		printf '}\n'
		for i in $(seq 1 518); do printf '\n'; done
	} >"$t/src/long.c"
	out=$(python3 "$here/check-house.py" "$t/src" /dev/null)
	rc=$?
	rm -rf "$t"
	echo "$out" | sed 's/^/  self-test: /'
	[ "$rc" = 1 ] &&
		echo "$out" | grep -q '^check-house: file long.c: 601 lines' &&
		echo "$out" | grep -q '^check-house: function long_one in long.c: 81 lines' &&
		echo "$out" | grep -q '^check-house: include circle:' &&
		echo "$out" | grep -q '^check-house: call circle:' &&
		echo "$out" | grep -q '^    a.c -> b.c (b_two)' &&
		echo "$out" | grep -q '^    d.h -> d.c (d_record)'
}

case "${1:-}" in
	--self-test)
		self_test
		exit $?
		;;
	"")
		rc=0
		python3 "$here/check-house.py" "$top/src" "$here/check-house.allow" || rc=1
		# docs/design.md's file table names every file of src/
		for f in "$top"/src/*.[ch]; do
			f=$(basename "$f")
			if ! grep -q "^| .*\`$f\`" "$top/docs/design.md"; then
				echo "check-house: $f is missing from docs/design.md's file table"
				rc=1
			fi
		done
		exit $rc
		;;
	*)
		exec python3 "$here/check-house.py" "$1/src" "${2:-/dev/null}"
		;;
esac
