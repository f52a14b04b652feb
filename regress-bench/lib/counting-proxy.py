#!/usr/bin/env python3
"""counting-proxy.py COUNTFILE MAX HOST PORT -- an ssh ProxyCommand that
relays stdin/stdout to HOST:PORT for the first MAX connections made through
it (counted in COUNTFILE, under a lock) and refuses every later one (exit 1
before connecting): a login that fails for some connections of a transfer
and not for others (transfer-connections.sh)."""
import fcntl
import os
import select
import socket
import sys

countfile, limit, host, port = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
with open(countfile, "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    n = len(f.read().splitlines()) + 1
    f.write("%d\n" % os.getpid())
if n > limit:
    sys.stderr.write("counting-proxy: connection %d refused (limit %d)\n" % (n, limit))
    sys.exit(1)
s = socket.create_connection((host, port))
fds = {0: s.fileno(), s.fileno(): 1}
open_in = True
while True:
    r, _, _ = select.select([0, s.fileno()] if open_in else [s.fileno()], [], [])
    for fd in r:
        data = os.read(fd, 65536)
        if not data:
            if fd == 0:
                open_in = False
                s.shutdown(socket.SHUT_WR)
                continue
            sys.exit(0)
        out = fds[fd]
        while data:
            k = os.write(out, data) if out == 1 else s.send(data)
            data = data[k:]
