import sys, statistics as st, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 6: d[(f[1], f[2])].append(tuple(map(float, f[3:])))
for tool in ["ssh-up", "ssh-down", "scp-up", "scp-down"]:
    r = {}
    for t in ["stock", "series"]:
        v = d.get((tool, t), [])
        if not v: continue
        r[t] = (st.median(x[0] for x in v), min(x[0] for x in v), max(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v))
    if len(r) == 2:
        s, l = r["stock"], r["series"]
        print("| %s | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %.2f | %.2f / %.2f → %.2f / %.2f |" % (tool, *s[:3], *l[:3], l[0]/s[0], s[3], s[4], l[3], l[4]))
