"""bench/tree.py -- the private copy of a PostgreSQL installation that a run
measures: copied from --bindir's tree, with contrib's pg_stat_statements
restored if the drop-in is installed there, our extension built (git archive
of a commit, or --ext-src) and installed into it, and pg_stat_monitor or
pg_stat_plans when --pgsm-lib or --psp-lib names a local build.
"""

import os
import re
import shutil
import subprocess

from .common import TOP, die, log, nproc, run


# ---------------------------------------------------------------- the tree

class Tree:
    """A private copy of a PostgreSQL installation with our extension (and
    pg_stat_monitor or pg_stat_plans, if given) installed into it."""

    def __init__(self, bindir, workdir, ext_src, pgsm_lib, use_installed,
                 ng_rev="HEAD", psp_lib=None):
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
            self.install_other("pg_stat_monitor", "--pgsm-lib", pgsm_lib)
        if psp_lib:
            self.install_other("pg_stat_plans", "--psp-lib", psp_lib)
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

    def install_other(self, name, option, lib):
        """Another extension from a local build (pg_stat_monitor,
        pg_stat_plans): its library, control and SQL files."""
        lib = os.path.abspath(lib)
        if os.path.isdir(lib):
            d, so = lib, os.path.join(lib, name + ".so")
        else:
            d, so = os.path.dirname(lib), lib
        if not os.path.exists(so):
            die("%s: no %s" % (option, so))
        ctl = os.path.join(d, name + ".control")
        sqls = [f for f in os.listdir(d)
                if f.startswith(name + "--") and f.endswith(".sql")]
        if not os.path.exists(ctl) or not sqls:
            die("%s: %s.control and %s--*.sql must be next to the library (%s)"
                % (option, name, name, d))
        shutil.copy(so, os.path.join(self.pkglibdir, name + ".so"))
        ext = os.path.join(self.sharedir, "extension")
        for f in [ctl] + [os.path.join(d, s) for s in sqls]:
            shutil.copy(f, ext)
        log("%s installed from %s" % (name, d))

    def bin(self, name):
        return os.path.join(self.bindir, name)
