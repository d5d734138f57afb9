"""bench/plot.py -- tps.png: each contender's tps ratio to no extension per
workload, drawn with matplotlib when this interpreter or the system's has
it (the system interpreter runs bench/run.py --plot-from), else nothing.
"""

import os
import sys

from .common import CONTENDER_LABEL, HERE, log, run


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
            p = run([syspy, os.path.join(HERE, "run.py"), "--plot-from",
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
