#!/usr/bin/python3
"""regress-bench/bench/soak.py -- the helper of soak.sh (a storage-server
soak: many concurrent clients copying mixed sizes for a while, some killed).
Standard library only.  soak.sh sets up the environment (keys, sshd) and
calls:

    soak.py gen DIR SEED SIZES        the data set: DIR/fNN, the same bytes
                                      for the same SEED and SIZES
                                      (comma list, K/M suffixes, 1024-based)
    soak.py reaper PIDFILE CMD...     run CMD (the sshd) below a child
                                      subreaper: an sftp-server orphaned by
                                      its sshd-session stays below us, not
                                      below init; PIDFILE gets CMD's PID
    soak.py run OPTIONS               the soak against one sshd (--help)
    soak.py report OUT                OUT/summary.md from OUT/results.tsv,
                                      OUT/rss.tsv and OUT/run-*.json; exit 1
                                      when a completed copy mismatched or a
                                      process was left behind

soak.sh's header says what is measured and reported.
"""

import argparse
import ctypes
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
FC = os.path.join(TOP, "regress-bench", "lib", "foreign-client")

# tool -> (family, direction); the order is the rotation
TOOLS = {
    "scp-up": ("scp", "up"), "scp-down": ("scp", "down"),
    "sftp-put": ("sftp", "up"), "sftp-get": ("sftp", "down"),
    "rclone-up": ("rclone", "up"), "rclone-down": ("rclone", "down"),
    "psftp-put": ("psftp", "up"), "psftp-get": ("psftp", "down"),
    "sshfs-up": ("sshfs", "up"), "sshfs-down": ("sshfs", "down"),
}

# one sshfs copy, in a private mount namespace of its own (unshare -m: the
# mount goes with the namespace whatever happens to the copy): mount REMOTE
# (sshfs in the foreground, so that it stays in the copy's process group),
# cp FROM TO, unmount.  $SSHCMD: the ssh command line (-o ssh_command).
SSHFS_COPY = r"""
set -u
mnt=$1 remote=$2 from=$3 to=$4
sshfs -f -o ssh_command="$SSHCMD" "lfnpeer:$remote" "$mnt" < /dev/null & sp=$!
# a background job ignores SIGINT: Ctrl-C (cp dies) or SIGTERM ends the
# mount and sshfs with it, as the end of a user's session would
trap 'umount -l "$mnt" 2> /dev/null; kill $sp 2> /dev/null; wait $sp; exit 130' INT TERM
for i in $(seq 1 400); do
	mountpoint -q "$mnt" && break
	kill -0 $sp 2> /dev/null || { wait $sp; echo "sshfs exited ($?) before mounting" >&2; exit 3; }
	sleep 0.05
done
mountpoint -q "$mnt" || { echo "sshfs did not mount in 20 s" >&2; kill $sp; exit 3; }
cp "$from" "$to"; rc=$?
umount "$mnt" || { echo "umount failed" >&2; rc=4; kill $sp; }
wait $sp
exit $rc
"""

RESULT_COLS = ["server", "slot", "tool", "direction", "bytes", "seconds", "outcome",
               "seq", "start_s", "file", "rc", "note"]
RSS_COLS = ["server", "phase", "t_s", "role", "count", "sum_kb", "max_kb", "median_kb"]


def parse_size(s):
    s = s.strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper())
    return int(float(s[:-1]) * mult) if mult else int(s)


# ---------------------------------------------------------------- gen

def gen(d, seed, sizes):
    """Files f00.. of the nominal SIZES, each but the smallest and the
    largest moved off its power of two by up to 1/8 (odd sizes cross every
    buffer boundary); contents from random.Random, so the same SEED gives
    the same bytes."""
    os.makedirs(d, exist_ok=True)
    noms = sorted(parse_size(x) for x in sizes.split(",") if x.strip())
    rng = random.Random("soak-data:%s" % seed)
    with open(os.path.join(d, "manifest.tsv"), "w") as m:
        for i, n in enumerate(noms):
            size = n
            if 0 < i < len(noms) - 1:
                size = n + rng.randrange(-(n // 8), n // 8 + 1)
            path = os.path.join(d, "f%02d" % i)
            if not (os.path.exists(path) and os.path.getsize(path) == size):
                frng = random.Random("soak-file:%s:%d:%d" % (seed, i, size))
                with open(path + ".tmp", "wb") as f:
                    left = size
                    while left:
                        k = min(left, 8 << 20)
                        f.write(frng.randbytes(k))
                        left -= k
                os.rename(path + ".tmp", path)
            m.write("f%02d\t%d\n" % (i, size))
            print("f%02d %d" % (i, size))


# ---------------------------------------------------------------- reaper

def reaper(pidfile, argv):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:        # PR_SET_CHILD_SUBREAPER
        print("soak.py reaper: PR_SET_CHILD_SUBREAPER failed", file=sys.stderr)
    child = subprocess.Popen(argv)
    with open(pidfile + ".tmp", "w") as f:
        f.write("%d\n" % child.pid)
    os.rename(pidfile + ".tmp", pidfile)

    def fwd(sig, _frm):
        try:
            os.kill(child.pid, sig)
        except ProcessLookupError:
            pass
    signal.signal(signal.SIGTERM, fwd)
    signal.signal(signal.SIGINT, fwd)
    status = 0
    while True:     # reap the sshd and every orphan re-parented to us
        try:
            pid, st = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == child.pid:
            child.returncode = st
            status = os.waitstatus_to_exitcode(st)
            break
    sys.exit(status if status >= 0 else 128 - status)


# ---------------------------------------------------------------- /proc

def proc_table():
    """pid -> (comm, ppid) of every process"""
    t = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % e) as f:
                s = f.read()
        except OSError:
            continue
        r = s.rfind(")")
        comm = s[s.find("(") + 1:r]
        ppid = int(s[r + 2:].split()[1])
        t[int(e)] = (comm, ppid)
    return t


def descendants(root, table=None):
    table = table if table is not None else proc_table()
    kids = {}
    for pid, (_, ppid) in table.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for k in kids.get(p, ()):
            out.append(k)
            todo.append(k)
    return out


def rss_kb(pid):
    try:
        with open("/proc/%d/statm" % pid) as f:
            return int(f.read().split()[1]) * PAGE_KB
    except (OSError, IndexError, ValueError):
        return None


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ---------------------------------------------------------------- run

class Soak:
    def __init__(self, a):
        self.a = a
        self.T = a.T
        self.files = []         # (name, size)
        with open(os.path.join(self.T, "data", "manifest.tsv")) as f:
            for line in f:
                n, s = line.split()
                self.files.append((n, int(s)))
        self.tools = [t for t in a.tools.split(",") if t]
        for t in self.tools:
            if t not in TOOLS:
                sys.exit("soak.py: unknown tool %s (known: %s)" % (t, ",".join(TOOLS)))
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.active = {}        # slot -> Popen
        self.last = {}          # (tool, file) -> seconds of the last completed copy
        self.rate = {}          # tool -> [bytes, seconds] of completed copies >= 1 MiB
        self.fixed = {}         # tool -> shortest completed copy of a file < 256 KiB
        self.res = open(os.path.join(a.out, "results.tsv"), "a", buffering=1)
        self.rss = open(os.path.join(a.out, "rss.tsv"), "a", buffering=1)
        self.chome = os.path.join(self.T, "chome")
        os.makedirs(self.chome, exist_ok=True)
        ct = a.client_tree
        self.sshopts = ["-F", os.path.join(self.T, "ssh_config"), "-o", "HostKeyAlias=lfnpeer",
                        "-o", "HostName=127.0.0.1"]
        self.sshcmd = " ".join([os.path.join(ct, "ssh")] + self.sshopts + ["-p", str(a.port)])
        self.env = dict(os.environ, HOME=self.chome, LC_ALL="C",
                        FC_DIR=os.path.join(self.T, "fc"), FC_HOST="127.0.0.1",
                        FC_PORT=str(a.port), FC_NS="", FC_SSH_CONFIG=os.path.join(self.T, "ssh_config"),
                        # rclone skips a file whose size and time match: never
                        RCLONE_IGNORE_TIMES="true", SSHCMD=self.sshcmd)
        self.t0 = None
        self.leftover_client_groups = 0

    # -- the command line of one copy
    def argv(self, tool, src, dst, slot):
        fam, d = TOOLS[tool]
        ct = self.a.client_tree
        port = str(self.a.port)
        if fam == "scp":
            cmd = [os.path.join(ct, "scp"), "-S", os.path.join(ct, "ssh"), "-P", port] + self.sshopts + ["-q"]
            return cmd + ([src, "lfnpeer:" + dst] if d == "up" else ["lfnpeer:" + src, dst])
        if fam == "sftp":
            batch = os.path.join(self.T, "batch", "slot%03d" % slot)
            with open(batch, "w") as f:
                f.write(('put "%s" "%s"\n' if d == "up" else 'get "%s" "%s"\n') % (src, dst))
            return [os.path.join(ct, "sftp"), "-S", os.path.join(ct, "ssh"), "-P", port] + \
                self.sshopts + ["-q", "-b", batch, "lfnpeer"]
        if fam in ("rclone", "psftp"):
            return [FC, fam, "put" if d == "up" else "get", src, dst]
        if fam == "sshfs":
            mnt = os.path.join(self.T, "mnt", "slot%03d" % slot)
            if d == "up":   # mount the slot's server directory, cp into it
                remote, frm, to = os.path.dirname(dst), src, os.path.join(mnt, os.path.basename(dst))
            else:           # mount the data directory, cp out of it
                remote, frm, to = os.path.dirname(src), os.path.join(mnt, os.path.basename(src)), dst
            return ["unshare", "-m", "--propagation", "private", "bash", "-c", SSHFS_COPY, "sshfs-copy",
                    mnt, remote, frm, to]
        raise ValueError(tool)

    def estimate(self, tool, fidx, size):
        """how long this copy should take (for a kill at a random moment)"""
        with self.lock:
            if (tool, fidx) in self.last:
                return self.last[(tool, fidx)]
            b, s = self.rate.get(tool, (0, 0))
            r = b / s if s > 0 else 20e6
            return self.fixed.get(tool, 0.5) + size / r

    def learn(self, tool, fidx, size, secs):
        with self.lock:
            self.last[(tool, fidx)] = secs
            if size >= 1 << 20:
                r = self.rate.setdefault(tool, [0, 0.0])
                r[0] += size
                r[1] += secs
            elif size < 256 << 10:
                self.fixed[tool] = min(self.fixed.get(tool, secs), secs)

    def server_has_open(self, path):
        """PIDs below the sshd that still hold PATH open"""
        out = []
        for pid in descendants(self.a.wrapper):
            d = "/proc/%d/fd" % pid
            try:
                for fd in os.listdir(d):
                    try:
                        t = os.readlink(os.path.join(d, fd))
                    except OSError:
                        continue
                    if t == path or t == path + " (deleted)":
                        out.append(pid)
                        break
            except OSError:
                continue
        return out

    @staticmethod
    def same(a, b):
        try:
            with open(a, "rb") as fa, open(b, "rb") as fb:
                while True:
                    x = fa.read(1 << 20)
                    y = fb.read(1 << 20)
                    if x != y:
                        return False
                    if not x:
                        return True
        except OSError:
            return False

    @staticmethod
    def ident(path):
        try:
            st = os.stat(path)
            return (st.st_ino, st.st_ctime_ns, st.st_size)
        except OSError:
            return None

    def one(self, slot, seq, tool, fidx, kill, u, sig):
        name, size = self.files[fidx]
        fam, d = TOOLS[tool]
        data = os.path.join(self.T, "data", name)
        if d == "up":
            src, dst = data, os.path.join(self.T, "srv", "slot%03d" % slot, "up.dat")
        else:
            src, dst = data, os.path.join(self.T, "cli", "slot%03d" % slot, "down.dat")
        argv = self.argv(tool, src, dst, slot)
        before = self.ident(dst)
        est = self.estimate(tool, fidx, size)
        errpath = os.path.join(self.T, "err", "slot%03d" % slot)
        start = time.monotonic()
        with open(errpath, "w") as err:
            p = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=err, start_new_session=True, cwd=self.chome)
        with self.lock:
            self.active[slot] = p
        outcome, note, killed = None, [], False
        try:
            if kill:
                try:
                    p.wait(timeout=u * est)
                except subprocess.TimeoutExpired:
                    killed = True
                    killpg(p.pid, sig)
                    note.append("%s after %.2fs" % ("SIGKILL" if sig == signal.SIGKILL else "SIGINT",
                                                    time.monotonic() - start))
            if not killed:
                try:
                    p.wait(timeout=max(1, self.a.copy_timeout - (time.monotonic() - start)))
                except subprocess.TimeoutExpired:
                    killpg(p.pid, signal.SIGKILL)
                    outcome = "timeout"
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                killpg(p.pid, signal.SIGKILL)
                note.append("SIGKILL after 5s")
                p.wait()
            secs = time.monotonic() - start
            # what the client left in its process group (scp's ssh, sshfs)
            t = time.monotonic()
            while group_alive(p.pid) and time.monotonic() - t < 5:
                time.sleep(0.05)
            if group_alive(p.pid):
                killpg(p.pid, signal.SIGKILL)
                note.append("processes of its group outlived the client by 5s: killed")
                with self.lock:
                    self.leftover_client_groups += 1
        finally:
            if p.poll() is None:        # only on a harness error: never leave it running
                killpg(p.pid, signal.SIGKILL)
                p.wait()
            with self.lock:
                self.active.pop(slot, None)
        rc = p.returncode
        if killed:
            outcome = "killed"
            after = self.ident(dst)
            if after and after != before:
                note.append("partial %d/%d bytes%s" % (after[2], size,
                                                       ", same bytes" if after[2] == size and self.same(src, dst) else ""))
            if kill and rc == 0:
                note.append("client exited 0")
        elif outcome is None and rc != 0:
            outcome = "failed"
        elif outcome is None:
            after = self.ident(dst)
            if after is None:
                outcome, note = "mismatch", note + ["exit 0 but no file"]
            elif after == before:
                outcome, note = "mismatch", note + ["exit 0 but the file was not rewritten"]
            elif not self.same(src, dst):
                outcome, note = "mismatch", note + ["bytes differ (%d/%d bytes)" % (after[2], size)]
            else:
                outcome = "ok"
                if kill:
                    note.append("done before its kill at %.2fs" % (u * est))
                self.learn(tool, fidx, size, secs)
        if outcome in ("failed", "timeout", "mismatch"):
            try:
                with open(errpath, errors="replace") as f:
                    tail = " | ".join(x.strip() for x in f.read().strip().splitlines()[-3:])
            except OSError:
                tail = ""
            if tail:
                note.append("stderr: " + tail[:300])
        if d == "up" and outcome != "ok":
            # a killed upload's server side may still be writing what the
            # client sent before it died: the next copy into the same file
            # waits for it (else a late write would look like a mismatch)
            t = time.monotonic()
            while self.server_has_open(dst) and time.monotonic() - t < 10:
                time.sleep(0.1)
            held = self.server_has_open(dst)
            if held:
                note.append("server still had the file open 10s later: %s" % held)
        line = [self.a.server, slot, tool, d, size, "%.3f" % secs, outcome, seq,
                "%.2f" % (start - self.t0), name, rc, "; ".join(note).replace("\t", " ").replace("\n", " ")]
        with self.lock:
            self.res.write("\t".join(str(x) for x in line) + "\n")
        return outcome

    def slot(self, slot):
        rng = random.Random("soak-slot:%s:%d" % (self.a.seed, slot))
        seq = 0
        time.sleep(slot * self.a.stagger)
        while not self.stop.is_set() and time.monotonic() < self.t_end:
            tool = self.tools[(slot + seq) % len(self.tools)]
            fidx = rng.randrange(len(self.files))
            kill = rng.random() < self.a.kill_fraction
            u = rng.uniform(0.05, 0.95)
            sig = rng.choice((signal.SIGKILL, signal.SIGINT))
            try:
                self.one(slot, seq, tool, fidx, kill, u, sig)
            except Exception as e:      # noqa: BLE001 -- record it, keep the slot going
                with self.lock:
                    self.res.write("\t".join(str(x) for x in [
                        self.a.server, slot, tool, TOOLS[tool][1], self.files[fidx][1], "0", "error", seq,
                        "%.2f" % (time.monotonic() - self.t0), self.files[fidx][0], "", "harness: %r" % e]) + "\n")
                time.sleep(1)
            seq += 1

    # -- memory
    def sample(self, phase):
        table = proc_table()
        t = time.monotonic() - self.t0 if self.t0 else 0.0
        roles = {"sshd (listener)": [rss_kb(self.a.listener)]}
        for pid in descendants(self.a.wrapper, table):
            if pid == self.a.listener:
                continue
            r = rss_kb(pid)
            if r is not None:
                roles.setdefault(table[pid][0], []).append(r)
        with self.lock:
            for role, v in sorted(roles.items()):
                v = [x for x in v if x is not None]
                if not v:
                    continue
                self.rss.write("\t".join(str(x) for x in [
                    self.a.server, phase, "%.1f" % t, role, len(v), sum(v), max(v),
                    int(statistics.median(v))]) + "\n")
        return roles

    def sampler(self):
        while not self.stop.wait(self.a.rss_interval):
            self.sample("run")

    def kill_all_clients(self):
        with self.lock:
            ps = list(self.active.values())
        for p in ps:
            killpg(p.pid, signal.SIGKILL)

    def run(self):
        a = self.a
        for sub in ("srv", "cli", "mnt"):
            for i in range(a.clients):
                os.makedirs(os.path.join(self.T, sub, "slot%03d" % i), exist_ok=True)
        for sub in ("err", "batch"):
            os.makedirs(os.path.join(self.T, sub), exist_ok=True)
        info = dict(server=a.server, tree=a.tree, client_tree=a.client_tree, port=a.port,
                    clients=a.clients, duration=a.duration, kill_fraction=a.kill_fraction, seed=a.seed,
                    tools=self.tools, skipped=a.skipped, grace=a.grace, files=self.files,
                    start_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), load_start=loadavg())
        self.t0 = time.monotonic()
        info["listener_rss_kb_start"] = rss_kb(a.listener)
        self.sample("start")
        self.t_end = self.t0 + a.duration
        threads = [threading.Thread(target=self.slot, args=(i,), daemon=True) for i in range(a.clients)]
        smp = threading.Thread(target=self.sampler, daemon=True)
        smp.start()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        info["last_client_s"] = round(time.monotonic() - self.t0, 2)
        self.stop.set()
        smp.join()
        self.sample("last-client")
        # after the last client: the sessions have GRACE seconds to go
        t = time.monotonic()
        while time.monotonic() - t < a.grace:
            if not [p for p in descendants(a.wrapper) if p != a.listener]:
                break
            time.sleep(0.1)
        time.sleep(0.5)     # and the listener to reap them
        info["listener_rss_kb_end"] = rss_kb(a.listener)
        self.sample("end")
        table = proc_table()
        left = []
        for pid in descendants(a.wrapper, table):
            if pid == a.listener:
                continue
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                with open("/proc/%d/environ" % pid, "rb") as f:
                    conn = [x.decode(errors="replace") for x in f.read().split(b"\0")
                            if x.startswith(b"SSH_CONNECTION=")]
            except OSError:
                cmd, conn = "", []
            left.append(dict(pid=pid, comm=table[pid][0], ppid=table[pid][1],
                             parent=table.get(table[pid][1], ("?",))[0], cmdline=cmd[:200],
                             ssh_connection=conn[0][15:] if conn else "", rss_kb=rss_kb(pid)))
        info["left_behind"] = left
        info["client_groups_left"] = self.leftover_client_groups
        info["load_end"] = loadavg()
        info["end_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        # then they go (by PID: only what is below this soak's sshd)
        pids = [x["pid"] for x in left]
        for p in pids:
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
        t = time.monotonic()
        while time.monotonic() - t < 3 and any(alive(p) for p in pids):
            time.sleep(0.1)
        for p in pids:
            if alive(p):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        with open(os.path.join(a.out, "run-%s.json" % a.server), "w") as f:
            json.dump(info, f, indent=1)
        return info


def cmd_run(argv):
    ap = argparse.ArgumentParser(prog="soak.py run")
    ap.add_argument("--server", required=True, help="name in the tables (lfn, stock)")
    ap.add_argument("--tree", required=True, help="the sshd's tree (for the record)")
    ap.add_argument("--client-tree", required=True, help="OpenSSH tree of scp, sftp, ssh")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--listener", type=int, required=True, help="PID of the sshd listener")
    ap.add_argument("--wrapper", type=int, required=True, help="PID of its reaper")
    ap.add_argument("--T", required=True, help="scratch directory (keys, data, ...)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--kill-fraction", type=float, default=0.1)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--skipped", default="", help="tools skipped and why (for the record)")
    ap.add_argument("--rss-interval", type=float, default=10)
    ap.add_argument("--grace", type=float, default=5)
    ap.add_argument("--copy-timeout", type=float, default=300)
    ap.add_argument("--stagger", type=float, default=0.1, help="seconds between slot starts")
    a = ap.parse_args(argv)
    s = Soak(a)

    def bye(sig, _frm):
        s.stop.set()
        s.t_end = 0
        s.kill_all_clients()
        sys.exit(128 + sig)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    try:
        info = s.run()
    finally:
        s.kill_all_clients()
    print("%s: %d processes left below sshd after the last client, listener RSS %s -> %s kB" % (
        a.server, len(info["left_behind"]), info["listener_rss_kb_start"], info["listener_rss_kb_end"]))


# ---------------------------------------------------------------- report

def read_tsv(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = line.rstrip("\n").split("\t")
            rows.append(dict(zip(head, v)))
    return rows


def fmt(v, nd=1):
    if v is None:
        return "–"
    if isinstance(v, float):
        return "%.*f" % (nd, v)
    return str(v)


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def stats_for(server, res, rss, info):
    r = [x for x in res if x["server"] == server]
    ok = [x for x in r if x["outcome"] == "ok"]
    s = dict(server=server, started=len(r), ok=len(ok),
             failed=sum(x["outcome"] in ("failed", "error") for x in r),
             timeout=sum(x["outcome"] == "timeout" for x in r),
             killed=sum(x["outcome"] == "killed" for x in r),
             mismatch=sum(x["outcome"] == "mismatch" for x in r),
             kill_missed=sum("before its kill" in x["note"] for x in ok))
    k0 = [x for x in r if x["outcome"] == "killed" and "client exited 0" in x["note"]]
    s["killed_rc0"] = len(k0)
    s["killed_rc0_partial"] = sum("partial" in x["note"] and "same bytes" not in x["note"] for x in k0)
    s["killed_rc0_unchanged"] = sum("partial" not in x["note"] for x in k0)
    s["killed_rc0_tools"] = sorted(set(x["tool"] for x in k0))
    s["completed"] = s["ok"] + s["mismatch"]
    s["bytes_ok"] = sum(int(x["bytes"]) for x in ok)
    per_copy = [int(x["bytes"]) / float(x["seconds"]) / 1e6 for x in ok if float(x["seconds"]) > 0]
    s["mbs_copy_mean"] = statistics.mean(per_copy) if per_copy else None
    run_s = info.get("last_client_s") or info.get("duration")
    s["run_s"] = run_s
    s["mbs_aggregate"] = s["bytes_ok"] / run_s / 1e6 if run_s else None
    clients = info.get("clients") or 1
    s["mbs_per_client"] = s["mbs_aggregate"] / clients if s["mbs_aggregate"] is not None else None
    # large files only: the data rate once setup no longer dominates
    big = [x for x in ok if int(x["bytes"]) >= 4 << 20]
    s["mbs_big"] = (sum(int(x["bytes"]) for x in big) / sum(float(x["seconds"]) for x in big) / 1e6
                    if big and sum(float(x["seconds"]) for x in big) > 0 else None)
    small = [float(x["seconds"]) for x in ok if int(x["bytes"]) < 64 << 10]
    s["small_s_median"] = statistics.median(small) if small else None
    tools = {}
    for x in r:
        t = tools.setdefault(x["tool"], dict(ok=0, failed=0, killed=0, mismatch=0, timeout=0, b=0, s=0.0))
        o = x["outcome"]
        t[{"error": "failed"}.get(o, o)] = t.get({"error": "failed"}.get(o, o), 0) + 1
        if o == "ok":
            t["b"] += int(x["bytes"])
            t["s"] += float(x["seconds"])
    s["tools"] = tools
    # memory
    q = [x for x in rss if x["server"] == server]
    dur = info.get("duration") or 0
    win = max(20.0, dur / 10.0)

    def pick(role, lo, hi, key):
        v = [int(x[key]) for x in q if x["role"] == role and x["phase"] == "run" and lo <= float(x["t_s"]) <= hi]
        return v
    s["win"] = win
    for role, k in (("sshd-session", "sess"), ("sftp-server", "sftp")):
        a, b = pick(role, 0, win, "max_kb"), pick(role, dur - win, dur + 1e9, "max_kb")
        s[k + "_max_start"], s[k + "_max_end"] = (max(a) if a else None), (max(b) if b else None)
        a, b = pick(role, 0, win, "median_kb"), pick(role, dur - win, dur + 1e9, "median_kb")
        s[k + "_med_start"] = int(statistics.median(a)) if a else None
        s[k + "_med_end"] = int(statistics.median(b)) if b else None
    lst = [(float(x["t_s"]), int(x["max_kb"])) for x in q if x["role"] == "sshd (listener)"]
    s["listener_max"] = max(v for _, v in lst) if lst else None
    s["listener_start"] = info.get("listener_rss_kb_start")
    s["listener_end"] = info.get("listener_rss_kb_end")
    n = [int(x["count"]) for x in q if x["role"] == "sshd-session" and x["phase"] == "run"]
    s["sessions_max"] = max(n) if n else 0
    s["left"] = info.get("left_behind", [])
    s["client_groups_left"] = info.get("client_groups_left", 0)
    s["failures"] = [x for x in r if x["outcome"] in ("failed", "error", "timeout", "mismatch")]
    return s


def report(out):
    res = read_tsv(os.path.join(out, "results.tsv"))
    rss = read_tsv(os.path.join(out, "rss.tsv"))
    infos = {}
    for fn in sorted(os.listdir(out)):
        if fn.startswith("run-") and fn.endswith(".json"):
            with open(os.path.join(out, fn)) as f:
                i = json.load(f)
            infos[i["server"]] = i
    order = [x for x in ("lfn", "stock") if x in infos] + [x for x in infos if x not in ("lfn", "stock")]
    if not order:
        print("soak.py report: no run-*.json in %s" % out, file=sys.stderr)
        return 2
    S = {sv: stats_for(sv, res, rss, infos[sv]) for sv in order}
    L = []
    i0 = infos[order[0]]
    L.append("# Storage-server soak")
    L.append("")
    L.append("%d concurrent clients, %g s each server (copies started until then, then finished), "
             "kill fraction %g (SIGKILL or SIGINT to the client's process group at a random moment), "
             "seed %s, loopback.  Tools in rotation: %s.%s" % (
                 i0["clients"], i0["duration"], i0["kill_fraction"], i0["seed"], ", ".join(i0["tools"]),
                 ("  Skipped: %s." % i0["skipped"]) if i0.get("skipped") else ""))
    L.append("Files: %s (bytes)." % ", ".join("%s %d" % (n, sz) for n, sz in i0["files"]))
    L.append("Clients' OpenSSH (scp, sftp, sshfs's ssh): `%s`." % i0["client_tree"])
    for sv in order:
        i = infos[sv]
        L.append("- %s: `%s/sshd`, %s .. %s UTC, load %s -> %s" % (
            sv, i["tree"], i["start_utc"], i["end_utc"], i["load_start"], i["load_end"]))
    L.append("")
    for sv in order:
        s = S[sv]
        L.append("## %s sshd" % sv)
        L.append("")
        L.append("- copies started %d: completed %d (ok %d, mismatch %d), failed %d, timed out %d, killed %d "
                 "(%d more were to be killed but finished first)" % (
                     s["started"], s["completed"], s["ok"], s["mismatch"], s["failed"], s["timeout"], s["killed"],
                     s["kill_missed"]))
        L.append("- every completed file verified: %s (%d of %d byte-identical to the source, %d mismatches)" % (
            "yes" if s["mismatch"] == 0 else "NO", s["ok"], s["completed"], s["mismatch"]))
        L.append("- MB/s per copy (mean over completed copies, setup included): %s; per client "
                 "(completed bytes / %.0f s / %d clients): %s; aggregate: %s; files >= 4 MiB: %s; "
                 "median time of a copy < 64 KiB: %s s" % (
                     fmt(s["mbs_copy_mean"], 2), s["run_s"] or 0, infos[sv]["clients"], fmt(s["mbs_per_client"], 2),
                     fmt(s["mbs_aggregate"], 1), fmt(s["mbs_big"], 2), fmt(s["small_s_median"], 2)))
        L.append("- sshd listener RSS: %s kB at start, %s kB at the end (max sampled %s kB)" % (
            s["listener_start"], s["listener_end"], s["listener_max"]))
        L.append("- sshd-session RSS, max (median) of the samples in the first and the last %.0f s: "
                 "%s (%s) kB -> %s (%s) kB; up to %d sshd-session processes at once" % (
                     s["win"], fmt(s["sess_max_start"]), fmt(s["sess_med_start"]), fmt(s["sess_max_end"]),
                     fmt(s["sess_med_end"]), s["sessions_max"]))
        L.append("- sftp-server RSS, the same windows: %s (%s) kB -> %s (%s) kB" % (
            fmt(s["sftp_max_start"]), fmt(s["sftp_med_start"]), fmt(s["sftp_max_end"]), fmt(s["sftp_med_end"])))
        L.append("- processes left below sshd after the last client (+%s s grace): %d%s" % (
            fmt(infos[sv].get("grace"), 0), len(s["left"]), "".join("\n  - pid %d %s (parent %s %d) `%s` %s" % (
                x["pid"], x["comm"], x["parent"], x["ppid"], x["cmdline"], x["ssh_connection"]) for x in s["left"])))
        if s["killed_rc0"]:
            L.append("- killed copies whose client still exited 0: %d (%s): %d left a partial file, %d the "
                     "destination as it was (a script trusting the exit status would take either for the copy)" % (
                         s["killed_rc0"], ", ".join(s["killed_rc0_tools"]), s["killed_rc0_partial"],
                         s["killed_rc0_unchanged"]))
        if s["client_groups_left"]:
            L.append("- client process groups that outlived their client (killed): %d" % s["client_groups_left"])
        L.append("")
        L.append("| tool | ok | failed | killed | mismatch | MB/s (completed bytes / their seconds) |")
        L.append("|---|---:|---:|---:|---:|---:|")
        for t, v in sorted(s["tools"].items(), key=lambda kv: (infos[sv]["tools"] + [kv[0]]).index(kv[0])):
            L.append("| %s | %d | %d | %d | %d | %s |" % (t, v["ok"], v["failed"] + v["timeout"], v["killed"],
                                                      v["mismatch"], fmt(v["b"] / v["s"] / 1e6 if v["s"] else None, 2)))
        L.append("")
        if s["failures"]:
            L.append("Failed, timed out or mismatched copies (first 10):")
            L.append("")
            for x in s["failures"][:10]:
                L.append("- slot %s #%s %s %s %s bytes: %s (rc %s) %s" % (
                    x["slot"], x["seq"], x["tool"], x["file"], x["bytes"], x["outcome"], x["rc"], x["note"]))
            L.append("")
    if len(order) >= 2:
        a, b = S[order[0]], S[order[1]]
        L.append("## %s against %s" % (order[0], order[1]))
        L.append("")
        L.append("| | %s | %s | %s/%s |" % (order[0], order[1], order[0], order[1]))
        L.append("|---|---:|---:|---:|")

        def row(label, k, nd=1, r=True):
            va, vb = a.get(k), b.get(k)
            L.append("| %s | %s | %s | %s |" % (label, fmt(va, nd), fmt(vb, nd),
                                                fmt(ratio(va, vb), 2) if r else ""))
        row("copies completed", "completed")
        row("copies failed", "failed", r=False)
        row("copies timed out", "timeout", r=False)
        row("copies killed", "killed", r=False)
        row("mismatches", "mismatch", r=False)
        row("MB/s per copy (mean)", "mbs_copy_mean", 2)
        row("MB/s per client (completed bytes / run / clients)", "mbs_per_client", 2)
        row("MB/s aggregate", "mbs_aggregate", 1)
        row("MB/s, files >= 4 MiB", "mbs_big", 2)
        row("median s, copies < 64 KiB", "small_s_median", 2)
        row("listener RSS start, kB", "listener_start")
        row("listener RSS end, kB", "listener_end")
        row("sshd-session max RSS, first window, kB", "sess_max_start")
        row("sshd-session max RSS, last window, kB", "sess_max_end")
        row("sftp-server max RSS, first window, kB", "sftp_max_start")
        row("sftp-server max RSS, last window, kB", "sftp_max_end")
        L.append("| processes left behind | %d | %d | |" % (len(a["left"]), len(b["left"])))
        L.append("")
        L.append("Per tool, MB/s (completed bytes / their seconds):")
        L.append("")
        L.append("| tool | %s | %s | %s/%s |" % (order[0], order[1], order[0], order[1]))
        L.append("|---|---:|---:|---:|")
        for t in infos[order[0]]["tools"]:
            va, vb = a["tools"].get(t), b["tools"].get(t)
            ma = va["b"] / va["s"] / 1e6 if va and va["s"] else None
            mb = vb["b"] / vb["s"] / 1e6 if vb and vb["s"] else None
            L.append("| %s | %s | %s | %s |" % (t, fmt(ma, 2), fmt(mb, 2), fmt(ratio(ma, mb), 2)))
        L.append("")
    # goals
    L.append("## Goals")
    L.append("")
    bad = False
    for sv in order:
        s = S[sv]
        lost = s["mismatch"] + s["failed"] + s["timeout"]
        grow_l = ratio(s["listener_end"], s["listener_start"])
        grow_s = ratio(s["sess_max_end"], s["sess_max_start"])
        L.append("- %s: nothing lost: %s (%d mismatched, %d failed, %d timed out); nothing left behind: %s "
                 "(%d); memory flat: listener end/start %s, sshd-session max last/first window %s" % (
                     sv, "yes" if lost == 0 else "NO", s["mismatch"], s["failed"], s["timeout"],
                     "yes" if not s["left"] else "NO", len(s["left"]), fmt(grow_l, 3), fmt(grow_s, 3)))
        bad = bad or s["mismatch"] > 0 or bool(s["left"])
    if "lfn" in S and "stock" in S:
        r = ratio(S["lfn"]["mbs_per_client"], S["stock"]["mbs_per_client"])
        L.append("- throughput per client, lfn/stock: %s (%s)" % (
            fmt(r, 2), "no lower than stock" if r is not None and r >= 1 else "LOWER than stock"))
    L.append("")
    L.append("Exit status 1 when a completed copy mismatched or a process was left behind: %s." % (
        "1" if bad else "0"))
    text = "\n".join(L) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 1 if bad else 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(rest[0], rest[1], rest[2])
    elif cmd == "reaper":
        reaper(rest[0], rest[1:])
    elif cmd == "run":
        cmd_run(rest)
    elif cmd == "report":
        sys.exit(report(rest[0]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
