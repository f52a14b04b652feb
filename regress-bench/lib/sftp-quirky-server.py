#!/usr/bin/env python3
"""sftp-quirky-server.py: an SFTP v3 server on stdin/stdout (for sftp -D,
scp -D, or an sshd Subsystem) that serves the file system read-write, and
behaves as some real servers do in one way the usual ones do not
(regress-bench/tests/sftp-foreign-servers.sh).  Standard library only.

SFTP_QUIRK_MODE:
  reorder     replies go out of order: the requests that have come (up to
              SFTP_QUIRK_BATCH, 16, at a time: all that can be read without
              waiting) are carried out in the order they came, each one's
              effect before the next (as the protocol wants for one file),
              and their replies then sent in reverse order; every request
              is answered (VERSION, INIT's answer, goes first, at once: it
              has no request id to be matched by)
  maxhandles  at most SFTP_QUIRK_MAX_HANDLES (8) handles (files and
              directories) open at once: an OPEN or OPENDIR beyond that
              fails with SSH_FX_FAILURE "too many open handles", as a
              server out of descriptors or under a per-session cap answers
  threads     requests are carried out as a server with a thread per
              handle might: of the requests that have come (up to
              SFTP_QUIRK_BATCH at a time, as reorder), those naming the
              same handle in the order they came, the handles (and each
              request naming none) taking turns, last first; each reply
              goes as its request is carried out
  plain       neither (a control)
SFTP_QUIRK_DIE_AFTER=N: the server ends at once (exit 3, nothing more
  written) before it carries out its N+1st request, as a server that is
  killed or crashes does
SFTP_QUIRK_DIE_HANDLES=N: the server ends at once (exit 3, nothing more
  written) before it opens a file or directory while N handles are open,
  as a server that overruns its handle table crashes (the Green End SFTP
  server past 128); with SFTP_QUIRK_LOG, one line "session died: N
  handles open" first
SFTP_QUIRK_LOG=FILE: at the end of each session, one line:
  "session ended: mode M, R requests, B batches sent reordered (largest
  N), at most H handles open, O opens refused"

Requests: INIT, REALPATH (of a path that need not exist, as OpenSSH's
sftp-server answers it: the name, no attributes), STAT, LSTAT, FSTAT,
SETSTAT, FSETSTAT, OPEN (read, write, append, create, truncate,
exclusive), READ, WRITE, CLOSE, OPENDIR, READDIR, MKDIR, RMDIR, REMOVE,
RENAME (not over an existing name, as v3 has it), READLINK, SYMLINK;
anything else (extensions) gets SSH_FX_OP_UNSUPPORTED.  No extension is
announced.  Requests are read and replies written without blocking each
other (select), so a client that keeps writing is never stalled by a
reply it has not read yet."""
import errno
import os
import select
import stat
import struct
import sys

INIT, VERSION, OPEN, CLOSE, READ, WRITE, LSTAT, FSTAT, SETSTAT, FSETSTAT = \
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10
OPENDIR, READDIR, REMOVE, MKDIR, RMDIR, REALPATH, STAT, RENAME, READLINK, \
    SYMLINK = 11, 12, 13, 14, 15, 16, 17, 18, 19, 20
STATUS, HANDLE, DATA, NAME, ATTRS = 101, 102, 103, 104, 105
FX_OK, FX_EOF, FX_NO_SUCH_FILE, FX_PERMISSION_DENIED, FX_FAILURE = 0, 1, 2, 3, 4
FX_BAD_MESSAGE, FX_OP_UNSUPPORTED = 5, 8
A_SIZE, A_UIDGID, A_PERM, A_TIME, A_EXT = 1, 2, 4, 8, 0x80000000
F_READ, F_WRITE, F_APPEND, F_CREAT, F_TRUNC, F_EXCL = 1, 2, 4, 8, 0x10, 0x20

MODE = os.environ.get("SFTP_QUIRK_MODE", "plain")
if MODE not in ("reorder", "maxhandles", "threads", "plain"):
    sys.exit("sftp-quirky-server: unknown SFTP_QUIRK_MODE %r" % MODE)
BATCH = int(os.environ.get("SFTP_QUIRK_BATCH", "16"))
MAX_HANDLES = int(os.environ.get("SFTP_QUIRK_MAX_HANDLES", "8"))
DIE_AFTER = int(os.environ.get("SFTP_QUIRK_DIE_AFTER", "0"))
DIE_HANDLES = int(os.environ.get("SFTP_QUIRK_DIE_HANDLES", "0"))
MAX_MSG = 1024 * 1024 + 1024
MAX_READ = 256 * 1024

handles = {}
next_handle = 0
stats = {"requests": 0, "reordered": 0, "largest": 0, "peak": 0, "refused": 0}


def sstr(b):
    return struct.pack(">I", len(b)) + b


def msg(typ, rid, payload):
    body = bytes([typ]) + (struct.pack(">I", rid) if rid is not None else b"") + payload
    return struct.pack(">I", len(body)) + body


def status(rid, code, text=""):
    return msg(STATUS, rid, struct.pack(">I", code) + sstr(text.encode()) + sstr(b""))


def errno_status(rid, e):
    code = {errno.ENOENT: FX_NO_SUCH_FILE, errno.EACCES: FX_PERMISSION_DENIED,
            errno.EPERM: FX_PERMISSION_DENIED}.get(e.errno, FX_FAILURE)
    return status(rid, code, e.strerror or "failure")


def attrs(st):
    return struct.pack(">IQIIIII", A_SIZE | A_UIDGID | A_PERM | A_TIME, st.st_size,
                       st.st_uid, st.st_gid, st.st_mode, int(st.st_atime),
                       int(st.st_mtime))


def longname(name, st):
    return ("%s %3d %-8d %-8d %8d Jan  1 00:00 " % (
        stat.filemode(st.st_mode), st.st_nlink, st.st_uid, st.st_gid,
        st.st_size)).encode() + name


class Req:
    def __init__(self, p):
        self.p, self.off = p, 0

    def u32(self):
        v = struct.unpack(">I", self.p[self.off:self.off + 4])[0]
        self.off += 4
        return v

    def u64(self):
        v = struct.unpack(">Q", self.p[self.off:self.off + 8])[0]
        self.off += 8
        return v

    def string(self):
        n = self.u32()
        s = self.p[self.off:self.off + n]
        if len(s) != n:
            raise ValueError("short string")
        self.off += n
        return s

    def attrs(self):
        a = {}
        fl = self.u32()
        if fl & A_SIZE:
            a["size"] = self.u64()
        if fl & A_UIDGID:
            a["uid"], a["gid"] = self.u32(), self.u32()
        if fl & A_PERM:
            a["perm"] = self.u32()
        if fl & A_TIME:
            a["atime"], a["mtime"] = self.u32(), self.u32()
        if fl & A_EXT:
            for _ in range(self.u32()):
                self.string()
                self.string()
        return a


def apply_attrs(a, path=None, fd=None):
    """setstat/fsetstat: size, owner, mode, times (in that order, as
    OpenSSH's sftp-server)"""
    if "size" in a:
        os.truncate(fd if fd is not None else path, a["size"])
    if "uid" in a:
        os.chown(fd if fd is not None else path, a["uid"], a["gid"])
    if "perm" in a:
        os.chmod(fd if fd is not None else path, a["perm"] & 0o7777)
    if "atime" in a:
        os.utime(fd if fd is not None else path, (a["atime"], a["mtime"]))


def new_handle(rid, h):
    global next_handle
    if DIE_HANDLES and len(handles) >= DIE_HANDLES:
        if os.environ.get("SFTP_QUIRK_LOG"):
            with open(os.environ["SFTP_QUIRK_LOG"], "a") as f:
                f.write("session died: %d handles open\n" % len(handles))
        os._exit(3)
    if MODE == "maxhandles" and len(handles) >= MAX_HANDLES:
        stats["refused"] += 1
        if h[0] == "f":
            os.close(h[1])
        return status(rid, FX_FAILURE, "too many open handles")
    hid = b"%d" % next_handle
    next_handle += 1
    handles[hid] = h
    stats["peak"] = max(stats["peak"], len(handles))
    return msg(HANDLE, rid, sstr(hid))


def handle_request(p):
    """carry out one request, return its reply"""
    typ = p[0]
    if typ == INIT:
        return msg(VERSION, None, struct.pack(">I", 3))
    if DIE_AFTER and stats["requests"] >= DIE_AFTER:
        os._exit(3)
    r = Req(p[1:])
    rid = r.u32()
    stats["requests"] += 1
    try:
        if typ == REALPATH:
            path = r.string() or b"."
            path = os.path.realpath(path)      # need not exist
            return msg(NAME, rid, struct.pack(">I", 1) + sstr(path) + sstr(path) +
                       struct.pack(">I", 0))
        if typ in (STAT, LSTAT):
            path = r.string()
            return msg(ATTRS, rid, attrs(os.stat(path) if typ == STAT else os.lstat(path)))
        if typ in (FSTAT, FSETSTAT, READ, WRITE, READDIR, CLOSE):
            hid = r.string()
            h = handles.get(hid)
            if h is None:
                return status(rid, FX_FAILURE, "bad handle")
            if typ == CLOSE:
                del handles[hid]
                if h[0] == "f":
                    os.close(h[1])
                return status(rid, FX_OK, "")
            if typ == READDIR:
                if h[0] != "d":
                    return status(rid, FX_FAILURE, "not a directory handle")
                if not h[2]:
                    return status(rid, FX_EOF, "")
                batch, h[2][:] = h[2][:100], h[2][100:]
                body = b""
                n = 0
                for name in batch:
                    try:
                        st = os.lstat(os.path.join(h[1], name))
                    except OSError:
                        continue
                    body += sstr(name) + sstr(longname(name, st)) + attrs(st)
                    n += 1
                return msg(NAME, rid, struct.pack(">I", n) + body)
            if h[0] != "f":
                return status(rid, FX_FAILURE, "not a file handle")
            fd = h[1]
            if typ == FSTAT:
                return msg(ATTRS, rid, attrs(os.fstat(fd)))
            if typ == FSETSTAT:
                apply_attrs(r.attrs(), fd=fd)
                return status(rid, FX_OK, "")
            off = r.u64()
            if typ == READ:
                data = os.pread(fd, min(r.u32(), MAX_READ), off)
                return msg(DATA, rid, sstr(data)) if data else status(rid, FX_EOF, "")
            data = r.string()
            if h[2] & F_APPEND:
                os.write(fd, data)
            else:
                while data:
                    n = os.pwrite(fd, data, off)
                    data, off = data[n:], off + n
            return status(rid, FX_OK, "")
        if typ == OPEN:
            path = r.string()
            pf = r.u32()
            a = r.attrs()
            fl = {F_READ: os.O_RDONLY, F_WRITE: os.O_WRONLY,
                  F_READ | F_WRITE: os.O_RDWR}.get(pf & (F_READ | F_WRITE), os.O_RDONLY)
            for bit, o in ((F_APPEND, os.O_APPEND), (F_CREAT, os.O_CREAT),
                           (F_TRUNC, os.O_TRUNC), (F_EXCL, os.O_EXCL)):
                if pf & bit:
                    fl |= o
            if MODE == "maxhandles" and len(handles) >= MAX_HANDLES:
                stats["refused"] += 1
                return status(rid, FX_FAILURE, "too many open handles")
            fd = os.open(path, fl | os.O_CLOEXEC, a.get("perm", 0o666) & 0o7777)
            return new_handle(rid, ("f", fd, pf))
        if typ == OPENDIR:
            path = r.string()
            if MODE == "maxhandles" and len(handles) >= MAX_HANDLES:
                stats["refused"] += 1
                return status(rid, FX_FAILURE, "too many open handles")
            names = [b".", b".."] + sorted(os.listdir(path))
            return new_handle(rid, ("d", path, names))
        if typ == SETSTAT:
            path = r.string()
            apply_attrs(r.attrs(), path=path)
            return status(rid, FX_OK, "")
        if typ == MKDIR:
            path = r.string()
            a = r.attrs()
            os.mkdir(path, a.get("perm", 0o777) & 0o7777)
            return status(rid, FX_OK, "")
        if typ == RMDIR:
            os.rmdir(r.string())
            return status(rid, FX_OK, "")
        if typ == REMOVE:
            os.unlink(r.string())
            return status(rid, FX_OK, "")
        if typ == RENAME:
            old, new = r.string(), r.string()
            if os.path.lexists(new):
                return status(rid, FX_FAILURE, "target exists")
            os.rename(old, new)
            return status(rid, FX_OK, "")
        if typ == READLINK:
            t = os.readlink(r.string())
            return msg(NAME, rid, struct.pack(">I", 1) + sstr(t) + sstr(t) +
                       struct.pack(">I", 0))
        if typ == SYMLINK:
            # OpenSSH's argument order (linkpath and target swapped)
            target, link = r.string(), r.string()
            os.symlink(target, link)
            return status(rid, FX_OK, "")
        return status(rid, FX_OP_UNSUPPORTED, "not here")
    except OSError as e:
        return errno_status(rid, e)
    except (ValueError, struct.error, IndexError):
        return status(rid, FX_BAD_MESSAGE, "bad message")


def main():
    inbuf = bytearray()
    out = bytearray()
    held = []              # replies of the current batch (reorder)
    pending = []           # requests of the current batch (threads)
    eof = False
    os.set_blocking(0, False)
    os.set_blocking(1, False)

    def release():
        if len(held) > 1:
            stats["reordered"] += 1
            stats["largest"] = max(stats["largest"], len(held))
        for m in reversed(held):
            out.extend(m)
        held.clear()

    def carry_out():
        # a thread per handle: each handle's requests in order, the
        # handles (and requests naming none) taking turns, last first
        groups = {}
        for i, p in enumerate(pending):
            key = i
            if p[0] in (READ, WRITE, CLOSE, FSTAT, FSETSTAT, READDIR):
                n = struct.unpack(">I", p[5:9])[0]
                key = p[9:9 + n]
            groups.setdefault(key, []).append(p)
        if len(groups) > 1:
            stats["reordered"] += 1
            stats["largest"] = max(stats["largest"], len(pending))
        turns = [groups[key] for key in reversed(list(groups))]
        while turns:
            for g in turns:
                out.extend(handle_request(g.pop(0)))
            turns = [g for g in turns if g]
        pending.clear()

    while True:
        rl = [0] if not eof else []
        wl = [1] if out else []
        if not rl and not wl:
            break
        r, w, _ = select.select(rl, wl, [])
        if w:
            try:
                n = os.write(1, out[:1 << 20])
                del out[:n]
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                break
        if r:
            try:
                c = os.read(0, 1 << 20)
            except BlockingIOError:
                c = None
            except ConnectionResetError:
                c = b""
            if c == b"":
                eof = True
            elif c:
                inbuf.extend(c)
        # carry out every whole request there is
        while len(inbuf) >= 4:
            n = struct.unpack(">I", inbuf[:4])[0]
            if n > MAX_MSG or n == 0:
                sys.exit("sftp-quirky-server: bad message length %d" % n)
            if len(inbuf) < 4 + n:
                break
            p = bytes(inbuf[4:4 + n])
            del inbuf[:4 + n]
            if MODE == "threads" and p[0] != INIT:
                pending.append(p)
                if len(pending) >= BATCH:
                    carry_out()
                continue
            reply = handle_request(p)
            if MODE == "reorder" and p[0] != INIT:
                held.append(reply)
                if len(held) >= BATCH:
                    release()
            else:
                out.extend(reply)
        # a batch ends when nothing more can be read at once
        if held and (eof or not select.select([0], [], [], 0)[0]):
            release()
        if pending and (eof or not select.select([0], [], [], 0)[0]):
            carry_out()
    if os.environ.get("SFTP_QUIRK_LOG"):
        with open(os.environ["SFTP_QUIRK_LOG"], "a") as f:
            f.write("session ended: mode %s, %d requests, %d batches sent reordered "
                    "(largest %d), at most %d handles open, %d opens refused\n" % (
                        MODE, stats["requests"], stats["reordered"], stats["largest"],
                        stats["peak"], stats["refused"]))


main()
