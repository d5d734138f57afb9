#!/usr/bin/env python3
"""bench/readconns.py -- the read cost at several max_connections: ours
against contrib in one cluster, read after read.

For each max_connections given, one throwaway cluster with both contrib's
pg_stat_statements and ours preloaded (so both track the same statements):
fill both with --entries distinct statements, start --holders backends that
each run --per-holder statements of the set and sleep (their slots stay bound
with counts in them; every other connection slot stays unused), then read
contrib's view and ours alternately in one psql session, --reps times after
a warm-up, the order swapped every rep.  Reports per query the median (min)
of each and the median (min-max) of the paired ratios ours / contrib.

  bench/readconns.py --bindir /usr/lib/postgresql/15/bin \\
      --max-connections 100,1000,5000 --entries 100000 --reps 11

With --callgrind, instructions instead of time, free of the machine's
noise: for each max_connections, postgres --single (both libraries
preloaded, --cg-entries statements tracked by each) under valgrind
--tool=callgrind runs --cg-reads and then 3 x --cg-reads reads of each
view, one view per run; (I(3N) - I(N)) / 2N is the instructions of one
read (the start-up, whose shared memory grows with max_connections, and the
statements that fill the views are the same in both runs, so they cancel
out).

  bench/readconns.py --callgrind --max-connections 100,1000,5000

Builds ours from git archive of --ng-rev (HEAD by default) into a private
copy of --bindir's installation (bench/tree.py), as bench/run.py does.
Python 3 standard library only.
"""

import argparse
import atexit
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from bench.callgrind import TIMED_FUNCTION, collected_events, inclusive_of  # noqa: E402
from bench.common import as_pg, log, mkdir_pg, run  # noqa: E402
from bench.cluster import Cluster  # noqa: E402
from bench.tree import Tree  # noqa: E402
from bench.workloads import fill_statements  # noqa: E402

TIME_RE = re.compile(r"^Time: ([0-9.]+) ms", re.M)

# (label, contrib's query, ours)
QUERIES = [
    ("count, no text",
     "SELECT count(*) FROM pg_stat_statements(false);",
     "SELECT count(*) FROM pg_stat_statements_ng(false);"),
    ("count, with text",
     "SELECT count(*) FROM pg_stat_statements(true);",
     "SELECT count(*) FROM pg_stat_statements_ng(true);"),
    ("all rows, no text",
     "SELECT * FROM pg_stat_statements(false);",
     "SELECT * FROM pg_stat_statements_ng(false);"),
    ("all rows, with text",
     "SELECT * FROM pg_stat_statements;",
     "SELECT * FROM pg_stat_statements_ng;"),
]


class BothCluster(Cluster):
    """A cluster with contrib's library and ours preloaded."""

    def preload(self):
        return "pg_stat_statements, pg_stat_statements_ng"


def fill(cl, workdir, entries):
    cl.psql("DO $$ BEGIN FOR i IN 1..%d LOOP "
            "EXECUTE format('CREATE TABLE r%%s (id int)', i); "
            "EXECUTE format('INSERT INTO r%%s VALUES (1)', i); "
            "END LOOP; END $$;\n" % min(1000, entries))
    cl.psql("SELECT pg_stat_statements_reset();\n"
            "SELECT pg_stat_statements_ng_reset();\n")
    stmts = fill_statements(0, entries)
    procs = []
    for part in range(2):
        chunk = stmts[part::2]
        path = os.path.join(workdir, "fill-%d.sql" % part)
        with open(path, "w") as f:
            for i in range(0, len(chunk), 50):
                f.write(" \\; ".join(s.rstrip(";") for s in chunk[i:i + 50]) + ";\n")
        procs.append(cl.psql_file(path))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError("fill failed: %s" % err[-1000:])


def start_holders(cl, workdir, entries, n, per):
    holders = []
    for h in range(n):
        lo = (h * per) % max(1, entries - per)
        path = os.path.join(workdir, "hold-%d.sql" % h)
        with open(path, "w") as f:
            f.write("\n".join(fill_statements(lo, lo + per)))
            f.write("\nSELECT pg_sleep(3600);\n")
        holders.append(cl.psql_file(path))
    deadline = time.time() + 300
    while True:
        k = int(cl.psql("SELECT count(*) FROM pg_stat_activity "
                        "WHERE wait_event = 'PgSleep';\n").strip())
        if k >= n:
            return holders
        if time.time() > deadline:
            raise RuntimeError("only %d of %d holders are sleeping" % (k, n))
        time.sleep(0.2)


def interleaved(cl, q_pgss, q_ng, reps):
    """One psql session: a warm-up of each, then reps pairs, the order
    swapped every rep.  Returns ([pgss ms], [ng ms])."""
    script = ["\\o /dev/null", q_pgss, q_ng]
    order = []
    for r in range(reps):
        pair = [("pgss", q_pgss), ("ng", q_ng)]
        if r % 2:
            pair.reverse()
        for who, q in pair:
            script.append(q)
            order.append(who)
    out = cl.psql("\n".join(script) + "\n", timing=True)
    ts = [float(x) for x in TIME_RE.findall(out)][2:]
    if len(ts) != len(order):
        raise RuntimeError("expected %d timings, got %d" % (len(order), len(ts)))
    got = {"pgss": [], "ng": []}
    for who, t in zip(order, ts):
        got[who].append(t)
    return got["pgss"], got["ng"]


def measure(args, tree, workdir, maxconn, port):
    cwd = os.path.join(workdir, "c%d" % maxconn)
    mkdir_pg(cwd)
    cl = BothCluster(tree, "ng", cwd, port)
    cl.initdb()
    settings = {"max_connections": maxconn,
                "shared_buffers": "128MB",
                "pg_stat_statements.max": args.entries + 10000,
                "pg_stat_statements.save": "off",
                "pg_stat_statements_ng.max": args.entries + 10000,
                "pg_stat_statements_ng.save": "off"}
    cl.write_run_conf(settings)
    cl.start()
    holders = []
    res = {}
    try:
        cl.psql("CREATE EXTENSION pg_stat_statements;\n"
                "CREATE EXTENSION pg_stat_statements_ng;\n")
        fill(cl, cwd, args.entries)
        holders = start_holders(cl, cwd, args.entries, args.holders, args.per_holder)
        n = cl.psql("SELECT (SELECT count(*) FROM pg_stat_statements(false)), "
                    "(SELECT count(*) FROM pg_stat_statements_ng(false));\n").strip()
        log("max_connections %d: entries (contrib|ours) %s" % (maxconn, n))
        # contrib's columns (those ours has under the same name) read from
        # both: the same rows and values to the client, so that only the
        # read differs, not the output of the columns contrib lacks
        cols = cl.psql("SELECT string_agg(quote_ident(c.attname), ', ' "
                       "ORDER BY c.attnum) FROM pg_attribute c "
                       "JOIN pg_attribute o ON o.attname = c.attname "
                       "AND o.attrelid = 'pg_stat_statements_ng'::regclass "
                       "WHERE c.attrelid = 'pg_stat_statements'::regclass "
                       "AND c.attnum > 0;\n").strip()
        log("contrib's columns that ours has too: %s" % cols)
        same = [("all rows, contrib's columns, no text",
                 "SELECT %s FROM pg_stat_statements(false);" % cols,
                 "SELECT %s FROM pg_stat_statements_ng(false);" % cols),
                ("all rows, contrib's columns, with text",
                 "SELECT %s FROM pg_stat_statements;" % cols,
                 "SELECT %s FROM pg_stat_statements_ng;" % cols)]
        for label, qp, qn in QUERIES + same:
            if args.counts_only and not label.startswith("count"):
                continue
            if args.only and not any(o in label for o in args.only.split("|")):
                continue
            tp, tn = interleaved(cl, qp, qn, args.reps)
            ratios = [b / a for a, b in zip(tp, tn)]
            res[label] = {"pgss": tp, "ng": tn, "ratios": ratios}
            log("max_connections %5d  %-20s contrib %7.1f ms  ours %7.1f ms  "
                "ratio %.2f (%.2f-%.2f)"
                % (maxconn, label, statistics.median(tp), statistics.median(tn),
                   statistics.median(ratios), min(ratios), max(ratios)))
    finally:
        for h in holders:
            h.kill()
        for h in holders:
            h.wait()
        cl.stop()
        if not args.keep:
            shutil.rmtree(cl.data, ignore_errors=True)
    return res


def callgrind_reads(args, tree, workdir, maxconn):
    """Instructions of one read of each view at maxconn: {contender: Ir}."""
    cwd = os.path.join(workdir, "cg%d" % maxconn)
    mkdir_pg(cwd)
    cl = BothCluster(tree, "ng", cwd, 55470)
    cl.initdb()
    cl.write_run_conf({"max_connections": maxconn,
                       "pg_stat_statements.max": args.cg_entries + 1000,
                       "pg_stat_statements.save": "off",
                       "pg_stat_statements_ng.max": args.cg_entries + 1000,
                       "pg_stat_statements_ng.save": "off"})
    single = [tree.bin("postgres"), "--single", "-D", cl.data, "postgres"]
    setup = ("CREATE EXTENSION pg_stat_statements;\n"
             "CREATE EXTENSION pg_stat_statements_ng;\n"
             "DO $$ BEGIN FOR i IN 1..%d LOOP EXECUTE format("
             "'CREATE TABLE r%%s (id int)', i); END LOOP; END $$;\n"
             % min(1000, args.cg_entries))
    run(as_pg(single), input=setup)
    fill_sql = "\n".join(fill_statements(0, args.cg_entries)) + "\n"
    out = {}
    for who, q in (("pgss", "SELECT count(*) FROM pg_stat_statements(false);"),
                   ("ng", "SELECT count(*) FROM pg_stat_statements_ng(false);")):
        if args.cg_only and who != args.cg_only:
            continue
        counts = {}
        for k in (args.cg_reads, 3 * args.cg_reads):
            path = os.path.join(cwd, "in-%s-%d.sql" % (who, k))
            with open(path, "w") as f:
                f.write(fill_sql + (q + "\n") * k)
            cgout = os.path.join(cwd, "cg.out.%s-%d" % (who, k))
            with open(path) as inp:
                p = run(as_pg(["valgrind", "--tool=callgrind",
                               "--callgrind-out-file=" + cgout] + single),
                        stdin=inp, check=False)
            ev = collected_events(p.stderr)
            if not ev:
                raise RuntimeError("callgrind gave no count:\n" + p.stderr[-2000:])
            # ours' maintenance runs by the clock: left out
            counts[k] = ev["Ir"] - inclusive_of(cgout, TIMED_FUNCTION)
        out[who] = (counts[3 * args.cg_reads] - counts[args.cg_reads]) / (2.0 * args.cg_reads)
        log("max_connections %5d  %-4s %12.0f instructions a read of %d entries"
            % (maxconn, who, out[who], args.cg_entries))
    if not args.keep:
        shutil.rmtree(cwd, ignore_errors=True)
    return out


def table(results):
    lines = ["| max_connections | read | contrib ms | ours ms | ours / contrib |",
             "|---:|---|---|---|---|"]
    for maxconn, res in results:
        for label, r in res.items():
            lines.append("| %d | %s | %.1f (%.1f) | %.1f (%.1f) | **%.2f** (%.2f-%.2f) |" % (
                maxconn, label, statistics.median(r["pgss"]), min(r["pgss"]),
                statistics.median(r["ng"]), min(r["ng"]),
                statistics.median(r["ratios"]), min(r["ratios"]), max(r["ratios"])))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bindir", default="/usr/lib/postgresql/15/bin")
    ap.add_argument("--max-connections", default="100,1000,5000")
    ap.add_argument("--entries", type=int, default=100000)
    ap.add_argument("--holders", type=int, default=50)
    ap.add_argument("--per-holder", type=int, default=100)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--counts-only", action="store_true",
                    help="time the count(*) reads only, not all rows to the client")
    ap.add_argument("--only", help="only the reads whose label holds one of "
                    "these |-separated words")
    ap.add_argument("--ng-rev", default="HEAD")
    ap.add_argument("--ext-src", help="build ours from this directory instead")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--callgrind", action="store_true",
                    help="instructions of a read (postgres --single) instead of times")
    ap.add_argument("--cg-entries", type=int, default=2000)
    ap.add_argument("--cg-reads", type=int, default=10)
    ap.add_argument("--cg-only", choices=["pgss", "ng"],
                    help="count the reads of this view only")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="pgssng-readconns.", dir="/tmp")
    os.chmod(workdir, 0o755)
    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres", "postgres")
    if not args.keep:
        atexit.register(shutil.rmtree, workdir, True)
    tree = Tree(args.bindir, workdir, args.ext_src, None, False, ng_rev=args.ng_rev)
    log("PostgreSQL %s, ours at %s" % (tree.version, tree.ng_commit))
    if args.callgrind:
        print("ours at %s, PostgreSQL %s, instructions of one read of %d entries "
              "(count(*), no text)" % (tree.ng_commit, tree.version, args.cg_entries))
        print("| max_connections | contrib | ours | ours / contrib |\n|---:|---:|---:|---:|")
        for mc in (int(x) for x in args.max_connections.split(",")):
            r = callgrind_reads(args, tree, workdir, mc)
            print("| %d | %s | %s | %s |" % (
                mc, "%.0f" % r["pgss"] if "pgss" in r else "",
                "%.0f" % r["ng"] if "ng" in r else "",
                "%.2f" % (r["ng"] / r["pgss"]) if len(r) == 2 else ""))
            sys.stdout.flush()
        return 0
    results = []
    for i, mc in enumerate(int(x) for x in args.max_connections.split(",")):
        results.append((mc, measure(args, tree, workdir, mc, 55480 + i)))
    print("ours at %s, PostgreSQL %s, %d entries, %d holders x %d statements, "
          "%d reps" % (tree.ng_commit, tree.version, args.entries, args.holders,
                       args.per_holder, args.reps))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
