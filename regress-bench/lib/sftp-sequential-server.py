#!/usr/bin/env python3
# sftp-sequential-server.py: a minimal SFTP v3 server on stdin/stdout (for
# sftp -D) that handles one request at a time and
# writes each reply whole, blocking, before it reads the next request, as a
# simple server does.  A client that keeps writing requests without reading
# the replies that come meanwhile blocks against it for good once both
# directions' buffers are full (regress-bench/tests/sftp-many-files-stall.sh).
#
# Serves the file system read-only: INIT, REALPATH, STAT, LSTAT, FSTAT,
# OPENDIR, READDIR, OPEN (read), READ, CLOSE; anything else gets
# SSH_FX_OP_UNSUPPORTED.  Standard library only.
# SFTP_SEQ_STALE=1: the sizes it lists and stats are what the files held
# before they changed (regress-bench/tests/sftp-many-files-changed.sh):
# a file whose name ends in "g" is listed at half its size (it grew since),
# one ending in "s" at twice its size plus 1000 (it shrank); reads see the
# files as they are.
# SFTP_SEQ_LOG=FILE: one line per request, in the order they came: its
# type (OPEN, READDIR, READ, ...), and "EOF" after a READDIR that ended a
# listing (regress-bench/tests/sftp-download-while-listing.sh).
import os
import stat
import struct
import sys

FXP_INIT, FXP_VERSION, FXP_OPEN, FXP_CLOSE, FXP_READ = 1, 2, 3, 4, 5
FXP_LSTAT, FXP_FSTAT, FXP_OPENDIR, FXP_READDIR = 7, 8, 11, 12
FXP_REALPATH, FXP_STAT = 16, 17
FXP_STATUS, FXP_HANDLE, FXP_DATA, FXP_NAME, FXP_ATTRS = 101, 102, 103, 104, 105
FX_OK, FX_EOF, FX_NO_SUCH_FILE, FX_PERMISSION_DENIED, FX_FAILURE = 0, 1, 2, 3, 4
FX_OP_UNSUPPORTED = 8
WRITE = 0x02

handles = {}
next_handle = 0
NAMES = {1: "INIT", 3: "OPEN", 4: "CLOSE", 5: "READ", 7: "LSTAT", 8: "FSTAT",
         11: "OPENDIR", 12: "READDIR", 16: "REALPATH", 17: "STAT"}
LOG = open(os.environ["SFTP_SEQ_LOG"], "a", buffering=1) if os.environ.get("SFTP_SEQ_LOG") else None


def log(line):
    if LOG is not None:
        LOG.write(line + "\n")


def read_exact(n):
    b = b""
    while len(b) < n:
        c = os.read(0, n - len(b))
        if not c:
            sys.exit(0)
        b += c
    return b


def send(typ, rid, payload):
    body = bytes([typ]) + (struct.pack(">I", rid) if rid is not None else b"") + payload
    msg = struct.pack(">I", len(body)) + body
    while msg:
        msg = msg[os.write(1, msg):]


def sstr(b):
    return struct.pack(">I", len(b)) + b


STALE = os.environ.get("SFTP_SEQ_STALE") == "1"


def attrs(st, name=b""):
    size = st.st_size
    if STALE and stat.S_ISREG(st.st_mode):
        if name.endswith(b"g"):
            size //= 2
        elif name.endswith(b"s"):
            size = size * 2 + 1000
    return struct.pack(">IQIIIII", 0x0f, size, st.st_uid, st.st_gid,
                       st.st_mode, int(st.st_atime), int(st.st_mtime))


def status(rid, code, text=""):
    send(FXP_STATUS, rid, struct.pack(">I", code) + sstr(text.encode()) + sstr(b""))


def errno_status(rid, e):
    code = {2: FX_NO_SUCH_FILE, 13: FX_PERMISSION_DENIED}.get(e.errno, FX_FAILURE)
    status(rid, code, e.strerror or "")


def longname(name, st):
    return ("%s %3d %-8d %-8d %8d Jan  1 00:00 %s" % (
        stat.filemode(st.st_mode), st.st_nlink, st.st_uid, st.st_gid,
        st.st_size, name)).encode("utf-8", "surrogateescape")


def main():
    global next_handle
    while True:
        n = struct.unpack(">I", read_exact(4))[0]
        if n > 256 * 1024 + 1024:
            sys.exit("message too long")
        p = read_exact(n)
        typ = p[0]
        log(NAMES.get(typ, str(typ)))
        if typ == FXP_INIT:
            send(FXP_VERSION, None, struct.pack(">I", 3))
            continue
        rid = struct.unpack(">I", p[1:5])[0]
        off = 5

        def string():
            nonlocal off
            ln = struct.unpack(">I", p[off:off + 4])[0]
            s = p[off + 4:off + 4 + ln]
            off += 4 + ln
            return s
        try:
            if typ == FXP_REALPATH:
                path = os.path.realpath(string() or b".")
                st = os.stat(path)
                send(FXP_NAME, rid, struct.pack(">I", 1) + sstr(path) +
                     sstr(path) + attrs(st))
            elif typ in (FXP_STAT, FXP_LSTAT):
                path = string()
                st = os.stat(path) if typ == FXP_STAT else os.lstat(path)
                send(FXP_ATTRS, rid, attrs(st, path))
            elif typ == FXP_FSTAT:
                h = handles.get(string())
                if h is None or h[0] != "f":
                    status(rid, FX_FAILURE, "bad handle")
                else:
                    send(FXP_ATTRS, rid, attrs(os.fstat(h[1]), h[2]))
            elif typ == FXP_OPEN:
                path = string()
                flags = struct.unpack(">I", p[off:off + 4])[0]
                if flags & WRITE:
                    status(rid, FX_PERMISSION_DENIED, "read-only")
                    continue
                fd = os.open(path, os.O_RDONLY)
                hid = str(next_handle).encode()
                next_handle += 1
                handles[hid] = ("f", fd, path)
                send(FXP_HANDLE, rid, sstr(hid))
            elif typ == FXP_OPENDIR:
                path = string()
                names = [b".", b".."] + sorted(os.listdir(path))
                hid = str(next_handle).encode()
                next_handle += 1
                handles[hid] = ("d", path, names)
                send(FXP_HANDLE, rid, sstr(hid))
            elif typ == FXP_READDIR:
                h = handles.get(string())
                if h is None or h[0] != "d":
                    status(rid, FX_FAILURE, "bad handle")
                elif not h[2]:
                    log("EOF")
                    status(rid, FX_EOF, "")
                else:
                    batch, h[2][:] = h[2][:100], h[2][100:]
                    body = struct.pack(">I", len(batch))
                    for name in batch:
                        st = os.lstat(os.path.join(h[1], name))
                        body += sstr(name) + sstr(longname(
                            name.decode("utf-8", "surrogateescape"), st)) + attrs(st, name)
                    send(FXP_NAME, rid, body)
            elif typ == FXP_READ:
                h = handles.get(string())
                o, ln = struct.unpack(">QI", p[off:off + 12])
                if h is None or h[0] != "f":
                    status(rid, FX_FAILURE, "bad handle")
                else:
                    data = os.pread(h[1], min(ln, 256 * 1024), o)
                    if data:
                        send(FXP_DATA, rid, sstr(data))
                    else:
                        status(rid, FX_EOF, "")
            elif typ == FXP_CLOSE:
                h = handles.pop(string(), None)
                if h is None:
                    status(rid, FX_FAILURE, "bad handle")
                else:
                    if h[0] == "f":
                        os.close(h[1])
                    status(rid, FX_OK, "")
            else:
                status(rid, FX_OP_UNSUPPORTED, "not here")
        except OSError as e:
            errno_status(rid, e)


main()
