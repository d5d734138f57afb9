#!/usr/bin/env python3
"""bench/run.py -- pg_stat_statements_ng against no extension, contrib
pg_stat_statements and (optionally) pg_stat_monitor, in one interleaved run.

Python 3 standard library only (matplotlib, when installed, draws the plot).
See docs/benchmarks.md for what each workload is and how to read the output.

  bench/run.py --bindir /usr/lib/postgresql/15/bin            # everything
  bench/run.py --bindir ... --workloads hot:5,select1:5,dalibo:3 --duration 10
  bench/run.py --bindir ... --parts callgrind,readcost
  bench/run.py --smoke                                          # CI: ~20 s, exit 0 if all ran

What it does, in order:
  1. builds the extension from a clean copy of the repository's HEAD
     (git archive), without assertions, against --bindir's pg_config;
  2. makes a private copy of that PostgreSQL installation (bin, pkglib, share)
     and installs the extension into the copy (make install DESTDIR=...), so
     that nothing else installed in the shared tree (e.g. the test suite's
     assertion build) can be what gets measured;
  3. creates one throwaway cluster per contender (as the postgres user when
     run as root), loads the data the selected workloads need;
  4. tps part: for each round, for each workload, for each contender (the
     contender order rotates by one each round): write the run's settings,
     start that contender's cluster, reset statistics, run pgbench while a
     sampler reads pg_stat_activity's wait events once a second, read
     dealloc and entries, stop the cluster.  Only one cluster runs at a time;
  5. callgrind part: instructions per statement, postgres --single fed N and
     3N statements of each --callgrind-set under valgrind --tool=callgrind,
     its clock counting readings (fixed_clock.c), so that runs repeat;
  6. readcost part: time to read the view with 5,000 and 100,000 entries
     while 50 backends hold slots;
  7. writes results.json, results.md and tps.png under
     bench/results/<timestamp>-pg<major>/.

This file is the command line (its options, the checks and defaults they
get, --smoke, and the modes: a benchmark, --resummarize of an earlier
results.json, --plot-from for the plot drawn by the system interpreter); the
rest is the package bench/, one module per concern:
  benchmark.py  one benchmark run from start to end: directories, clusters,
                parts, results
  common.py     paths, contender names, logging, running commands
  cpu.py        CPU accounting from /proc (foreign CPU, waiting for quiet)
  workloads.py  workload definitions and statement sets
  tree.py       the private PostgreSQL tree with the extensions installed
  cluster.py    one cluster per contender and its per-contender SQL
  waits.py      the wait event sampler
  tps.py        the tps part
  summary.py    runs -> per workload and contender summary
  callgrind.py  the callgrind part
  fixed_clock.c the clock the callgrind part's processes read
  readcost.py   the read cost part
  report.py     results.md
  plot.py       tps.png
"""

import argparse
import json
import os
import sys

if __name__ == "__main__":
    # run as a script: import the package bench from the repository's top
    # (instead of this directory, whose modules are the package's)
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from bench import common  # noqa: E402
from bench.benchmark import run_benchmark  # noqa: E402
from bench.callgrind import parse_sets  # noqa: E402
from bench.common import ALL_CONTENDERS, HERE, die, nproc  # noqa: E402
from bench.plot import make_plot  # noqa: E402
from bench.report import write_markdown  # noqa: E402
from bench.summary import summarize  # noqa: E402
from bench.workloads import DEFAULT_WORKLOADS  # noqa: E402


def main():
    """The command: a benchmark, --resummarize or --plot-from."""
    args = build_parser(__doc__.split("\n")[0]).parse_args()
    common.VERBOSE = not args.quiet
    if args.resummarize:
        return resummarize(args)
    if args.plot_from:
        return plot_from(args)
    contenders = check_contenders(args)
    try:
        parse_sets(args.callgrind_set, args.callgrind_n)
    except ValueError as e:
        die(str(e))
    apply_smoke(args)
    return run_benchmark(args, contenders)


def build_parser(description):
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bindir", default="/usr/lib/postgresql/15/bin",
                    help="PostgreSQL bin directory (a release build)")
    ap.add_argument("--contenders", default="none,pgss,ng",
                    help="comma list of none, pgss, ng, pgsm (default none,pgss,ng; "
                         "pgsm is added when --pgsm-lib is given)")
    ap.add_argument("--pgsm-lib", help="pg_stat_monitor.so of a local build (its "
                    "control and SQL files next to it); never downloaded")
    ap.add_argument("--psp-lib", help="pg_stat_plans.so of a local build (its "
                    "control and SQL files next to it), for the psp contender: "
                    "contrib's pg_stat_statements and pg_stat_plans loaded "
                    "together; never downloaded")
    ap.add_argument("--workloads", default=DEFAULT_WORKLOADS,
                    help="comma list of NAME[:ROUNDS]; groups hot and dalibo expand "
                         "(default %s)" % DEFAULT_WORKLOADS)
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds for workloads without :ROUNDS (default 5)")
    ap.add_argument("--duration", type=int, default=10, help="seconds per run (default 10)")
    ap.add_argument("--scale", type=int, default=nproc(),
                    help="cores to scale client counts to (default: nproc)")
    ap.add_argument("--pgbench-scale", type=int, default=1,
                    help="pgbench -i scale for hot and multi (default 1)")
    ap.add_argument("--parts", default="tps,callgrind,readcost",
                    help="which parts: tps, callgrind, readcost (default all)")
    ap.add_argument("--idle-wait", type=float, default=20,
                    help="before each run, wait up to this many seconds for other "
                         "processes to leave the machine quiet (default 20)")
    ap.add_argument("--idle-threshold", type=float, default=0.10,
                    help="quiet means other processes use less than this share of "
                         "all cores (default 0.10)")
    ap.add_argument("--max-foreign", type=float, default=0.15,
                    help="run again a run during which other processes used more than "
                         "this share of the CPU (default 0.15)")
    ap.add_argument("--retries", type=int, default=2,
                    help="how many times a disturbed run is run again (default 2)")
    ap.add_argument("--callgrind-n", type=int, default=5000,
                    help="N of the callgrind sets that name none (default 5000)")
    ap.add_argument("--callgrind-set", default="select1",
                    help="comma list of SET[:N], callgrind statements: select1 "
                         "(SELECT 1 repeated), new (every statement a distinct "
                         "join, max = 500), multi (the multi workload's "
                         "transaction, per transaction), prepared (pgbench -S's "
                         "SELECT, PREPAREd once, then EXECUTEd), churn (the churn "
                         "workload's mix, max = 5000, after 5000 statements that "
                         "fill the table and 10,000 of the mix that put the hot "
                         "ones in place) (default select1)")
    ap.add_argument("--callgrind-runs", type=int, default=1,
                    help="measure each contender this many times, to show the "
                         "figures repeat (default 1)")
    ap.add_argument("--callgrind-jobs", type=int, default=1,
                    help="contenders measured at once (default 1)")
    ap.add_argument("--callgrind-cache-sim", action="store_true",
                    help="also simulate the caches (valgrind --cache-sim=yes): "
                         "first-level data cache misses per statement, a "
                         "count of the cache lines a statement touches that "
                         "the statements before it pushed out (slower)")
    ap.add_argument("--readcost-sizes", default="5000,100000")
    ap.add_argument("--readcost-holders", type=int, default=50)
    ap.add_argument("--readcost-per-holder", type=int, default=100)
    ap.add_argument("--readcost-reps", type=int, default=5)
    ap.add_argument("--smoke", action="store_true",
                    help="CI smoke: every contender on select1 and dalibo-100, 2 s each, "
                         "no timing assertion; exits 0 if everything ran")
    ap.add_argument("--ext-src", help="build the extension from this directory "
                    "instead of git archive HEAD")
    ap.add_argument("--ng-base", metavar="COMMIT",
                    help="add contender ngbase: pg_stat_statements_ng built from "
                         "this commit (git archive), in a tree of its own, to "
                         "measure what a change costs")
    ap.add_argument("--use-installed", action="store_true",
                    help="do not build: use the extension installed in --bindir's tree")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--resummarize", metavar="RESULTS_JSON",
                    help="recompute results.md and the plot of an earlier run "
                         "(e.g. with another --max-foreign)")
    ap.add_argument("--plot-from", help=argparse.SUPPRESS)
    ap.add_argument("--plot-out", help=argparse.SUPPRESS)
    ap.add_argument("--plot-title", help=argparse.SUPPRESS)
    return ap


def plot_from(args):
    with open(args.plot_from) as f:
        data = json.load(f)
    ok = make_plot(args.plot_out, data["summary"], data["meta"]["contenders"],
                   args.plot_title or "")
    return 0 if ok else 1


def check_contenders(args):
    """The contenders of the run, checked against the options that bring
    pgsm and ngbase."""
    contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    if args.pgsm_lib and "pgsm" not in contenders:
        contenders.append("pgsm")
    for c in contenders:
        if c not in ALL_CONTENDERS:
            die("unknown contender %r" % c)
    if "pgsm" in contenders and not args.pgsm_lib:
        die("pgsm needs --pgsm-lib (a local build of pg_stat_monitor)")
    if args.psp_lib and "psp" not in contenders:
        contenders.append("psp")
    if "psp" in contenders and not args.psp_lib:
        die("psp needs --psp-lib (a local build of pg_stat_plans)")
    if args.ng_base and "ngbase" not in contenders:
        contenders.append("ngbase")
    if "ngbase" in contenders and not args.ng_base:
        die("ngbase needs --ng-base COMMIT")
    return contenders


def apply_smoke(args):
    """--smoke: every contender on select1 and dalibo-100, 2 s each."""
    if args.smoke:
        args.workloads = "select1:1,dalibo-100:1"
        args.duration = 2
        args.parts = "tps"
        args.retries = 0
        args.readcost_sizes = "300"
        args.readcost_holders = 3
        args.readcost_per_holder = 20
        args.readcost_reps = 2
        args.idle_wait = 0


def resummarize(args):
    path = os.path.abspath(args.resummarize)
    outdir = os.path.dirname(path)
    with open(path) as f:
        data = json.load(f)
    meta = data["meta"]
    given = [a.split("=")[0] for a in sys.argv[1:]]
    if "--max-foreign" in given:
        meta["max_foreign"] = args.max_foreign
    mf = meta.get("max_foreign", 1.0)
    plan = [tuple(p) for p in meta["plan"]]
    contenders = meta["contenders"]
    summary = summarize(data["runs"], contenders, plan, mf)
    data["summary"] = summary
    data["meta"] = meta
    with open(path, "w") as f:
        json.dump(data, f, indent=1, default=list)
    defs = data["workloads"]
    plot = make_plot(os.path.join(outdir, "tps.png"), summary, contenders,
                     "PostgreSQL %s, %s cores, %s s runs" % (
                         meta["pg_version"], meta["nproc"], meta["duration"]),
                     path) if summary else None
    write_markdown(os.path.join(outdir, "results.md"), meta, defs, plan, contenders,
                   data["runs"], summary, data.get("callgrind"), data.get("readcost"), plot)
    print(os.path.join(outdir, "results.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
