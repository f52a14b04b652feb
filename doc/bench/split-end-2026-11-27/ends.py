#!/usr/bin/env python3
"""Medians of a split upload's end phase from run.sh's output files: the
time from the second-to-last to the last "TAILDIAG ... done" line of one
copy (each range_upload() call's end, logged by the diagnostic line in
README.md), and the copies' wall times."""
import os, re, statistics as st

here = os.path.dirname(os.path.abspath(__file__))
files = {"lossy-A-B.txt": "lossy", "lossy-A-B-C.txt": "lossy", "clean-A-B-C.txt": "clean"}
ends, walls = {}, {}
for f, link in files.items():
    for line in open(os.path.join(here, f)):
        m = re.search(r"(?:(up|down) )?([ABC]) run\d+ rc=0 wall=([\d.]+) dones:(.*)", line)
        if not m:
            continue
        key = (link, m.group(1) or "up", m.group(2))
        walls.setdefault(key, []).append(float(m.group(3)))
        t = sorted(float(x.split(":")[0]) for x in m.group(4).split())
        if len(t) >= 2:
            ends.setdefault(key, []).append(t[-1] - t[-2])
for k in sorted(walls):
    w, e = walls[k], ends.get(k, [])
    print("%-5s %-4s %s  copies %2d  wall median %5.2f s%s" % (
        k + (len(w), st.median(w),
             "  end phase median %.2f s (%s)" % (st.median(e), " ".join("%.2f" % x for x in sorted(e))) if e else "")))
