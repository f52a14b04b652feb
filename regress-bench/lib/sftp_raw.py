"""sftp_raw: SFTP v3 packets by hand, for tests that drive an sftp-server
binary directly over its stdin and stdout (no sshd): hostile byte streams,
requests a real client never sends, the -P/-p policy of every request.

    s = Server(["/path/sftp-server", "-e", "-l", "VERBOSE", "-P", "read"], cwd)
    s.send(init())               # init(exts={name: data}): INIT extensions
    t, body = s.reply()          # (type, bytes after the type)
    s.close(); s.wait()          # exit code, CPU seconds, stderr

Python's standard library only."""
import os
import select
import struct
import subprocess
import time

# packet types and status codes (draft-ietf-secsh-filexfer-02)
INIT, VERSION, OPEN, CLOSE, READ, WRITE = 1, 2, 3, 4, 5, 6
REALPATH = 16
STATUS, HANDLE, DATA, NAME, ATTRS = 101, 102, 103, 104, 105
EXTENDED, EXTENDED_REPLY = 200, 201
FX_OK, FX_EOF, FX_NO_SUCH_FILE, FX_PERMISSION_DENIED, FX_FAILURE = 0, 1, 2, 3, 4
FX_OP_UNSUPPORTED = 8
# OPEN's portable flags
FXF_READ, FXF_WRITE, FXF_APPEND, FXF_CREAT, FXF_TRUNC, FXF_EXCL = 1, 2, 4, 8, 16, 32


def u32(v): return struct.pack(">I", v)
def u64(v): return struct.pack(">Q", v)
def string(b): return u32(len(b)) + (b.encode() if isinstance(b, str) else b)


def packet(ptype, body=b""):
    return u32(1 + len(body)) + bytes([ptype]) + body


def init(version=3, exts=None):
    body = u32(version)
    for name, data in (exts or {}).items():
        body += string(name) + string(data)
    return packet(INIT, body)


def request(ptype, rid, body=b""):
    return packet(ptype, u32(rid) + body)


def extended(rid, name, body=b""):
    return packet(EXTENDED, u32(rid) + string(name) + body)


def open_req(rid, path, pflags, attrs=u32(0)):
    return request(OPEN, rid, string(path) + u32(pflags) + attrs)


def check_file(rid, handle, name="check-file-handle", algs="sha256",
               off=0, length=0, block=0):
    return extended(rid, name, string(handle) + string(algs) + u64(off) +
                    u64(length) + u32(block))


class Reader:
    """Fields of a reply's body, in order"""
    def __init__(self, b): self.b, self.o = b, 0
    def u32(self):
        v = struct.unpack(">I", self.b[self.o:self.o + 4])[0]; self.o += 4; return v
    def u64(self):
        v = struct.unpack(">Q", self.b[self.o:self.o + 8])[0]; self.o += 8; return v
    def string(self):
        n = self.u32(); v = self.b[self.o:self.o + n]; self.o += n; return v
    def rest(self): return self.b[self.o:]


def version_exts(body):
    r, exts = Reader(body), {}
    r.u32()
    while r.o < len(body):
        name = r.string().decode()
        exts[name] = r.string()
    return exts


class Server:
    def __init__(self, argv, cwd, env=None):
        self.err = open(os.path.join(cwd, ".sftp-server.err"), "w+b")
        self.p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err,
                                  env=env)
        self.buf = b""

    def send(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def close(self):
        self.p.stdin.close()

    def reply(self, timeout=10):
        """(type, body) of the next reply; (None, b"") if none came"""
        end = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while True:
            if len(self.buf) >= 4:
                n = struct.unpack(">I", self.buf[:4])[0]
                if len(self.buf) >= 4 + n:
                    pkt, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    return pkt[0], pkt[1:]
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None, b""
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None, b""
            self.buf += chunk

    def cpu(self):
        """CPU seconds the (running) process has used"""
        try:
            with open("/proc/%d/stat" % self.p.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def wait(self, timeout=10, grace=0.0, grace_cpu=0.0):
        """(exit code or None if it was still running, CPU s, stderr);
        a process still running after timeout that has used less than
        grace_cpu CPU seconds (starved, not busy) gets grace seconds more"""
        end = time.monotonic() + timeout
        rc = ru = None
        while True:
            if time.monotonic() >= end:
                if grace <= 0 or self.cpu() >= grace_cpu:
                    break
                end, grace = time.monotonic() + grace, 0.0
            pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.02)
        if rc is None:
            self.p.kill()
            pid, status, ru = os.wait4(self.p.pid, 0)
        self.p.returncode = rc if rc is not None else -9
        self.err.seek(0)
        return rc, ru.ru_utime + ru.ru_stime, self.err.read().decode(errors="replace")
