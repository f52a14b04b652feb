#!/usr/bin/env python3
"""regress-bench/bench/manyfiles-tree.py DIR SEED SMALL_N SMALL_BYTES BIG_N
BIG_MIN BIG_MAX BIG_DIRS EVERY: the trees of manyfiles-grid.sh, the same
bytes for the same arguments.

DIR/small: SMALL_N files of SMALL_BYTES; DIR/big: BIG_N files whose sizes
are log-uniform in [BIG_MIN, BIG_MAX] (flat, or spread over BIG_DIRS
subdirectories); DIR/bigsub: every EVERY-th file of big, hard-linked.
Contents: slices of a 16 MiB block from a PRNG seeded with SEED, at seeded
offsets (incompressible)."""

import math
import os
import random
import sys


def main():
    T = sys.argv[1]
    seed, sn, sb, bn, bmin, bmax, bdirs, every = map(int, sys.argv[2:10])
    rng = random.Random(seed)
    block = rng.randbytes(16 << 20)

    def write(path, size):
        off = rng.randrange(0, len(block) - size + 1)
        with open(path, "wb") as f:
            f.write(block[off:off + size])

    os.makedirs(T + "/small")
    for i in range(1, sn + 1):
        write("%s/small/f%d" % (T, i), sb)
    os.makedirs(T + "/big")
    os.makedirs(T + "/bigsub")
    total = 0
    for i in range(bn):
        size = int(round(math.exp(rng.uniform(math.log(bmin), math.log(bmax)))))
        d = "big/d%03d" % (i % bdirs) if bdirs else "big"
        os.makedirs("%s/%s" % (T, d), exist_ok=True)
        path = "%s/%s/f%05d" % (T, d, i)
        write(path, size)
        total += size
        if i % every == 0:
            sd = d.replace("big", "bigsub", 1)
            os.makedirs("%s/%s" % (T, sd), exist_ok=True)
            os.link(path, "%s/%s/f%05d" % (T, sd, i))
    print("trees: small %d x %d bytes; big %d files, %d bytes (%.2f GiB), sizes log-uniform %d..%d, seed %d"
          % (sn, sb, bn, total, total / 2**30, bmin, bmax, seed))


if __name__ == "__main__":
    main()
