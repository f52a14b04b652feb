#!/usr/bin/env python3
"""counting-proxy.py COUNTFILE MAX HOST PORT [SLOW RATE] -- an ssh
ProxyCommand that relays stdin/stdout to HOST:PORT for the first MAX
connections made through it (counted in COUNTFILE, under a lock) and refuses
every later one (exit 1 before connecting): a login that fails for some
connections of a transfer and not for others (transfer-connections.sh).
Connection number SLOW (1: the first) is relayed at RATE bytes per second,
each direction; every connection writes the bytes it relayed (both
directions) to COUNTFILE.N when it ends (or ssh ends it).  With
COUNTING_PROXY_OTHER=PORT in the environment, every connection after the
first goes to that port instead (another server: a changed host key)."""
import fcntl
import os
import select
import signal
import socket
import sys
import time

countfile, limit, host, port = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
slow, rate = (int(sys.argv[5]), int(sys.argv[6])) if len(sys.argv) > 6 else (0, 0)
with open(countfile, "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    n = len(f.read().splitlines()) + 1
    f.write("%d\n" % os.getpid())
if n > limit:
    sys.stderr.write("counting-proxy: connection %d refused (limit %d)\n" % (n, limit))
    sys.exit(1)
if n > 1 and os.environ.get("COUNTING_PROXY_OTHER"):
    port = int(os.environ["COUNTING_PROXY_OTHER"])
s = socket.create_connection((host, port))
fds = {0: s.fileno(), s.fileno(): 1}
sent = {0: 0, s.fileno(): 0}
start = time.monotonic()


def done():
    with open("%s.%d" % (countfile, n), "w") as f:
        f.write("%d\n" % sum(sent.values()))
    sys.exit(0)


# ssh ends its ProxyCommand with SIGHUP when it is done
signal.signal(signal.SIGHUP, lambda *_: done())
signal.signal(signal.SIGTERM, lambda *_: done())
open_in = True
while True:
    r, _, _ = select.select([0, s.fileno()] if open_in else [s.fileno()], [], [])
    for fd in r:
        data = os.read(fd, 16384 if n == slow else 65536)
        if not data:
            if fd == 0:
                open_in = False
                s.shutdown(socket.SHUT_WR)
                continue
            done()
        sent[fd] += len(data)
        if n == slow:
            time.sleep(max(0.0, start + sent[fd] / rate - time.monotonic()))
        out = fds[fd]
        while data:
            k = os.write(out, data) if out == 1 else s.send(data)
            data = data[k:]
