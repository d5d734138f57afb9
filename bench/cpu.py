"""bench/cpu.py -- CPU accounting from /proc: the machine's busy and total
jiffies, a process tree's ticks, and how busy the machine is while nothing
of ours runs.  The tps part uses it to measure "foreign CPU" and to wait for
a quiet machine before each run.
"""

import os
import time


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
