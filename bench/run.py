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
     3N statements of each --callgrind-set under valgrind --tool=callgrind,
     its clock counting readings (fixed_clock.c), so that runs repeat;
  6. readcost part: time to read the view with 5,000 and 100,000 entries
     while 50 backends hold slots;
  7. writes results.json, results.md and tps.png under
     bench/results/<timestamp>-pg<major>/.

This file only starts the package bench/ (one module per concern):
  cli.py        the command line, --resummarize, --plot-from
  runner.py     one run from start to end: directories, clusters, parts, results
  common.py     paths, contender names, logging, running commands
  cpu.py        CPU accounting from /proc (foreign CPU, waiting for quiet)
  workloads.py  workload definitions and statement sets
  tree.py       the private PostgreSQL tree with the extensions installed
  cluster.py    one cluster per contender and its per-contender SQL
  waits.py      the wait event sampler
  tps.py        the tps part
  summary.py    runs -> per workload and contender summary
  callgrind.py  the callgrind part
  fixed_clock.c the clock the callgrind part's processes read
  readcost.py   the read cost part
  report.py     results.md
  plot.py       tps.png
"""

import os
import sys

if __name__ == "__main__":
    # run as a script: import the package bench from the repository's top
    # (instead of this directory, whose modules are the package's)
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from bench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(__doc__))
