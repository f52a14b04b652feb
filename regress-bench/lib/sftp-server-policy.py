#!/usr/bin/python3
"""sftp-server-policy: every request openssh-lfn's sftp-server answers is
denied (-P) and allowed (-p) under the name sftp-server.8 documents, and an
alias is refused whenever its canonical name is: check-file-handle (and
"check-file", paramiko's name for it), open-copy (and "open", which it
opens with), init-requests (what an INIT carries), the reads and close an
open-copy makes ("read", "close"); check-file answers only on handles
opened for reading; -Q requests lists each name once.

    sftp-server-policy.py SFTP_SERVER DIR

DIR gets a 10000-byte file "f".  One line per check: "ok ..." or
"FAIL ...".  Exit 1 if any failed."""
import os
import subprocess
import sys
sys.path.insert(0, os.path.dirname(__file__))
from sftp_raw import *  # noqa: E402,F403

server, d = sys.argv[1], sys.argv[2]
with open(os.path.join(d, "f"), "wb") as f:
    f.write(os.urandom(10000))
bad = 0
ALL = ("open,close,read,write,lstat,fstat,realpath,stat,check-file-handle,"
       "open-copy,init-requests,limits")


def check(ok, what):
    global bad
    print(("ok " if ok else "FAIL ") + what)
    bad |= not ok


def start(*opts, exts=None):
    s = Server([server, "-e", "-l", "VERBOSE"] + list(opts), d)
    s.send(init(exts=exts))
    t, body = s.reply()
    assert t == VERSION, "no VERSION from %s" % (opts,)
    return s, version_exts(body)


def struct_status(body):
    r = Reader(body)
    r.u32()
    return r.u32()


def code(t, body):
    """STATUS code, or the reply type's name"""
    if t == STATUS:
        return struct_status(body)
    return {HANDLE: "handle", DATA: "data", EXTENDED_REPLY: "reply",
            NAME: "name", None: "nothing"}.get(t, t)


def open_handle(s, rid, pflags=FXF_READ, path="f"):
    s.send(open_req(rid, path, pflags))
    t, body = s.reply()
    assert t == HANDLE, "open %s: %s" % (path, code(t, body))
    r = Reader(body)
    r.u32()
    return r.string()


def finish(s):
    s.close()
    rc, cpu, err = s.wait()
    return err

# --- check-file-handle and its alias check-file ------------------------------
for opts, want in ((), "reply"), (("-P", "check-file-handle"), FX_PERMISSION_DENIED), \
        (("-p", ALL), "reply"), \
        (("-p", ALL.replace("check-file-handle,", "")), FX_PERMISSION_DENIED):
    s, _ = start(*opts)
    h = open_handle(s, 1)
    for i, name in enumerate(("check-file-handle", "check-file")):
        s.send(check_file(10 + i, h, name, length=10000, block=4096))
        got = code(*s.reply())
        check(got == want, "%s with %s: %s (want %s)" %
              (name, " ".join(opts) or "no -P/-p", got, want))
    err = finish(s)
    if want == FX_PERMISSION_DENIED:
        check("check-file-handle request" in err,
              "the refusal of %s is logged under check-file-handle" % " ".join(opts))

s, _ = start()
h = open_handle(s, 1, FXF_WRITE)
for i, name in enumerate(("check-file-handle", "check-file")):
    s.send(check_file(10 + i, h, name, length=10000, block=4096))
    got = code(*s.reply())
    check(got == FX_PERMISSION_DENIED, "%s on a write-only handle: %s" % (name, got))
finish(s)

# --- open-copy: its own name, and wherever open is refused --------------------
for opts, want in ((), "reply"), (("-P", "open-copy"), FX_PERMISSION_DENIED), \
        (("-P", "open"), FX_PERMISSION_DENIED), (("-p", ALL), "reply"), \
        (("-p", ALL.replace("open-copy,", "")), FX_PERMISSION_DENIED), \
        (("-p", ALL.replace("open,", "", 1)), FX_PERMISSION_DENIED), \
        (("-R",), "reply"):
    s, _ = start(*opts)
    s.send(open_copy(1, "f", "", FXF_READ))
    got = code(*s.reply())
    check(got == want, "open-copy for reading with %s: %s (want %s)" %
          (" ".join(opts) or "no -P/-p", got, want))
    finish(s)
s, _ = start("-R")
s.send(open_copy(1, "g", "", FXF_WRITE | FXF_CREAT))
got = code(*s.reply())
check(got == FX_PERMISSION_DENIED, "open-copy for writing with -R: %s" % got)
finish(s)

# --- the reads and close an open-copy makes: policed as read and close --------
for opts, want in ((), ("data", FX_EOF, FX_OK)), \
        (("-P", "read"), (FX_PERMISSION_DENIED, FX_PERMISSION_DENIED, FX_OK)), \
        (("-P", "close"), ("data", FX_EOF, FX_PERMISSION_DENIED)):
    s, _ = start(*opts)
    s.send(open_copy(1, "f", "", FXF_READ, OPEN_COPY_READS, (100, 8, 0)))
    t, body = s.reply()
    if t != EXTENDED_REPLY:
        check(False, "open-copy with reads, %s: %s" % (" ".join(opts), code(t, body)))
        finish(s)
        continue
    r = Reader(body)
    r.u32(); r.string(); r.string(); r.u32()   # id, handle, path, attrs flags
    tail = r.b[-12:]
    rlen, n, closed = (Reader(tail).u32() for _ in range(3))
    got = {}
    for _ in range(3):
        t, body = s.reply(5)
        if t is None:
            break
        got[Reader(body).u32()] = code(t, body)
    got = tuple(got.get(i, "nothing") for i in (100, 101, 102))
    check(got == want, "the reads and close open-copy made, %s: %s (want %s)" %
          (" ".join(opts) or "no -P/-p", got, want))
    finish(s)

# --- init-requests: what an INIT carries --------------------------------------
carried = {"init-requests@openssh-lfn": extended(1, "limits@openssh.com")}
for opts, want in ((), True), (("-P", "init-requests"), False), (("-p", ALL), True), \
        (("-p", ALL.replace("init-requests,", "")), False), \
        (("-P", "limits"), True):
    s, exts = start(*opts, exts=carried)
    offered = "init-requests@openssh-lfn" in exts
    s.send(request(REALPATH, 2, string(".")))
    t, body = s.reply()
    first = Reader(body).u32() if t is not None else None
    # taken: the carried limits (id 1) is answered before the REALPATH
    taken = first == 1
    check(offered == want and taken == want,
          "init-requests with %s: offered %s, carried request answered %s (want %s)" %
          (" ".join(opts) or "no -P/-p", offered, taken, want))
    if taken and "limits" in opts:
        check(code(t, body) == FX_PERMISSION_DENIED,
              "a carried limits request with -P limits: %s" % code(t, body))
    err = finish(s)
    if not want:
        check("init-requests request" in err,
              "the refusal of init-requests is logged (%s)" % " ".join(opts))

# --- -Q requests ---------------------------------------------------------------
q = subprocess.run([server, "-Q", "requests"], capture_output=True, text=True).stdout.split()
for name in ("check-file-handle", "open-copy", "init-requests"):
    check(q.count(name) == 1, "-Q requests lists %s once (%d)" % (name, q.count(name)))
check("check-file" not in q, "-Q requests does not list the alias check-file")
sys.exit(bad)
