#!/usr/bin/env python3
"""gen-dropin.py -- write the drop-in's SQL scripts (dropin/*.sql).

The drop-in installs, under the name pg_stat_statements, SQL objects of the
same names, columns, types, defaults and privileges as contrib's module of
each version from 1.4 (the oldest contrib can still create) to 1.12, backed
by our library, and the update scripts from 1.0, for a database that
pg_upgrade carried over with an older version.  The column list of each API version is spelled out once
here, and every script is derived from it, so the versions cannot drift
apart.  Run it after changing this file; the output is committed.

    scripts/gen-dropin.py                  write dropin/
    scripts/gen-dropin.py --oldest DIR     also write contrib 1.0's base script
                                           into DIR (not installed: a test that
                                           creates the extension at 1.0 installs
                                           it for the time of the test)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "dropin")

I8, F8 = "int8", "float8"


def columns(api):
    """The OUT columns of pg_stat_statements(showtext) for an API version."""
    cols = [("userid", "oid"), ("dbid", "oid")]
    if api >= (1, 9):
        cols.append(("toplevel", "bool"))
    if api >= (1, 2):
        cols.append(("queryid", "bigint"))
    cols.append(("query", "text"))
    if api < (1, 3):
        cols += [("calls", I8), ("total_time", F8)]
    elif api >= (1, 8):
        cols += [("plans", I8)] + [(f"{s}_plan_time", F8) for s in
                                    ("total", "min", "max", "mean", "stddev")]
        cols += [("calls", I8)] + [(f"{s}_exec_time", F8) for s in
                                    ("total", "min", "max", "mean", "stddev")]
    else:
        cols += [("calls", I8)] + [(f"{s}_time", F8) for s in
                                    ("total", "min", "max", "mean", "stddev")]
    cols.append(("rows", I8))
    for area in ("shared", "local"):
        cols += [(f"{area}_blks_{s}", I8) for s in ("hit", "read", "dirtied", "written")
                 if s != "dirtied" or api >= (1, 1)]
    cols += [("temp_blks_read", I8), ("temp_blks_written", I8)]
    if api >= (1, 11):
        cols += [("shared_blk_read_time", F8), ("shared_blk_write_time", F8),
                 ("local_blk_read_time", F8), ("local_blk_write_time", F8)]
    elif api >= (1, 1):
        cols += [("blk_read_time", F8), ("blk_write_time", F8)]
    if api >= (1, 10):
        cols += [("temp_blk_read_time", F8), ("temp_blk_write_time", F8)]
    if api >= (1, 8):
        cols += [("wal_records", I8), ("wal_fpi", I8), ("wal_bytes", "numeric")]
    if api >= (1, 12):
        cols.append(("wal_buffers_full", I8))
    if api >= (1, 10):
        cols.append(("jit_functions", I8))
        for s in ("generation",):
            cols.append((f"jit_{s}_time", F8))
        for s in ("inlining", "optimization", "emission"):
            cols += [(f"jit_{s}_count", I8), (f"jit_{s}_time", F8)]
    if api >= (1, 11):
        cols += [("jit_deform_count", I8), ("jit_deform_time", F8)]
    if api >= (1, 12):
        cols += [("parallel_workers_to_launch", I8), ("parallel_workers_launched", I8)]
    if api >= (1, 11):
        cols += [("stats_since", "timestamp with time zone"),
                 ("minmax_stats_since", "timestamp with time zone")]
    return cols


# the C symbol that returns each API version's shape (contrib's names)
SYMBOL = {(1, 0): "pg_stat_statements", (1, 1): "pg_stat_statements",
          (1, 2): "pg_stat_statements_1_2", (1, 3): "pg_stat_statements_1_3", (1, 8): "pg_stat_statements_1_8",
          (1, 9): "pg_stat_statements_1_9", (1, 10): "pg_stat_statements_1_10",
          (1, 11): "pg_stat_statements_1_11", (1, 12): "pg_stat_statements_1_12"}
EXPECTED = {(1, 0): 14, (1, 1): 18, (1, 2): 19, (1, 3): 23, (1, 8): 32, (1, 9): 33, (1, 10): 43, (1, 11): 49, (1, 12): 52}


def header(name, first_line):
    return (f"/* {name} (pg_stat_statements_ng drop-in) */\n\n"
            f"-- complain if script is sourced in psql, rather than via {first_line}\n"
            f"\\echo Use \"{first_line}\" to load this file. \\quit\n\n")


def create_statements(api, attributes="STRICT VOLATILE PARALLEL SAFE"):
    """The function and view of an API version.  Until 1.1 the function
    took no showtext argument and called the symbol of its own name, with
    contrib's attributes of the time (LANGUAGE C only); 1.2 and 1.3 were
    STRICT VOLATILE, 1.4 made them PARALLEL SAFE."""
    cols = columns(api)
    assert len(cols) == EXPECTED[api], (api, len(cols))
    old = api < (1, 2)
    out = ["CREATE FUNCTION pg_stat_statements(" + ("" if old else "IN showtext boolean,")]
    out += [f"    OUT {n} {t}," for n, t in cols[:-1]]
    out.append(f"    OUT {cols[-1][0]} {cols[-1][1]}")
    out.append(")")
    out.append("RETURNS SETOF record")
    if old:
        out.append("AS 'MODULE_PATHNAME'")
        out.append("LANGUAGE C;\n")
    else:
        out.append(f"AS 'MODULE_PATHNAME', '{SYMBOL[api]}'")
        out.append(f"LANGUAGE C {attributes};\n")
    out.append("CREATE VIEW pg_stat_statements AS\n  SELECT * FROM pg_stat_statements(" +
               ("" if old else "true") + ");\n")
    out.append("GRANT SELECT ON pg_stat_statements TO PUBLIC;\n")
    return "\n".join(out) + "\n"


def replace_statements(api, attributes="STRICT VOLATILE PARALLEL SAFE", old_args="boolean"):
    return ("-- the view and its function change shape: replace both\n"
            "DROP VIEW pg_stat_statements;\n"
            f"DROP FUNCTION pg_stat_statements({old_args});\n\n" +
            create_statements(api, attributes))


# contrib 1.0's objects: no base script of it is installed (contrib cannot
# create 1.0 either); --oldest writes one for tests
BASE_1_0 = """CREATE FUNCTION pg_stat_statements_reset()
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C;

""" + create_statements((1, 0)) + """
REVOKE ALL ON FUNCTION pg_stat_statements_reset() FROM PUBLIC;
"""


RESET_VOID = """CREATE FUNCTION pg_stat_statements_reset()
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C PARALLEL SAFE;

REVOKE ALL ON FUNCTION pg_stat_statements_reset() FROM PUBLIC;
"""

RESET_1_7 = """CREATE FUNCTION pg_stat_statements_reset(IN userid Oid DEFAULT 0,
    IN dbid Oid DEFAULT 0,
    IN queryid bigint DEFAULT 0
)
RETURNS void
AS 'MODULE_PATHNAME', 'pg_stat_statements_reset_1_7'
LANGUAGE C STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION pg_stat_statements_reset(Oid, Oid, bigint) FROM PUBLIC;
"""

RESET_1_11 = """CREATE FUNCTION pg_stat_statements_reset(IN userid Oid DEFAULT 0,
    IN dbid Oid DEFAULT 0,
    IN queryid bigint DEFAULT 0,
    IN minmax_only boolean DEFAULT false
)
RETURNS timestamp with time zone
AS 'MODULE_PATHNAME', 'pg_stat_statements_reset_1_11'
LANGUAGE C STRICT PARALLEL SAFE;

REVOKE ALL ON FUNCTION pg_stat_statements_reset(Oid, Oid, bigint, boolean) FROM PUBLIC;
"""

INFO = """CREATE FUNCTION pg_stat_statements_info(
    OUT dealloc bigint,
    OUT stats_reset timestamp with time zone
)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW pg_stat_statements_info AS
  SELECT * FROM pg_stat_statements_info();

GRANT SELECT ON pg_stat_statements_info TO PUBLIC;
"""

# each update step: (from, to, body)
STEPS = [
    ("1.0", "1.1", replace_statements((1, 1), old_args="")),
    ("1.1", "1.2", replace_statements((1, 2), "STRICT VOLATILE", old_args="")),
    ("1.2", "1.3", replace_statements((1, 3), "STRICT VOLATILE")),
    ("1.3", "1.4", "ALTER FUNCTION pg_stat_statements_reset() PARALLEL SAFE;\n"
     "ALTER FUNCTION pg_stat_statements(boolean) PARALLEL SAFE;\n"),
    ("1.4", "1.5", "GRANT EXECUTE ON FUNCTION pg_stat_statements_reset() TO pg_read_all_stats;\n"),
    ("1.5", "1.6", "REVOKE EXECUTE ON FUNCTION pg_stat_statements_reset() FROM pg_read_all_stats;\n"),
    ("1.6", "1.7", "-- reset takes a filter\nDROP FUNCTION pg_stat_statements_reset();\n\n" + RESET_1_7),
    ("1.7", "1.8", replace_statements((1, 8))),
    ("1.8", "1.9", INFO + "\n" + replace_statements((1, 9))),
    ("1.9", "1.10", replace_statements((1, 10))),
    ("1.10", "1.11", replace_statements((1, 11)) +
     "\n-- reset can reset min/max only, and says when\n"
     "DROP FUNCTION pg_stat_statements_reset(Oid, Oid, bigint);\n\n" + RESET_1_11),
    ("1.11", "1.12", replace_statements((1, 12))),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    name = "pg_stat_statements--1.4.sql"
    with open(os.path.join(OUT, name), "w") as f:
        f.write(header(name, "CREATE EXTENSION pg_stat_statements"))
        f.write(RESET_VOID + "\n" + create_statements((1, 3)))
    for old, new, body in STEPS:
        name = f"pg_stat_statements--{old}--{new}.sql"
        with open(os.path.join(OUT, name), "w") as f:
            f.write(header(name, f"ALTER EXTENSION pg_stat_statements UPDATE TO '{new}'"))
            f.write(body)
    if len(sys.argv) == 3 and sys.argv[1] == "--oldest":
        name = "pg_stat_statements--1.0.sql"
        with open(os.path.join(sys.argv[2], name), "w") as f:
            f.write(header(name, "CREATE EXTENSION pg_stat_statements"))
            f.write(BASE_1_0)


if __name__ == "__main__":
    main()
