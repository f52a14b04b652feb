#!/usr/bin/env python3
"""Raw TCP reference for a fixed number of bytes (bench --tcp-bytes).

iperf3 -t measures a rate over a fixed time; the issue's goals compare ssh
with TCP moving *the same bytes*, ramp included.  One stream, the same
data file, no application framing:

  tcpbytes.py serve PORT up|down FILE   (namespace b, where sshd listens)
  tcpbytes.py client HOST PORT up|down FILE

up:   the client sends FILE (sendfile), shuts down its side, and waits for
      the server's 8-byte count of what it read.
down: the server sends FILE and closes; the client reads to EOF.

The client prints JSON {bytes, seconds, mbs}: seconds run from the
completed connect to the count (up) or EOF (down), so both include about
half a round trip of signalling, as an ssh transfer's end does.
"""
import json
import os
import socket
import struct
import sys
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


def serve(port, direction, path):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    print("ready", flush=True)
    s, _ = ls.accept()
    ls.close()
    if direction == "up":
        n = drain(s)
        s.sendall(struct.pack("!Q", n))
    else:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            off = 0
            while off < size:
                off += os.sendfile(s.fileno(), f.fileno(), off, size - off)
    s.close()


def client(host, port, direction, path):
    s = socket.create_connection((host, port), timeout=120)
    s.settimeout(None)  # sendfile needs a blocking socket
    t0 = time.monotonic()
    if direction == "up":
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            off = 0
            while off < size:
                off += os.sendfile(s.fileno(), f.fileno(), off, size - off)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while len(got) < 8:
            r = s.recv(8 - len(got))
            if not r:
                break
            got += r
        t1 = time.monotonic()
        n = struct.unpack("!Q", got)[0] if len(got) == 8 else 0
    else:
        n = drain(s)
        t1 = time.monotonic()
    s.close()
    dt = t1 - t0
    print(json.dumps(dict(bytes=n, seconds=round(dt, 4), mbs=n / dt / 1e6 if dt > 0 else 0)))
    return 0 if n == os.path.getsize(path) else 1


def main(argv):
    if len(argv) == 5 and argv[1] == "serve":
        serve(int(argv[2]), argv[3], argv[4])
        return 0
    if len(argv) == 6 and argv[1] == "client":
        return client(argv[2], int(argv[3]), argv[4], argv[5])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
