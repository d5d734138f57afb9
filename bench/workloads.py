"""bench/workloads.py -- what the tps and callgrind parts run: the workload
definitions (data they need, pgbench scripts, clients, max), the groups that
--workloads expands, and the statement sets shared with the callgrind and
read cost parts (the multi transaction, the 100,000 distinct joins).
"""

import random

from .common import die


# ---------------------------------------------------------------- workloads
#
# A workload is: the data it needs (a set of setup names), pgbench arguments,
# the scripts it writes, its clients, and the max it runs at.  Client counts
# are scaled by --scale (default: the number of cores).


# Distinct statements are made by naming different tables.  Aliases, where
# needed (a table joined with itself), carry the table's number: since
# PostgreSQL 18 the query identifier hashes a range table entry's alias name
# instead of the relation's OID, so "r1 a, r2 b" and "r3 a, r4 b" would be
# one statement there.


def workload_defs(scale, pgbench_scale):
    naccounts = 100000 * pgbench_scale
    defs = {}
    for mult in (1, 4, 16):
        c = scale * mult
        defs["hot-%dx" % mult] = dict(
            group="hot", setup={"pgbench"}, clients=c, mode="prepared",
            builtin="select-only", scripts={}, max=5000,
            desc="pgbench -S -M prepared, %d clients (%dx cores)" % (c, mult))
    defs["select1"] = dict(
        group="select1", setup=set(), clients=4 * scale, mode="simple",
        scripts={"select1.sql": "SELECT 1;\n"}, max=5000,
        desc="SELECT 1, simple protocol, %d clients" % (4 * scale))
    dalibo = {}
    for y in range(16):
        lines = ["BEGIN;"] + ["SELECT 1 FROM t%d;" % x
                              for x in range(1 + y * 8, 9 + y * 8)] + ["COMMIT;"]
        dalibo["scenario_%d.sql" % y] = "\n".join(lines) + "\n"
    for m in (100, 400):
        # as in the article: 16 pgbench processes, one client each, each
        # running its own script (so each backend runs 10 distinct statements)
        defs["dalibo-%d" % m] = dict(
            group="dalibo", setup={"dalibo"}, clients=16, mode="simple",
            scripts=dalibo, procs=[["scenario_%d.sql" % y] for y in range(16)],
            max=m,
            desc="16 pgbench processes of 1 client, each running its own script "
                 "BEGIN; SELECT 1 FROM tN x 8; COMMIT (128 tables, 130 distinct "
                 "statements), max=%d" % m)
    defs["unique"] = dict(
        group="unique", setup={"onerow"}, clients=4 * scale, mode="simple",
        scripts={"unique.sql":
                 "\\set a random(1, 1000)\n\\set b random(1, 1000)\n"
                 "\\set c random(1, 1000)\n"
                 "SELECT * FROM r:a a_:a JOIN r:b b_:b ON true JOIN r:c c_:c ON true;\n"},
        max=5000,
        desc="3 random one-row tables out of 1000 joined (1e9 distinct "
             "statements), %d clients, max=5000" % (4 * scale))
    defs["churn"] = dict(
        group="churn", setup={"onerow"}, clients=4 * scale, mode="simple",
        scripts={"hot.sql@80":
                 "\\set a random(1, 1000)\nSELECT 1 FROM r:a;\n",
                 "churn.sql@20":
                 "\\set a random(1, 100)\n\\set b random(1, 1000)\n"
                 "SELECT 1 FROM r:a a_:a, r:b b_:b;\n"},
        max=5000,
        desc="80%% one of 1000 hot statements, 20%% one of 100,000 churn "
             "statements, %d clients, max=5000" % (4 * scale))
    multi = ["\\set aid random(1, %d)" % naccounts] + multi_transaction(":aid")
    defs["multi"] = dict(
        group="multi", setup={"pgbench"}, clients=4 * scale, mode="simple",
        scripts={"multi.sql": "\n".join(multi) + "\n"}, max=5000,
        desc="BEGIN; 8 distinct point selects with literals; COMMIT "
             "(simple protocol), %d clients" % (4 * scale))
    return defs


def multi_transaction(aid):
    """The multi workload's transaction, for account aid (a literal or a
    pgbench variable)."""
    return ["BEGIN;"] + [q.replace("AID", aid) for q in (
        "SELECT abalance FROM pgbench_accounts WHERE aid = AID;",
        "SELECT bid FROM pgbench_accounts WHERE aid = AID;",
        "SELECT filler FROM pgbench_accounts WHERE aid = AID;",
        "SELECT aid FROM pgbench_accounts WHERE aid = AID;",
        "SELECT abalance, bid FROM pgbench_accounts WHERE aid = AID;",
        "SELECT count(*) FROM pgbench_accounts WHERE aid = AID;",
        "SELECT abalance + 1 FROM pgbench_accounts WHERE aid = AID;",
        "SELECT sum(abalance) FROM pgbench_accounts "
        "WHERE aid BETWEEN AID AND AID + 10;")] + ["COMMIT;"]


GROUPS = {
    "hot": ["hot-1x", "hot-4x", "hot-16x"],
    "dalibo": ["dalibo-100", "dalibo-400"],
}
DEFAULT_WORKLOADS = "hot:5,select1:5,dalibo:3,unique:3,churn:3,multi:3"


def parse_workloads(spec, default_rounds, defs):
    """'hot:5,select1,dalibo-100:3' -> [(name, rounds)] in order."""
    out = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        name, _, r = item.partition(":")
        rounds = int(r) if r else default_rounds
        names = GROUPS.get(name, [name])
        for n in names:
            if n not in defs:
                die("unknown workload %r (known: %s)" % (
                    n, ", ".join(list(GROUPS) + sorted(defs))))
            out.append((n, rounds))
    return out


def prepared_statements(k):
    """pgbench -S's statement prepared once, then k EXECUTEs of it with
    varying accounts, for postgres --single (which speaks the simple
    protocol only).  Each EXECUTE runs the prepared statement's plan through
    ExecutorStart/Run/Finish/End as pgbench -M prepared's Bind/Execute does;
    what differs is the parse analysis and ProcessUtility of the EXECUTE
    line itself, which neither extension counts (both pay its hooks' entry
    tests).  The plan is custom for the first 5 executions, generic after,
    so per statement (3N - N runs) it is the cached plan's cost."""
    out = ["PREPARE ng_s (int) AS SELECT abalance FROM pgbench_accounts "
           "WHERE aid = $1;"]
    for i in range(k):
        out.append("EXECUTE ng_s(%d);" % (1 + i * 7 % 100000))
    return out


def churn_statements(k, seed=13):
    """k statements of the churn workload's mix (80% one of 1000 hot
    statements, 20% one of 100,000 churn statements), the same k first ones
    for every k (a fixed seed)."""
    rnd = random.Random(seed)
    out = []
    for _ in range(k):
        if rnd.random() < 0.8:
            out.append("SELECT 1 FROM r%d;" % rnd.randint(1, 1000))
        else:
            a, b = rnd.randint(1, 100), rnd.randint(1, 1000)
            out.append("SELECT 1 FROM r%d a_%d, r%d b_%d;" % (a, a, b, b))
    return out


def fill_statements(lo, hi):
    """Statements number lo..hi-1 of the 100,000 distinct two-table
    statements (a in 1..100, b in 1..1000)."""
    out = []
    for i in range(lo, hi):
        a, b = 1 + i // 1000, 1 + i % 1000
        out.append("SELECT 1 FROM r%d a_%d, r%d b_%d;" % (a, a, b, b))
    return out
