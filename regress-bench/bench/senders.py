#!/usr/bin/env python3
"""regress-bench/bench/senders.py -- foreign senders into an openssh-lfn
receiver (a "sender matrix").

On links emulated by regress-bench/wanemu, measures how fast a sender that is
not openssh-lfn (stock 10.5p1, Debian's 9.2p1, optionally HPN-SSH) pushes one
data file into an openssh-lfn receiver, and what that costs the sender's CPU,
under three receive window policies of the receiver:

  default   openssh-lfn's autotuned windows (no option)
  16M       MaxChannelWindow 16M on the receiver
  2M        MaxChannelWindow 0 on the receiver: every window stays at its
            initial 2 MiB (upstream's behaviour)

Upload rows:   SENDER's ssh  HOST "cat > /dev/null" < file   into lfn's sshd
Download rows: lfn's ssh  HOST "cat file" > /dev/null   from SENDER's sshd

    regress-bench/bench/senders.py --dry-run
    regress-bench/bench/senders.py --links 1gbit/50 --size 64M --runs 1

Output: DIR/results.jsonl (one line per run and per setup measurement),
DIR/table.md, DIR/machine.json, DIR/logs/ (the sshds' logs).  See
regress-bench/bench/README.md ("Foreign senders").  Python 3 stdlib only; the
environment (keys, sshds, data files, links, CPU accounting) is bench.py's.
"""

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import (Env, Link, MIB, TOP, die, fmt_dur, fmt_mbs as fmt, link_down, link_info, log,  # noqa: E402
                   results_log,
                   machine_info, median, parse_rate, parse_size, sshd_child_cpu,
                   page_in, sshd_children, wanemu_down, wanemu_up)

DEBIAN_SSHD_HELPER = os.path.join(TOP, "regress-bench", "lib", "debian-sshd")
DEBIAN_SSH = "/usr/bin/ssh"
FOREIGN_CAP = 15 * MIB     # lfn's window cap towards a peer that is not openssh-lfn
LFN_MAX = 112 * MIB        # MaxChannelWindow's default (and maximum)
RECV_PORT0 = 22100         # lfn sshd per policy (uploads), in the link's b namespace
SEND_PORT0 = 22200         # the senders' sshds (downloads)

# (sender, direction, in the default set when available)
SENDERS = [
    ("stock-up", "up", True),
    ("debian-up", "up", True),
    ("lfn-up", "up", True),
    ("stock-down", "down", True),
    ("debian-down", "down", True),
    ("hpn-up", "up", True),        # only with HPN_TREE
    ("hpn-down", "down", True),    # only with HPN_TREE
    ("lfn-down", "down", False),   # reference for the download rows, opt-in
]
SENDER_DIR = {n: d for n, d, _ in SENDERS}


def policy_value(p):
    """The receiver's MaxChannelWindow for a policy: None (default), or the
    option's value ('2M' is 0: every window keeps its initial 2 MiB)."""
    if p == "default":
        return None
    return "0" if p == "2M" else p


def policy_window(p, lfn_sender):
    """The most a policy lets the receive window grow to (bytes), for the
    estimate: a non-lfn peer gets at most 15M (see ssh_config.5)."""
    if p == "default":
        cap = LFN_MAX
    else:
        v = parse_size(policy_value(p))
        cap = 2 * MIB if v <= 2 * MIB else min(v, LFN_MAX)
    return cap if lfn_sender else min(cap, max(FOREIGN_CAP, 2 * MIB))


def version_of(argv):
    """The first line of PROG -V; Debian's sshd says only 'OpenSSH_9.2' there
    (its release string, with the package version, is in the binary: taken
    from there, through the debian-sshd wrapper script if that is what
    PROG is)."""
    r = subprocess.run(argv + ["-V"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = r.stdout.strip().splitlines()
    v = out[0] if out else ""
    if v and not re.match(r"OpenSSH_[0-9.]+p[0-9]", v):
        prog = argv[0]
        try:
            with open(prog, "rb") as f:
                blob = f.read()
            if blob.startswith(b"#!"):
                m = re.search(rb'exec "([^"$]+)"', blob)
                if m:
                    with open(m.group(1).decode(), "rb") as f:
                        blob = f.read()
            m = re.search(rb"OpenSSH_[0-9.]+p[0-9]+ [A-Za-z]+-[\w.+~-]+", blob)
            if m:
                v = m.group(0).decode()
        except OSError:
            pass
    return v


def short_version(v):
    """'OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL ...' -> '9.2p1 Debian-2+deb12u10'"""
    v = v.split(",")[0].strip()
    return v[len("OpenSSH_"):] if v.startswith("OpenSSH_") else v


def find_prog(tree, names):
    for n in names:
        p = os.path.join(tree, n)
        if os.access(p, os.X_OK):
            return p
    return None


# --------------------------------------------------------------------------
# the sshds: lfn receivers (one per policy) and senders (one per sender)

class Sshd:
    def __init__(self, pid, port, logpath, what):
        self.pid, self.port, self.log, self.what = pid, port, logpath, what
        self.pos = os.path.getsize(logpath) if os.path.exists(logpath) else 0

    def new_log(self):
        try:
            with open(self.log, "rb") as f:
                f.seek(self.pos)
                text = f.read().decode(errors="replace")
                self.pos = f.tell()
        except OSError:
            return ""
        return text


BASE_SSHD = "MaxStartups 100\nPermitUserEnvironment HOME\n"


class Matrix:
    def __init__(self, args, env):
        self.args = args
        self.env = env
        self.sshds = []          # every Sshd started, for cleanup
        self.client = None       # the running client (Popen), for cleanup
        self.popen_sshds = []    # sshds started here (HPN), Popen objects

    # -- starting and stopping
    def start_tree_sshd(self, tree, port, ns, extra, what):
        out = self.env.bash('lfn_sshd_start "$1" "$2" "$3" && echo "$SSHD_PID $SSHD_LOG"',
                            tree, str(port), ns, stdin=extra)
        pid, slog = out.strip().splitlines()[-1].split(" ", 1)
        s = Sshd(int(pid), port, slog, what)
        self.sshds.append(s)
        return s

    def start_debian_sshd(self, port, ns):
        out = self.env.bash('DEBIAN_SSHD=$1; lfn_debian_sshd_start "$2" "$3" && echo "$! $DEBIAN_SSHD_LOG"',
                            self.args.debian_sshd, str(port), ns, stdin=BASE_SSHD)
        pid, slog = out.strip().splitlines()[-1].split(" ", 1)
        s = Sshd(int(pid), port, slog, "debian sshd")
        self.sshds.append(s)
        return s

    def start_hpn_sshd(self, port, ns):
        """HPN-SSH's sshd (hpnsshd or sshd in HPN_TREE) with sshenv.sh's
        config; the helper binaries' lines only for those that exist."""
        tree = self.args.hpn_tree
        sshd = find_prog(tree, ("hpnsshd", "sshd"))
        cfgtext = self.env.bash('lfn_sshd_config "$1" "$2"', tree, str(port), stdin=BASE_SSHD)
        lines = []
        for line in cfgtext.splitlines():
            m = re.match(r"(SshdSessionPath|SshdAuthPath)\s", line)
            if m:
                base = "sshd-session" if m.group(1) == "SshdSessionPath" else "sshd-auth"
                p = find_prog(tree, ("hpn" + base, base))
                if not p:
                    continue
                line = "%s %s" % (m.group(1), p)
            lines.append(line)
        cfg = os.path.join(self.env.T, "sshd_config.hpn-%d" % port)
        slog = os.path.join(self.env.T, "sshd.hpn-%d.log" % port)
        with open(cfg, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([os.path.join(TOP, "regress-bench", "lib", "privsep-ensure"), tree])
        r = subprocess.run([sshd, "-t", "-f", cfg], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise RuntimeError("HPN sshd -t rejects %s: %s" % (cfg, r.stdout.strip()))
        logf = open(slog, "w")
        p = subprocess.Popen((["ip", "netns", "exec", ns] if ns else []) + [sshd, "-D", "-e", "-f", cfg],
                             stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        logf.close()
        self.popen_sshds.append(p)
        s = Sshd(p.pid, port, slog, "hpn sshd")
        s.pos = 0
        self.sshds.append(s)
        for _ in range(100):
            if "Server listening" in open(slog, errors="replace").read():
                return s
            if p.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("HPN sshd did not start listening: %s" % open(slog, errors="replace").read()[-500:])

    def stop_client(self):
        p = self.client
        if p is not None and p.poll() is None:
            try:
                p.terminate()
                p.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    p.kill()
                except ProcessLookupError:
                    pass
        self.client = None

    def stop_sshds(self):
        """Stop every sshd started here, by PID, and then the sessions they
        still have (their children), which would otherwise hang on to a
        connection through a link that is going away."""
        kids = []
        for s in self.sshds:
            kids += sshd_children(s.pid)
            try:
                os.kill(s.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for k in kids:
            try:
                os.kill(k, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for s in self.sshds:
            for _ in range(50):
                if not os.path.exists("/proc/%d" % s.pid):
                    break
                # the sshds started through sshenv.sh are not our children
                # (their bash has exited); the HPN one is: reap it
                try:
                    os.waitpid(s.pid, os.WNOHANG)
                except ChildProcessError:
                    pass
                time.sleep(0.1)
        for p in self.popen_sshds:
            try:
                p.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self.keep_logs()
        self.sshds = []
        self.popen_sshds = []

    def keep_logs(self):
        d = os.path.join(self.args.outdir, "logs")
        os.makedirs(d, exist_ok=True)
        for s in self.sshds:
            try:
                dst = os.path.join(d, "%s-%s" % (self.args.cur_link_tag, os.path.basename(s.log)))
                shutil.copyfile(s.log, dst)
            except OSError:
                pass

    # -- the client command
    def client_argv(self, prog, link, port, opts, cmd):
        pre = ["ip", "netns", "exec", link.ns_a] if link.ns_a else []
        return pre + [prog, "-F", os.path.join(self.env.T, "ssh_config"), "-p", str(port),
                      "-o", "HostKeyAlias=lfnpeer", "-o", "HostName=" + link.addr] + \
            opts + ["lfnpeer", cmd]

    def run_once(self, argv, stdin_path, cpu_pid, recv_sshd, recv_is_client, timeout=600.0):
        """One client command.  Returns wall, the client tree's rusage, the
        CPU the sshd listener CPU_PID reaped meanwhile, the largest window
        the receiver logged, rc, stderr tail.  A client still running after
        TIMEOUT seconds is killed (rc -9, "timed out")."""
        s0 = sshd_child_cpu(cpu_pid)
        if recv_sshd:
            recv_sshd.new_log()
        errpath = os.path.join(self.env.tmp, "client.err")
        errf = open(errpath, "w+b")
        fin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdin=fin, stdout=subprocess.DEVNULL, stderr=errf)
        self.client = p
        timer = threading.Timer(timeout, lambda: p.poll() is None and p.kill())
        timer.daemon = True
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        self.client = None
        if stdin_path:
            fin.close()
        s1 = sshd_child_cpu(cpu_pid)
        errf.seek(0)
        err = errf.read().decode(errors="replace")
        errf.close()
        text = err if recv_is_client else (recv_sshd.new_log() if recv_sshd else "")
        wins = [int(b) for _, b in re.findall(r"receive window (\d+) -> (\d+)", text)]
        wins += [int(x) for x in re.findall(r"final receive window (\d+)", text)]
        tail = "\n".join(l for l in err.strip().splitlines()
                         if "receive window" not in l and "Authenticated to" not in l)
        if p.returncode == -signal.SIGKILL and wall >= timeout:
            tail = ("timed out after %.0f s; " % timeout) + tail
        return dict(wall=wall, cpu_client=ru.ru_utime + ru.ru_stime, cpu_client_user=ru.ru_utime,
                    cpu_client_sys=ru.ru_stime, cpu_sshd=s1 - s0, rc=p.returncode,
                    max_window=max(wins) if wins else None, window_grew=len(wins),
                    stderr=tail[-300:])


# --------------------------------------------------------------------------
# the run

def available_senders(args):
    """{name: why not} for the senders that cannot run here."""
    missing = {}
    if not os.access(os.path.join(args.stock_tree, "ssh"), os.X_OK):
        missing["stock-up"] = missing["stock-down"] = "no stock build (%s)" % args.stock_tree
    if not os.access(DEBIAN_SSH, os.X_OK):
        missing["debian-up"] = "no %s" % DEBIAN_SSH
    if not args.debian_sshd:
        missing["debian-down"] = ("no Debian sshd (regress-bench/lib/debian-sshd path found none: "
                                  "run `regress-bench/lib/debian-sshd fetch`, or set LFN_SYSTEM_SSHD)")
    if not args.hpn_tree:
        missing["hpn-up"] = missing["hpn-down"] = "HPN_TREE not set"
    else:
        if not find_prog(args.hpn_tree, ("hpnssh", "ssh")):
            missing["hpn-up"] = "no hpnssh/ssh in HPN_TREE=%s" % args.hpn_tree
        if not find_prog(args.hpn_tree, ("hpnsshd", "sshd")):
            missing["hpn-down"] = "no hpnsshd/sshd in HPN_TREE=%s" % args.hpn_tree
    return missing


def sender_label(args, name):
    v = args.versions
    who = name.rsplit("-", 1)[0]
    ver = short_version(v.get(who + ("-ssh" if SENDER_DIR[name] == "up" else "-sshd"), ""))
    if who == "debian":
        ver = ver.split(" ")[0]      # 9.2p1 (the package version is in the machine section)
    desc = {"stock": "stock", "debian": "Debian", "lfn": "lfn", "hpn": "HPN-SSH"}[who]
    if who == "lfn":
        ver = ""
    if SENDER_DIR[name] == "up":
        return "%s %sssh -> lfn sshd" % (desc, ver + " " if ver else "")
    return "lfn ssh <- %s %ssshd" % (desc, ver + " " if ver else "")


def estimate_run(args, link, sender, policy):
    """Rough seconds of one run: setup + size / rate, the rate the window
    allows per RTT or the link's, whichever is less."""
    lfn_sender = sender.startswith("lfn")
    rate = parse_rate(link.rate) / 8 * 0.95
    win = policy_window(policy, lfn_sender)
    rate = min(rate, win / (link.rtt / 1e3))
    setup = 0.4 + 7 * link.rtt / 1e3
    return setup + args.size / rate


def main():
    ap = argparse.ArgumentParser(
        prog="regress-bench/bench/senders.py",
        description="foreign senders (stock 10.5p1, Debian 9.2p1, HPN-SSH) into an openssh-lfn "
                    "receiver on emulated links, under three receive window policies")
    ap.add_argument("--links", default="1gbit/200,2gbit/100",
                    help="comma list of RATE/RTT_MS emulated links (1gbit/200,2gbit/100)")
    ap.add_argument("--size", type=parse_size, default=parse_size("1G"), help="data per transfer (1G)")
    ap.add_argument("--runs", type=int, default=3, help="measured runs per point (3)")
    ap.add_argument("--policies", default="default,16M,2M",
                    help="receiver window policies: default (autotuned), 2M (MaxChannelWindow 0: "
                         "fixed 2 MiB windows), or a MaxChannelWindow size such as 16M (default,16M,2M)")
    ap.add_argument("--senders",
                    help="comma list of: " + ",".join(n for n, _, _ in SENDERS) +
                         " (default: every one available but lfn-down; hpn-* need HPN_TREE)")
    ap.add_argument("--out", help="results directory (default build/bench/senders-<UTC timestamp>)")
    ap.add_argument("--tcp-buffers", default="raised",
                    help="TCP buffer maxima in the links' namespaces, as bench.py: raised (128 MiB, "
                         "default), debian, host or RMEM:WMEM")
    ap.add_argument("--data-dir", help="where the random data files live (build/bench/data)")
    ap.add_argument("--setup-runs", type=int, default=3, help="`ssh HOST true` per sender/receiver "
                    "pair for the setup time (3; median)")
    ap.add_argument("--dry-run", action="store_true", help="list the points, estimate the time, exit")
    ap.add_argument("--lfn-tree", default=os.environ.get("LFN_TREE", os.path.join(TOP, "openssh-portable")))
    ap.add_argument("--stock-tree", default=os.environ.get("STOCK_TREE", os.path.join(TOP, "build", "stock")))
    ap.add_argument("--hpn-tree", default=os.environ.get("HPN_TREE") or None,
                    help="a built HPN-SSH tree (default: $HPN_TREE; hpn-up/hpn-down only with it)")
    args = ap.parse_args()

    if not re.fullmatch(r"raised|debian|host|[0-9]+:[0-9]+", args.tcp_buffers):
        ap.error("--tcp-buffers: raised, debian, host or RMEM:WMEM")
    if args.runs < 1 or args.setup_runs < 1:
        ap.error("--runs and --setup-runs must be >= 1")
    links = []
    try:
        for s in args.links.split(","):
            link = Link(s)
            if link.loopback or link.rtt <= 0:
                raise ValueError("link '%s': an emulated link RATE/RTT_MS is needed (the windows "
                                 "matter only with a round trip)" % s)
            if link.spec not in [l.spec for l in links]:
                links.append(link)
    except ValueError as e:
        die(str(e))
    policies = []
    for p in args.policies.split(","):
        if p != "default":
            try:
                parse_size(p)
            except argparse.ArgumentTypeError:
                die("--policies: bad policy '%s' (default, 2M, or a size such as 16M)" % p)
        if p not in policies:
            policies.append(p)
    args.debian_sshd = None
    r = subprocess.run([DEBIAN_SSHD_HELPER, "path"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if r.returncode == 0 and os.access(r.stdout.strip(), os.X_OK):
        args.debian_sshd = r.stdout.strip()
    if args.hpn_tree:
        args.hpn_tree = os.path.abspath(args.hpn_tree)
    unavailable = available_senders(args)
    if args.senders:
        senders = []
        for s in args.senders.split(","):
            if s not in SENDER_DIR:
                die("--senders: unknown %s (choose from %s)" % (s, ",".join(n for n, _, _ in SENDERS)))
            if s in unavailable:
                die("--senders: %s is not available: %s" % (s, unavailable[s]))
            if s not in senders:
                senders.append(s)
        order = [n for n, _, _ in SENDERS]
        senders.sort(key=order.index)
    else:
        senders = [n for n, _, dflt in SENDERS if dflt and n not in unavailable]
        for n, _, dflt in SENDERS:
            if dflt and n in unavailable:
                log("senders: %s skipped: %s" % (n, unavailable[n]))
    for prog in ("ssh", "sshd", "sshd-session"):
        if not os.access(os.path.join(args.lfn_tree, prog), os.X_OK):
            die("lfn build incomplete: %s/%s missing (make all)" % (args.lfn_tree, prog))
    # the receiver must know the option the policies set
    for p in policies:
        v = policy_value(p)
        if v is None:
            continue
        r = subprocess.run([os.path.join(args.lfn_tree, "ssh"), "-F", "/dev/null", "-G",
                            "-o", "MaxChannelWindow=" + v, "x"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0 or "maxchannelwindow" not in r.stdout.lower():
            die("policy %s: %s/ssh does not take MaxChannelWindow=%s: %s" %
                (p, args.lfn_tree, v, r.stdout.strip()[-200:]))

    points = [(l, s, p) for l in links for s in senders for p in policies]
    est = 0.0
    for l in links:
        for s in senders:
            est += len(policies) * args.setup_runs * (0.4 + 7 * l.rtt / 1e3)
            for p in policies:
                est += args.runs * (estimate_run(args, l, s, p) + 0.5)
    est += len(links) * 15
    if args.dry_run:
        print("%-12s %-12s %-8s %s" % ("link", "sender", "policy", "receiver's option"))
        for l, s, p in points:
            v = policy_value(p)
            opt = "-" if v is None else ("sshd_config MaxChannelWindow %s" % v if SENDER_DIR[s] == "up"
                                         else "ssh -o MaxChannelWindow=%s" % v)
            print("%-12s %-12s %-8s %-40s ~%s/run" % (l.spec, s, p, opt, fmt_dur(estimate_run(args, l, s, p))))
        print("%d points x %d runs of %s, roughly %s (2 MiB windows at long RTTs dominate)" %
              (len(points), args.runs, bench_size(args.size), fmt_dur(est)))
        for n, why in sorted(unavailable.items()):
            print("not available: %s: %s" % (n, why))
        return 0

    if os.geteuid() != 0:
        die("needs root (network namespaces)")
    for prog in ("ip",):
        if not shutil.which(prog):
            die("%s not found (apt-get install -y iproute2)" % prog)

    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    outdir = os.path.abspath(args.out) if args.out else os.path.join(TOP, "build", "bench", "senders-" + ts)
    os.makedirs(outdir, exist_ok=True)
    args.outdir = outdir
    args.cur_link_tag = "link"
    args.data_dir = args.data_dir or os.path.join(TOP, "build", "bench", "data")
    args.data_cache = max(parse_size("16G"), args.size)
    env = Env(args, outdir)
    env.name = "senders-%d" % os.getpid()
    env.init()
    args.versions = {
        "stock-ssh": version_of([os.path.join(args.stock_tree, "ssh")]),
        "stock-sshd": version_of([os.path.join(args.stock_tree, "ssh")]),
        "lfn-ssh": version_of([os.path.join(args.lfn_tree, "ssh")]),
        "lfn-sshd": version_of([os.path.join(args.lfn_tree, "ssh")]),
        "debian-ssh": version_of([DEBIAN_SSH]) if os.access(DEBIAN_SSH, os.X_OK) else "",
        "debian-sshd": version_of([args.debian_sshd]) if args.debian_sshd else "",
    }
    if args.hpn_tree:
        for k, names in (("hpn-ssh", ("hpnssh", "ssh")), ("hpn-sshd", ("hpnsshd", "sshd"))):
            p = find_prog(args.hpn_tree, names)
            args.versions[k] = version_of([p]) if p else ""
    m = Matrix(args, env)
    log("senders: %d points (%s x %s x %s), %d run(s) of %s each, roughly %s; results in %s" %
        (len(points), ",".join(l.spec for l in links), ",".join(senders), ",".join(policies),
         args.runs, bench_size(args.size), fmt_dur(est), outdir))

    rows, emit, resf = results_log(os.path.join(outdir, "results.jsonl"))

    machine = machine_info(env, links)
    machine["argv"] = sys.argv[1:]
    machine["senders"] = {s: sender_label(args, s) for s in senders}
    machine["versions"] = args.versions
    machine["hpn_tree"] = args.hpn_tree
    machine["debian_sshd"] = args.debian_sshd
    machine["policies"] = {p: policy_value(p) for p in policies}
    machine["links"] = {}
    missing = []
    wall0 = time.monotonic()
    done = [0]
    total = len(points) * args.runs

    def cleanup():
        m.stop_client()
        m.stop_sshds()
        for l in list(env.cleanup_links):
            wanemu_down(env, l)

    def on_signal(signum, _frame):
        log("senders: interrupted, cleaning up")
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cleanup()
        sys.exit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    try:
        data = env.datafile(args.size)
        for link in links:
            err = wanemu_up(env, link)
            if err:
                log("senders: %s: skipped: %s" % (link, err))
                missing.append("%s: %s" % (link, err))
                done[0] += len(senders) * len(policies) * args.runs
                continue
            args.cur_link_tag = link.spec.replace("/", "-")
            machine["links"][link.spec] = link_info(link, args.tcp_buffers)
            try:
                run_link(m, env, args, link, senders, policies, data, emit, missing, done, total, wall0)
            finally:
                m.stop_client()
                m.stop_sshds()
                link_down(env, link, machine)
    finally:
        cleanup()
        resf.close()
        # the scratch dir (keys, configs; the sshds' logs are in DIR/logs)
        shutil.rmtree(env.tmp, ignore_errors=True)
        if env.T and os.path.basename(env.T) == env.name:
            shutil.rmtree(env.T, ignore_errors=True)
    wall = time.monotonic() - wall0
    machine["wall_seconds"] = round(wall, 1)
    machine["loadavg_end"] = open("/proc/loadavg").read().strip()
    machine["missing"] = missing
    with open(os.path.join(outdir, "machine.json"), "w") as f:
        json.dump(machine, f, indent=1, sort_keys=True)
    table = render(rows, machine, args, links, senders, policies)
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(table)
    sys.stdout.write(table)
    log("senders: done in %s: %s" % (fmt_dur(wall), outdir))
    for x in missing:
        log("senders: missing: " + x)
    return 1 if missing and not any(r.get("valid") for r in rows) else 0


def bench_size(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", MIB)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d bytes" % n


def run_link(m, env, args, link, senders, policies, data, emit, missing, done, total, wall0):
    """Every sender and policy on one link.  The receivers (lfn sshd per
    policy) and the senders' sshds are started once per link; a sender's runs
    go round the policies (default, 16M, 2M, default, ...) so that a slow
    drift of the shared machine hits every policy alike."""
    ns = link.ns_b
    lfn = args.lfn_tree
    recv = {}
    if any(SENDER_DIR[s] == "up" for s in senders):
        for i, p in enumerate(policies):
            v = policy_value(p)
            extra = BASE_SSHD + ("MaxChannelWindow %s\n" % v if v is not None else "")
            recv[p] = m.start_tree_sshd(lfn, RECV_PORT0 + i, ns, extra, "lfn sshd, policy " + p)
    send = {}
    for i, s in enumerate(senders):
        if SENDER_DIR[s] != "down":
            continue
        port = SEND_PORT0 + i
        if s == "stock-down":
            send[s] = m.start_tree_sshd(args.stock_tree, port, ns, BASE_SSHD, "stock sshd")
        elif s == "lfn-down":
            send[s] = m.start_tree_sshd(lfn, port, ns, BASE_SSHD, "lfn sshd (sender)")
        elif s == "debian-down":
            send[s] = m.start_debian_sshd(port, ns)
        elif s == "hpn-down":
            send[s] = m.start_hpn_sshd(port, ns)
    if recv:
        # what the receivers were started with, in sshd's own words
        for p, sd in recv.items():
            cfg = os.path.join(env.T, "sshd_config.%s-%d" % (os.path.basename(lfn), sd.port))
            r = subprocess.run([os.path.join(lfn, "sshd"), "-T", "-f", cfg], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            mcw = re.findall(r"(?im)^maxchannelwindow .*$", r.stdout)
            log("senders: %s: receiver sshd for policy %s: %s" % (link, p, mcw[0] if mcw else "?"))

    for s in senders:
        d = SENDER_DIR[s]
        label = sender_label(args, s)
        who = s.rsplit("-", 1)[0]
        # per policy: the argv of a transfer and of `ssh true`, the listener
        # whose reaped children are the sender's (down) or receiver's (up)
        plan = {}
        for p in policies:
            v = policy_value(p)
            if d == "up":
                prog = {"stock": os.path.join(args.stock_tree, "ssh"), "debian": DEBIAN_SSH,
                        "lfn": os.path.join(lfn, "ssh"),
                        "hpn": find_prog(args.hpn_tree or "", ("hpnssh", "ssh"))}[who]
                sd = recv[p]
                mk = lambda cmd, prog=prog, sd=sd: m.client_argv(prog, link, sd.port, [], cmd)
                plan[p] = dict(xfer=mk("cat > /dev/null"), true=mk("true"), stdin=data,
                               sshd=sd, recv_sshd=sd, recv_is_client=False)
            else:
                opts = ["-o", "LogLevel=VERBOSE"] + (["-o", "MaxChannelWindow=" + v] if v is not None else [])
                sd = send[s]
                mk = lambda cmd, sd=sd, opts=opts: m.client_argv(os.path.join(lfn, "ssh"), link, sd.port, opts, cmd)
                plan[p] = dict(xfer=mk("cat " + shlex.quote(data)), true=mk("true"), stdin=None,
                               sshd=sd, recv_sshd=None, recv_is_client=True)
        base = dict(link=link.spec, rtt_ms=link.rtt, rate=link.rate, sender=s, label=label, dir=d,
                    tcp_buffers=args.tcp_buffers)
        # connection setup per sender/receiver pair: median of `ssh true`
        setup = {}
        for p in policies:
            pl = plan[p]
            v, cs, cr = [], [], []
            for i in range(args.setup_runs):
                r = m.run_once(pl["true"], None, pl["sshd"].pid, pl["recv_sshd"], pl["recv_is_client"],
                               timeout=60 + 20 * link.rtt / 1e3)
                if r["rc"] == 0:
                    v.append(r["wall"])
                    cs.append(r["cpu_client"] if d == "up" else r["cpu_sshd"])
                    cr.append(r["cpu_sshd"] if d == "up" else r["cpu_client"])
                else:
                    log("senders: %s %s %s: ssh true failed (rc %d): %s" % (link, s, p, r["rc"], r["stderr"]))
            setup[p] = median(v) if v else 0.0
            emit(dict(base, kind="setup", policy=p, run=-2, seconds=setup[p], samples=v,
                      cpu_sender=median(cs), cpu_receiver=median(cr)))
        failed = set()
        for i in range(args.runs):
            for p in policies:
                if p in failed:
                    done[0] += 1
                    continue
                pl = plan[p]
                el = time.monotonic() - wall0
                eta = el / done[0] * (total - done[0]) if done[0] else 0
                log("[%d/%d %s elapsed%s] %s %s policy %s: run %d/%d" % (
                    done[0], total, fmt_dur(el), ", ETA %s" % fmt_dur(eta) if done[0] else "",
                    link, s, p, i + 1, args.runs))
                page_in(data)
                r = m.run_once(pl["xfer"], pl["stdin"], pl["sshd"].pid, pl["recv_sshd"], pl["recv_is_client"],
                               timeout=max(300.0, 5 * estimate_run(args, link, s, p)))
                done[0] += 1
                if d == "up":
                    cpu_s, cpu_r = r["cpu_client"], r["cpu_sshd"]
                else:
                    cpu_s, cpu_r = r["cpu_sshd"], r["cpu_client"]
                net = r["wall"] - setup[p]
                row = dict(base, kind="run", policy=p, receiver_option=policy_value(p), run=i,
                           size=args.size, setup_s=setup[p], cpu_sender=cpu_s, cpu_receiver=cpu_r,
                           mbs=args.size / net / 1e6 if net > 0 else None,
                           mbs_wall=args.size / r["wall"] / 1e6,
                           cpu_sender_s_per_gb=cpu_s / (args.size / 1e9),
                           cpu_receiver_s_per_gb=cpu_r / (args.size / 1e9), **r)
                if r["rc"] != 0:
                    log("senders: %s %s policy %s: failed (rc %d): %s" % (link, s, p, r["rc"], r["stderr"]))
                    missing.append("%s %s %s: failed: %s" % (link, s, p, r["stderr"][-120:]))
                    emit(dict(row, valid=False))
                    failed.add(p)
                    continue
                emit(dict(row, valid=True))
                log("    %.1f MB/s (wall %.1f), sender CPU %.2f s/GB, largest window %s" % (
                    row["mbs"] or 0, row["mbs_wall"], row["cpu_sender_s_per_gb"],
                    fmt_win(r["max_window"])))


# --------------------------------------------------------------------------
# the table

def fmt_win(b):
    if b is None:
        return "2M (fixed)"
    return "%.1fM" % (b / MIB) if b % MIB else "%dM" % (b // MIB)


def render(rows, machine, args, links, senders, policies):
    runs = [r for r in rows if r["kind"] == "run" and r.get("valid")]
    setups = {(r["link"], r["sender"], r["policy"]): r["seconds"] for r in rows if r["kind"] == "setup"}
    L = []

    def table(L, cols, cells):
        """one row per link x sender, the columns COLS per policy; CELLS(runs
        of that point, (link, sender, policy)) gives their cells"""
        L.append("| link | sender -> receiver |" +
                 "".join(" %s %s |" % (p, c) for p in policies for c in cols))
        L.append("|---|---|" + "---:|" * (len(cols) * len(policies)))
        for l in links:
            for s in senders:
                line = "| %s | %s |" % (l.spec, machine["senders"].get(s, s))
                for p in policies:
                    rr = [r for r in runs if r["link"] == l.spec and r["sender"] == s and r["policy"] == p]
                    line += "".join(" %s |" % c for c in cells(rr, (l.spec, s, p)))
                L.append(line)

    L.append("# Foreign senders into an openssh-lfn receiver\n")
    L.append("%s per transfer, %d run(s) per point; `ssh HOST \"cat > /dev/null\" < file` (upload, ->) "
             "or `ssh HOST \"cat file\" > /dev/null` (download, <-).  Receiver window policies: "
             "**default** = openssh-lfn's autotuned windows, **16M** = `MaxChannelWindow 16M`, "
             "**2M** = `MaxChannelWindow 0` (every window stays at 2 MiB, upstream's behaviour), "
             "set on the receiving side only (lfn's sshd for uploads, lfn's ssh for downloads).\n"
             % (bench_size(args.size), args.runs))
    L.append("MB/s = 10^6 B/s net of connection setup (size / (wall − setup), setup = median "
             "`ssh HOST true` of that pair): median (min–max).  CPU = the **sender's** user+system "
             "CPU seconds per 10^9 bytes, median (upload: the ssh client; download: the sshd side's "
             "processes of the connection), setup included.  win = the largest receive window the "
             "receiver logged (`receive window A -> B`, `final receive window`), median over the runs; "
             "`2M (fixed)` = it never grew.\n")
    def cells(rr, key):
        mbs = [r["mbs"] for r in rr if r["mbs"] is not None]
        cpu = [r["cpu_sender_s_per_gb"] for r in rr]
        wins = [r["max_window"] or 2 * MIB for r in rr]
        if not rr:
            return ["–", "–", "–"]
        rng = " (%s–%s)" % (fmt(min(mbs)), fmt(max(mbs))) if len(mbs) > 1 else ""
        grew = any(r["max_window"] for r in rr)
        return [fmt(median(mbs)) + rng, "%.2f" % median(cpu),
                fmt_win(median(wins)) if grew else fmt_win(None)]

    table(L, ["MB/s", "CPU s/GB", "win"], cells)
    L.append("")
    L.append("Ceilings per link: the link's rate, and one window per round trip "
             "(2 MiB / RTT, 16 MiB / RTT; 15 MiB / RTT is what 0215, withdrawn on "
             "2026-12-06, held a sender that is not openssh-lfn to):\n")
    for l in links:
        L.append("- %s: link %s MB/s, 2 MiB/RTT %s MB/s, 15 MiB/RTT %s MB/s, 16 MiB/RTT %s MB/s" % (
            l.spec, fmt(parse_rate(l.rate) / 8e6), fmt(2 * MIB / (l.rtt / 1e3) / 1e6),
            fmt(15 * MIB / (l.rtt / 1e3) / 1e6), fmt(16 * MIB / (l.rtt / 1e3) / 1e6)))
    L.append("")
    L.append("## Wall clock and setup\n")
    L.append("Wall-clock MB/s (setup included, median), setup seconds (median `ssh HOST true`), "
             "and the receiver's CPU s/GB (median) for the same runs.\n")
    def wall_cells(rr, key):
        st = setups.get(key)
        return [fmt(median([r["mbs_wall"] for r in rr])) if rr else "–",
                "%.2f" % st if st is not None else "–",
                "%.2f" % median([r["cpu_receiver_s_per_gb"] for r in rr]) if rr else "–"]

    table(L, ["wall MB/s", "setup s", "recv CPU s/GB"], wall_cells)
    L.append("")
    L.append("## Machine\n")
    for k in ("Model name", "nproc", "kernel", "loadavg_start", "loadavg_end", "wall_seconds"):
        if k in machine:
            L.append("- %s: %s" % (k, machine[k]))
    for k, v in sorted(machine.get("versions", {}).items()):
        if v:
            L.append("- %s: %s" % (k, v))
    for spec, li in machine.get("links", {}).items():
        L.append("- link %s: tcp buffers %s (tcp_rmem %s, tcp_wmem %s), cc %s" % (
            spec, li.get("tcp buffers"), li.get("net.ipv4.tcp_rmem"), li.get("net.ipv4.tcp_wmem"),
            li.get("net.ipv4.tcp_congestion_control")))
    for x in machine.get("missing", []):
        L.append("- missing: %s" % x)
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
