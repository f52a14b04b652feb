#!/usr/bin/env python3
# Median wall seconds per tool and its ratio to raw TCP (tcpbytes.py, one
# stream, same run) including setup; fixed10k = the 10 kB transfer time.
import json, glob, os, statistics as st
for d in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), '*-*/'))):
    rows=[json.loads(l) for l in open(d+'results.jsonl')]
    by={}; fx={}
    for r in rows:
        if r.get('kind')=='fixed': fx[r['tool']]=r['seconds']
        elif r.get('kind')=='tcp': by.setdefault(r['tool'],[]).append(r['seconds'])
        elif r.get('kind')=='ssh' and r.get('run',-1)>=0: by.setdefault(r['tool'],[]).append(r['wall'])
    tcp=st.median(by.get('tcpbytes-up',[0]))
    print(d.split('/')[-2], ' '.join(f"{k}:{st.median(v):.2f}({tcp/st.median(v):.3f})[{min(v):.2f}-{max(v):.2f}]" for k,v in sorted(by.items()) if 'tcp' not in k), 'tcp', tcp)
    print('   fixed10k:', ' '.join(f"{k}:{v:.3f}" for k,v in sorted(fx.items())))
