"""bench/benchmark.py -- one benchmark run from start to end, once the command
line is checked: the results and work directories (the work directory and
the clusters cleaned up at exit, whatever happens), the private tree(s), one
cluster per contender with the data the selected parts need, the parts in
order (tps, callgrind, read cost), and results.json, tps.png and results.md.
"""

import atexit
import datetime
import json
import os
import platform
import re
import shutil
import signal
import sys
import tempfile
import time

from .callgrind import callgrind_part, parse_sets
from .cluster import Cluster
from .common import die, log, nproc, run
from .plot import make_plot
from .readcost import readcost_part
from .report import write_markdown
from .summary import summarize
from .tps import tps_part
from .tree import Tree
from .workloads import parse_workloads, workload_defs


def machine_meta():
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        mem = "%.1f GiB" % (kb / 1048576.0)
    except Exception:
        pass
    return {"nproc": nproc(), "memory": mem, "kernel": platform.release()}


def run_benchmark(args, contenders):
    """Everything a run does after the command line is checked (and
    --smoke applied); returns the exit status."""
    args.readcost_sizes = [int(s) for s in str(args.readcost_sizes).split(",")]
    parts = set(p.strip() for p in args.parts.split(",") if p.strip())
    cores = args.scale
    defs = workload_defs(cores, args.pgbench_scale)
    plan = parse_workloads(args.workloads, args.rounds, defs) if "tps" in parts else []

    check_postgres_user()
    stamp, outdir, workdir = make_dirs(args)
    clusters = {}
    arrange_cleanup(args, workdir, clusters)

    t0 = time.time()
    tree = Tree(args.bindir, workdir, args.ext_src, args.pgsm_lib, args.use_installed,
                psp_lib=args.psp_lib)
    log("PostgreSQL %s, private tree %s" % (tree.version, tree.root))

    needs, onerow_tables = data_needs(args, defs, plan, parts)
    trees = make_clusters(args, tree, contenders, workdir, needs, onerow_tables,
                          clusters)

    meta = dict(machine_meta())
    meta.update({
        "stamp": stamp, "pg_version": tree.version, "bindir": tree.orig_bindir,
        "pg_configure": tree.cfg["configure"],
        "ng_commit": tree.ng_commit or "installed in the tree",
        "ng_base_commit": trees["ngbase"].ng_commit if "ngbase" in trees else None,
        "command": " ".join(["bench/run.py"] + sys.argv[1:]),
        "duration": args.duration, "scale": cores, "contenders": contenders,
        "idle_wait": args.idle_wait, "idle_threshold": args.idle_threshold,
        "max_foreign": args.max_foreign, "retries": args.retries,
        "plan": plan,
    })
    runs, summary, cg, rc = [], [], None, None
    if plan:
        runs = tps_part(args, tree, clusters, defs, plan, cores, outdir, workdir)
        summary = summarize(runs, contenders, plan, args.max_foreign)
    if "callgrind" in parts:
        cg = callgrind_part(args, tree, clusters, outdir, workdir)
    if "readcost" in parts:
        rc = readcost_part(args, tree, clusters, outdir, workdir)

    write_results(args, tree, clusters, outdir, t0, meta, defs, plan, contenders,
                  runs, summary, cg, rc)
    log("results: %s (%d s)" % (outdir, meta["seconds"]))
    print(os.path.join(outdir, "results.md"))
    return 0


def check_postgres_user():
    if os.geteuid() == 0:
        try:
            import pwd
            pwd.getpwnam("postgres")
        except KeyError:
            die("running as root needs a postgres user (initdb refuses root)")


def make_dirs(args):
    """The results directory bench/results/<timestamp>-pg<major>[-smoke]
    and a work directory in /tmp the postgres user can use."""
    tree_major = run([os.path.join(args.bindir, "pg_config"), "--version"],
                     check=False).stdout.strip()
    m = re.search(r"(\d+)", tree_major)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = os.path.join(args.results, "%s-pg%s%s" % (
        stamp, m.group(1) if m else "x", "-smoke" if args.smoke else ""))
    os.makedirs(outdir, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="pgssng-bench.", dir="/tmp")
    os.chmod(workdir, 0o755)
    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres", "postgres")
    return stamp, outdir, workdir


def arrange_cleanup(args, workdir, clusters):
    """At exit, stop the clusters (those in `clusters` then) and remove the
    work directory (unless --keep); on SIGTERM or SIGHUP, say who was
    around and exit."""
    def cleanup():
        for cl in clusters.values():
            try:
                cl.stop()
            except Exception:
                pass
        if args.keep:
            log("work directory kept: %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    atexit.register(cleanup)
    def on_signal(signum, frame):
        # say who was around: a benchmark killed from outside is otherwise silent
        ps = run(["ps", "-eo", "pid,ppid,etime,args", "--sort=start_time"], check=False)
        sys.stderr.write("error: received signal %d; processes:\n%s\n"
                         % (signum, "\n".join(l[:200] for l in ps.stdout.splitlines()[-40:])))
        sys.exit(1)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)


def data_needs(args, defs, plan, parts):
    """The data sets the selected workloads and parts need, and how many
    one-row tables."""
    needs = set()
    for wname, _ in plan:
        needs |= defs[wname]["setup"]
    onerow_tables = 1000 if needs & {"onerow"} else 0
    sets = [s for s, _ in parse_sets(args.callgrind_set, args.callgrind_n)] \
        if "callgrind" in parts else []
    if set(sets) & {"new", "churn"}:
        needs.add("onerow")
        onerow_tables = 1000
    if set(sets) & {"multi", "prepared"}:
        needs.add("pgbench")
    if "readcost" in parts:
        needs.add("onerow")
        # statement i of the read-cost set joins r(1 + i // 1000), r(1 + i % 1000)
        onerow_tables = max(onerow_tables, min(1000, max(args.readcost_sizes)))
    return needs, onerow_tables


def make_clusters(args, tree, contenders, workdir, needs, onerow_tables, clusters):
    """One cluster per contender, its extension created and its data
    loaded, added to `clusters` as it is ready; returns each contender's
    tree."""
    trees = {c: tree for c in contenders}
    if "ngbase" in contenders:
        # ours at the --ng-base commit, in a second private tree (same
        # PostgreSQL binaries)
        base_dir = os.path.join(workdir, "base")
        os.makedirs(base_dir)
        trees["ngbase"] = Tree(args.bindir, base_dir, None, None, False,
                               ng_rev=args.ng_base)
    for i, c in enumerate(contenders):
        cl = Cluster(trees[c], c, workdir, 55430 + i)
        cl.initdb()
        cl.start()
        try:
            cl.create_extension()
            cl.setup_data(needs, args.pgbench_scale, onerow_tables)
        finally:
            cl.stop()
        clusters[c] = cl
        log("cluster %s ready (%s)" % (c, ", ".join(sorted(needs)) or "no data"))
    return trees


def write_results(args, tree, clusters, outdir, t0, meta, defs, plan, contenders,
                  runs, summary, cg, rc):
    """The server logs, results.json (meta gets the run's seconds since
    t0), tps.png and results.md."""
    # keep the server logs next to the results
    logdir = os.path.join(outdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    for c, cl in clusters.items():
        if os.path.exists(cl.logfile):
            shutil.copy(cl.logfile, logdir)
    meta["seconds"] = round(time.time() - t0)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"meta": meta, "workloads": {w: {k: v for k, v in defs[w].items()
                                                   if k != "setup"}
                                               for w, _ in plan},
                   "runs": runs, "summary": summary, "callgrind": cg,
                   "readcost": rc}, f, indent=1, default=list)
    plot = make_plot(os.path.join(outdir, "tps.png"), summary, contenders,
                     "PostgreSQL %s, %d cores, %d s runs" % (tree.version, meta["nproc"],
                                                             args.duration),
                     os.path.join(outdir, "results.json")) if summary else None
    write_markdown(os.path.join(outdir, "results.md"), meta, defs, plan, contenders,
                   runs, summary, cg, rc, plot)
