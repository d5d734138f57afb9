"""bench/common.py -- what every part of the runner shares: the repository's
paths, the contenders' names, logging, failing, and running commands (as the
postgres user when we are root).

Owns the --quiet switch (VERBOSE, set once by the command line) and the
clock that log lines count from.
"""

import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

ALL_CONTENDERS = ["none", "qid", "pgss", "ng", "pgsm", "psp", "ngbase"]
CONTENDER_LABEL = {
    "none": "no extension",
    "qid": "no extension, compute_query_id = on (core's query jumbling alone)",
    "pgss": "pg_stat_statements (contrib)",
    "ng": "pg_stat_statements_ng",
    "pgsm": "pg_stat_monitor",
    "psp": "pg_stat_statements (contrib) with pg_stat_plans",
    "ngbase": "pg_stat_statements_ng at an earlier commit (--ng-base)",
}

# ---------------------------------------------------------------- utilities

VERBOSE = True
T0 = time.time()


def log(msg):
    if VERBOSE:
        sys.stderr.write("== %4.0fs %s\n" % (time.time() - T0, msg))
        sys.stderr.flush()


def die(msg):
    sys.stderr.write("error: %s\n" % msg)
    sys.exit(1)


def as_pg(cmd):
    """Run a server-side command as the postgres user when we are root
    (initdb and postgres refuse to run as root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + cmd
    return cmd


def run(cmd, check=True, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("universal_newlines", True)
    p = subprocess.run(cmd, **kw)
    if check and p.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (
            p.returncode, " ".join(cmd), p.stdout or "", p.stderr or ""))
    return p


def mkdir_pg(path):
    """A directory the postgres user can write to."""
    os.makedirs(path, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def nproc():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
