"""bench/callgrind.py -- the callgrind part: instructions per statement,
postgres --single fed N and 3N statements of the chosen set under valgrind
--tool=callgrind, per contender, with the top of callgrind_annotate kept;
the process reads a clock that counts readings (bench/fixed_clock.c), so
that a run repeats whatever the machine's load.
"""

import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor

from .common import HERE, as_pg, log, mkdir_pg, run
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

# Work that runs by the clock (core's flush of pending statistics, at most
# once a second; ours' maintenance, once a second: ng_slots_maintenance)
# would run under valgrind, some 50 times slower than natively, some 50
# times as often per statement, and as often as the machine's load let
# valgrind run: two runs of the same input differed by thousands of
# instructions per statement.  So the measured process reads the clock of
# bench/fixed_clock.c, which advances by FIXED_CLOCK_STEP_NS at each
# reading: about 7 readings a statement (core's) make some 7 us a
# statement, the pace of a native postgres --single, and the same work by
# the clock in every run.  Ours' maintenance is still reported apart.
FIXED_CLOCK_STEP_NS = 1000
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


def build_fixed_clock(cgdir):
    """bench/fixed_clock.c built into cgdir: the library preloaded into
    each measured process, whose clock advances by a fixed step at each
    reading (so that work done by the clock is the same in every run)."""
    so = os.path.join(cgdir, "fixed_clock.so")
    run(["cc", "-shared", "-fPIC", "-O2", "-o", so,
         os.path.join(HERE, "fixed_clock.c")])
    os.chmod(so, 0o755)
    return so


# what one "statement" of each set is
SET_STATEMENT = {
    "new": "a distinct two-table join (%s ...), max = 500" % fill_statements(0, 1)[0],
    "multi": "the multi workload's transaction (BEGIN, 8 point selects with "
             "literals, COMMIT: 10 lines)",
    "prepared": "EXECUTE of pgbench -S's SELECT abalance ... WHERE aid = $1, "
                "prepared once (simple protocol)",
    "churn": "the churn workload's mix (80% one of 1000 hot statements, 20% one "
             "of 100,000 churn statements), max = 5000, table full, warmed up "
             "by 10,000 of the mix",
    "select1": "SELECT 1;",
}
CALLGRIND_SETS = list(SET_STATEMENT)


def parse_sets(spec, default_n):
    """'select1:2000,churn' -> [(set, N)] in order."""
    out = []
    for item in [x.strip() for x in spec.split(",") if x.strip()]:
        name, _, k = item.partition(":")
        if name not in SET_STATEMENT:
            raise ValueError("unknown callgrind set %r (known: %s)"
                             % (name, ", ".join(CALLGRIND_SETS)))
        out.append((name, int(k) if k else default_n))
    return out


def set_lines(cset, k):
    """The input of set cset with k measured statements: the same first
    lines for every k, so that the difference of two inputs is statements
    the process runs in the same state."""
    # select1: one statement over and over (the per-statement cost of a
    # statement already tracked); new: every statement a new one, in a table
    # kept full (max = 500), so each costs an entry, a text and an eviction
    # multi: the multi workload's transaction, with varying literals (per
    # "statement" is then per transaction of 10 statements); prepared:
    # pgbench -S's statement prepared once, then EXECUTEd with varying
    # parameters (see prepared_statements)
    if cset == "new":
        return fill_statements(0, k)
    if cset == "multi":
        return [line for i in range(k)
                for line in multi_transaction(str(1 + i * 7 % 100000))]
    if cset == "prepared":
        return prepared_statements(k)
    if cset == "churn":
        # the same 5000 statements fill the table in both inputs (two-table
        # joins the mix never draws: r101 and up), then the same 10,000
        # statements of the mix warm it up (each hot statement runs some 8
        # times, and so has its entry, as in a steady run of the workload),
        # so the difference is the mix on a full table, hot statements in
        # place
        return (fill_statements(100000, 105000) + churn_statements(10000, seed=7)
                + churn_statements(k))
    return ["SELECT 1;"] * k


def run_input(cl, path, out, clock, cache_sim):
    """valgrind's totals for postgres --single of cluster cl fed the file
    path (one command per line, no -j: each statement is its own
    exec_simple_query, with its own transaction, as from a client), and
    the instructions of ours' maintenance."""
    cmd = as_pg(["env", "LD_PRELOAD=" + clock,
                 "NG_CLOCK_STEP_NS=%d" % FIXED_CLOCK_STEP_NS,
                 "valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
                + (["--cache-sim=yes"] if cache_sim else [])
                + [cl.tree.bin("postgres"), "--single", "-D", cl.data, "postgres"])
    with open(path) as inp:
        p = run(cmd, stdin=inp, check=False)
    events = collected_events(p.stderr)
    if not events or "Ir" not in events:
        raise RuntimeError("callgrind gave no count for %s:\n%s"
                           % (cl.contender, p.stderr[-2000:]))
    if cache_sim and ("D1mr" not in events or "D1mw" not in events):
        raise RuntimeError("callgrind simulated no cache for %s:\n%s"
                           % (cl.contender, p.stderr[-2000:]))
    return events, (inclusive_of(out, TIMED_FUNCTION) if cl.kind == "ng" else 0)


def measure_contender(args, cset, n, inputs, cl, cgdir, clock, keep, first):
    """One run of set cset for contender cl: per statement figures of
    inputs N and 3N."""
    c = cl.contender
    cl.write_run_conf(cl.ext_settings(500 if cset == "new" else 5000))
    counts, d1_misses, timed = {}, {}, {}
    for k, path in inputs.items():
        out = os.path.join(cgdir, "callgrind.out.%s-%s-%d" % (c, cset, k))
        events, timed[k] = run_input(cl, path, out, clock, args.callgrind_cache_sim)
        counts[k] = events["Ir"]
        if args.callgrind_cache_sim:
            d1_misses[k] = events["D1mr"] + events["D1mw"]
        if k == 3 * n and first:
            ann = run(["callgrind_annotate", "--inclusive=yes", out], check=False)
            with open(os.path.join(keep, "annotate-%s-%s.txt" % (cset, c)), "w") as f:
                f.write("\n".join(ann.stdout.splitlines()[:80]) + "\n")
    e = {"total_n": counts[n], "total_3n": counts[3 * n],
         "per_statement": (counts[3 * n] - counts[n]) / (2.0 * n),
         "timed": (timed[3 * n] - timed[n]) / (2.0 * n)}
    if d1_misses:
        e["d1_misses"] = (d1_misses[3 * n] - d1_misses[n]) / (2.0 * n)
    return e


def callgrind_part(args, tree, clusters, outdir, workdir):
    """Every set of --callgrind-set, each contender --callgrind-runs times
    (the runs of a contender apart: all contenders once, then again); a
    list of one result per set."""
    if not shutil.which("valgrind"):
        log("valgrind is not installed: skipping callgrind (bench/setup.sh installs it)")
        return None
    cgdir = os.path.join(workdir, "cg")
    mkdir_pg(cgdir)
    clock = build_fixed_clock(cgdir)
    keep = os.path.join(outdir, "callgrind")
    os.makedirs(keep, exist_ok=True)
    results = []
    for cset, n in parse_sets(args.callgrind_set, args.callgrind_n):
        inputs = {}
        for k in (n, 3 * n):
            inputs[k] = os.path.join(cgdir, "%s-%d.sql" % (cset, k))
            with open(inputs[k], "w") as f:
                f.write("\n".join(set_lines(cset, k)) + "\n")
        res = {"n": n, "set": cset, "statement": SET_STATEMENT[cset],
               "runs": args.callgrind_runs, "contenders": {}}
        for r in range(args.callgrind_runs):
            # the contenders' clusters are apart: they may run at once (the
            # counts do not depend on the machine's load)
            with ThreadPoolExecutor(max_workers=max(1, args.callgrind_jobs)) as ex:
                done = {c: ex.submit(measure_contender, args, cset, n, inputs, cl,
                                     cgdir, clock, keep, r == 0)
                        for c, cl in clusters.items()}
            for c in clusters:
                e = done[c].result()
                log("callgrind %s %-5s run %d: %8.0f instructions per statement "
                    "(%.0f of them maintenance, by the clock)%s"
                    % (cset, c, r + 1, e["per_statement"], e["timed"],
                       " %.1f D1 misses" % e["d1_misses"] if "d1_misses" in e else ""))
                if r == 0:
                    e["run_figures"] = [e["per_statement"]]
                    res["contenders"][c] = e
                else:
                    res["contenders"][c]["run_figures"].append(e["per_statement"])
        add_over_none(res)
        results.append(res)
    return results


def add_over_none(res):
    """Each contender's first run over none's; the spread of its runs."""
    for e in res["contenders"].values():
        f = e["run_figures"]
        e["spread"] = (max(f) - min(f)) / min(f) if min(f) > 0 else 0.0
    base = res["contenders"].get("none")
    if base:
        for c, e in res["contenders"].items():
            e["added"] = e["per_statement"] - base["per_statement"]
            if "d1_misses" in e and "d1_misses" in base:
                e["d1_added"] = e["d1_misses"] - base["d1_misses"]
