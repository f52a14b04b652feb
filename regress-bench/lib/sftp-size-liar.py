#!/usr/bin/env python3
"""sftp-size-liar.py SFTP-SERVER [ARGS...] -- an sftp subsystem that runs the
real sftp-server and relays its traffic, but says every file is
2^64 - 1 bytes long: each ATTRS reply (STAT, LSTAT, FSTAT) that carries a
size carries that one.  A broken or hostile server for the split transfer's
size checks (transfer-connections.sh)."""
import os
import struct
import subprocess
import sys
import threading

p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def pump_in():
    try:
        while True:
            b = os.read(0, 65536)
            if not b:
                break
            p.stdin.write(b)
            p.stdin.flush()
    except OSError:
        pass
    try:
        p.stdin.close()
    except OSError:
        pass


threading.Thread(target=pump_in, daemon=True).start()
out, src = sys.stdout.buffer, p.stdout


def read(n):
    b = b""
    while len(b) < n:
        c = src.read(n - len(b))
        if not c:
            os._exit(0)
        b += c
    return b


try:
    while True:
        m = read(struct.unpack(">I", read(4))[0])
        # SSH2_FXP_ATTRS: type, id, flags, [size] ...
        if m[0] == 105 and struct.unpack(">I", m[5:9])[0] & 1:
            m = m[:9] + struct.pack(">Q", 2**64 - 1) + m[17:]
        out.write(struct.pack(">I", len(m)) + m)
        out.flush()
except OSError:
    os._exit(0)
