#!/usr/bin/env python3
"""medians.py FILE...: per build and direction, the copies and their median wall time."""
import statistics
import sys

for fn in sys.argv[1:]:
    d = {}
    for line in open(fn):
        p = line.split()
        if len(p) == 5 and p[3].startswith("rc="):
            d.setdefault((p[0], p[1]), []).append((p[3], float(p[4])))
    print(fn)
    for (build, direction), runs in sorted(d.items()):
        walls = sorted(w for _, w in runs)
        bad = sum(1 for rc, _ in runs if rc != "rc=0")
        print("  %s %-4s %2d copies, median %.2f s (%.2f-%.2f)%s" % (
            build, direction, len(walls), statistics.median(walls), walls[0], walls[-1],
            ", %d failed" % bad if bad else ""))
