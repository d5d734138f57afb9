"""bench/tps.py -- the tps part: pgbench commands and scripts for a
workload, waiting for a quiet machine, one measured run of one contender
(cluster started, statistics reset, pgbench beside the wait sampler, foreign
CPU measured, the extension's counters read, cluster stopped), and the
rounds with the contender order rotated and disturbed runs run again.
"""

import os
import re
import subprocess
import time
from collections import Counter

from .common import log
from .cpu import children_ticks, cpu_busy_ticks, idle_check, tree_ticks
from .waits import WaitSampler


# ---------------------------------------------------------------- tps part

TPS_RE = re.compile(r"^tps = ([0-9.]+) \((?:without initial connection time|"
                    r"excluding connections establishing)\)", re.M)
FAILED_RE = re.compile(r"number of failed transactions: (\d+)")
TX_RE = re.compile(r"number of transactions actually processed: (\d+)")


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
        transactions = 0
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
                tm = TX_RE.search(out)
                transactions += int(tm.group(1)) if tm else 0
        info = cluster.ext_info()
        res = {"tps": tps, "elapsed": round(elapsed, 2), "failed": failed,
               "foreign_cpu": round(foreign, 3), "busy_before": busy_before,
               "cpu_ticks": ours1 - ours0, "transactions": transactions,
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
