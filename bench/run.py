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
     3N "SELECT 1;" lines under valgrind --tool=callgrind;
  6. readcost part: time to read the view with 5,000 and 100,000 entries
     while 50 backends hold slots;
  7. writes results.json, results.md and tps.png under
     bench/results/<timestamp>-pg<major>/.
"""

import argparse
import atexit
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

ALL_CONTENDERS = ["none", "pgss", "ng", "pgsm", "ngbase"]
CONTENDER_LABEL = {
    "none": "no extension",
    "pgss": "pg_stat_statements (contrib)",
    "ng": "pg_stat_statements_ng",
    "pgsm": "pg_stat_monitor",
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


# ---------------------------------------------------------------- CPU accounting
#
# The machine may be shared: other processes' CPU use during a run is
# measured and reported ("foreign CPU"), so that a disturbed run can be told
# apart from a slow contender.

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_busy_ticks():
    """Busy and total jiffies of the whole machine."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    total = sum(v[:8])
    return total - idle, total


def proc_stat(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    # fields after the command: state ppid ... utime(14) stime cutime cstime
    return {"ppid": int(rest[1]), "ticks": sum(int(x) for x in rest[11:15])}


def tree_ticks(root_pid):
    """CPU ticks of a process, its reaped children, and its live children."""
    total = 0
    st = proc_stat(root_pid)
    if st is None:
        return 0
    total += st["ticks"]
    for d in os.listdir("/proc"):
        if d.isdigit():
            c = proc_stat(int(d))
            if c and c["ppid"] == root_pid:
                total += c["ticks"]
    return total


def children_ticks():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * TICK


def idle_check(seconds=1.0):
    """Share of the machine's CPU used over `seconds` (nothing of ours runs)."""
    b0, t0 = cpu_busy_ticks()
    time.sleep(seconds)
    b1, t1 = cpu_busy_ticks()
    return (b1 - b0) / float(max(1, t1 - t0))


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


# ---------------------------------------------------------------- the tree

class Tree:
    """A private copy of a PostgreSQL installation with our extension (and
    pg_stat_monitor, if given) installed into it."""

    def __init__(self, bindir, workdir, ext_src, pgsm_lib, use_installed,
                 ng_rev="HEAD"):
        self.orig_bindir = os.path.abspath(bindir)
        pgc = os.path.join(self.orig_bindir, "pg_config")
        if not os.access(pgc, os.X_OK):
            die("no pg_config in %s" % bindir)
        self.pg_config = pgc
        cfg = {}
        for key in ("bindir", "pkglibdir", "sharedir", "version", "configure"):
            cfg[key] = run([pgc, "--" + key]).stdout.strip()
        self.cfg = cfg
        if "enable-cassert" in cfg["configure"]:
            die("%s is an assertion build (--enable-cassert); benchmarks must "
                "use a release build (bench/setup.sh builds one)" % bindir)
        m = re.search(r"PostgreSQL (\d+)(?:\.(\d+))?", cfg["version"])
        self.major = int(m.group(1))
        self.version = cfg["version"].replace("PostgreSQL ", "")
        self.root = os.path.join(workdir, "tree")
        for key in ("bindir", "pkglibdir", "sharedir"):
            src = cfg[key]
            dst = self.root + src
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copytree(src, dst, symlinks=True,
                            ignore=shutil.ignore_patterns("pgxs", "*.bc",
                                                          "bitcode"))
        self.bindir = self.root + cfg["bindir"]
        self.pkglibdir = self.root + cfg["pkglibdir"]
        self.sharedir = self.root + cfg["sharedir"]
        self.ensure_contrib_pgss()
        self.ng_commit = None
        if use_installed:
            log("using the pg_stat_statements_ng installed in %s" % cfg["pkglibdir"])
            if not os.path.exists(os.path.join(self.pkglibdir,
                                               "pg_stat_statements_ng.so")):
                die("pg_stat_statements_ng is not installed in %s" % cfg["pkglibdir"])
        else:
            self.ng_commit = self.install_ng(workdir, ext_src, ng_rev)
        if pgsm_lib:
            self.install_pgsm(pgsm_lib)
        # the copy must locate itself: its pg_config reports paths inside it
        rel = run([os.path.join(self.bindir, "pg_config"), "--pkglibdir"]).stdout.strip()
        if os.path.realpath(rel) != os.path.realpath(self.pkglibdir):
            die("the copied tree does not relocate (%s)" % rel)

    def ensure_contrib_pgss(self):
        """The pgss contender must be contrib's library.  Our drop-in install
        (make install-dropin, used by the test suite) moves contrib's files
        aside on 15 to 17 and links pg_stat_statements.so to our library; if
        the shared tree is in that state, take contrib's files from the
        backup directory into the private copy, or refuse to run."""
        so = os.path.join(self.pkglibdir, "pg_stat_statements.so")
        ext = os.path.join(self.sharedir, "extension")
        backup = os.path.join(ext, "pg_stat_statements_contrib_backup")

        def is_ours():
            if not os.path.exists(so):
                return True
            if os.path.islink(so):
                return True
            with open(so, "rb") as f:
                if b"pg_stat_statements_ng.max" in f.read():  # our GUC
                    return True
            ctl = os.path.join(ext, "pg_stat_statements.control")
            if not os.path.exists(ctl):
                return True
            with open(ctl) as f:
                return "pg_stat_statements_ng" in f.read()
        if not is_ours():
            return
        if not os.path.isdir(backup):
            die("the tree's pg_stat_statements is not contrib's (drop-in installed?) "
                "and there is no backup of contrib's files")
        log("the shared tree has the drop-in installed: using contrib's files "
            "from %s" % backup)
        for f in os.listdir(ext):
            if f == "pg_stat_statements.control" or f.startswith("pg_stat_statements--"):
                os.unlink(os.path.join(ext, f))
        if os.path.lexists(so):
            os.unlink(so)
        for f in os.listdir(backup):
            src = os.path.join(backup, f)
            dst = so if f.endswith(".so") else os.path.join(ext, f)
            shutil.copy(src, dst)
        if is_ours():
            die("could not restore contrib's pg_stat_statements in the private tree")

    def install_ng(self, workdir, ext_src, rev):
        src = os.path.join(workdir, "ng-src")
        os.makedirs(src)
        if ext_src:
            log("building pg_stat_statements_ng from %s" % ext_src)
            run(["cp", "-a", os.path.join(ext_src, "."), src])
            run(["make", "-C", src, "clean", "PG_CONFIG=" + self.pg_config],
                check=False)
            commit = "working tree of %s" % ext_src
        else:
            commit = run(["git", "-C", TOP, "rev-parse", "--verify", rev + "^{commit}"],
                         check=False).stdout.strip()
            if not commit:
                die("no commit %r in %s" % (rev, TOP))
            log("building pg_stat_statements_ng at %s %s (git archive)" % (rev, commit[:10]))
            arch = subprocess.Popen(["git", "-C", TOP, "archive", commit],
                                    stdout=subprocess.PIPE)
            run(["tar", "xf", "-", "-C", src], stdin=arch.stdout)
            if arch.wait() != 0:
                die("git archive %s failed" % commit)
        b = run(["make", "-C", src, "-j%d" % max(2, nproc()),
                 "PG_CONFIG=" + self.pg_config], check=False)
        if b.returncode != 0:
            die("building the extension failed:\n%s%s" % (b.stdout[-3000:], b.stderr[-3000:]))
        run(["make", "-C", src, "install", "PG_CONFIG=" + self.pg_config,
             "DESTDIR=" + self.root])
        return commit

    def install_pgsm(self, lib):
        lib = os.path.abspath(lib)
        if os.path.isdir(lib):
            d, so = lib, os.path.join(lib, "pg_stat_monitor.so")
        else:
            d, so = os.path.dirname(lib), lib
        if not os.path.exists(so):
            die("--pgsm-lib: no %s" % so)
        ctl = os.path.join(d, "pg_stat_monitor.control")
        sqls = [f for f in os.listdir(d)
                if f.startswith("pg_stat_monitor--") and f.endswith(".sql")]
        if not os.path.exists(ctl) or not sqls:
            die("--pgsm-lib: pg_stat_monitor.control and pg_stat_monitor--*.sql "
                "must be next to the library (%s)" % d)
        shutil.copy(so, os.path.join(self.pkglibdir, "pg_stat_monitor.so"))
        ext = os.path.join(self.sharedir, "extension")
        for f in [ctl] + [os.path.join(d, s) for s in sqls]:
            shutil.copy(f, ext)
        log("pg_stat_monitor installed from %s" % d)

    def bin(self, name):
        return os.path.join(self.bindir, name)


# ---------------------------------------------------------------- clusters

BASE_CONF = """
listen_addresses = ''
unix_socket_directories = '{sock}'
port = {port}
max_connections = 200
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
autovacuum = off
jit = off
max_wal_size = 4GB
logging_collector = off
log_min_messages = warning
log_checkpoints = off
{preload}
include_if_exists = 'bench_run.conf'
"""


class Cluster:
    def __init__(self, tree, contender, workdir, port):
        self.tree = tree
        self.contender = contender
        # ngbase is ours too, at another commit, in a tree of its own
        self.kind = "ng" if contender == "ngbase" else contender
        self.data = os.path.join(workdir, "data-" + contender)
        self.sock = os.path.join(workdir, "sock")
        self.port = port
        self.logfile = os.path.join(workdir, "log-%s.log" % contender)
        self.running = False

    # settings that depend on the contender, for a given max
    def ext_settings(self, max_entries):
        c = self.kind
        if c == "pgss" or self.contender == "ngbase":
            # ngbase: our builds before f361ef7 lost settings given under
            # our own names at start; the contrib-name aliases work at every
            # commit (and are contrib's names for pgss)
            return {"pg_stat_statements.max": max_entries,
                    "pg_stat_statements.save": "off"}
        if c == "ng":
            return {"pg_stat_statements_ng.max": max_entries,
                    "pg_stat_statements_ng.save": "off"}
        # pg_stat_monitor has no entry-count limit (pgsm_max is megabytes)
        return {}

    def preload(self):
        return {"none": "", "pgss": "pg_stat_statements",
                "ng": "pg_stat_statements_ng",
                "pgsm": "pg_stat_monitor"}[self.kind]

    def initdb(self):
        mkdir_pg(self.sock)
        run(as_pg([self.tree.bin("initdb"), "-D", self.data, "-A", "trust",
                   "-U", "postgres", "--no-sync", "-E", "UTF8",
                   "--locale=C"]))
        pre = self.preload()
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(BASE_CONF.format(
                sock=self.sock, port=self.port,
                preload=("shared_preload_libraries = '%s'" % pre) if pre else ""))
        self.write_run_conf({})

    def write_run_conf(self, settings):
        path = os.path.join(self.data, "bench_run.conf")
        with open(path, "w") as f:
            for k, v in settings.items():
                if isinstance(v, str):
                    v = "'%s'" % v
                f.write("%s = %s\n" % (k, v))
        if os.geteuid() == 0:
            shutil.chown(path, "postgres", "postgres")

    def start(self, settings=None):
        if settings is not None:
            self.write_run_conf(settings)
        run(as_pg([self.tree.bin("pg_ctl"), "-D", self.data, "-l", self.logfile,
                   "-w", "-t", "120", "start"]))
        self.running = True
        if settings:
            self.check_settings(settings)

    def check_settings(self, settings):
        """A benchmark at the wrong max is worse than none: check that every
        setting of the run is what the server uses."""
        names = ",".join("'%s'" % k for k in settings)
        out = self.psql("SELECT name, setting FROM pg_settings WHERE name IN (%s);\n"
                        % names)
        got = dict(line.split("|", 1) for line in out.strip().splitlines() if "|" in line)
        for k, v in settings.items():
            want = str(v)
            if got.get(k) != want:
                raise RuntimeError("%s: %s is %r, the run asked for %r (see %s)"
                                   % (self.contender, k, got.get(k), want, self.logfile))

    def stop(self):
        if self.running:
            run(as_pg([self.tree.bin("pg_ctl"), "-D", self.data, "-m", "fast",
                       "-w", "-t", "120", "stop"]), check=False)
            self.running = False

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            return None

    def conn_args(self):
        return ["-h", self.sock, "-p", str(self.port), "-U", "postgres"]

    def psql(self, sql, db="postgres", check=True, timing=False):
        cmd = [self.tree.bin("psql"), "-X", "-q", "-A", "-t", "-v",
               "ON_ERROR_STOP=1"] + self.conn_args() + ["-d", db]
        inp = ("\\timing on\n" if timing else "") + sql
        return run(cmd, input=inp, check=check).stdout

    def psql_file(self, path, db="postgres"):
        return subprocess.Popen(
            [self.tree.bin("psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
            + self.conn_args() + ["-d", db, "-f", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            universal_newlines=True)

    # statistics, per contender
    def reset_stats(self):
        sql = "SELECT pg_stat_reset();\n"
        if self.kind == "pgss":
            sql += "SELECT pg_stat_statements_reset();\n"
        elif self.kind == "ng":
            sql += "SELECT pg_stat_statements_ng_reset();\n"
        elif self.kind == "pgsm":
            sql += "SELECT pg_stat_monitor_reset();\n"
        self.psql(sql)

    def ext_info(self):
        c = self.kind
        if c == "none":
            return {"dealloc": None, "entries": None}
        if c == "pgss":
            out = self.psql("SELECT (SELECT dealloc FROM pg_stat_statements_info), "
                            "(SELECT count(*) FROM pg_stat_statements(false));\n")
            d, e = out.strip().split("|")
            return {"dealloc": int(d), "entries": int(e)}
        if c == "ng":
            out = self.psql(
                "SELECT dealloc, entries, entries_refused, counts_discarded, "
                "lock_misses, texts_dropped FROM pg_stat_statements_ng_info;\n")
            v = [int(x) for x in out.strip().split("|")]
            return {"dealloc": v[0], "entries": v[1], "entries_refused": v[2],
                    "counts_discarded": v[3], "lock_misses": v[4],
                    "texts_dropped": v[5]}
        out = self.psql("SELECT count(*) FROM pg_stat_monitor;\n")
        return {"dealloc": None, "entries": int(out.strip())}

    def create_extension(self):
        ext = {"pgss": "pg_stat_statements", "ng": "pg_stat_statements_ng",
               "pgsm": "pg_stat_monitor"}.get(self.kind)
        if ext:
            self.psql("CREATE EXTENSION %s;\n" % ext)

    def setup_data(self, needs, pgbench_scale, onerow_tables=1000):
        if "pgbench" in needs:
            run([self.tree.bin("pgbench"), "-i", "-q", "-s", str(pgbench_scale)]
                + self.conn_args() + ["postgres"])
        if "dalibo" in needs:
            self.psql("".join("CREATE TABLE t%d (id int);\n" % x
                              for x in range(1, 129)))
        if "onerow" in needs:
            self.psql("DO $$ BEGIN FOR i IN 1..%d LOOP "
                      "EXECUTE format('CREATE TABLE r%%s (id int)', i); "
                      "EXECUTE format('INSERT INTO r%%s VALUES (1)', i); "
                      "END LOOP; END $$;\n" % onerow_tables)
        self.psql("VACUUM ANALYZE;\nCHECKPOINT;\n")


# ---------------------------------------------------------------- wait events

WAIT_SQL = ("SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*) "
            "FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND pid <> pg_backend_pid() GROUP BY 1;")


class WaitSampler(threading.Thread):
    """Samples pg_stat_activity once a second through one psql session.
    A backend waiting on nothing counts as CPU; idle ones show
    Client:ClientRead, as in the seed articles' pg_wait_sampling profiles."""

    def __init__(self, cluster):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.counts = Counter()
        self.samples = 0
        self.stop_ev = threading.Event()
        self.proc = subprocess.Popen(
            [cluster.tree.bin("psql"), "-X", "-q", "-A", "-t", "-F", "|"]
            + cluster.conn_args() + ["-d", "postgres"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, universal_newlines=True, bufsize=1)
        self.error = None

    def run(self):
        try:
            while not self.stop_ev.wait(1.0):
                self.proc.stdin.write(WAIT_SQL + "\n\\echo __end__\n")
                self.proc.stdin.flush()
                got = False
                while True:
                    line = self.proc.stdout.readline()
                    if not line:
                        raise RuntimeError("sampler's psql ended")
                    line = line.rstrip("\n")
                    if line == "__end__":
                        break
                    if "|" in line:
                        ev, n = line.rsplit("|", 1)
                        self.counts[ev] += int(n)
                        got = True
                if got:
                    self.samples += 1
        except Exception as e:  # reported, never fatal
            self.error = str(e)

    def finish(self):
        self.stop_ev.set()
        self.join(timeout=10)
        try:
            self.proc.stdin.close()
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return self.counts


# ---------------------------------------------------------------- tps part

TPS_RE = re.compile(r"^tps = ([0-9.]+) \((?:without initial connection time|"
                    r"excluding connections establishing)\)", re.M)
FAILED_RE = re.compile(r"number of failed transactions: (\d+)")


def pgbench_cmds(tree, cluster, wl, duration, scriptdir, cores):
    """One pgbench command, or one per process for workloads with procs."""
    def cmd_for(clients, scripts):
        cmd = [tree.bin("pgbench"), "-n", "-T", str(duration), "-c", str(clients),
               "-j", str(min(clients, cores)), "-M", wl["mode"]]
        if wl.get("builtin"):
            cmd += ["-b", wl["builtin"]]
        for name in sorted(scripts):
            fname, _, weight = name.partition("@")
            cmd += ["-f", os.path.join(scriptdir, fname) + ("@" + weight if weight else "")]
        return cmd + cluster.conn_args() + ["postgres"]
    if wl.get("procs"):
        return [cmd_for(1, scripts) for scripts in wl["procs"]]
    return [cmd_for(wl["clients"], wl["scripts"])]


def write_scripts(defs, scriptdir):
    os.makedirs(scriptdir, exist_ok=True)
    for wl in defs.values():
        for name, text in wl["scripts"].items():
            with open(os.path.join(scriptdir, name.partition("@")[0]), "w") as f:
                f.write(text)


def wait_for_idle(max_wait, threshold):
    """Before a run: wait (at most max_wait s) until the machine is quiet,
    i.e. other processes use less than `threshold` of all cores."""
    t0 = time.time()
    busy = idle_check(0.5)
    while busy > threshold and time.time() - t0 < max_wait:
        busy = idle_check(1.0)
    return round(time.time() - t0, 1), round(busy, 3)


def one_run(tree, cluster, wname, wl, duration, scriptdir, cores, logdir, tag, args):
    waited, busy_before = wait_for_idle(args.idle_wait, args.idle_threshold)
    cluster.start(cluster.ext_settings(wl["max"]))
    try:
        cluster.reset_stats()
        pm = cluster.postmaster_pid()
        sampler = WaitSampler(cluster)
        sampler.start()
        cmds = pgbench_cmds(tree, cluster, wl, duration, scriptdir, cores)
        ours0 = tree_ticks(pm) + children_ticks()
        busy0, total0 = cpu_busy_ticks()
        t0 = time.time()
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True) for cmd in cmds]
        outs = [p.communicate() for p in procs]
        elapsed = time.time() - t0
        waits = sampler.finish()
        time.sleep(0.2)  # let the backends exit and be reaped
        busy1, total1 = cpu_busy_ticks()
        ours1 = tree_ticks(pm) + children_ticks()
        foreign = max(0.0, ((busy1 - busy0) - (ours1 - ours0)) / float(max(1, total1 - total0)))
        tps = 0.0
        failed = 0
        with open(os.path.join(logdir, "pgbench-%s.log" % tag), "w") as f:
            for cmd, p, (out, err) in zip(cmds, procs, outs):
                f.write(" ".join(cmd) + "\n" + out + err + "\n")
                m = TPS_RE.search(out)
                if p.returncode != 0 or not m:
                    raise RuntimeError("pgbench failed (%d) for %s:\n%s%s" % (
                        p.returncode, tag, out[-2000:], err[-2000:]))
                tps += float(m.group(1))
                fm = FAILED_RE.search(out)
                failed += int(fm.group(1)) if fm else 0
        info = cluster.ext_info()
        res = {"tps": tps, "elapsed": round(elapsed, 2), "failed": failed,
               "foreign_cpu": round(foreign, 3), "busy_before": busy_before,
               "idle_waited": waited,
               "waits": dict(waits.most_common()), "wait_samples": sampler.samples,
               "sampler_error": sampler.error}
        res.update(info)
        return res
    finally:
        cluster.stop()


def tps_part(args, tree, clusters, defs, plan, cores, outdir, workdir):
    scriptdir = os.path.join(workdir, "scripts")
    write_scripts(defs, scriptdir)
    logdir = os.path.join(outdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    contenders = list(clusters)
    runs = []
    max_rounds = max(r for _, r in plan)
    total = sum(r for _, r in plan) * len(contenders)
    done = 0
    t_start = time.time()
    for rnd in range(max_rounds):
        # rotate the contender order each round: A B C, B C A, C A B, ...
        k = rnd % len(contenders)
        order = contenders[k:] + contenders[:k]
        for wname, rounds in plan:
            if rnd >= rounds:
                continue
            wl = defs[wname]
            for c in order:
                tag = "%s-r%d-%s" % (wname, rnd + 1, c)
                retries = 0
                while True:
                    res = one_run(tree, clusters[c], wname, wl, args.duration,
                                  scriptdir, cores, logdir, tag, args)
                    if res["foreign_cpu"] <= args.max_foreign or retries >= args.retries:
                        break
                    retries += 1
                    log("%s: other processes took %.0f%% of the CPU, running it again"
                        % (tag, 100 * res["foreign_cpu"]))
                res["retries"] = retries
                res.update({"workload": wname, "round": rnd + 1, "contender": c})
                runs.append(res)
                done += 1
                eta = (time.time() - t_start) / done * (total - done)
                top = ", ".join("%s %d" % kv for kv in
                                Counter(res["waits"]).most_common(2))
                log("[%d/%d] %-10s round %d %-5s %10.0f tps  dealloc=%s entries=%s  "
                    "foreign cpu %.0f%%  %s  (eta %ds)"
                    % (done, total, wname, rnd + 1, c, res["tps"], res["dealloc"],
                       res["entries"], 100 * res["foreign_cpu"], top, eta))
    return runs


def summarize(runs, contenders, plan, max_foreign=1.0):
    """Per workload and contender: median tps, paired ratios to none (and
    ng/pgss, ng/ngbase) over the rounds, summed wait events, dealloc/entries medians.
    A run during which other processes took more than max_foreign of the
    CPU (it was run again and still disturbed) is left out of the medians
    and of the pairs it belongs to, unless that leaves nothing."""
    summary = []
    by = {}
    for r in runs:
        by[(r["workload"], r["contender"], r["round"])] = r

    def clean(r):
        return r.get("foreign_cpu", 0) <= max_foreign

    for wname, rounds in plan:
        row = {"workload": wname, "rounds": rounds, "contenders": {}}
        for c in contenders:
            rs_all = [by[(wname, c, i)] for i in range(1, rounds + 1)
                      if (wname, c, i) in by]
            if not rs_all:
                continue
            rs = [r for r in rs_all if clean(r)] or rs_all
            ent = {"tps_median": median([r["tps"] for r in rs]),
                   "tps": [r["tps"] for r in rs_all],
                   "runs_used": len(rs), "runs": len(rs_all)}
            for base in ("none", "pgss", "ngbase"):
                if base == c or base not in contenders:
                    continue
                if base == "ngbase" and c != "ng":
                    continue
                pairs = [(by[(wname, c, i)], by[(wname, base, i)])
                         for i in range(1, rounds + 1)
                         if (wname, c, i) in by and (wname, base, i) in by]
                good = [(a, b) for a, b in pairs if clean(a) and clean(b)] or pairs
                ratios = [a["tps"] / b["tps"] for a, b in good]
                if ratios:
                    ent["ratio_" + base] = {"median": median(ratios),
                                            "min": min(ratios), "max": max(ratios),
                                            "values": ratios, "n": len(ratios)}
            w = Counter()
            for r in rs_all:
                w.update(r["waits"])
            ent["waits"] = dict(w.most_common())
            ent["foreign_cpu_median"] = median([r.get("foreign_cpu", 0) for r in rs_all])
            for key in ("dealloc", "entries", "entries_refused",
                        "counts_discarded", "lock_misses", "texts_dropped"):
                vals = [r[key] for r in rs if r.get(key) is not None]
                if vals:
                    ent[key + "_median"] = median(vals)
            row["contenders"][c] = ent
        summary.append(row)
    return summary


# ---------------------------------------------------------------- callgrind part

COLLECTED_RE = re.compile(r"Collected : (\d+)")


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
    # "statement" is then per transaction of 10 statements)
    new = args.callgrind_set == "new"
    for k in (n, 3 * n):
        path = os.path.join(cgdir, "%s-%d.sql" % (args.callgrind_set, k))
        with open(path, "w") as f:
            if new:
                f.write("\n".join(fill_statements(0, k)) + "\n")
            elif args.callgrind_set == "multi":
                for i in range(k):
                    f.write("\n".join(multi_transaction(str(1 + i * 7 % 100000))) + "\n")
            else:
                f.write("SELECT 1;\n" * k)
        inputs[k] = path
    res = {"n": n, "set": args.callgrind_set,
           "statement": {"new": "a distinct two-table join (%s ...), max = 500"
                         % fill_statements(0, 1)[0],
                         "multi": "the multi workload's transaction (BEGIN, 8 point "
                         "selects with literals, COMMIT: 10 lines)",
                         "select1": "SELECT 1;"}[args.callgrind_set],
           "contenders": {}}
    keep = os.path.join(outdir, "callgrind")
    os.makedirs(keep, exist_ok=True)
    for c, cl in clusters.items():
        cl.write_run_conf(cl.ext_settings(500 if new else 5000))
        counts = {}
        for k, path in inputs.items():
            out = os.path.join(cgdir, "callgrind.out.%s-%d" % (c, k))
            # one command per line (no -j): each statement is its own
            # exec_simple_query, with its own transaction, as from a client
            cmd = as_pg(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                         cl.tree.bin("postgres"), "--single", "-D", cl.data, "postgres"])
            with open(path) as inp:
                p = run(cmd, stdin=inp, check=False)
            m = COLLECTED_RE.search(p.stderr)
            if not m:
                raise RuntimeError("callgrind gave no count for %s:\n%s" % (c, p.stderr[-2000:]))
            counts[k] = int(m.group(1))
            if k == 3 * n:
                ann = run(["callgrind_annotate", "--inclusive=yes", out], check=False)
                with open(os.path.join(keep, "annotate-%s.txt" % c), "w") as f:
                    f.write("\n".join(ann.stdout.splitlines()[:80]) + "\n")
        per = (counts[3 * n] - counts[n]) / (2.0 * n)
        res["contenders"][c] = {"total_n": counts[n], "total_3n": counts[3 * n],
                                "per_statement": per}
        log("callgrind %-5s %8.0f instructions per statement" % (c, per))
    base = res["contenders"].get("none")
    if base:
        for c, e in res["contenders"].items():
            e["added"] = e["per_statement"] - base["per_statement"]
    return res


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


def fill_statements(lo, hi):
    """Statements number lo..hi-1 of the 100,000 distinct two-table
    statements (a in 1..100, b in 1..1000)."""
    out = []
    for i in range(lo, hi):
        a, b = 1 + i // 1000, 1 + i % 1000
        out.append("SELECT 1 FROM r%d a_%d, r%d b_%d;" % (a, a, b, b))
    return out


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
        qs = read_queries(c)
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


# ---------------------------------------------------------------- output

def fmt_ratio(r):
    if not r:
        return ""
    return "%.3f (%.3f-%.3f)%s" % (r["median"], r["min"], r["max"],
                                   " n=%d" % r["n"] if "n" in r else "")


def fmt_waits(w, n=5):
    return ", ".join("%s %d" % kv for kv in Counter(w).most_common(n))


def fmt_int(v):
    return "" if v is None else "%d" % v


def write_markdown(path, meta, defs, plan, contenders, runs, summary, cg, rc, plot):
    L = []
    L.append("# Benchmark run %s: PostgreSQL %s" % (meta["stamp"], meta["pg_version"]))
    L.append("")
    L.append("- machine: %s cores, %s, kernel %s" % (meta["nproc"], meta["memory"], meta["kernel"]))
    L.append("- PostgreSQL: %s (%s)" % (meta["pg_version"], meta["bindir"]))
    L.append("- pg_stat_statements_ng: %s" % meta["ng_commit"])
    L.append("- command: `%s`" % meta["command"])
    if runs:
        L.append("- %d runs of %d s, contender order rotated each round; "
                 "ratios are medians of per-round paired ratios (min-max)"
                 % (len(runs), meta["duration"]))
    L.append("")
    if summary:
        L.append("## Throughput (tps, median over rounds)")
        L.append("")
        hdr = ["workload", "rounds"] + ["%s tps" % c for c in contenders]
        hdr += ["%s / none" % c for c in contenders if c != "none" and "none" in contenders]
        if "ng" in contenders and "pgss" in contenders:
            hdr.append("ng / pgss")
        if "ng" in contenders and "ngbase" in contenders:
            hdr.append("ng / ngbase")
        L.append("| " + " | ".join(hdr) + " |")
        L.append("|" + "---|" * len(hdr))
        for row in summary:
            cs = row["contenders"]
            used = min(e.get("runs_used", row["rounds"]) for e in cs.values())
            cells = [row["workload"], str(row["rounds"]) +
                     ("" if used == row["rounds"] else " (%d clean)" % used)]
            cells += ["%.0f" % cs[c]["tps_median"] if c in cs else "" for c in contenders]
            cells += [fmt_ratio(cs.get(c, {}).get("ratio_none"))
                      for c in contenders if c != "none" and "none" in contenders]
            if "ng" in contenders and "pgss" in contenders:
                cells.append(fmt_ratio(cs.get("ng", {}).get("ratio_pgss")))
            if "ng" in contenders and "ngbase" in contenders:
                cells.append(fmt_ratio(cs.get("ng", {}).get("ratio_ngbase")))
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
        L.append("## Evictions, entries and wait events (per workload and contender)")
        L.append("")
        L.append("dealloc: pg_stat_statements counts eviction runs (each frees 5% of "
                 "max), pg_stat_statements_ng counts evicted entries. Entries: at the "
                 "end of the run. Medians over the rounds; wait events summed over "
                 "all rounds' one-per-second samples of pg_stat_activity (client "
                 "backends; CPU = no wait event).")
        L.append("")
        L.append("| workload | contender | dealloc | entries | ng losses (refused/discarded/lock misses/texts dropped) | foreign CPU | top 5 wait events |")
        L.append("|---|---|---|---|---|---|---|")
        for row in summary:
            for c in contenders:
                e = row["contenders"].get(c)
                if not e:
                    continue
                losses = ""
                if c == "ng":
                    losses = "/".join(fmt_int(e.get(k + "_median")) for k in
                                      ("entries_refused", "counts_discarded",
                                       "lock_misses", "texts_dropped"))
                L.append("| %s | %s | %s | %s | %s | %.0f%% | %s |" % (
                    row["workload"], c, fmt_int(e.get("dealloc_median")),
                    fmt_int(e.get("entries_median")), losses,
                    100 * e.get("foreign_cpu_median", 0), fmt_waits(e["waits"])))
        L.append("")
        if plot:
            L.append("![tps ratio to no extension](%s)" % os.path.basename(plot))
            L.append("")
        L.append("## Workloads")
        L.append("")
        for wname, _ in plan:
            L.append("- **%s**: %s" % (wname, defs[wname]["desc"]))
        L.append("")
        L.append("## Every run")
        L.append("")
        L.append("Foreign CPU: the share of the machine's CPU used by processes other "
                 "than this run's server and clients during the run (the machine is "
                 "shared); each run first waits up to %s s for it to be below %.0f%%, "
                 "and is run again (up to %s times) if it was above %.0f%%. A run "
                 "still above that is marked disturbed and left out of medians and "
                 "pairs (n = pairs used)."
                 % (meta.get("idle_wait"), 100 * meta.get("idle_threshold", 0),
                    meta.get("retries"), 100 * meta.get("max_foreign", 1)))
        L.append("")
        L.append("| workload | round | contender | tps | dealloc | entries | foreign CPU | wait samples | top 5 wait events |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for r in runs:
            L.append("| %s | %d | %s | %.0f%s | %s | %s | %.0f%% | %d | %s |" % (
                r["workload"], r["round"], r["contender"], r["tps"],
                "" if r.get("foreign_cpu", 0) <= meta.get("max_foreign", 1) else " (disturbed)",
                fmt_int(r.get("dealloc")), fmt_int(r.get("entries")),
                100 * r.get("foreign_cpu", 0), r["wait_samples"], fmt_waits(r["waits"])))
        L.append("")
    if cg:
        L.append("## Instructions per statement (callgrind)")
        L.append("")
        L.append("`postgres --single` fed %d and %d lines of %s under valgrind "
                 "--tool=callgrind; per statement = (I(3N) - I(N)) / 2N."
                 % (cg["n"], 3 * cg["n"],
                    "`%s`" % cg["statement"] if cg.get("set", "select1") == "select1"
                    else cg["statement"]))
        L.append("")
        L.append("| contender | instructions per statement | added over none |")
        L.append("|---|---|---|")
        for c, e in cg["contenders"].items():
            L.append("| %s | %.0f | %s |" % (c, e["per_statement"],
                                           "%+.0f" % e["added"] if "added" in e else ""))
        ng, pgss = cg["contenders"].get("ng"), cg["contenders"].get("pgss")
        if ng and pgss and "added" in ng and pgss.get("added"):
            L.append("")
            L.append("ng's added instructions are %.2f of pg_stat_statements' (target: <= 0.5)."
                     % (ng["added"] / pgss["added"]))
        L.append("")
    if rc:
        L.append("## Read cost")
        L.append("")
        L.append("Time to read the view (psql \\timing, median of %d after a warm-up; "
                 "min in parentheses) while %d backends hold %d statements each in "
                 "their slots (they sleep in pg_sleep after running them); max = %d."
                 % (rc["reps"], rc["holders"], rc["per_holder"], rc["max"]))
        L.append("")
        L.append("| contender | entries | query | ms |")
        L.append("|---|---|---|---|")
        for c, sizes in rc["contenders"].items():
            for size, e in sizes.items():
                for label, q in e["queries"].items():
                    L.append("| %s | %s | %s: `%s` | %.1f (%.1f) |" % (
                        c, fmt_int(e["entries"]), label, q["sql"], q["median"], q["min"]))
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def make_plot(path, summary, contenders, title, results_json=None):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        # this interpreter (e.g. a pyenv one) may not see Debian's
        # python3-matplotlib: try the system interpreter
        syspy = "/usr/bin/python3"
        if (results_json and os.path.exists(syspy)
                and os.path.realpath(sys.executable) != os.path.realpath(syspy)):
            p = run([syspy, os.path.abspath(__file__), "--plot-from",
                         results_json, "--plot-out", path, "--plot-title", title],
                    check=False)
            if p.returncode == 0 and os.path.exists(path):
                return path
        log("matplotlib is not installed: no plot (bench/setup.sh installs python3-matplotlib)")
        return None
    others = [c for c in contenders if c != "none"]
    if "none" not in contenders or not others or not summary:
        return None
    names = [row["workload"] for row in summary]
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(names) + 2), 4.5))
    width = 0.8 / len(others)
    colors = {"pgss": "#d62728", "ng": "#1f77b4", "pgsm": "#2ca02c",
              "ngbase": "#9467bd"}
    for i, c in enumerate(others):
        xs, ys, lo, hi = [], [], [], []
        for j, row in enumerate(names):
            r = summary[j]["contenders"].get(c, {}).get("ratio_none")
            if not r:
                continue
            xs.append(j + (i - (len(others) - 1) / 2.0) * width)
            ys.append(r["median"])
            lo.append(r["median"] - r["min"])
            hi.append(r["max"] - r["median"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=CONTENDER_LABEL[c],
               color=colors.get(c))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(0.99, color="grey", linewidth=0.6, linestyle="--")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("tps / tps without extension\n(median of paired ratios, min-max)")
    lows = [summary[j]["contenders"].get(c, {}).get("ratio_none", {}).get("min", 1)
            for j in range(len(names)) for c in others]
    ax.set_ylim(max(0, min(lows + [0.9]) - 0.05), max(1.1, max(
        summary[j]["contenders"].get(c, {}).get("ratio_none", {}).get("max", 1)
        for j in range(len(names)) for c in others) + 0.03))
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---------------------------------------------------------------- main

def machine_meta():
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        mem = "%.1f GiB" % (kb / 1048576.0)
    except Exception:
        pass
    return {"nproc": nproc(), "memory": mem, "kernel": platform.release()}


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


def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bindir", default="/usr/lib/postgresql/15/bin",
                    help="PostgreSQL bin directory (a release build)")
    ap.add_argument("--contenders", default="none,pgss,ng",
                    help="comma list of none, pgss, ng, pgsm (default none,pgss,ng; "
                         "pgsm is added when --pgsm-lib is given)")
    ap.add_argument("--pgsm-lib", help="pg_stat_monitor.so of a local build (its "
                    "control and SQL files next to it); never downloaded")
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
    ap.add_argument("--callgrind-n", type=int, default=5000)
    ap.add_argument("--callgrind-set", choices=["select1", "new", "multi"],
                    default="select1",
                    help="callgrind statements: select1 (SELECT 1 repeated), new "
                         "(every statement a distinct join, max = 500) or multi "
                         "(the multi workload's transaction, per transaction)")
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
    args = ap.parse_args()
    VERBOSE = not args.quiet
    if args.resummarize:
        return resummarize(args)
    if args.plot_from:
        with open(args.plot_from) as f:
            data = json.load(f)
        ok = make_plot(args.plot_out, data["summary"], data["meta"]["contenders"],
                       args.plot_title or "")
        return 0 if ok else 1

    contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    if args.pgsm_lib and "pgsm" not in contenders:
        contenders.append("pgsm")
    for c in contenders:
        if c not in ALL_CONTENDERS:
            die("unknown contender %r" % c)
    if "pgsm" in contenders and not args.pgsm_lib:
        die("pgsm needs --pgsm-lib (a local build of pg_stat_monitor)")
    if args.ng_base and "ngbase" not in contenders:
        contenders.append("ngbase")
    if "ngbase" in contenders and not args.ng_base:
        die("ngbase needs --ng-base COMMIT")
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
    args.readcost_sizes = [int(s) for s in str(args.readcost_sizes).split(",")]
    parts = set(p.strip() for p in args.parts.split(",") if p.strip())
    cores = args.scale
    defs = workload_defs(cores, args.pgbench_scale)
    plan = parse_workloads(args.workloads, args.rounds, defs) if "tps" in parts else []

    if os.geteuid() == 0:
        try:
            import pwd
            pwd.getpwnam("postgres")
        except KeyError:
            die("running as root needs a postgres user (initdb refuses root)")

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
    clusters = {}

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

    t0 = time.time()
    tree = Tree(args.bindir, workdir, args.ext_src, args.pgsm_lib, args.use_installed)
    log("PostgreSQL %s, private tree %s" % (tree.version, tree.root))

    needs = set()
    for wname, _ in plan:
        needs |= defs[wname]["setup"]
    onerow_tables = 1000 if needs & {"onerow"} else 0
    if "callgrind" in parts and args.callgrind_set == "new":
        needs.add("onerow")
        onerow_tables = 1000
    if "callgrind" in parts and args.callgrind_set == "multi":
        needs.add("pgbench")
    if "readcost" in parts:
        needs.add("onerow")
        # statement i of the read-cost set joins r(1 + i // 1000), r(1 + i % 1000)
        onerow_tables = max(onerow_tables, min(1000, max(args.readcost_sizes)))
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
    log("results: %s (%d s)" % (outdir, meta["seconds"]))
    print(os.path.join(outdir, "results.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
