"""bench/callgrind.py -- the callgrind part: instructions per statement,
postgres --single fed N and 3N statements of the chosen set under valgrind
--tool=callgrind, per contender, with the top of callgrind_annotate kept.
"""

import os
import re
import shutil

from .common import as_pg, log, mkdir_pg, run
from .workloads import (churn_statements, fill_statements, multi_transaction,
                        prepared_statements)


# ---------------------------------------------------------------- callgrind part

COLLECTED_RE = re.compile(r"Collected : ([\d ]+)")
EVENTS_RE = re.compile(r"Events +: ([\w ]+)")


def collected_events(stderr):
    """valgrind's totals, {event: count} (Ir, and with --cache-sim=yes the
    cache events: D1mr, D1mw, ...), from its stderr; None if it gave none."""
    m = COLLECTED_RE.search(stderr)
    if not m:
        return None
    e = EVENTS_RE.search(stderr)
    names = e.group(1).split() if e else ["Ir"]
    return dict(zip(names, (int(v) for v in m.group(1).split())))

# ours' work that runs by the clock, once a second (ng_slots_maintenance):
# under valgrind a statement takes some 50 times longer, so each of its runs
# is shared by some 50 times fewer statements than natively, and its cost
# per statement here is some 50 times its native cost; reported apart
TIMED_FUNCTION = "ng_slots_maintenance"


def inclusive_of(out, function):
    """Instructions spent in function and what it calls, from callgrind
    output file out (0 if it never ran)."""
    ann = run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
              check=False)
    total = 0
    for line in ann.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S+)", line)
        if m and m.group(2).split(":")[-1] == function:
            total += int(m.group(1).replace(",", ""))
    return total


def callgrind_part(args, tree, clusters, outdir, workdir):
    if not shutil.which("valgrind"):
        log("valgrind is not installed: skipping callgrind (bench/setup.sh installs it)")
        return None
    n = args.callgrind_n
    cgdir = os.path.join(workdir, "cg")
    mkdir_pg(cgdir)
    inputs = {}
    # select1: one statement over and over (the per-statement cost of a
    # statement already tracked); new: every statement a new one, in a table
    # kept full (max = 500), so each costs an entry, a text and an eviction
    # multi: the multi workload's transaction, with varying literals (per
    # "statement" is then per transaction of 10 statements); prepared:
    # pgbench -S's statement prepared once, then EXECUTEd with varying
    # parameters (see prepared_statements)
    new = args.callgrind_set == "new"
    for k in (n, 3 * n):
        path = os.path.join(cgdir, "%s-%d.sql" % (args.callgrind_set, k))
        with open(path, "w") as f:
            if new:
                f.write("\n".join(fill_statements(0, k)) + "\n")
            elif args.callgrind_set == "multi":
                for i in range(k):
                    f.write("\n".join(multi_transaction(str(1 + i * 7 % 100000))) + "\n")
            elif args.callgrind_set == "prepared":
                f.write("\n".join(prepared_statements(k)) + "\n")
            elif args.callgrind_set == "churn":
                # the same 5000 statements fill the table in both inputs
                # (two-table joins the mix never draws: r101 and up), then
                # the same 10,000 statements of the mix warm it up (each
                # hot statement runs some 8 times, and so has its entry, as
                # in a steady run of the workload), so the difference is
                # the mix on a full table, hot statements in place
                f.write("\n".join(fill_statements(100000, 105000)
                                   + churn_statements(10000, seed=7)
                                   + churn_statements(k)) + "\n")
            else:
                f.write("SELECT 1;\n" * k)
        inputs[k] = path
    res = {"n": n, "set": args.callgrind_set,
           "statement": {"new": "a distinct two-table join (%s ...), max = 500"
                         % fill_statements(0, 1)[0],
                         "multi": "the multi workload's transaction (BEGIN, 8 point "
                         "selects with literals, COMMIT: 10 lines)",
                         "prepared": "EXECUTE of pgbench -S's SELECT abalance ... "
                         "WHERE aid = $1, prepared once (simple protocol)",
                         "churn": "the churn workload's mix (80% one of 1000 "
                         "hot statements, 20% one of 100,000 churn statements), "
                         "max = 5000, table full, warmed up by 10,000 of the mix",
                         "select1": "SELECT 1;"}[args.callgrind_set],
           "contenders": {}}
    keep = os.path.join(outdir, "callgrind")
    os.makedirs(keep, exist_ok=True)
    for c, cl in clusters.items():
        cl.write_run_conf(cl.ext_settings(500 if new else 5000))
        counts = {}
        d1_misses = {}
        timed = {}
        for k, path in inputs.items():
            out = os.path.join(cgdir, "callgrind.out.%s-%d" % (c, k))
            # one command per line (no -j): each statement is its own
            # exec_simple_query, with its own transaction, as from a client
            cmd = as_pg(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
                        + (["--cache-sim=yes"] if args.callgrind_cache_sim else [])
                        + [cl.tree.bin("postgres"), "--single", "-D", cl.data, "postgres"])
            with open(path) as inp:
                p = run(cmd, stdin=inp, check=False)
            events = collected_events(p.stderr)
            if not events or "Ir" not in events:
                raise RuntimeError("callgrind gave no count for %s:\n%s" % (c, p.stderr[-2000:]))
            counts[k] = events["Ir"]
            if args.callgrind_cache_sim:
                if "D1mr" not in events or "D1mw" not in events:
                    raise RuntimeError("callgrind simulated no cache for %s:\n%s"
                                       % (c, p.stderr[-2000:]))
                d1_misses[k] = events["D1mr"] + events["D1mw"]
            timed[k] = inclusive_of(out, TIMED_FUNCTION)
            if k == 3 * n:
                ann = run(["callgrind_annotate", "--inclusive=yes", out], check=False)
                with open(os.path.join(keep, "annotate-%s.txt" % c), "w") as f:
                    f.write("\n".join(ann.stdout.splitlines()[:80]) + "\n")
        per = (counts[3 * n] - counts[n]) / (2.0 * n)
        res["contenders"][c] = {"total_n": counts[n], "total_3n": counts[3 * n],
                                "per_statement": per,
                                "timed": (timed[3 * n] - timed[n]) / (2.0 * n)}
        log("callgrind %-5s %8.0f instructions per statement (%.0f of them "
            "maintenance, by the clock)" % (c, per, res["contenders"][c]["timed"]))
        if d1_misses:
            d1 = (d1_misses[3 * n] - d1_misses[n]) / (2.0 * n)
            res["contenders"][c]["d1_misses"] = d1
            log("callgrind %-5s %8.1f first-level data cache misses per statement "
                "(simulated)" % (c, d1))
    base = res["contenders"].get("none")
    if base:
        for c, e in res["contenders"].items():
            e["added"] = e["per_statement"] - base["per_statement"]
            if "d1_misses" in e and "d1_misses" in base:
                e["d1_added"] = e["d1_misses"] - base["d1_misses"]
    return res
