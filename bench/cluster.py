"""bench/cluster.py -- one throwaway cluster per contender: initdb with the
run's base settings, each run's settings (checked against pg_settings),
start and stop, psql, and the per-contender SQL (reset, the extension's
info counters, CREATE EXTENSION, the data the workloads need).
"""

import os
import shutil
import subprocess

from .common import as_pg, mkdir_pg, run


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
        # ngbase is ours too, at another commit, in a tree of its own; qid
        # is no extension with core's query jumbling switched on, the part
        # of every query-id-based extension's cost that core does
        self.kind = {"ngbase": "ng", "qid": "none"}.get(contender, contender)
        self.data = os.path.join(workdir, "data-" + contender)
        self.sock = os.path.join(workdir, "sock")
        self.port = port
        self.logfile = os.path.join(workdir, "log-%s.log" % contender)
        self.running = False

    # settings that depend on the contender, for a given max
    def ext_settings(self, max_entries):
        c = self.kind
        if self.contender == "qid":
            return {"compute_query_id": "on"}
        if c == "ng" and os.environ.get("PGSSNG_BENCH_SETTINGS"):
            # ours and ngbase alike: NAME=VALUE,... (e.g. track_plans=off)
            extra = dict(kv.split("=", 1) for kv in
                         os.environ["PGSSNG_BENCH_SETTINGS"].split(","))
        else:
            extra = {}
        if c in ("pgss", "psp") or self.contender == "ngbase":
            # ngbase: our builds before f361ef7 lost settings given under
            # our own names at start; the contrib-name aliases work at every
            # commit (and are contrib's names for pgss)
            return {"pg_stat_statements.max": max_entries,
                    "pg_stat_statements.save": "off", **extra}
        if c == "ng":
            return {"pg_stat_statements_ng.max": max_entries,
                    "pg_stat_statements_ng.save": "off", **extra}
        # pg_stat_monitor has no entry-count limit (pgsm_max is megabytes)
        return {}

    def preload(self):
        return {"none": "", "pgss": "pg_stat_statements",
                "ng": "pg_stat_statements_ng",
                "pgsm": "pg_stat_monitor",
                "psp": "pg_stat_statements,pg_stat_plans"}[self.kind]

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
        elif self.kind == "psp":
            sql += ("SELECT pg_stat_statements_reset();\n"
                    "SELECT pg_stat_plans_reset();\n")
        self.psql(sql)

    def ext_info(self):
        c = self.kind
        if c == "none":
            return {"dealloc": None, "entries": None}
        if c in ("pgss", "psp"):
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
               "pgsm": "pg_stat_monitor",
               "psp": "pg_stat_statements; CREATE EXTENSION pg_stat_plans"
               }.get(self.kind)
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
        # every tuple frozen and its page all-visible before any run: under
        # synchronous_commit = off a VACUUM right after the load may find
        # the load's commit not yet flushed and leave hint bits unset, and
        # then the first run to read a table sets them, dirties its page
        # and writes it (with a full-page image where checksums are on), as
        # often as the walwriter happened to be late; the first CHECKPOINT
        # flushes the commits, FREEZE leaves nothing to set
        self.psql("CHECKPOINT;\nVACUUM (FREEZE, ANALYZE);\nCHECKPOINT;\n")
