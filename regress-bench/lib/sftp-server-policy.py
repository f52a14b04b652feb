#!/usr/bin/python3
"""sftp-server-policy: the request openssh-lfn's sftp-server adds,
check-file-handle (0262), is denied (-P) and allowed (-p) under the name
sftp-server.8 documents, and its alias "check-file" (paramiko's name for
it) is refused whenever check-file-handle is; check-file answers only on
handles opened for reading; -Q requests lists check-file-handle once and
not the alias.

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
ALL = "open,close,read,write,lstat,fstat,realpath,stat,check-file-handle,limits"


def check(ok, what):
    global bad
    print(("ok " if ok else "FAIL ") + what)
    bad |= not ok


def start(*opts):
    s = Server([server, "-e", "-l", "VERBOSE"] + list(opts), d)
    s.send(init())
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
    s, exts = start(*opts)
    check(("check-file-handle" in exts) == (want == "reply"),
          "check-file-handle %s in VERSION with %s" %
          ("offered" if "check-file-handle" in exts else "not offered",
           " ".join(opts) or "no -P/-p"))
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

# --- -Q requests ---------------------------------------------------------------
q = subprocess.run([server, "-Q", "requests"], capture_output=True, text=True).stdout.split()
check(q.count("check-file-handle") == 1,
      "-Q requests lists check-file-handle once (%d)" % q.count("check-file-handle"))
check("check-file" not in q, "-Q requests does not list the alias check-file")
sys.exit(bad)
