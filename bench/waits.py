"""bench/waits.py -- the wait event sampler that runs beside each tps run:
pg_stat_activity read once a second through one psql session.
"""

import subprocess
import threading
from collections import Counter


# ---------------------------------------------------------------- wait events

WAIT_SQL = ("SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*) "
            "FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND pid <> pg_backend_pid() GROUP BY 1;")


class WaitSampler(threading.Thread):
    """Samples pg_stat_activity once a second through one psql session.
    A backend waiting on nothing counts as CPU; idle ones show
    Client:ClientRead, as pg_wait_sampling's profiles show them."""

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
