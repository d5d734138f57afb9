#!/usr/bin/env python3
"""gen-dropin.py -- write the drop-in's SQL scripts (dropin/*.sql).

The drop-in installs, under the name pg_stat_statements, SQL objects of the
same names, columns, types, defaults and privileges as contrib's module of
each version from 1.4 (the oldest contrib can still create) to 1.12, backed
by our library, and the update scripts from 1.0, for a database that
pg_upgrade carried over with an older version.  The column list of each
API version is src/columns.h's (read by scripts/columns.py), and every
script is derived from it, so the versions cannot drift apart.  Run it after
changing this file or columns.h; the output is committed (scripts/columns.py
--check fails when it is not what this writes).

    scripts/gen-dropin.py                  write dropin/
    scripts/gen-dropin.py --out DIR        write the scripts into DIR
    scripts/gen-dropin.py --oldest DIR     also write contrib 1.0's base script
                                           into DIR (not installed: a test that
                                           creates the extension at 1.0 installs
                                           it for the time of the test)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from columns import columns_of  # noqa: E402

OUT = os.path.join(HERE, "..", "dropin")


def columns(api):
    """The OUT columns of pg_stat_statements(showtext) for an API version:
    src/columns.h's (scripts/columns.py)."""
    return columns_of(f"PGSS_{api[0]}_{api[1]}")


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
    out = OUT
    if len(sys.argv) == 3 and sys.argv[1] == "--out":
        out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    name = "pg_stat_statements--1.4.sql"
    with open(os.path.join(out, name), "w") as f:
        f.write(header(name, "CREATE EXTENSION pg_stat_statements"))
        f.write(RESET_VOID + "\n" + create_statements((1, 3)))
    for old, new, body in STEPS:
        name = f"pg_stat_statements--{old}--{new}.sql"
        with open(os.path.join(out, name), "w") as f:
            f.write(header(name, f"ALTER EXTENSION pg_stat_statements UPDATE TO '{new}'"))
            f.write(body)
    if len(sys.argv) == 3 and sys.argv[1] == "--oldest":
        name = "pg_stat_statements--1.0.sql"
        with open(os.path.join(sys.argv[2], name), "w") as f:
            f.write(header(name, "CREATE EXTENSION pg_stat_statements"))
            f.write(BASE_1_0)


if __name__ == "__main__":
    main()
