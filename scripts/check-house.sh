#!/usr/bin/env bash
# check-house.sh -- the shape of src/, and names that exist: fails when
#   - a C file has more than 1,000 lines,
#   - a function has more than 100 lines (pgindent-formatted, from the line
#     after its name line to its closing brace),
#     (both are alarms that leave room for a cut along concerns, not places
#     to cut),
#   - a function takes more than 6 parameters, or more than 2 bool ones
#     (a request struct with named fields instead; a hook whose parameters
#     PostgreSQL dictates is listed in scripts/check-house.allow),
#   - a header that lists its folder's files from the top down (a file
#     calls only files below it: slots/slots_int.h) misses one of them,
#     or one calls a file above it,
#   - src/ files include each other in a circle,
#   - src/ files call each other in a circle (at file level; a header's
#     static inline functions and macros count as the header's, so a header
#     whose inline code calls back into the files that use it is a circle),
#     or modules do (a module: a header and the C file of its name; one
#     module's C file calling another's, whose code calls the first one's
#     inline functions, is a circle),
#   - a file of src/ is missing from docs/design.md's file table,
#   - a comment or a doc names a file, or one of our functions, that does
#     not exist (scripts/check-names.py says where it looks),
#   - our SQL scripts' statement functions, the drop-in's scripts or
#     docs/compatibility.md's column list disagree with src/columns.h
#     (scripts/columns.py --check).
# Calls are found in the source text, not in object files: no build is
# needed (scripts/check-house.py says how).  Exceptions being worked on are
# listed in scripts/check-house.allow.
#
#   scripts/check-house.sh             check this tree
#   scripts/check-house.sh DIR [ALLOW] check another tree's src/ (DIR/src)
#   scripts/check-house.sh --self-test check that the checker fails on a tree
#                                      with each fault, and on a stale name
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

self_test() {
	local t rc out
	t=$(mktemp -d /tmp/check-house.XXXXXX)
	mkdir "$t/src"
	# the files a and b call each other, and their headers include each
	# other; the file long is 1,001 lines with a function of 101 lines; a
	# header of the folder e includes one of src/ that includes it back
	printf '#include "a.h"\n\nint\na_one(void)\n{\n\treturn b_two();\n}\n' >"$t/src/a.c"
	printf '#include "b.h"\n\nint\nb_two(void)\n{\n\treturn a_three();\n}\n\nint\na_unused(void)\n{\n\treturn 0;\n}\n' >"$t/src/b.c"
	printf '#include "a.h"\n\nint\na_three(void)\n{\n\treturn a_one();\n}\n' >>"$t/src/b.c"
	printf '#include "b.h"\nextern int a_one(void);\n' >"$t/src/a.h"
	printf '#include "a.h"\nextern int b_two(void);\n' >"$t/src/b.h"
	mkdir "$t/src/e"
	printf '#include "f.h"\n' >"$t/src/e/e.h"
	printf '#include "e/e.h"\n' >"$t/src/f.h"
	# the header of folder g lists the file up above the file down, but
	# down calls up, and g's file extra is not listed
	mkdir "$t/src/g"
	printf '/*\n * The files, from the top down: a file calls only files below it:\n *\n *\tup.c\tthe top\n *\tdown.c\tbelow\n */\n' >"$t/src/g/g.h"
	printf '#include "g.h"\n\nint\nup_one(void)\n{\n\treturn 1;\n}\n' >"$t/src/g/up.c"
	printf '#include "g.h"\n\nint\ndown_one(void)\n{\n\treturn up_one();\n}\n' >"$t/src/g/down.c"
	printf '#include "g.h"\n\nint\nextra_one(void)\n{\n\treturn 0;\n}\n' >"$t/src/g/extra.c"
	# header d's inline function calls file d, which uses it: a circle
	# through a header
	printf 'extern int d_record(void);\n\nstatic inline int\nd_flush(void)\n{\n\treturn d_record();\n}\n' >"$t/src/d.h"
	printf '#include "d.h"\n\nint\nd_record(void)\n{\n\treturn 0;\n}\n\nint\nd_use(void)\n{\n\treturn d_flush();\n}\n' >"$t/src/d.c"
	# a module circle: module p's C file calls module q's, whose C file
	# calls p's inline function (no file calls back the file that called it)
	printf 'static inline int\np_bit(int x)\n{\n\treturn x + 1;\n}\n' >"$t/src/p.h"
	printf '#include "p.h"\n#include "q.h"\n\nint\np_drop(void)\n{\n\treturn q_free();\n}\n' >"$t/src/p.c"
	printf '#include "p.h"\nextern int q_free(void);\n' >"$t/src/q.h"
	printf '#include "q.h"\n\nint\nq_free(void)\n{\n\treturn p_bit(0);\n}\n' >"$t/src/q.c"
	# the file w has a function of 7 parameters, one of 3 bool ones, and
	# one of 6 whose function pointer's own commas do not count
	printf 'int\np_many(int a, int b, int c, int d, int e,\n\t   int f, int g)\n{\n\treturn a;\n}\n\n' >"$t/src/w.c"
	printf 'int\np_flags(bool x, bool y, bool z, bool *out)\n{\n\treturn x;\n}\n\n' >>"$t/src/w.c"
	printf 'int\np_six(int a, void (*cb) (int, int, int), int c, int d, int e,\n\t  bool f)\n{\n\treturn a;\n}\n' >>"$t/src/w.c"
	{
		printf 'int\nlong_one(void)\n{\n'
		for i in $(seq 1 99); do printf '\tx++;\n'; done
		printf '}\n'
		for i in $(seq 1 898); do printf '\n'; done
	} >"$t/src/long.c"
	out=$(python3 "$here/check-house.py" "$t/src" /dev/null)
	rc=$?
	rm -rf "$t"
	echo "$out" | sed 's/^/  self-test: /'
	[ "$rc" = 1 ] &&
		echo "$out" | grep -q '^check-house: file long.c: 1001 lines' &&
		echo "$out" | grep -q '^check-house: function long_one in long.c: 101 lines' &&
		echo "$out" | grep -q '^check-house: function p_many in w.c: 7 parameters, 0 of them bool' &&
		echo "$out" | grep -q '^check-house: function p_flags in w.c: 4 parameters, 3 of them bool' &&
		! echo "$out" | grep -q 'p_six' &&
		echo "$out" | grep -q '^check-house: include circle:' &&
		echo "$out" | grep -q '^  e/e.h f.h$' &&
		echo "$out" | grep -q '^check-house: file g/down.c calls g/up.c (up_one), above it in the order of g/g.h' &&
		echo "$out" | grep -q '^check-house: file g/extra.c is missing from the order of g/g.h' &&
		echo "$out" | grep -q '^check-house: call circle:' &&
		echo "$out" | grep -q '^    a.c -> b.c (b_two)' &&
		echo "$out" | grep -q '^    d.h -> d.c (d_record)' &&
		echo "$out" | grep -q '^check-house: module call circle:' &&
		echo "$out" | grep -q '^    q -> p (p_bit, q.c -> p.h)' &&
		names_self_test
}

# check-names.py passes a tree whose comments and docs name what exists,
# and fails once a stale name is planted in a comment and in a doc
names_self_test() {
	local t rc out
	t=$(mktemp -d /tmp/check-names.XXXXXX)
	mkdir "$t/src" "$t/docs"
	printf '/*\n * x.c\n *\t\tOne function, ng_here; see y.h and docs/design.md.\n */\nint\nng_here(void)\n{\n\treturn 0;\n}\n' >"$t/src/x.c"
	printf '/* y.h: ng_here (x.c) */\nextern int ng_here(void);\n' >"$t/src/y.h"
	printf '# design\n\n`ng_here()` in src/x.c, declared in y.h.\n' >"$t/docs/design.md"
	out=$(python3 "$here/check-names.py" "$t")
	rc=$?
	echo "$out" | sed 's/^/  self-test (clean): /'
	if [ "$rc" != 0 ]; then
		rm -rf "$t"
		return 1
	fi
	printf '/* counted by ng_gone_away (gone.c) */\n' >>"$t/src/y.h"
	printf '\n`ng_missing()` is in docs/absent.md.\n' >>"$t/docs/design.md"
	out=$(python3 "$here/check-names.py" "$t")
	rc=$?
	rm -rf "$t"
	echo "$out" | sed 's/^/  self-test (stale): /'
	[ "$rc" = 1 ] &&
		echo "$out" | grep -q '^check-names: src/y.h:3: names a file that does not exist: gone.c' &&
		echo "$out" | grep -q '^check-names: src/y.h:3: names what the code does not have: ng_gone_away' &&
		echo "$out" | grep -q '^check-names: docs/design.md:5: names a function that does not exist: ng_missing()' &&
		echo "$out" | grep -q '^check-names: docs/design.md:5: names a file that does not exist: docs/absent.md' &&
		echo "$out" | grep -q '^check-names: 4 stale name(s)'
}

# columns.py passes this tree's copy, and fails once docs/compatibility.md's
# column list, or our SQL, no longer agrees with src/columns.h
columns_self_test() {
	local t rc out
	t=$(mktemp -d /tmp/check-columns.XXXXXX)
	mkdir "$t/src" "$t/docs" "$t/scripts" "$t/dropin"
	cp "$top/src/columns.h" "$top/src/funcs.h" "$t/src/"
	cp "$top/docs/compatibility.md" "$t/docs/"
	cp "$top"/pg_stat_statements_ng--*.sql "$t/"
	cp "$top"/dropin/*.sql "$t/dropin/"
	cp "$here/columns.py" "$here/gen-dropin.py" "$t/scripts/"
	out=$(python3 "$t/scripts/columns.py" --check "$t")
	rc=$?
	echo "$out" | sed 's/^/  self-test (columns, clean): /'
	if [ "$rc" != 0 ]; then
		rm -rf "$t"
		return 1
	fi
	# a column the docs do not list, renamed in the SQL of 1.2
	sed -i '/^| `wal_fpi` |/d' "$t/docs/compatibility.md"
	sed -i 's/OUT wal_fpi int8,/OUT wal_fpis int8,/' "$t/pg_stat_statements_ng--1.2.sql"
	out=$(python3 "$t/scripts/columns.py" --check "$t")
	rc=$?
	rm -rf "$t"
	echo "$out" | sed 's/^/  self-test (columns, planted): /'
	[ "$rc" = 1 ] &&
		echo "$out" | grep -q "^columns: docs/compatibility.md's column list is not columns.h's" &&
		echo "$out" | grep -q "^columns: pg_stat_statements_ng--1.2.sql: pg_stat_statements_ng_1_2's OUT columns are not columns.h's of NG_1_2"
}

case "${1:-}" in
	--self-test)
		self_test && columns_self_test
		exit $?
		;;
	"")
		rc=0
		python3 "$here/check-house.py" "$top/src" "$here/check-house.allow" || rc=1
		# docs/design.md's file table names every file of src/
		# (a file of a folder of src/, such as slots/count.c, by its path
		# from src/)
		for f in $(cd "$top/src" && find . -name '*.[ch]' | sed 's|^\./||' | sort); do
			if ! grep -q "^| .*\`$f\`" "$top/docs/design.md"; then
				echo "check-house: $f is missing from docs/design.md's file table"
				rc=1
			fi
		done
		python3 "$here/check-names.py" "$top" || rc=1
		# the SQL, the drop-in's scripts and the docs agree with columns.h
		python3 "$here/columns.py" --check || rc=1
		exit $rc
		;;
	*)
		exec python3 "$here/check-house.py" "$1/src" "${2:-/dev/null}"
		;;
esac
