"""bench/readcost.py -- the read cost part: the time to read the view with
a given number of entries while backends hold statements in their slots,
per contender that has a view.
"""

import os
import re
import time

from .common import log, median
from .workloads import fill_statements


# ---------------------------------------------------------------- read cost part

TIME_RE = re.compile(r"^Time: ([0-9.]+) ms", re.M)


def read_queries(contender):
    if contender == "pgss":
        return [("count, no text", "SELECT count(*) FROM pg_stat_statements(false);"),
                ("count, with text", "SELECT count(*) FROM pg_stat_statements(true);"),
                ("all rows to client", "SELECT * FROM pg_stat_statements;")]
    if contender == "ng":
        return [("count, no text", "SELECT count(*) FROM pg_stat_statements_ng(false);"),
                ("count, with text", "SELECT count(*) FROM pg_stat_statements_ng(true);"),
                ("all rows to client", "SELECT * FROM pg_stat_statements_ng;")]
    if contender == "pgsm":
        return [("count, with text", "SELECT count(*) FROM pg_stat_monitor;"),
                ("all rows to client", "SELECT * FROM pg_stat_monitor;")]
    return []


def timed(cluster, sql, reps):
    out = cluster.psql(("\\o /dev/null\n" + sql + "\n") * reps, timing=True)
    # with \o /dev/null the rows go nowhere; psql still prints Time: lines
    return [float(x) for x in TIME_RE.findall(out)]


def readcost_part(args, tree, clusters, outdir, workdir):
    sizes = args.readcost_sizes
    holders_n = args.readcost_holders
    per_holder = args.readcost_per_holder
    rdir = os.path.join(workdir, "readcost")
    os.makedirs(rdir, exist_ok=True)
    res = {"sizes": sizes, "holders": holders_n, "per_holder": per_holder,
           "reps": args.readcost_reps,
           "max": max(sizes) + 10000, "contenders": {}}
    for c, cl in clusters.items():
        qs = read_queries(cl.kind)  # ngbase reads as ng
        if not qs:
            continue
        cl.start(cl.ext_settings(res["max"]))
        holders = []
        try:
            cl.reset_stats()
            filled = 0
            out = {}
            for size in sizes:
                # fill up to `size` distinct statements, 50 per query string,
                # from two sessions
                stmts = fill_statements(filled, size)
                files = []
                for part in range(2):
                    chunk = stmts[part::2]
                    path = os.path.join(rdir, "fill-%s-%d-%d.sql" % (c, size, part))
                    with open(path, "w") as f:
                        for i in range(0, len(chunk), 50):
                            f.write(" \\; ".join(s.rstrip(";") for s in chunk[i:i + 50]) + ";\n")
                    files.append(path)
                procs = [cl.psql_file(p) for p in files]
                for p in procs:
                    _, err = p.communicate()
                    if p.returncode != 0:
                        raise RuntimeError("fill failed: %s" % err[-1000:])
                filled = size
                # holders: each runs per_holder statements of the set, then
                # sleeps, so its slots stay bound with counts in them
                for h in holders:
                    h.kill()
                for h in holders:
                    h.wait()
                holders = []
                time.sleep(0.5)
                for h in range(holders_n):
                    lo = (h * per_holder) % max(1, size - per_holder)
                    path = os.path.join(rdir, "hold-%s-%d-%d.sql" % (c, size, h))
                    with open(path, "w") as f:
                        f.write("\n".join(fill_statements(lo, lo + per_holder)))
                        f.write("\nSELECT pg_sleep(3600);\n")
                    holders.append(cl.psql_file(path))
                deadline = time.time() + 120
                while True:
                    n = int(cl.psql("SELECT count(*) FROM pg_stat_activity "
                                    "WHERE wait_event = 'PgSleep';\n").strip())
                    if n >= holders_n:
                        break
                    if time.time() > deadline:
                        raise RuntimeError("only %d of %d holders are sleeping" % (n, holders_n))
                    time.sleep(0.2)
                info = cl.ext_info()
                entry = {"entries": info.get("entries"), "queries": {}}
                for label, sql in qs:
                    timed(cl, sql, 1)  # warm-up
                    ts = timed(cl, sql, args.readcost_reps)
                    entry["queries"][label] = {"sql": sql, "ms": ts,
                                               "median": median(ts), "min": min(ts)}
                    log("read cost %-5s %6d entries  %-20s %8.1f ms (median of %d)"
                        % (c, size, label, median(ts), len(ts)))
                out[str(size)] = entry
            res["contenders"][c] = out
        finally:
            for h in holders:
                h.kill()
            for h in holders:
                h.wait()
            cl.stop()
    return res
