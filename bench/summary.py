"""bench/summary.py -- from the tps part's runs to the per workload and
contender summary (medians, paired ratios, waits, losses) that results.json,
results.md and the plot show.  Used by a run and by --resummarize.
"""

from collections import Counter

from .common import median
from .cpu import TICK


def cpu_us_per_tx(r):
    """CPU (user and system, server and pgbench) per transaction of a run,
    in microseconds, or None for a run recorded without it."""
    if not r.get("transactions") or r.get("cpu_ticks") is None:
        return None
    return r["cpu_ticks"] * 1e6 / TICK / r["transactions"]


def paired(pairs, value):
    """Median, min, max and values of value(a) / value(b) over the pairs
    for which both are known, or None."""
    ratios = []
    for a, b in pairs:
        va, vb = value(a), value(b)
        if va and vb:
            ratios.append(va / vb)
    if not ratios:
        return None
    return {"median": median(ratios), "min": min(ratios), "max": max(ratios),
            "values": ratios, "n": len(ratios)}


def summarize(runs, contenders, plan, max_foreign=1.0):
    """Per workload and contender: median tps, paired ratios to none (and
    ng/pgss, ng/ngbase) over the rounds, the same for CPU per transaction
    (cpu_ratio_*: the base's CPU per transaction over the contender's, so
    that above 1 means cheaper, as for tps), summed wait events,
    dealloc/entries medians.
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
                tps_ratio = paired(good, lambda r: r["tps"])
                if tps_ratio:
                    ent["ratio_" + base] = tps_ratio
                cpu_ratio = paired([(b, a) for a, b in good], cpu_us_per_tx)
                if cpu_ratio:
                    ent["cpu_ratio_" + base] = cpu_ratio
            w = Counter()
            for r in rs_all:
                w.update(r["waits"])
            ent["waits"] = dict(w.most_common())
            cpu = [v for v in map(cpu_us_per_tx, rs) if v]
            if cpu:
                ent["cpu_us_per_tx_median"] = median(cpu)
            ent["foreign_cpu_median"] = median([r.get("foreign_cpu", 0) for r in rs_all])
            for key in ("dealloc", "entries", "entries_refused",
                        "counts_discarded", "lock_misses", "texts_dropped"):
                vals = [r[key] for r in rs if r.get(key) is not None]
                if vals:
                    ent[key + "_median"] = median(vals)
            row["contenders"][c] = ent
        summary.append(row)
    return summary
