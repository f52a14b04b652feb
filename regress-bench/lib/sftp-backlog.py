#!/usr/bin/env python3
"""sftp-backlog.py -- drive an sftp-server binary directly with a backlog of
requests sent as fast as its stdin takes them, and report what that cost it.

    sftp-backlog.py SFTP_SERVER DIR up|down SIZE_MIB CHUNK_BYTES

up:   one file opened for writing, then SIZE/CHUNK SSH2_FXP_WRITE requests
      of CHUNK bytes back to back (as PuTTY/WinSCP send 4 KiB writes), then
      CLOSE; every reply must be STATUS OK and the file must hold the data.
down: DIR/src (SIZE MiB, made here) opened for reading, then SIZE/CHUNK
      SSH2_FXP_READ requests at once; every reply must be DATA with the
      right bytes, in order.
Prints one JSON line: vmhwm_kib (the server's peak resident set, VmHWM), cpu_s (its user + system time), requests, bytes.  Exit 1 with a
message on any protocol error or wrong data.  Python 3 stdlib only.
"""

import json
import os
import random
import struct
import subprocess
import sys
import threading

INIT, VERSION, OPEN, CLOSE, READ, WRITE = 1, 2, 3, 4, 5, 6
STATUS, HANDLE, DATA = 101, 102, 103
F_READ, F_WRITE, F_CREAT, F_TRUNC = 0x01, 0x02, 0x08, 0x10


def die(msg):
    print("sftp-backlog: " + msg, file=sys.stderr)
    sys.exit(1)


def sstr(b):
    return struct.pack(">I", len(b)) + b


def packet(ptype, body):
    return struct.pack(">IB", len(body) + 1, ptype) + body


def pattern(size):
    """Deterministic pseudo-random bytes (the file's content)."""
    return random.Random(20261126).randbytes(size)


def vmhwm_kib(pid):
    """Peak resident set of PID since its exec (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    die("no VmHWM for %d" % pid)


class Conn:
    def __init__(self, proc):
        self.w = proc.stdin
        self.r = proc.stdout

    def send(self, data):
        self.w.write(data)

    def recv(self):
        hdr = self.r.read(4)
        if len(hdr) < 4:
            die("sftp-server closed the connection")
        (n,) = struct.unpack(">I", hdr)
        body = self.r.read(n)
        if len(body) < n:
            die("short reply")
        return body[0], body[1:]


def expect_status_ok(ptype, body, what):
    if ptype != STATUS:
        die("%s: reply type %d, not STATUS" % (what, ptype))
    code = struct.unpack(">I", body[4:8])[0]
    if code != 0:
        die("%s: status %d" % (what, code))


def main():
    if len(sys.argv) != 6:
        die("usage: sftp-backlog.py SFTP_SERVER DIR up|down SIZE_MIB CHUNK")
    server, d, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    size = int(sys.argv[4]) * 1048576
    chunk = int(sys.argv[5])
    n = size // chunk
    src = os.path.join(d, "src")
    dst = os.path.join(d, "dst")
    data = pattern(n * chunk)
    if mode == "down":
        with open(src, "wb") as f:
            f.write(data)
    proc = subprocess.Popen([server, "-e", "-l", "ERROR"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=1 << 20)
    c = Conn(proc)
    c.send(packet(INIT, struct.pack(">I", 3)))
    c.w.flush()
    t, _ = c.recv()
    if t != VERSION:
        die("no VERSION")
    path = (dst if mode == "up" else src).encode()
    flags = F_WRITE | F_CREAT | F_TRUNC if mode == "up" else F_READ
    c.send(packet(OPEN, struct.pack(">I", 1) + sstr(path) + struct.pack(">II", flags, 0)))
    c.w.flush()
    t, body = c.recv()
    if t != HANDLE:
        die("OPEN failed (reply %d)" % t)
    handle = body[8:8 + struct.unpack(">I", body[4:8])[0]]

    # the whole backlog made before it is sent, so that it arrives as fast
    # as sftp-server's stdin takes it
    reqs = []
    for i in range(n):
        off = i * chunk
        if mode == "up":
            reqs.append(packet(WRITE, struct.pack(">I", 100 + i) + sstr(handle) +
                               struct.pack(">Q", off) + sstr(data[off:off + chunk])))
        else:
            reqs.append(packet(READ, struct.pack(">I", 100 + i) + sstr(handle) +
                               struct.pack(">QI", off, chunk)))
    reqs.append(packet(CLOSE, struct.pack(">I", 2) + sstr(handle)))
    stream = b"".join(reqs)
    del reqs

    def writer():
        try:
            c.send(stream)
            c.w.flush()
        except BrokenPipeError:
            pass

    th = threading.Thread(target=writer, daemon=True)
    th.start()
    for i in range(n):
        t, body = c.recv()
        rid = struct.unpack(">I", body[:4])[0]
        if rid != 100 + i:
            die("reply %d out of order (id %d)" % (i, rid))
        if mode == "up":
            expect_status_ok(t, body, "write %d" % i)
        else:
            if t != DATA:
                die("read %d: reply type %d" % (i, t))
            ln = struct.unpack(">I", body[4:8])[0]
            if body[8:8 + ln] != data[i * chunk:(i + 1) * chunk]:
                die("read %d: wrong data" % i)
    t, body = c.recv()
    expect_status_ok(t, body, "close")
    th.join()
    hwm = vmhwm_kib(proc.pid)
    c.w.close()
    _, status, ru = os.wait4(proc.pid, 0)
    if mode == "up":
        with open(dst, "rb") as f:
            got = f.read()
        if got != data:
            die("the written file differs from what was sent")
    print(json.dumps({"mode": mode, "requests": n, "bytes": n * chunk,
                      "vmhwm_kib": hwm,
                      "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
                      "exit": os.waitstatus_to_exitcode(status)}))


if __name__ == "__main__":
    main()
