#!/usr/bin/env python3
"""regress-bench/bench/bench.py -- the openssh-lfn benchmark suite (`make bench`).

Runs the stock build (build/stock, the same tarball without the series) and
openssh-lfn (openssh-portable) on identical links -- loopback and links made by
regress-bench/wanemu, optionally lossy -- with raw TCP (iperf3, one stream,
and N with --tcp-streams) on the same link as the ceiling, under the kernel's
or each --cc congestion control; scp/sftp TOOL-xN move one file over N
connections (lfn only).  See regress-bench/bench/README.md for what is measured and how
to read the results.  Python 3 stdlib only; matplotlib (python3-matplotlib)
for the plots if it is installed.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (MULTI_TOOLS, TOOLS, fmt_dur, fmt_loss, fmt_mbs,  # noqa: E402,F401
                      tool_conns)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
SSHENV = os.path.join(TOP, "regress-bench", "lib", "sshenv.sh")
WANEMU = os.path.join(TOP, "regress-bench", "wanemu")
CLK_TCK = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20
WINDOW = 2 * MIB          # stock's session channel window (64 x 32 KiB)
ADDR_B = "198.18.0.2"     # wanemu: sshd/iperf3 server side (namespace b)

CIPHERS = ["default", "aes128-gcm", "chacha20", "none"]
CIPHER_NAME = {"aes128-gcm": "aes128-gcm@openssh.com",
               "chacha20": "chacha20-poly1305@openssh.com",
               "aes128-ctr": "aes128-ctr"}
# not in any profile (--ciphers aes128-ctr): a MAC-bound case
CIPHER_MAC = {"aes128-ctr": "umac-64-etm@openssh.com"}

PROFILES = {
    # quick: loopback + 1 Gbit/s at 50 and 100 ms: ssh and scp (SFTP mode)
    # up and down with the default cipher; the cipher matrix and compression
    # are ssh upload on loopback (CPU-bound); on the emulated links ssh
    # upload (the channel window) and scp up and down (window + SFTP
    # pipeline).  Every run lasts >= 5 s and each point needs 2 trees x
    # (warm-ups + 3 runs): the 24-point profile with all 8 tools took 25.5 min
    # on the 2-core VM (2026-11-22), 16 points 15.9 min, these 14 points aim
    # at < 15 min.  ssh-down on the emulated links, scp -O, sftp put/get and
    # rsync: --full or --tools.
    "quick": dict(links=["loopback", "1gbit/50", "1gbit/100"],
                  tools=["ssh-up", "ssh-down", "scp-up", "scp-down"], ciphers=CIPHERS,
                  wan_tools=["ssh-up", "scp-up", "scp-down"],
                  cipher_links=["loopback"], cipher_tools=["ssh-up"],
                  comp_links=["loopback"], comp_tools=["ssh-up"]),
    # full: 1 and 2 Gbit/s x 10/50/100/200 ms; every tool x cipher on
    # loopback, ssh up/down x cipher on the emulated links, compression on
    # ssh upload everywhere.
    "full": dict(links=["loopback"] + ["%s/%d" % (r, t) for r in ("1gbit", "2gbit")
                                       for t in (10, 50, 100, 200)],
                 tools=TOOLS, ciphers=CIPHERS,
                 cipher_links=["*"], cipher_tools=["ssh-up", "ssh-down"],
                 cipher_all_tools_links=["loopback"],
                 comp_links=["*"], comp_tools=["ssh-up"]),
}


# --------------------------------------------------------------------------
# small helpers

def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def die(msg):
    log("bench: error: " + msg)
    sys.exit(1)


def sh(cmd, check=False, **kw):
    """Run a command, return stdout (text), '' on failure unless check."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, shell=isinstance(cmd, str), **kw)
    except OSError as e:
        if check:
            raise
        return ""
    if check and r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (cmd, r.returncode, r.stderr.strip()))
    return r.stdout if r.returncode == 0 else (r.stdout + r.stderr)


def parse_size(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?)(i?b?)?", s.strip().lower())
    if not m:
        raise argparse.ArgumentTypeError("bad size '%s' (e.g. 64M, 2G)" % s)
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2)]
    return int(float(m.group(1)) * mult)


def parse_rate(r):
    """'1gbit' -> bits/s."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)(bit|bps)?", r.strip().lower())
    if not m:
        raise ValueError("bad rate '%s' (e.g. 1gbit)" % r)
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]


# tools whose own fixed cost (a 10 kB transfer) is measured beside ssh true
FIXED_TOOLS = ("scp-up", "scp-down", "scp-O-up", "sftp-put", "sftp-get", "ssh-up", "ssh-down")
FIXED_SIZE = 10240


def tool_dir(tool):
    return "down" if tool_conns(tool)[0].endswith(("-down", "-get")) else "up"


def expand_tools(tools, connections):
    """Tool names with the connections dimension applied: TOOL-xN (literal N)
    and, with --connections, every scp/sftp tool -> one per N (1 = TOOL)."""
    out = []
    for t in tools:
        base = t[:-3] if t.endswith("-xN") else tool_conns(t)[0]
        if t.endswith("-xN"):
            ns = connections or [4]
        elif base in MULTI_TOOLS and connections and t == base:
            ns = connections
        else:
            ns = [tool_conns(t)[1]]
        for n in ns:
            name = base if n == 1 else "%s-x%d" % (base, n)
            if name not in out:
                out.append(name)
    return out


def parse_loss(p):
    """'1e-4' -> 0.0001: random loss per wire packet, 0 <= P < 1."""
    try:
        v = float(p)
    except ValueError:
        v = -1.0
    if not 0.0 <= v < 1.0 or "%" in p:
        raise ValueError("bad loss '%s' (a fraction of wire packets, 0 <= P < 1, e.g. 1e-4)" % p)
    return v


def proc_children():
    """{ppid: [pid, ...]} for every process, from /proc."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        kids.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(int(d))
    return kids


def descendants(pids):
    """The PIDs of all processes below PIDS."""
    kids = proc_children()
    out, todo = [], list(pids)
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


class Link:
    def __init__(self, spec):
        self.spec = spec
        self.loss = 0.0
        if spec == "loopback":
            self.loopback, self.rate, self.rtt = True, None, 0.0
        else:
            m = re.fullmatch(r"([0-9.]+[kmg]?bit)/([0-9.]+)(ms)?(?:/([^/]+))?", spec)
            if not m:
                raise ValueError("bad link '%s' (loopback or RATE/RTT_MS[/LOSS], e.g. 1gbit/50 "
                                 "or 1gbit/100/1e-4)" % spec)
            self.loopback = False
            self.rate = m.group(1)
            self.rtt = float(m.group(2))
            parse_rate(self.rate)
            if m.group(4) is not None:
                # one spelling per loss (0.0001 and 1e-4 are 1e-4), and
                # 1gbit/100/0 is 1gbit/100
                self.loss = parse_loss(m.group(4))
                self.spec = "%s/%s%s" % (m.group(1), m.group(2),
                                         "/" + fmt_loss(self.loss) if self.loss else "")
        self.tag = None

    @property
    def ns_a(self):
        return None if self.loopback else "lfn-%s-a" % self.tag

    @property
    def ns_b(self):
        return None if self.loopback else "lfn-%s-b" % self.tag

    @property
    def addr(self):
        return "127.0.0.1" if self.loopback else ADDR_B

    def window_ceiling(self):
        """stock's window ceiling in MB/s: 2 MiB per RTT."""
        return None if self.loopback or self.rtt <= 0 else WINDOW / (self.rtt / 1e3) / 1e6

    def __str__(self):
        return self.spec


# --------------------------------------------------------------------------
# the environment: keys, sshds, data files

class Env:
    def __init__(self, args, outdir):
        self.args = args
        self.out = outdir
        self.trees = {"stock": args.stock_tree, "lfn": args.lfn_tree}
        if "hpn" in (getattr(args, "trees", None) or ()):    # clients.py, senders.py: no trees
            self.trees["hpn"] = args.hpn_tree
        self.name = "bench-%d" % os.getpid()
        self.T = None
        self.sshd = {}          # tree -> (pid, port, log)
        self.datadir = args.data_dir
        self.tmp = os.path.join(outdir, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        os.makedirs(self.datadir, exist_ok=True)
        self.files = {}
        self.chunk = None
        self.none_ok = {}
        # the size each one-connection tool's runs used, per link, cc,
        # cipher, compression and tree: its TOOL-xN runs use the same, so
        # that xN/x1 compares like with like (the fixed costs of a run weigh
        # more in a smaller transfer)
        self.x1_size = {}
        self.cleanup_links = []
        self.sshd_log_pos = {}

    def bash(self, script, *argv, check=True, stdin=None):
        env = dict(os.environ, LFN_TREE=self.trees["lfn"], STOCK_TREE=self.trees["stock"])
        if self.T:
            env["T"] = self.T
        r = subprocess.run(["bash", "-c", ". %s\n%s" % (shlex.quote(SSHENV), script), "bench"] + list(argv),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, input=stdin)
        if check and r.returncode != 0:
            raise RuntimeError("sshenv: %s: %s%s" % (script.split()[0], r.stdout, r.stderr))
        return r.stdout

    def init(self):
        out = self.bash('lfn_env_init "$1" && echo "$T"', self.name)
        self.T = out.strip().splitlines()[-1]
        # Remote commands run through the login user's shell, and Debian's
        # bash sources ~/.bashrc when started by sshd.  Root's .bashrc here
        # runs `pyenv init` (seconds of CPU per connection), which would be
        # measured as connection setup and server CPU.  Give the bench key an
        # empty HOME (authorized_keys environment=, allowed by the bench
        # sshds' "PermitUserEnvironment HOME").
        self.home = os.path.join(self.T, "home")
        os.makedirs(self.home, exist_ok=True)
        ak = os.path.join(self.T, "authorized_keys")
        keys = open(ak).read().splitlines()
        with open(ak, "w") as f:
            for k in keys:
                f.write('environment="HOME=%s" %s\n' % (self.home, k) if k.strip() else "\n")
        for t in self.trees:
            self.none_ok[t] = subprocess.run(
                [os.path.join(self.trees[t], "ssh"), "-F", "/dev/null", "-G",
                 "-o", "NoneEnabled=yes", "x"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0

    # -- sshd per tree and link; CPU of the server side is read from it
    def start_sshds(self, link, trees):
        self.sshd = {}
        for i, t in enumerate(trees):
            port = 22000 + i if not link.loopback else int(self.bash("lfn_free_port").strip())
            extra = "MaxStartups 100\nPermitUserEnvironment HOME\n"
            if self.none_ok[t]:
                extra += "NoneEnabled yes\n"
            # BENCH_SSHD_OPTIONS: sshd_config lines (";"-separated) for the
            # lfn tree, e.g. "MaxChannelWindow 2M" for an A/B
            if t == "lfn" and os.environ.get("BENCH_SSHD_OPTIONS"):
                extra += "".join(o.strip() + "\n" for o in
                                 os.environ["BENCH_SSHD_OPTIONS"].split(";") if o.strip())
            out = self.bash('lfn_sshd_start "$1" "$2" "$3" && echo "$SSHD_PID $SSHD_LOG"',
                            self.trees[t], str(port), link.ns_b or "", stdin=extra)
            pid, slog = out.strip().splitlines()[-1].split(" ", 1)
            self.sshd[t] = (int(pid), port, slog)
            self.sshd_log_pos[t] = os.path.getsize(slog)

    def sshd_cc_seen(self, tree):
        """The congestion controls TREE's sshd logged since the last call:
        openssh-lfn's sshd says "TCP: congestion control NAME, ..." at the
        end of each connection (patch 0251, LogLevel VERBOSE); stock: []."""
        slog = self.sshd[tree][2]
        with open(slog, "rb") as f:
            f.seek(self.sshd_log_pos.get(tree, 0))
            text = f.read().decode(errors="replace")
            self.sshd_log_pos[tree] = f.tell()
        return sorted(set(re.findall(r"TCP: congestion control ([A-Za-z0-9_]+)", text)))

    def stop_sshds(self):
        # their sessions too: one whose client went with the link (the
        # namespaces are deleted) would wait on its socket forever
        below = descendants([pid for pid, _, _ in self.sshd.values()])
        for pid in [pid for pid, _, _ in self.sshd.values()] + below:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for t, (pid, _, _) in self.sshd.items():
            for _ in range(50):
                if not os.path.exists("/proc/%d" % pid):
                    break
                time.sleep(0.1)
        self.sshd = {}

    # -- data files: urandom, built from one random chunk (see README).  They
    # persist in the data dir across runs (sizes come from a coarse grid, see
    # round_size), bounded by --data-cache: least recently used go first,
    # never one the current point uses (evicting a file the other tree needs
    # next meant rewriting gigabytes between interleaved runs).
    def _scan_datadir(self):
        for n in os.listdir(self.datadir):
            if n.startswith("data-") and n[5:].isdigit():
                path = os.path.join(self.datadir, n)
                if os.path.getsize(path) == int(n[5:]):
                    self.files[int(n[5:])] = (path, os.path.getmtime(path))
                else:
                    os.unlink(path)

    def cached_sizes(self):
        if not self.files:
            self._scan_datadir()
        return list(self.files)

    def datafile(self, size, keep=()):
        if not self.files:
            self._scan_datadir()
        if size in self.files:
            path = self.files[size][0]
            self.files[size] = (path, time.time())
            page_in(path)
            return path
        if self.chunk is None:
            self.chunk = os.path.join(self.datadir, "chunk-64M")
            if not os.path.exists(self.chunk) or os.path.getsize(self.chunk) != 64 * MIB:
                with open(self.chunk + ".tmp", "wb") as f, open("/dev/urandom", "rb") as r:
                    for _ in range(64):
                        f.write(r.read(MIB))
                os.rename(self.chunk + ".tmp", self.chunk)
        path = os.path.join(self.datadir, "data-%d" % size)
        total = sum(self.files)
        for s in sorted(self.files, key=lambda k: self.files[k][1]):
            if total + size <= self.args.data_cache:
                break
            if s in keep:
                continue
            try:
                os.unlink(self.files[s][0])
            except FileNotFoundError:
                pass
            total -= s
            del self.files[s]
        # copy_file_range: the kernel copies from the (cached) chunk, three
        # times faster here than writing from Python (1 GiB: 1.1 s vs 3.6 s)
        with open(self.chunk, "rb") as c, open(path + ".tmp", "wb") as f:
            left = size
            while left > 0:
                n = min(left, 64 * MIB)
                off = 0
                while off < n:
                    try:
                        k = os.copy_file_range(c.fileno(), f.fileno(), n - off, off)
                    except (AttributeError, OSError):
                        c.seek(off)
                        k = f.write(c.read(n - off))
                    if k <= 0:
                        raise RuntimeError("bench: cannot write " + path)
                    off += k
                left -= n
        os.rename(path + ".tmp", path)
        self.files[size] = (path, time.time())
        page_in(path)
        return path


def sshd_children(pid):
    return proc_children().get(pid, [])


def sshd_child_cpu(pid, wait=15.0):
    """cutime+cstime (s) of the sshd listener once all its children are reaped:
    every sshd-session that has exited, with everything it waited for
    (sshd-auth, the post-auth child, the remote command)."""
    t0 = time.monotonic()
    while sshd_children(pid) and time.monotonic() - t0 < wait:
        time.sleep(0.02)
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    # fields[0] is field 3 (state); cutime, cstime are fields 16, 17
    return (int(fields[13]) + int(fields[14])) / CLK_TCK


# --------------------------------------------------------------------------
# one transfer

def client_cmd(env, tree, link, tool, cipher, comp, src, dst):
    """argv of the client command (a bash -c around sshenv.sh's lfn_* for ssh,
    scp and sftp; rsync directly with the same ssh options)."""
    tdir = env.trees[tree]
    opts = []
    if cipher in CIPHER_NAME:
        opts += ["-c", CIPHER_NAME[cipher]]
    if cipher in CIPHER_MAC:
        opts += ["-m", CIPHER_MAC[cipher]]
    elif cipher == "none":
        opts += ["-o", "NoneEnabled=yes"]
        if tree == "hpn":
            opts += ["-o", "NoneSwitch=yes"]     # HPN-SSH asks for both
    if comp:
        opts += ["-C"]
    port = env.sshd[tree][1]
    loc = (["-n", link.ns_a] if link.ns_a else []) + ["-h", link.addr, str(port)]
    stdin = subprocess.DEVNULL
    tool, conns = tool_conns(tool)
    if conns > 1:
        # one transfer over N connections (lfn's scp/sftp, patch 0273)
        opts = ["-X", "connections=%d" % conns] + opts
    # scp/sftp write /dev/null, except in a run that compares connection
    # counts: 0273 splits a file only into a regular file, so there every
    # scp/sftp point (N = 1 too) writes one, removed after each run
    out = file_dst(env) or "/dev/null"
    if tool == "ssh-up":
        argv = ["lfn_ssh", tdir] + loc + opts + ["lfnpeer", "cat > /dev/null"]
        stdin = src
    elif tool == "ssh-down":
        argv = ["lfn_ssh", tdir] + loc + opts + ["lfnpeer", "cat " + shlex.quote(src)]
    elif tool == "scp-up":
        argv = ["lfn_scp", tdir] + loc + ["-q"] + opts + [src, "lfnpeer:" + out]
    elif tool == "scp-O-up":
        argv = ["lfn_scp", tdir] + loc + ["-q", "-O"] + opts + [src, "lfnpeer:" + out]
    elif tool == "scp-down":
        argv = ["lfn_scp", tdir] + loc + ["-q"] + opts + ["lfnpeer:" + src, out]
    elif tool == "sftp-put":
        argv = ["lfn_sftp", tdir] + loc + ["-q", "-b", "-"] + opts + ["lfnpeer"]
        stdin = "put %s %s\n" % (src, out)
    elif tool == "sftp-get":
        argv = ["lfn_sftp", tdir] + loc + ["-q", "-b", "-"] + opts + ["lfnpeer"]
        stdin = "get %s %s\n" % (src, out)
    elif tool == "rsync-up":
        ssh = [os.path.join(tdir, "ssh"), "-F", os.path.join(env.T, "ssh_config"),
               "-p", str(port), "-o", "HostKeyAlias=lfnpeer", "-o", "HostName=" + link.addr] + opts
        pre = ["ip", "netns", "exec", link.ns_a] if link.ns_a else []
        return pre + ["rsync", "-e", " ".join(shlex.quote(a) for a in ssh),
                      src, "lfnpeer:" + dst + "/"], stdin
    elif tool == "true":
        argv = ["lfn_ssh", tdir] + loc + opts + ["lfnpeer", "true"]
    else:
        raise ValueError(tool)
    script = '. %s; T=%s; "$@"' % (shlex.quote(SSHENV), shlex.quote(env.T))
    return ["bash", "-c", script, "bench"] + argv, stdin


def page_in(path):
    """Read path through, so that a run finds it in the page cache.  A
    file left unread for a while may have been paged out (the VMs here
    run DAMON reclaim: pages unused for 60 s go, 128 MiB/s), and the first
    run after that read it from disk: perf put half of the server's CPU
    into cat's copies from freshly read pages."""
    buf = bytearray(4 * MIB)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def file_dst(env):
    """The regular file scp/sftp points write when the run compares
    connection counts (--connections or a TOOL-xN tool), else None."""
    if getattr(env, "connections_run", False):
        return os.path.join(env.tmp, "xfer-dst")
    return None


def run_once(env, tree, link, tool, cipher, comp, size, keep=()):
    """One transfer.  Returns a dict: wall, client/server CPU, rc, and the
    harness's own seconds around it (data file, waiting for sshd to reap)."""
    h0 = time.monotonic()
    src = env.datafile(size, keep) if size else "/dev/null"
    h1 = time.monotonic()
    dst = os.path.join(env.tmp, "rsync-dst")
    if tool == "rsync-up":
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
    argv, stdin = client_cmd(env, tree, link, tool, cipher, comp, src, dst)
    sshd_pid = env.sshd[tree][0]
    s0 = sshd_child_cpu(sshd_pid)
    fin = None
    if isinstance(stdin, str):
        if stdin == src:
            fin = open(src, "rb")
            pin = fin
        else:
            pin = subprocess.PIPE
    else:
        pin = stdin
    errf = open(os.path.join(env.tmp, "client.err"), "w+b")
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=pin, stdout=subprocess.DEVNULL, stderr=errf)
    if pin is subprocess.PIPE:
        p.stdin.write(stdin.encode())
        p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if fin:
        fin.close()
    h2 = time.monotonic()
    s1 = sshd_child_cpu(sshd_pid)
    cc_seen = env.sshd_cc_seen(tree)
    h3 = time.monotonic()
    errf.seek(0)
    err = errf.read().decode(errors="replace").strip()
    errf.close()
    fd = file_dst(env)
    if fd and os.path.exists(fd):
        if p.returncode == 0 and size and os.path.getsize(fd) != size:
            p.returncode = -100
        os.unlink(fd)
    if tool == "rsync-up":
        ok = os.path.exists(os.path.join(dst, os.path.basename(src))) and \
            os.path.getsize(os.path.join(dst, os.path.basename(src))) == size
        shutil.rmtree(dst, ignore_errors=True)
        if not ok and p.returncode == 0:
            p.returncode = -100
    return dict(wall=wall, cpu_client=ru.ru_utime + ru.ru_stime,
                cpu_client_user=ru.ru_utime, cpu_client_sys=ru.ru_stime,
                cpu_server=s1 - s0, rc=p.returncode, stderr=err[-300:], cc_seen=cc_seen,
                harness_s=dict(data=round(h1 - h0, 2), pre=round(t0 - h1, 2), post=round(h3 - h2, 2)))


# --------------------------------------------------------------------------
# raw TCP ceiling: iperf3, one stream (and -P N with --tcp-streams)

def netns_prefixes(link):
    """Command prefixes that run in the link's client (a) and server (b) namespaces."""
    return ([["ip", "netns", "exec", ns] if ns else [] for ns in (link.ns_a, link.ns_b)])


def reap(srv):
    """Wait for a raw-TCP server process, killing it if it does not exit."""
    try:
        srv.wait(timeout=5)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()


def tcp_ceiling(env, link, direction, seconds, streams=1):
    port = 5201 if not link.loopback else int(env.bash("lfn_free_port").strip())
    pre_a, pre_b = netns_prefixes(link)
    srv = subprocess.Popen(pre_b + ["iperf3", "-s", "-1", "-p", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        out = None
        for _ in range(50):
            r = subprocess.run(pre_a + ["iperf3", "-c", link.addr, "-p", str(port), "-t", str(seconds),
                                        "-J"] + (["-R"] if direction == "down" else []) +
                               (["-P", str(streams)] if streams > 1 else []),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                o = json.loads(r.stdout)
            except ValueError:
                o = {}
            if r.returncode == 0 and "sum_received" in o.get("end", {}):
                out = o
                break
            time.sleep(0.1)
        if not out:
            return None
        e = out["end"]
        bps = e["sum_received"]["bits_per_second"]
        # the algorithm iperf3's sockets used (both ends), to check it
        cc_seen = sorted({e[k] for k in ("sender_tcp_congestion", "receiver_tcp_congestion") if e.get(k)})
        return dict(mbs=bps / 8 / 1e6, bytes=e["sum_received"]["bytes"],
                    seconds=e["sum_received"]["seconds"], streams=streams, cc_seen=cc_seen,
                    retransmits=e.get("sum_sent", {}).get("retransmits"),
                    cpu_host=e.get("cpu_utilization_percent", {}).get("host_total"),
                    cpu_remote=e.get("cpu_utilization_percent", {}).get("remote_total"))
    finally:
        reap(srv)


def tcp_same_bytes(env, link, direction, path, streams=1):
    """Raw TCP moving the file itself over STREAMS connections (tcpbytes.py),
    for --tcp-bytes."""
    port = 5202 if not link.loopback else int(env.bash("lfn_free_port").strip())
    pre_a, pre_b = netns_prefixes(link)
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tcpbytes.py")
    srv = subprocess.Popen(pre_b + [sys.executable, helper, "serve", str(port), direction, path, str(streams)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        if srv.stdout.readline().strip() != "ready":
            return None
        r = subprocess.run(pre_a + [sys.executable, helper, "client", link.addr, str(port), direction, path,
                                   str(streams)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        if r.returncode != 0:
            return None
        return json.loads(r.stdout)
    except (ValueError, subprocess.TimeoutExpired):
        return None
    finally:
        reap(srv)


# --------------------------------------------------------------------------
# wanemu

def wanemu_up(env, link):
    up = os.path.join(WANEMU, "wanemu-up")
    if not os.access(os.path.join(WANEMU, "wanemu"), os.X_OK):
        log("bench: building the WAN emulator (make -C regress-bench/wanemu)")
        subprocess.run(["make", "-C", WANEMU], stdout=subprocess.DEVNULL, check=False)
    if not os.access(up, os.X_OK) or not os.access(os.path.join(WANEMU, "wanemu"), os.X_OK):
        return "wanemu not available (regress-bench/wanemu)"
    link.tag = "b%d%s" % (os.getpid() % 100000, re.sub(r"[^0-9a-z]", "", link.spec))[:20]
    r = subprocess.run([up, "-n", link.tag, "--rtt", "%g" % link.rtt, "--rate", link.rate,
                        "--tcp-buffers", env.args.tcp_buffers, "--replace", "--quiet"] +
                       (["--loss", "%.10g" % link.loss] if link.loss else []),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return "wanemu-up failed: " + r.stdout.strip()[-500:]
    env.cleanup_links.append(link)
    return None


def wanemu_down(env, link):
    if link.tag and link in env.cleanup_links:
        r = subprocess.run([os.path.join(WANEMU, "wanemu-down"), "-n", link.tag, "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env.cleanup_links.remove(link)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return None
    return None


# --------------------------------------------------------------------------
# congestion control, per link: --cc sets it in both namespaces

def link_down(env, link, machine):
    """Take LINK down; its emulator's statistics go into machine["links"]."""
    st = wanemu_down(env, link)
    if st is not None:
        machine["links"][link.spec]["wanemu_stats"] = st


def read_cc(ns=None):
    pre = ["ip", "netns", "exec", ns] if ns else []
    return sh(pre + ["cat", "/proc/sys/net/ipv4/tcp_congestion_control"]).strip()


def route_congctl(ns, peer, cc):
    """Set (cc) or clear (None) the congctl attribute of the route to PEER in
    namespace NS (the TUN's /32 route wanemu-up made).  Returns an error or None."""
    cur = sh(["ip", "-n", ns, "route", "show", peer + "/32"]).split()
    if not cur or cur[0] != peer:
        return "no route to %s in %s" % (peer, ns)
    i = cur.index("congctl") if "congctl" in cur else -1
    if i >= 0:
        del cur[i:i + (3 if cur[i + 1] == "lock" else 2)]
    r = subprocess.run(["ip", "-n", ns, "route", "replace"] + cur + (["congctl", cc] if cc else []),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return None if r.returncode == 0 else "ip route replace %s: %s" % (" ".join(cur), r.stdout.strip())


def set_cc(link, cc):
    """Make the link's TCP connections use congestion control CC (None: the
    kernel's, untouched).  Returns (name in use, how, error).  Loopback is
    the host's own stack: never changed."""
    if link.loopback:
        return read_cc(), "host", None
    pairs = ((link.ns_a, ADDR_B), (link.ns_b, "198.18.0.1"))
    # a previous --cc value may have set the routes' congctl: clear it
    for ns, peer in pairs:
        err = route_congctl(ns, peer, None)
        if err:
            return None, None, err
    if cc is None:
        names = {read_cc(ns) for ns, _ in pairs}
        if len(names) != 1:
            return None, None, "the namespaces use different congestion controls: %s" % ",".join(names)
        return names.pop(), "kernel default", None
    avail = "/proc/sys/net/ipv4/tcp_available_congestion_control"
    if cc not in sh(["cat", avail]).split():
        why = "modprobe not found"
        if shutil.which("modprobe"):
            why = sh(["modprobe", "tcp_" + cc]).strip() or "loaded"
        have = sh(["cat", avail]).strip()
        if cc not in have.split():
            return None, None, ("congestion control %s is not available in this kernel "
                                "(net.ipv4.tcp_available_congestion_control: %s; modprobe tcp_%s: %s)"
                                % (cc, have, cc, why))
    for ns, _ in pairs:
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                        "net.ipv4.tcp_congestion_control=" + cc],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if all(read_cc(ns) == cc for ns, _ in pairs):
        return cc, "sysctl", None
    # The kernel lets a namespace other than the host's choose only an
    # algorithm listed in the host's net.ipv4.tcp_allowed_congestion_control
    # (EPERM otherwise; e.g. cubic with Debian's "reno bbr" when bbr is the
    # default).  The route's congctl attribute has no such rule and stays in
    # the namespace: the connections made and accepted over it use CC.
    for ns, peer in pairs:
        err = route_congctl(ns, peer, cc)
        if err:
            return None, None, ("cannot set net.ipv4.tcp_congestion_control=%s in %s (allowed: %s) "
                                "nor on its route: %s" % (cc, ns, sh(["cat", "/proc/sys/net/ipv4/"
                                "tcp_allowed_congestion_control"]).strip(), err))
    return cc, "route congctl (not in net.ipv4.tcp_allowed_congestion_control)", None


# --------------------------------------------------------------------------
# the machine

def machine_info(env, links):
    info = {}
    cpu = sh(["lscpu"])
    for k in ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
              "Socket(s)", "CPU max MHz", "Hypervisor vendor"):
        m = re.search(r"^%s:\s*(.*)$" % re.escape(k), cpu, re.M)
        if m:
            info[k] = m.group(1).strip()
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    info["cpu_flags"] = {f: f in flags for f in ("aes", "vaes", "pclmulqdq", "vpclmulqdq",
                                                  "avx", "avx2", "avx512f", "sha_ni")}
    info["nproc"] = os.cpu_count()
    info["kernel"] = platform.release()
    info["os"] = sh("sed -n 's/^PRETTY_NAME=//p' /etc/os-release").strip().strip('"')
    info["loadavg_start"] = open("/proc/loadavg").read().strip()
    info["memory"] = sh("free -h | sed -n 2p").strip()
    info["openssl_cli"] = sh(["openssl", "version"]).strip()
    for t, d in env.trees.items():
        info["ssh -V " + t] = sh([os.path.join(d, "ssh"), "-V"]).strip() or \
            subprocess.run([os.path.join(d, "ssh"), "-V"], capture_output=True, text=True).stderr.strip()
        info["tree " + t] = d
        info["none cipher " + t] = env.none_ok.get(t)
    info["rsync"] = sh(["rsync", "--version"]).splitlines()[0] if shutil.which("rsync") else None
    info["iperf3"] = sh(["iperf3", "--version"]).splitlines()[0] if shutil.which("iperf3") else None
    info["python"] = sys.version.split()[0]
    sysctls = ["net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
               "net.ipv4.tcp_congestion_control", "net.core.default_qdisc",
               "net.ipv4.tcp_window_scaling", "net.ipv4.tcp_notsent_lowat",
               "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_mtu_probing"]
    info["sysctl"] = {s: sh(["sysctl", "-n", s]).strip() for s in sysctls}
    info["mtu lo"] = sh("cat /sys/class/net/lo/mtu").strip()
    # tarball and series
    tb = os.path.join(TOP, "build", "dist")
    info["tarball"] = {}
    if os.path.isdir(tb):
        for f in sorted(os.listdir(tb)):
            if f.endswith((".tar.gz", ".tgz")):
                info["tarball"][f] = sh(["sha256sum", os.path.join(tb, f)]).split()[0:1]
    info["upstream/pin"] = sh(["cat", os.path.join(TOP, "upstream", "pin")]).strip()
    info["git describe"] = (sh(["git", "-C", TOP, "describe", "--always", "--dirty", "--tags"]).strip()
                            .splitlines() or [""])[0]
    if "fatal" in info["git describe"]:
        info["git describe"] = "(no commits)"
    patches = os.path.join(TOP, "patches")
    plist = []
    if os.path.isdir(patches):
        for f in sorted(os.listdir(patches)):
            if f.endswith(".patch"):
                plist.append("%s %s" % (f, sh(["sha256sum", os.path.join(patches, f)]).split()[0][:16]))
    info["patches"] = plist
    applied = os.path.join(env.trees["lfn"], ".openssh-lfn-series")
    if os.path.exists(applied):
        info["lfn tree series stamp"] = open(applied).read().strip().splitlines()[:40]
    return info


def link_info(link, tcp_buffers):
    """MTU and TCP sysctls inside the link's client namespace."""
    if link.loopback:
        return {"mtu": sh("cat /sys/class/net/lo/mtu").strip(), "tcp buffers": "host (loopback)"}
    pre = "ip netns exec %s " % link.ns_a
    d = {"mtu": sh(pre + "sh -c 'for i in /sys/class/net/*; do "
                         "[ $(basename $i) = lo ] || echo $(basename $i)=$(cat $i/mtu); done'").strip(),
         "tcp buffers": tcp_buffers}
    for s in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_max", "net.core.wmem_max",
              "net.ipv4.tcp_congestion_control"):
        d[s] = sh(pre + "sysctl -n " + s).strip()
    try:
        d["link.env"] = open("/run/lfn-wanemu/%s/link.env" % link.tag).read().strip()
    except OSError:
        pass
    return d


# --------------------------------------------------------------------------
# the matrix

def build_points(args, prof):
    """[(link, tool, cipher, comp)] in run order (grouped by link)."""
    pts = []
    explicit_ciphers = args.ciphers is not None
    ciphers = args.ciphers or prof["ciphers"]
    tools = expand_tools(args.tools or prof["tools"], args.connections)

    def match(lst, link):
        return "*" in lst or link.spec in lst or (not link.loopback and "wan" in lst)

    for link in args.link_objs:
        for tool in tools:
            if not args.tools and not link.loopback and \
                    tool_conns(tool)[0] not in prof.get("wan_tools", tools):
                continue
            for c in ciphers:
                if c != "default" and not explicit_ciphers:
                    if not match(prof["cipher_links"], link):
                        continue
                    if tool not in prof["cipher_tools"] and not \
                            match(prof.get("cipher_all_tools_links", []), link):
                        continue
                pts.append((link, tool, c, False))
        if not args.no_compression:
            for tool in tools:
                if tool in prof["comp_tools"] and (match(prof["comp_links"], link) or args.compression):
                    pts.append((link, tool, "default", True))
    return pts


def results_log(path):
    """(rows, emit, file): emit(row) stamps row with the time, keeps it in
    rows and appends it to the JSON-lines file PATH at once (a run cut
    short keeps what it measured); the caller closes file."""
    f = open(path, "a")
    rows = []

    def emit(row):
        row["time"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        rows.append(row)
        f.write(json.dumps(row, sort_keys=True) + "\n")
        f.flush()
    return rows, emit, f


def median(v):
    return statistics.median(v) if v else None


class Progress:
    def __init__(self, total_units, est_unit):
        self.total = total_units
        self.done = 0
        self.t0 = time.monotonic()
        self.est_unit = est_unit
        self.tty = sys.stderr.isatty()

    def line(self, what):
        el = time.monotonic() - self.t0
        per = el / self.done if self.done else self.est_unit
        eta = per * (self.total - self.done)
        msg = "[%d/%d %3d%% %s elapsed, ETA %s] %s" % (self.done, self.total,
                                                       100 * self.done // max(1, self.total),
                                                       fmt_dur(el), fmt_dur(eta), what)
        if self.tty:
            sys.stderr.write("\r\033[K" + msg[:shutil.get_terminal_size().columns - 1])
        else:
            sys.stderr.write(msg + "\n")
        sys.stderr.flush()

    def note(self, msg):
        if self.tty:
            sys.stderr.write("\r\033[K")
        log(msg)


def fit_cost(pts):
    """(fixed seconds, bytes/s) from warm-ups [(size, net seconds)]: the line
    through the two largest if it makes sense, else size / time of the largest."""
    pts = sorted(pts)
    s2, t2 = pts[-1]
    if len(pts) >= 2:
        s1, t1 = pts[-2]
        if s2 >= 1.5 * s1 and t2 > t1:
            rate = (s2 - s1) / (t2 - t1)
            fixed = t2 - s2 / rate
            if 0.0 <= fixed <= 0.6 * t2:
                return fixed, rate
    return 0.0, s2 / t2


def plan_size(fit, setup, args, cached=()):
    """Size for a run that lasts --target-time seconds (wall clock, setup
    included), given the fit; capped by --max-time and --max-size.  A data
    file already there is taken instead when it plans for between
    --min-time + 10 % and --target-time + 30 % (writing a new one costs
    seconds per GB, the largest share of the quick profile's time once)."""
    fixed, rate = fit

    def size_for(t):
        return min(rate * max(t - setup - fixed, 0.5), rate * args.max_time, args.max_size)
    want = size_for(args.target_time)
    lo, hi = size_for(args.min_time * 1.1), size_for(args.target_time * 1.3)
    have = [s for s in cached if lo <= s <= hi]
    if have:
        return min(have, key=lambda s: abs(s - want))
    up = round_size(want)
    down = round_size(up - 1) if up > 4 * MIB else up
    return down if down >= lo else up


def cpu_load(n):
    """Start n busy loops (a competing CPU load, --cpu-load)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             stdin=subprocess.DEVNULL) for _ in range(n)]


def cpu_load_stop(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    del procs[:]


def round_size(b):
    """Round up to a coarse grid, so that points and trees share data files
    (each new size is gigabytes to write): 4 MiB steps up to 64 MiB, above
    that 8 steps per power of two (at most 12.5 % more than asked for)."""
    b = int(b)
    if b <= 64 * MIB:
        step = 4 * MIB
    else:
        step = (1 << (b.bit_length() - 1)) // 8
    return max(4 * MIB, -(-b // step) * step)


def main():
    ap = argparse.ArgumentParser(
        prog="regress-bench/bench/run",
        description="stock OpenSSH vs openssh-lfn vs raw TCP on identical links "
                    "(make bench BENCH_ARGS='...')")
    ap.add_argument("--full", action="store_true", help="the full profile (hours) instead of quick")
    ap.add_argument("--links", help="comma list: loopback and/or RATE/RTT_MS, e.g. loopback,1gbit/50")
    ap.add_argument("--rates", help="comma list of rates for emulated links (with --rtts), e.g. 1gbit,2gbit")
    ap.add_argument("--rtts", help="comma list of RTTs in ms (with --rates), e.g. 10,50,100,200")
    ap.add_argument("--no-loopback", action="store_true", help="with --rates/--rtts: no loopback link")
    ap.add_argument("--losses", help="comma list of random loss rates per wire packet (both directions) "
                    "for every emulated link given without one, e.g. 0,1e-5,1e-4 (a link RATE/RTT/LOSS "
                    "has its own)")
    ap.add_argument("--cc", help="comma list of TCP congestion controls, e.g. cubic,bbr: every emulated "
                    "link is measured with each (set in both of its namespaces, for stock, lfn and "
                    "iperf3 alike); default: the kernel's, unchanged")
    ap.add_argument("--tcp-streams", default="1",
                    help="comma list of raw TCP stream counts (iperf3 -P N), e.g. 1,4 (1)")
    ap.add_argument("--connections", help="comma list of connection counts N for the scp/sftp tools: "
                    "TOOL-xN = TOOL with -X connections=N (lfn only), 1 = TOOL itself, e.g. 1,4; "
                    "TOOL-xN in --tools takes N from here (default 4)")
    ap.add_argument("--tools", help="comma list of: " + ",".join(TOOLS) +
                    ", and TOOL-xN / TOOL-xNUMBER for " + ",".join(MULTI_TOOLS))
    ap.add_argument("--ciphers", help="comma list of: default,aes128-gcm,chacha20,none (applies to every "
                    "tool and link; default: the profile's cipher matrix)")
    ap.add_argument("--no-compression", action="store_true", help="no compression (-C) points")
    ap.add_argument("--compression", action="store_true", help="compression point on every link")
    ap.add_argument("--trees", default="stock,lfn",
                    help="comma list: stock,lfn,hpn (default stock,lfn; hpn: HPN-SSH, see --hpn-tree)")
    ap.add_argument("--runs", type=int, default=3, help="measured runs per point (3)")
    ap.add_argument("--no-warmup", action="store_true", help="no warm-up run (needs --size)")
    ap.add_argument("--size", type=parse_size, help="fixed transfer size (e.g. 512M); default: "
                    "calibrated per point for --target-time")
    ap.add_argument("--target-time", type=float, default=5.6,
                    help="planned seconds per run, connection setup included (5.6)")
    ap.add_argument("--min-time", type=float, default=5.0,
                    help="a run shorter than this is re-done with more data (5)")
    ap.add_argument("--max-time", type=float, default=90.0, help="cap on a run's expected seconds (90)")
    ap.add_argument("--max-size", type=parse_size, default=parse_size("8G"), help="cap on the size (8G)")
    ap.add_argument("--tcp-seconds", type=int, default=5, help="iperf3 -t per run (5)")
    ap.add_argument("--tcp-bytes", action="store_true",
                    help="with --size: raw TCP moves the same file (tcpbytes.py; N streams take 1 MiB "
                         "chunks of it from a shared counter) instead of iperf3 -t")
    ap.add_argument("--tcp-runs", type=int, default=1, help="iperf3 runs per link and direction (1)")
    ap.add_argument("--no-tcp", action="store_true", help="skip the raw TCP ceiling")
    ap.add_argument("--tcp-buffers", default="raised",
                    help="TCP buffer maxima in the emulated links' namespaces: raised (128 MiB, default), "
                         "debian (an untuned host: tcp_rmem 6291456, tcp_wmem 4194304), host, or RMEM:WMEM")
    ap.add_argument("--out", help="results directory (default build/bench/<timestamp>, "
                    "with build/bench/latest pointing at it)")
    ap.add_argument("--data-dir", help="where the random data files live (build/bench/data)")
    ap.add_argument("--data-cache", type=parse_size, default=parse_size("16G"),
                    help="max bytes of cached data files (16G)")
    ap.add_argument("--cpu-load", type=int, default=0, metavar="N",
                    help="N busy loops (one core each, nice 0) run from the first measurement to "
                         "the last: ssh, sshd and raw TCP alike compete with them for the CPU (0)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--dry-run", action="store_true", help="print the points and exit")
    ap.add_argument("--lfn-tree", default=os.environ.get("LFN_TREE", os.path.join(TOP, "openssh-portable")))
    ap.add_argument("--stock-tree", default=os.environ.get("STOCK_TREE", os.path.join(TOP, "build", "stock")))
    hpn_default = os.path.join(TOP, "build", "hpn", "tree")
    ap.add_argument("--hpn-tree", default=os.environ.get("HPN_TREE") or
                    (hpn_default if os.path.isdir(hpn_default) else None),
                    help="HPN-SSH programs under OpenSSH's names (default $HPN_TREE, or "
                         "build/hpn/tree from regress-bench/bench/build-hpn)")
    args = ap.parse_args()
    if args.cpu_load < 0:
        ap.error("--cpu-load: a number of busy loops, 0 or more")
    if not re.fullmatch(r"raised|debian|host|[0-9]+:[0-9]+", args.tcp_buffers):
        ap.error("--tcp-buffers: raised, debian, host or RMEM:WMEM")

    prof_name = "full" if args.full else "quick"
    prof = PROFILES[prof_name]
    if args.rates or args.rtts:
        rates = (args.rates or "1gbit").split(",")
        rtts = (args.rtts or "50,100").split(",")
        specs = ([] if args.no_loopback else ["loopback"]) + \
            ["%s/%s" % (r, t) for r in rates for t in rtts]
    elif args.links:
        specs = args.links.split(",")
    else:
        specs = prof["links"]
    try:
        if args.losses:
            # every emulated link without a loss of its own, once per loss
            # (1gbit/100/0 is 1gbit/100)
            losses = args.losses.split(",")
            for x in losses:
                parse_loss(x)
            out = []
            for s in specs:
                if s == "loopback" or s.count("/") >= 2:
                    out.append(s)
                else:
                    out += [s + "/" + x for x in losses]
            specs = out
        args.link_objs = []
        for s in specs:
            link = Link(s)
            if link.spec not in [l.spec for l in args.link_objs]:
                args.link_objs.append(link)
    except ValueError as e:
        die(str(e))

    def int_list(opt, v):
        try:
            out = [int(x) for x in v.split(",")]
        except ValueError:
            out = [0]
        if min(out) < 1:
            die("--%s: bad value '%s' (comma list of counts >= 1, e.g. 1,4)" % (opt, v))
        return sorted(set(out))
    args.tcp_streams = int_list("tcp-streams", args.tcp_streams)
    if args.connections is not None:
        args.connections = int_list("connections", args.connections)
    if args.cc is not None:
        cc = []
        for c in args.cc.split(","):
            if not re.fullmatch(r"[a-z0-9_]{1,15}", c):
                die("--cc: bad congestion control name '%s' (a kernel algorithm: cubic, bbr, reno, ...)" % c)
            if c not in cc:
                cc.append(c)
        args.cc = cc
    if args.tools is not None:
        args.tools = args.tools.split(",")
        bad = [t for t in args.tools if t not in TOOLS and not
               re.fullmatch(r"(%s)-x(N|0*[1-9][0-9]*)" % "|".join(MULTI_TOOLS), t)]
        if bad:
            die("--tools: unknown %s (choose from %s, or TOOL-xN for %s)" %
                (",".join(bad), ",".join(TOOLS), ",".join(MULTI_TOOLS)))
    for opt, allowed in (("ciphers", CIPHERS + ["aes128-ctr"]), ("trees", ["stock", "lfn", "hpn"])):
        v = getattr(args, opt)
        if v is not None:
            v = v.split(",")
            bad = [x for x in v if x not in allowed]
            if bad:
                die("--%s: unknown %s (choose from %s)" % (opt, ",".join(bad), ",".join(allowed)))
            setattr(args, opt, v)
    if args.no_warmup and not args.size:
        die("--no-warmup needs --size (the warm-up calibrates the size)")
    if args.tcp_bytes and not args.size:
        die("--tcp-bytes needs --size (TCP moves that file)")
    trees = args.trees

    if "hpn" in trees and not args.hpn_tree:
        die("--trees hpn: no HPN-SSH tree (--hpn-tree, HPN_TREE, or build it: "
            "regress-bench/bench/build-hpn SOURCE)")
    for t in trees:
        d = {"stock": args.stock_tree, "lfn": args.lfn_tree, "hpn": args.hpn_tree}[t]
        for prog in ("ssh", "sshd", "sshd-session", "scp", "sftp", "sftp-server"):
            if not os.access(os.path.join(d, prog), os.X_OK):
                die("%s build incomplete: %s/%s missing (make all)" % (t, d, prog))
    for prog in ("iperf3", "rsync", "ip"):
        if not shutil.which(prog):
            if prog == "iperf3" and args.no_tcp:
                continue
            if prog == "rsync" and "rsync-up" not in (args.tools or prof["tools"]):
                continue
            die("%s not found (apt-get install -y %s)" % (prog, "iproute2" if prog == "ip" else prog))

    points = build_points(args, prof)

    def link_ccs(link):
        """--cc applies to the emulated links; loopback is the host's stack."""
        return [None] if link.loopback or not args.cc else args.cc
    n_points = sum(len(link_ccs(p[0])) for p in points)
    n_tcp = 0 if args.no_tcp and not args.tcp_bytes else 2 * len(args.tcp_streams)
    lfn_only = [p[1] for p in points if tool_conns(p[1])[1] > 1]
    est_per_point = len(trees) * (args.runs * (args.target_time + 0.3) + (2.0 if args.no_warmup else 12.0))
    # the estimate: the points each tree runs (-xN: lfn only), raw TCP
    est = sum(len(link_ccs(p[0])) * (est_per_point / len(trees)) *
              len([t for t in trees if t == "lfn" or p[1] not in lfn_only]) for p in points) + \
        sum(len(link_ccs(l)) * n_tcp * args.tcp_runs * (args.tcp_seconds + 1) for l in args.link_objs)
    if args.dry_run:
        for link in args.link_objs:
            for cc in link_ccs(link):
                for p in points:
                    if p[0] is link:
                        print("%-15s %s%-11s %-11s %s%s" % (
                            link, "%-6s " % (cc or "host") if args.cc else "", p[1], p[2],
                            "comp" if p[3] else "",
                            "(lfn only)" if p[1] in lfn_only and "stock" in trees else ""))
        if n_tcp:
            print("raw TCP per link%s: up and down, %s stream(s)" % (
                " and cc" if args.cc else "", ",".join(map(str, args.tcp_streams))))
        print("%d points x %d trees, roughly %s" % (n_points, len(trees), fmt_dur(est)))
        return 0

    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    benchroot = os.path.join(TOP, "build", "bench")
    # absolute: remote commands (rsync's receiver) run in the login's home
    outdir = os.path.abspath(args.out) if args.out else os.path.join(benchroot, ts)
    os.makedirs(outdir, exist_ok=True)
    if not args.out:
        latest = os.path.join(benchroot, "latest")
        try:
            os.unlink(latest)
        except FileNotFoundError:
            pass
        os.symlink(ts, latest)
    args.data_dir = args.data_dir or os.path.join(benchroot, "data")
    env = Env(args, outdir)
    env.connections_run = any(tool_conns(pt[1])[1] > 1 for pt in points)
    env.init()
    log("bench: %s profile, %d points x %d trees (%s), results in %s" %
        (prof_name, len(points), len(trees), ",".join(trees), outdir))
    log("bench: TCP buffers on emulated links: %s" % args.tcp_buffers)
    if "none" in (args.ciphers or prof["ciphers"]):
        for t in trees:
            if not env.none_ok[t]:
                log("bench: %s has no none cipher (ssh -G -o NoneEnabled=yes fails): "
                    "its none points are skipped" % t)
    if lfn_only and "stock" in trees:
        log("bench: stock's scp/sftp have no -X connections=N: its %s points are skipped (lfn only)"
            % ",".join(sorted(set(lfn_only))))
    if args.cc and any(l.loopback for l in args.link_objs):
        log("bench: loopback: --cc does not apply (it would change the host's own default): "
            "measured with the host's %s" % read_cc())

    res_path = os.path.join(outdir, "results.jsonl")
    rows, emit, resf = results_log(res_path)

    machine = machine_info(env, args.link_objs)
    machine["profile"] = prof_name
    machine["argv"] = sys.argv[1:]
    machine["links"] = {}
    missing = []
    prog = Progress(n_points * len(trees) + sum(n_tcp * len(link_ccs(l)) for l in args.link_objs),
                    est_per_point / max(1, len(trees)))
    wall0 = time.monotonic()

    load = cpu_load(args.cpu_load)
    if load:
        log("bench: %d busy loop(s) compete for the CPU (--cpu-load)" % len(load))
        machine["cpu load"] = "%d busy loop(s), nice 0 (--cpu-load)" % len(load)

    def cleanup(*_):
        cpu_load_stop(load)
        env.stop_sshds()
        for l in list(env.cleanup_links):
            wanemu_down(env, l)

    def on_signal(signum, _frame):
        prog.note("bench: interrupted, cleaning up")
        cleanup()
        sys.exit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    try:
        for link in args.link_objs:
            lpoints = [p for p in points if p[0] is link]
            units = len(lpoints) * len(trees) + n_tcp      # per cc
            if not link.loopback:
                err = wanemu_up(env, link)
                if err:
                    prog.note("bench: %s: skipped: %s" % (link, err))
                    missing.append("%s: %s" % (link, err))
                    prog.done += units * len(link_ccs(link))
                    continue
            machine["links"][link.spec] = link_info(link, args.tcp_buffers)
            env.start_sshds(link, trees)
            try:
                for want_cc in link_ccs(link):
                    # the congestion control: set (--cc) or the kernel's,
                    # by name; never measure another than the one recorded
                    cc, how, err = set_cc(link, want_cc)
                    lname = "%s %s" % (link, cc or want_cc) if args.cc else str(link)
                    if err:
                        prog.note("bench: %s: skipped: %s" % (lname, err))
                        missing.append("%s: %s" % (lname, err))
                        prog.done += units
                        continue
                    machine["links"][link.spec].setdefault("congestion control", {})[cc] = how
                    tcp = measure_tcp(env, args, prog, link, cc, lname, emit, missing)
                    setup = {}
                    for (_, tool, cipher, comp) in lpoints:
                        run_point(env, args, prog, link, cc, lname, tool, cipher, comp, trees, tcp,
                                  setup, emit, missing)
            finally:
                env.stop_sshds()
                if not link.loopback:
                    link_down(env, link, machine)
    finally:
        cleanup()
        resf.close()
    wall = time.monotonic() - wall0
    if prog.tty:
        sys.stderr.write("\n")
    machine["wall_seconds"] = round(wall, 1)
    machine["loadavg_end"] = open("/proc/loadavg").read().strip()
    machine["missing"] = missing
    with open(os.path.join(outdir, "machine.json"), "w") as f:
        json.dump(machine, f, indent=1, sort_keys=True)
    import report
    report.write_all(outdir, rows, machine, plots=not args.no_plots)
    shutil.rmtree(env.tmp, ignore_errors=True)
    if env.T and os.path.basename(env.T) == env.name:
        shutil.rmtree(env.T, ignore_errors=True)
    log("bench: done in %s: %s" % (fmt_dur(wall), outdir))
    for m in missing:
        log("bench: missing: " + m)
    return 0


def measure_tcp(env, args, prog, link, cc, lname, emit, missing):
    """The raw TCP ceiling on the link, both directions, one stream and
    -P N for each N of --tcp-streams: {(dir, streams): median MB/s}."""
    tcp = {}
    if args.no_tcp and not args.tcp_bytes:
        return tcp
    for d in ("up", "down"):
        for n in args.tcp_streams:
            if args.tcp_bytes:
                path = env.datafile(args.size)
                tname = "tcpbytes" if n == 1 else "tcpbytes-P%d" % n
                what = "the same %s bytes%s" % (args.size, "" if n == 1 else ", %d streams sharing 1 MiB chunks" % n)
                measure = lambda: tcp_same_bytes(env, link, d, path, n)
            else:
                tname = "iperf3" if n == 1 else "iperf3-P%d" % n
                what = "iperf3 -t %d, %s" % (args.tcp_seconds, "one stream" if n == 1 else "%d streams" % n)
                measure = lambda: tcp_ceiling(env, link, d, args.tcp_seconds, n)
            prog.line("%s: raw TCP (%s) %s" % (lname, what, d))
            vals = []
            for i in range(args.tcp_runs):
                r = measure()
                if r and r.get("cc_seen") and r["cc_seen"] != [cc]:
                    missing.append("%s: %s %s used congestion control %s, not %s: not counted" %
                                   (lname, tname, d, ",".join(r["cc_seen"]), cc))
                    prog.note("bench: " + missing[-1])
                    r = None
                if r:
                    vals.append(r["mbs"])
                    row = dict(kind="tcp", link=link.spec, rtt_ms=link.rtt, rate=link.rate, loss=link.loss,
                               cc=cc, tree="tcp", tool="%s-%s" % (tname, d), dir=d, run=i, streams=1)
                    row.update(r)
                    emit(row)
            tcp[(d, n)] = median(vals)
            if not vals:
                missing.append("%s: %s %s failed" % (lname, tname, d))
            prog.done += 1
    return tcp


def fail_hint(tool, err):
    """A -xN point on a tree whose scp/sftp do not know -X connections=N."""
    if tool_conns(tool)[1] > 1 and \
            re.search(r"(?i)(invalid|unknown|unsupported)[^\n]*-X|-X[^\n]*(invalid|unknown|unsupported)", err):
        return " [this tree's scp/sftp have no -X connections=N (patch 0273)]"
    return ""


def run_point(env, args, prog, link, cc, lname, tool, cipher, comp, trees, tcp, setup, emit, missing):
    """One point (link, cc, tool, cipher, compression) for every tree; the
    trees' runs are interleaved (stock, lfn, stock, lfn, ...) so slow drifts
    of a shared machine hit both alike."""
    label = "%s %s %s%s" % (lname, tool, cipher, " +C" if comp else "")
    conns = tool_conns(tool)[1]
    active = [t for t in trees if (cipher != "none" or env.none_ok[t]) and
              (conns == 1 or t == "lfn")]
    for t in trees:
        if t not in active:
            prog.done += 1
    if not active:
        return

    def once(t, size, keep=()):
        r = run_once(env, t, link, tool, cipher, comp, size, keep)
        if r["rc"] == 0 and r["cc_seen"] and r["cc_seen"] != [cc]:
            r["rc"] = -101
            r["stderr"] = "the connection used congestion control %s, not %s (sshd's log)" % (
                ",".join(r["cc_seen"]), cc)
        elif r["rc"] != 0:
            r["stderr"] += fail_hint(tool, r["stderr"])
        return r
    size = {}
    base = dict(kind="ssh", link=link.spec, rtt_ms=link.rtt, rate=link.rate, loss=link.loss, cc=cc,
                tool=tool, connections=conns, dir=tool_dir(tool), cipher=cipher, compression=comp)
    def walls3(t, what, size):
        """The wall times of 3 runs of WHAT that succeeded"""
        v = []
        for i in range(3):
            r = run_once(env, t, link, what, cipher, comp, size)
            if r["rc"] == 0:
                v.append(r["wall"])
        return v
    # connection setup time per tree, link and options: median of 3 `ssh true`
    for t in active:
        key = (t, cipher, comp)
        if key not in setup:
            v = walls3(t, "true", 0)
            setup[key] = median(v) if v else 0.0
            emit(dict(base, kind="setup", tree=t, run=-2, seconds=setup[key], samples=v))
    # scp/sftp: the tool's own fixed cost (the SFTP session's round trips),
    # median of 3 transfers of a 10 kB file; the report splits the tool's
    # difference from ssh into it and the data phase (report.py sftp_table)
    if tool_conns(tool)[0] in FIXED_TOOLS and conns == 1:
        for t in active:
            key = (t, cipher, comp, tool)
            if key in setup:
                continue
            v = walls3(t, tool, FIXED_SIZE)
            setup[key] = median(v) if v else None
            emit(dict(base, kind="fixed", tree=t, run=-2, size=FIXED_SIZE, seconds=setup[key],
                      setup_s=setup[(t, cipher, comp)], samples=v))
    expect = tcp.get((tool_dir(tool), conns)) or tcp.get((tool_dir(tool), 1)) or \
        (300.0 if link.loopback else parse_rate(link.rate) / 8e6)
    # the size of a measured run comes from the warm-ups: a transfer costs
    # setup + fixed + size / rate, and the fixed part is not small (stock:
    # ~1.3 s on loopback whatever the size, see README), so one warm-up's
    # size / time misjudges the rate; two warm-ups of different sizes give
    # both, and the size is planned for --target-time (wall clock, setup included)
    fits = {}
    for t in active:
        if args.size:
            size[t] = args.size
            continue
        est = expect
        if t == "stock" and link.window_ceiling():
            est = min(est, link.window_ceiling() * 1.1)
        size[t] = round_size(min(max(est * 1e6 * 0.6, 16 * MIB), 256 * MIB, args.max_size))
    if not args.no_warmup:
        for t in list(active):
            st = setup[(t, cipher, comp)]
            pts = []
            for w in range(3):
                prog.line("%s %s: warm-up %d MiB" % (label, t, size[t] // MIB))
                r = once(t, size[t], set(size.values()))
                emit(dict(base, tree=t, run=-1, size=size[t], setup_s=st, **r))
                if r["rc"] != 0:
                    break
                net = max(r["wall"] - st, 0.05)
                pts.append((size[t], net))
                # enough: two sizes with the larger >= 1.5 s, or one that
                # is most of a measured run already (the fixed part is then
                # small beside it)
                if args.size or size[t] >= args.max_size or \
                        (len(pts) >= 2 and net >= 1.5) or net >= 0.8 * (args.target_time - st):
                    break
                # next warm-up: aimed at ~2 s, at least 1.5x the data
                want = min(max(size[t] / net * 2.0, size[t] * 1.5), args.max_size)
                have = [c for c in env.cached_sizes()
                        if max(want * 0.7, size[t] * 1.5) <= c <= want * 1.4]
                size[t] = min(have, key=lambda c: abs(c - want)) if have else round_size(want)
            if r["rc"] != 0:
                prog.note("bench: %s %s: warm-up failed (rc %d): %s" % (label, t, r["rc"], r["stderr"]))
                missing.append("%s %s: failed: %s" % (label, t, r["stderr"][-120:]))
                active.remove(t)
                prog.done += 1
                continue
            fits[t] = fit_cost(pts)
            if not args.size:
                size[t] = plan_size(fits[t], st, args, env.cached_sizes())
    x1_key = lambda t: (lname, cc, tool_conns(tool)[0], cipher, comp, t)
    inherited = set()
    for t in active:
        if conns > 1 and not args.size and x1_key(t) in env.x1_size:
            size[t] = env.x1_size[x1_key(t)]
            inherited.add(t)
    runs = {t: [] for t in active}
    redo = {t: 0 for t in active}
    i = 0
    while any(len(runs[t]) < args.runs for t in active):
        for t in list(active):
            if len(runs[t]) >= args.runs:
                continue
            prog.line("%s %s: run %d/%d, %d MiB" % (label, t, len(runs[t]) + 1, args.runs, size[t] // MIB))
            r = once(t, size[t])
            row = dict(base, tree=t, run=len(runs[t]), size=size[t], setup_s=setup[(t, cipher, comp)], **r)
            if r["rc"] != 0:
                prog.note("bench: %s %s: failed (rc %d): %s" % (label, t, r["rc"], r["stderr"]))
                missing.append("%s %s: failed: %s" % (label, t, r["stderr"][-120:]))
                emit(dict(row, valid=False))
                active.remove(t)
                prog.done += 1
                continue
            if not args.size and t not in inherited and r["wall"] < args.min_time and redo[t] < 2 and \
                    size[t] < args.max_size:
                # too short: discard and grow the size (at most twice)
                emit(dict(row, valid=False, note="shorter than --min-time, size grown"))
                net = max(r["wall"] - setup[(t, cipher, comp)], 0.05)
                # scale as if there were no fixed cost: never too little
                size[t] = round_size(min(size[t] * max((args.target_time * 1.05 - setup[(t, cipher, comp)]) / net, 1.1),
                                         args.max_size))
                redo[t] += 1
                runs[t] = []
                continue
            emit(dict(row, valid=True))
            runs[t].append(r)
            if len(runs[t]) == args.runs:
                prog.done += 1
                if conns == 1:
                    env.x1_size[x1_key(t)] = size[t]
        i += 1


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main())
