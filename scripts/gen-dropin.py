#!/usr/bin/env python3
"""gen-dropin.py -- write the drop-in's SQL scripts (dropin/*.sql).

The drop-in installs, under the name pg_stat_statements, SQL objects of the
same names, columns, types, defaults and privileges as contrib's module of
each version from 1.4 (the oldest contrib can still create) to 1.12, backed
by our library.  The column list of each API version is spelled out once
here, and every script is derived from it, so the versions cannot drift
apart.  Run it after changing this file; the output is committed.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "dropin")

I8, F8 = "int8", "float8"


def columns(api):
    """The OUT columns of pg_stat_statements(showtext) for an API version."""
    cols = [("userid", "oid"), ("dbid", "oid")]
    if api >= (1, 9):
        cols.append(("toplevel", "bool"))
    cols += [("queryid", "bigint"), ("query", "text")]
    if api >= (1, 8):
        cols += [("plans", I8)] + [(f"{s}_plan_time", F8) for s in
                                    ("total", "min", "max", "mean", "stddev")]
        cols += [("calls", I8)] + [(f"{s}_exec_time", F8) for s in
                                    ("total", "min", "max", "mean", "stddev")]
    else:
        cols += [("calls", I8)] + [(f"{s}_time", F8) for s in
                                    ("total", "min", "max", "mean", "stddev")]
    cols.append(("rows", I8))
    for area in ("shared", "local"):
        cols += [(f"{area}_blks_{s}", I8) for s in ("hit", "read", "dirtied", "written")]
    cols += [("temp_blks_read", I8), ("temp_blks_written", I8)]
    if api >= (1, 11):
        cols += [("shared_blk_read_time", F8), ("shared_blk_write_time", F8),
                 ("local_blk_read_time", F8), ("local_blk_write_time", F8)]
    else:
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
SYMBOL = {(1, 3): "pg_stat_statements_1_3", (1, 8): "pg_stat_statements_1_8",
          (1, 9): "pg_stat_statements_1_9", (1, 10): "pg_stat_statements_1_10",
          (1, 11): "pg_stat_statements_1_11", (1, 12): "pg_stat_statements_1_12"}
EXPECTED = {(1, 3): 23, (1, 8): 32, (1, 9): 33, (1, 10): 43, (1, 11): 49, (1, 12): 52}


def header(name, first_line):
    return (f"/* {name} (pg_stat_statements_ng drop-in) */\n\n"
            f"-- complain if script is sourced in psql, rather than via {first_line}\n"
            f"\\echo Use \"{first_line}\" to load this file. \\quit\n\n")


def create_statements(api):
    cols = columns(api)
    assert len(cols) == EXPECTED[api], (api, len(cols))
    out = ["CREATE FUNCTION pg_stat_statements(IN showtext boolean,"]
    out += [f"    OUT {n} {t}," for n, t in cols[:-1]]
    out.append(f"    OUT {cols[-1][0]} {cols[-1][1]}")
    out.append(")")
    out.append("RETURNS SETOF record")
    out.append(f"AS 'MODULE_PATHNAME', '{SYMBOL[api]}'")
    out.append("LANGUAGE C STRICT VOLATILE PARALLEL SAFE;\n")
    out.append("CREATE VIEW pg_stat_statements AS\n  SELECT * FROM pg_stat_statements(true);\n")
    out.append("GRANT SELECT ON pg_stat_statements TO PUBLIC;\n")
    return "\n".join(out) + "\n"


def replace_statements(api):
    return ("-- the view and its function change shape: replace both\n"
            "DROP VIEW pg_stat_statements;\n"
            "DROP FUNCTION pg_stat_statements(boolean);\n\n" + create_statements(api))


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


if __name__ == "__main__":
    main()
