#!/usr/bin/env python3
"""Raw TCP reference for a fixed number of bytes (bench --tcp-bytes).

iperf3 -t measures a rate over a fixed time; the goals compare ssh
with TCP moving *the same bytes*, ramp included.  Under loss the two differ
a lot: a CUBIC stream's first seconds (slow start, before its first loss)
are far faster than the rest, so iperf3 -t 5 against a 30 s copy flatters
TCP.  The same data file, no application framing:

  tcpbytes.py serve PORT up|down FILE [N]   (namespace b, where sshd listens)
  tcpbytes.py client HOST PORT up|down FILE [N]

up:   the client sends FILE (sendfile), shuts down its side, and waits for
      the server's 8-byte count of what it read.
down: the server sends FILE and closes; the client reads to EOF.
N streams (default 1): N connections take 1 MiB chunks of FILE from one
      shared counter as they go (as scp -X connections=N does), so a
      stream that loss has slowed sends fewer; the bytes are counted, not
      placed (no framing).  The sender starts once all N are connected.

The client prints JSON {bytes, seconds, mbs, streams}: seconds run from the
completed connect(s) to the last count (up) or EOF (down), so both include
about half a round trip of signalling, as an ssh transfer's end does.
"""
import json
import os
import socket
import struct
import sys
import threading
import time


def drain(s):
    """Read the socket to EOF; return the number of bytes."""
    n = 0
    buf = bytearray(1 << 20)
    while True:
        r = s.recv_into(buf)
        if r == 0:
            return n
        n += r


CHUNK = 1 << 20


class Pool:
    """The next chunk of FILE to send, shared by the sending streams."""

    def __init__(self, size):
        self.size, self.next, self.lock = size, 0, threading.Lock()

    def take(self):
        with self.lock:
            off = self.next
            if off >= self.size:
                return None, 0
            self.next = min(off + CHUNK, self.size)
            return off, self.next - off


def send_from(s, fd, pool):
    """Send chunks from POOL on socket S until it is empty."""
    while True:
        off, n = pool.take()
        if off is None:
            return
        end = off + n
        while off < end:
            off += os.sendfile(s.fileno(), fd, off, end - off)


def run_all(fn, items):
    """fn(item) in one thread per item; returns the results in order."""
    out = [None] * len(items)

    def one(i):
        out[i] = fn(items[i])
    ts = [threading.Thread(target=one, args=(i,)) for i in range(len(items))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def serve(port, direction, path, streams=1):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(streams)
    print("ready", flush=True)
    conns = [ls.accept()[0] for _ in range(streams)]
    ls.close()
    if direction == "up":
        def one(s):
            s.sendall(struct.pack("!Q", drain(s)))
        run_all(one, conns)
    else:
        with open(path, "rb") as f:
            pool = Pool(os.fstat(f.fileno()).st_size)
            run_all(lambda s: send_from(s, f.fileno(), pool), conns)
    for s in conns:
        s.close()


def client(host, port, direction, path, streams=1):
    conns = []
    for _ in range(streams):
        s = socket.create_connection((host, port), timeout=120)
        s.settimeout(None)  # sendfile needs a blocking socket
        conns.append(s)
    t0 = time.monotonic()
    if direction == "up":
        with open(path, "rb") as f:
            pool = Pool(os.fstat(f.fileno()).st_size)

            def one(s):
                send_from(s, f.fileno(), pool)
                s.shutdown(socket.SHUT_WR)
                got = b""
                while len(got) < 8:
                    r = s.recv(8 - len(got))
                    if not r:
                        break
                    got += r
                return struct.unpack("!Q", got)[0] if len(got) == 8 else 0
            n = sum(run_all(one, conns))
    else:
        n = sum(run_all(drain, conns))
    t1 = time.monotonic()
    for s in conns:
        s.close()
    dt = t1 - t0
    print(json.dumps(dict(bytes=n, seconds=round(dt, 4), mbs=n / dt / 1e6 if dt > 0 else 0,
                          streams=streams)))
    return 0 if n == os.path.getsize(path) else 1


def main(argv):
    if len(argv) in (5, 6) and argv[1] == "serve":
        serve(int(argv[2]), argv[3], argv[4], int(argv[5]) if len(argv) == 6 else 1)
        return 0
    if len(argv) in (6, 7) and argv[1] == "client":
        return client(argv[2], int(argv[3]), argv[4], argv[5], int(argv[6]) if len(argv) == 7 else 1)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
