"""bench/report.py -- results.md: the run's header, the throughput table,
evictions/entries/losses/wait events, the workloads, every run, instructions
per statement and read cost, each section written by its own function from
what results.json holds (so --resummarize writes the same file).
"""

import os
from collections import Counter


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
    md_header(L, meta, runs)
    if summary:
        md_throughput(L, contenders, summary)
        md_cpu(L, contenders, summary)
        md_losses(L, contenders, summary)
        if plot:
            L.append("![tps ratio to no extension](%s)" % os.path.basename(plot))
            L.append("")
        md_workloads(L, defs, plan)
        md_runs(L, meta, runs)
    if cg:
        md_callgrind(L, cg)
    if rc:
        md_readcost(L, rc)
    with open(path, "w") as f:
        f.write("\n".join(L))


def md_header(L, meta, runs):
    """The title and what was run, where."""
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


def ratio_columns(contenders):
    """A table's ratio columns, as (header, contender, base): each
    contender against none, then ours against contrib and against ngbase."""
    cols = [("%s / none" % c, c, "none") for c in contenders
            if c != "none" and "none" in contenders]
    for base in ("pgss", "ngbase"):
        if "ng" in contenders and base in contenders:
            cols.append(("ng / %s" % base, "ng", base))
    return cols


def md_table(L, hdr, rows):
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    for cells in rows:
        L.append("| " + " | ".join(cells) + " |")
    L.append("")


def md_throughput(L, contenders, summary):
    """Median tps and ratios per workload."""
    L.append("## Throughput (tps, median over rounds)")
    L.append("")
    cols = ratio_columns(contenders)
    rows = []
    for row in summary:
        cs = row["contenders"]
        used = min(e.get("runs_used", row["rounds"]) for e in cs.values())
        cells = [row["workload"], str(row["rounds"]) +
                 ("" if used == row["rounds"] else " (%d clean)" % used)]
        cells += ["%.0f" % cs[c]["tps_median"] if c in cs else "" for c in contenders]
        cells += [fmt_ratio(cs.get(c, {}).get("ratio_" + base)) for _, c, base in cols]
        rows.append(cells)
    md_table(L, ["workload", "rounds"] + ["%s tps" % c for c in contenders] +
             [h for h, _, _ in cols], rows)


def md_cpu(L, contenders, summary):
    """CPU per transaction and its paired ratios, when the runs have it."""
    if not any("cpu_us_per_tx_median" in e for row in summary
               for e in row["contenders"].values()):
        return
    L.append("## CPU per transaction (server and pgbench, user and system)")
    L.append("")
    L.append("CPU time of the postmaster's tree and of pgbench over the run, "
             "divided by the transactions pgbench processed; the ratios are "
             "the base's CPU per transaction over the contender's (above 1: "
             "cheaper), medians of per-round paired ratios (min-max). Unlike "
             "tps, this does not move with the time the machine leaves idle.")
    L.append("")
    cols = ratio_columns(contenders)
    rows = []
    for row in summary:
        cs = row["contenders"]
        cells = [row["workload"]]
        cells += ["%.1f" % cs[c]["cpu_us_per_tx_median"]
                  if "cpu_us_per_tx_median" in cs.get(c, {}) else ""
                  for c in contenders]
        cells += [fmt_ratio(cs.get(c, {}).get("cpu_ratio_" + base)) for _, c, base in cols]
        rows.append(cells)
    md_table(L, ["workload"] + ["%s us/tx" % c for c in contenders] +
             [h for h, _, _ in cols], rows)


def md_losses(L, contenders, summary):
    """Evictions, entries, ng's losses and wait events."""
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


def md_workloads(L, defs, plan):
    """What each workload of the plan runs."""
    L.append("## Workloads")
    L.append("")
    for wname, _ in plan:
        L.append("- **%s**: %s" % (wname, defs[wname]["desc"]))
    L.append("")


def md_runs(L, meta, runs):
    """Every run, disturbed ones marked."""
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


def md_callgrind(L, cg):
    """Instructions per statement: one table per set (cg is a list of sets,
    or one set in the results of older runs)."""
    L.append("## Instructions per statement (callgrind)")
    L.append("")
    L.append("`postgres --single` fed N and 3N statements of each set under "
             "valgrind --tool=callgrind%s; per statement = (I(3N) - I(N)) / 2N."
             % (", its clock counting readings (bench/fixed_clock.c)"
                if isinstance(cg, list) else ""))
    L.append("")
    for one in (cg if isinstance(cg, list) else [cg]):
        md_callgrind_set(L, one)


def md_callgrind_set(L, cg):
    """One set's table."""
    L.append("### %s, N = %d" % (cg.get("set", "select1"), cg["n"]))
    L.append("")
    L.append("One statement: %s" % ("`%s`" % cg["statement"]
                                    if cg.get("set", "select1") == "select1"
                                    else cg["statement"]))
    L.append("")
    runs = cg.get("runs", 1)
    sim = any("d1_misses" in e for e in cg["contenders"].values())
    L.append("| contender | instructions per statement | added over none "
             "| of which maintenance by the clock |"
             + ("".join(" run %d |" % (r + 1) for r in range(runs))
                + " spread |" if runs > 1 else "")
             + (" D1 misses per statement (simulated) | added over none |" if sim else ""))
    L.append("|---|---|---|---|" + ("---|" * (runs + 1) if runs > 1 else "")
             + ("---|---|" if sim else ""))
    for c, e in cg["contenders"].items():
        L.append("| %s | %.0f | %s | %s |" % (
            c, e["per_statement"], "%+.0f" % e["added"] if "added" in e else "",
            "%.0f" % e["timed"] if e.get("timed") else "")
            + ("".join(" %.0f |" % f for f in e["run_figures"])
               + " %.2f%% |" % (100 * e["spread"]) if runs > 1 else "")
            + (" %s | %s |" % ("%.1f" % e["d1_misses"] if "d1_misses" in e else "",
                              "%+.1f" % e["d1_added"] if "d1_added" in e else "")
               if sim else ""))
    ng, pgss = cg["contenders"].get("ng"), cg["contenders"].get("pgss")
    if ng and pgss and "added" in ng and pgss.get("added"):
        L.append("")
        L.append("ng's added instructions are %.2f of pg_stat_statements'."
                 % (ng["added"] / pgss["added"]))
    L.append("")


def md_readcost(L, rc):
    """Time to read the view."""
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
