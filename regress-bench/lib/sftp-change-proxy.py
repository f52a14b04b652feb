#!/usr/bin/python3
# sftp-change-proxy.py SERVER [ARG...]: runs SERVER (an sftp-server) and
# relays the SFTP stream both ways unchanged, but changes an upload's
# SOURCE file when the destination's OPEN for writing passes, before the
# server sees it: a client reads a file's data only once the OPEN is
# answered, so the file has changed between the client's stat of it and
# its first read, every time (what a file being written to while a tree is
# copied does, without the timing).  Which file and how, by the last
# character of the destination's name:
#   g  grows: SFTP_CHANGE_GROW bytes (default 1000) appended
#   s  shrinks to half its size
#   anything else: left as it is
# A file changes once, however many OPENs (and connections) it sees; a
# split copy's DST/name.lfn-part counts as DST/name.  SFTP_CHANGE_SRC and
# SFTP_CHANGE_DST (directories): the source of DST/some/path is
# SRC/some/path; SFTP_CHANGE_MARKS: an empty directory, where a file's
# change is marked.  For the tests (sftp-upload-changed),
# not for production.
import os
import sys
import subprocess
import struct
import threading

FXP_OPEN, FXF_WRITE = 3, 0x02
SRC = os.environ["SFTP_CHANGE_SRC"].rstrip("/")
DST = os.environ["SFTP_CHANGE_DST"].rstrip("/")
GROW = int(os.environ.get("SFTP_CHANGE_GROW", "1000"))
MARKS = os.environ["SFTP_CHANGE_MARKS"]


def change(path):
    path = os.path.normpath(path)
    if path.endswith(".lfn-part"):     # a split copy's part file
        path = path[:-len(".lfn-part")]
    if not path.startswith(DST + "/"):
        return
    src = SRC + path[len(DST):]
    try:
        # once a file, whatever connection (each has its own proxy) opens it
        os.close(os.open(os.path.join(MARKS, path[len(DST) + 1:].replace("/", "%")),
                         os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    try:
        size = os.stat(src).st_size
        if path.endswith("g"):
            with open(src, "ab") as f:
                f.write(os.urandom(GROW))
        elif path.endswith("s"):
            os.truncate(src, size // 2)
    except OSError:
        pass


def write_all(fd, b):
    while b:
        b = b[os.write(fd, b):]


def upstream(child):
    out = child.stdout.fileno()
    while True:
        b = os.read(out, 65536)
        if not b:
            break
        write_all(1, b)


def main():
    child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, bufsize=0)
    t = threading.Thread(target=upstream, args=(child,), daemon=True)
    t.start()
    buf = b""
    while True:
        b = os.read(0, 262144)
        if not b:
            break
        buf += b
        while len(buf) >= 5:
            n = struct.unpack(">I", buf[:4])[0]
            if len(buf) < 4 + n:
                break
            pkt, buf = buf[:4 + n], buf[4 + n:]
            if pkt[4] == FXP_OPEN and n >= 13:
                ln = struct.unpack(">I", pkt[9:13])[0]
                if 13 + ln + 4 <= len(pkt):
                    name = pkt[13:13 + ln]
                    flags = struct.unpack(">I", pkt[13 + ln:17 + ln])[0]
                    if flags & FXF_WRITE:
                        change(os.fsdecode(name))
            write_all(child.stdin.fileno(), pkt)
    child.stdin.close()
    t.join()
    sys.exit(child.wait())


main()
