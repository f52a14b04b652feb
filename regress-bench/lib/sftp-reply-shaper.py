#!/usr/bin/env python3
"""sftp-reply-shaper.py MODE SFTP-SERVER [ARGS...] -- an sftp subsystem that
runs the real sftp-server and relays its traffic, changing the replies to
make a file look other than it is, as a file that changes during a
download or a server that reads short would:

  smaller   every ATTRS size is reported 100000 bytes smaller (a file that
            grew after its stat): reads past the "end" still find data
  short     the DATA reply to a read that ends exactly at a file's reported
            size (a client's exact last block) carries half its bytes
  huge      every ATTRS size is 2^64 - 1 (a broken or hostile server)
  swap      the replies to check-file (SSH2_FXP_EXTENDED_REPLY) go out in
            pairs, the second one first: a server that hashes requests
            side by side; one with none after it within 0.5 s goes alone

(sftp-download-end.sh; huge: transfer-connections.sh, the split
transfer's size checks; swap: transfer-resume-verify.sh).  The client sends every READ itself, where the
shaper sees it."""
import os
import select
import struct
import subprocess
import sys
import threading

mode = sys.argv[1]
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     bufsize=0)
sizes = set()            # sizes reported in ATTRS replies
reads = {}               # READ id -> offset + length
lock = threading.Lock()


def read_from(f, n):
    b = b""
    while len(b) < n:
        c = f(n - len(b))
        if not c:
            return None
        b += c
    return b


def pump_in():
    try:
        while True:
            h = read_from(lambda n: os.read(0, n), 4)
            if h is None:
                break
            m = read_from(lambda n: os.read(0, n), struct.unpack(">I", h)[0])
            if m is None:
                break
            if m[0] == 5:        # SSH2_FXP_READ: id, handle, offset, len
                rid = struct.unpack(">I", m[1:5])[0]
                hl = struct.unpack(">I", m[5:9])[0]
                off, ln = struct.unpack(">QI", m[9 + hl:9 + hl + 12])
                with lock:
                    reads[rid] = off + ln
            p.stdin.write(h + m)
            p.stdin.flush()
    except OSError:
        pass
    try:
        p.stdin.close()
    except OSError:
        pass


threading.Thread(target=pump_in, daemon=True).start()
out, src = sys.stdout.buffer, p.stdout
held = None              # swap: a check-file reply waiting for the next
try:
    while True:
        if held is not None and not select.select([src], [], [], 0.5)[0]:
            out.write(held)
            out.flush()
            held = None
        h = read_from(src.read, 4)
        if h is None:
            break
        m = read_from(src.read, struct.unpack(">I", h)[0])
        if m is None:
            break
        # SSH2_FXP_ATTRS: type, id, flags, [size] ...
        if m[0] == 105 and struct.unpack(">I", m[5:9])[0] & 1:
            size = struct.unpack(">Q", m[9:17])[0]
            if mode == "smaller" and size >= 100000:
                size -= 100000
            elif mode == "huge":
                size = 2**64 - 1
            m = m[:9] + struct.pack(">Q", size) + m[17:]
            with lock:
                sizes.add(size)
        # SSH2_FXP_DATA: type, id, string data
        if m[0] == 103 and mode == "short":
            rid = struct.unpack(">I", m[1:5])[0]
            with lock:
                end = reads.pop(rid, None)
                hit = end in sizes
            n = struct.unpack(">I", m[5:9])[0]
            if hit and n > 1:
                m = m[:5] + struct.pack(">I", n // 2) + m[9:9 + n // 2]
        if mode == "swap" and m[0] == 201 and held is None:
            held = struct.pack(">I", len(m)) + m
            continue
        out.write(struct.pack(">I", len(m)) + m)
        if held is not None:
            out.write(held)
            held = None
        out.flush()
except OSError:
    pass
os._exit(0)
