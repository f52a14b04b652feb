#!/usr/bin/env python3
"""regress-bench/bench/clients.py -- the clients users bring to a storage
server, against stock sshd and openssh-lfn's sshd on the same link.

Clients (regress-bench/lib/foreign-client): PuTTY's pscp and psftp (the SSH
code of WinSCP and FileZilla), rclone (Go: x/crypto/ssh + pkg/sftp),
Dropbear's dbclient (cat over a session, as rsync/tar pipes use it),
paramiko and asyncssh (SFTP), lftp (SFTP over the system's ssh).  Both
sshds (stock 10.5p1 and openssh-lfn, built from the same tarball) run in the
link's server namespace with the same keys and default configurations; runs
alternate between them.

    regress-bench/bench/clients.py --dry-run
    regress-bench/bench/clients.py --links 1gbit/100 --size 128M --runs 3

Per point: MB/s net of setup (size over wall time less the median time of
moving an empty file with the same client and server), wall MB/s, the
server's CPU per GB (sshd-session, sftp-server and the command, reaped by
the listener), and every transfer's bytes checked.  Output: DIR/results.jsonl,
DIR/table.md (median of the runs; lfn/stock ratio), DIR/machine.json.
Python 3 stdlib only; the environment (keys, sshds, data files, links) is
bench.py's.
"""

import argparse
import datetime
import filecmp
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import (Env, Link, MIB, TOP, die, fmt_dur, fmt_mbs, link_down, link_info, log,  # noqa: E402
                   machine_info, median, page_in, parse_rate, parse_size, results_log, sshd_child_cpu,
                   wanemu_up)

FC = os.path.join(TOP, "regress-bench", "lib", "foreign-client")
CLIENTS = ["pscp", "psftp", "rclone", "dropbear", "paramiko", "asyncssh", "lftp"]
CLIENT_DESC = {
    "pscp": "PuTTY pscp -sftp", "psftp": "PuTTY psftp", "rclone": "rclone (Go) sftp",
    "dropbear": "Dropbear dbclient (cat)", "paramiko": "paramiko sftp",
    "asyncssh": "asyncssh sftp", "lftp": "lftp sftp over Debian ssh",
}
NEEDS = {"pscp": "pscp", "psftp": "psftp", "rclone": "rclone", "dropbear": "dbclient",
         "lftp": "lftp"}
SERVERS = ["stock", "lfn"]
# Dropbear's client keeps a 24 KiB receive window (dbclient -W, default
# 24576): its downloads run at ~0.25 MB/s at 100 ms whatever the server, so
# they move at most this much
SIZE_CAP = {("dropbear", "down"): 16 * MIB}


def versions():
    def first(argv):
        try:
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=10)
            return (r.stdout.strip().splitlines() or [""])[0]
        except (OSError, subprocess.TimeoutExpired):
            return ""
    return {
        "putty": first(["pscp", "-V"]), "rclone": first(["rclone", "version"]),
        "dropbear": first(["dpkg-query", "-W", "-f", "${Version}", "dropbear-bin"]),
        "paramiko": first(["/usr/bin/python3", "-c", "import paramiko; print(paramiko.__version__)"]),
        "asyncssh": first(["/usr/bin/python3", "-W", "ignore", "-c",
                           "import asyncssh; print(asyncssh.__version__)"]),
        "lftp": first(["lftp", "--version"]), "system ssh": first(["ssh", "-V"]),
    }


def missing_clients():
    out = {}
    for c in CLIENTS:
        prog = NEEDS.get(c)
        if prog and not any(os.access(os.path.join(d, prog), os.X_OK)
                            for d in os.environ.get("PATH", "").split(":")):
            out[c] = "%s not installed (./install-deps)" % prog
    r = subprocess.run(["/usr/bin/python3", "-W", "ignore", "-c", "import paramiko, asyncssh"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        out.setdefault("paramiko", "python3-paramiko/python3-asyncssh missing (./install-deps)")
        out.setdefault("asyncssh", "python3-paramiko/python3-asyncssh missing (./install-deps)")
    return out


class Runner:
    def __init__(self, env, args):
        self.env, self.args = env, args
        self.fcdir = os.path.join(env.T, "fc")
        r = subprocess.run([FC, "keys", self.fcdir, os.path.join(env.T, "id_ed25519"),
                            os.path.join(env.T, "host_ed25519.pub")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            die("foreign-client keys: " + r.stdout.strip())
        self.srvdir = os.path.join(env.T, "srv")
        os.makedirs(self.srvdir, exist_ok=True)
        self.logpos = {}
        self.max_window = None
        self.empty = os.path.join(env.T, "empty")
        open(self.empty, "w").close()

    def new_log(self, server):
        """What SERVER's sshd logged since the last call."""
        slog = self.env.sshd[server][2]
        pos = self.logpos.get(server, 0)
        try:
            with open(slog, "rb") as f:
                f.seek(pos)
                text = f.read().decode(errors="replace")
                self.logpos[server] = f.tell()
        except OSError:
            return ""
        return text

    def once(self, link, server, client, direction, src):
        """One transfer of SRC.  Returns wall, server CPU, ok, message."""
        pid, port, _ = self.env.sshd[server]
        remote = os.path.join(self.srvdir, "f")
        local = os.path.join(self.env.tmp, "got")
        for p in (remote, local):
            if os.path.exists(p):
                os.unlink(p)
        if direction == "down":
            # the server's copy: a hard link to the data file (same file system)
            try:
                os.link(src, remote)
            except OSError:
                subprocess.run(["cp", src, remote], check=True)
            argv = [FC, client, "get", remote, local]
        else:
            argv = [FC, client, "put", src, remote]
        fenv = dict(os.environ, FC_DIR=self.fcdir, FC_HOST=link.addr, FC_PORT=str(port),
                    FC_NS=link.ns_a or "", FC_SSH_CONFIG=os.path.join(self.env.T, "ssh_config"))
        c0 = sshd_child_cpu(pid)
        self.new_log(server)
        t0 = time.monotonic()
        try:
            r = subprocess.run(argv, env=fenv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, timeout=self.args.timeout)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            rc, err = -9, "timed out after %ds" % self.args.timeout
        wall = time.monotonic() - t0
        cpu = sshd_child_cpu(pid) - c0
        # the largest receive window sshd granted (openssh-lfn logs its
        # growth at LogLevel VERBOSE; stock keeps 2 MiB and logs nothing)
        wins = [int(b) for _, b in re.findall(r"receive window (\d+) -> (\d+)", self.new_log(server))]
        self.max_window = max(wins) if wins else None
        dst = local if direction == "down" else remote
        ok = rc == 0 and os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False)
        msg = "" if ok else ("exit %d: %s" % (rc, err.strip()[-300:]) if rc else "bytes differ")
        for p in (remote, local):
            if os.path.exists(p):
                os.unlink(p)
        return wall, cpu, ok, msg


def main():
    ap = argparse.ArgumentParser(prog="regress-bench/bench/clients.py",
                                 description="foreign clients (PuTTY, rclone, Dropbear, paramiko, "
                                             "asyncssh, lftp) against stock and openssh-lfn sshd")
    ap.add_argument("--links", default="1gbit/100,1gbit/200,2gbit/100",
                    help="comma list of RATE/RTT_MS emulated links (1gbit/100,1gbit/200,2gbit/100)")
    ap.add_argument("--size", type=parse_size, default=parse_size("128M"),
                    help="data per transfer (128M)")
    ap.add_argument("--runs", type=int, default=3, help="measured runs per point (3; median)")
    ap.add_argument("--setup-runs", type=int, default=2,
                    help="empty-file transfers per client and server for the setup time (2)")
    ap.add_argument("--clients", default=",".join(CLIENTS), help="comma list of " + ",".join(CLIENTS))
    ap.add_argument("--dirs", default="up,down", help="up, down or both (up,down)")
    ap.add_argument("--out", help="results directory (default build/bench/clients-<UTC timestamp>)")
    ap.add_argument("--tcp-buffers", default="raised",
                    help="TCP buffer maxima in the links' namespaces, as bench.py (raised)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds one transfer may take (900)")
    ap.add_argument("--data-dir", help="where the random data files live (build/bench/data)")
    ap.add_argument("--dry-run", action="store_true", help="list the points, estimate the time, exit")
    ap.add_argument("--lfn-tree", default=os.environ.get("LFN_TREE", os.path.join(TOP, "openssh-portable")))
    ap.add_argument("--stock-tree", default=os.environ.get("STOCK_TREE", os.path.join(TOP, "build", "stock")))
    args = ap.parse_args()
    if args.runs < 1 or args.setup_runs < 1:
        ap.error("--runs and --setup-runs must be >= 1")
    try:
        links = [Link(s) for s in args.links.split(",")]
    except ValueError as e:
        die(str(e))
    for l in links:
        if l.loopback or l.rtt <= 0:
            die("link %s: an emulated link RATE/RTT_MS is needed" % l.spec)
    clients = [c for c in args.clients.split(",") if c]
    for c in clients:
        if c not in CLIENTS:
            die("--clients: unknown %s (choose from %s)" % (c, ",".join(CLIENTS)))
    dirs = [d for d in args.dirs.split(",") if d]
    if not dirs or any(d not in ("up", "down") for d in dirs):
        die("--dirs: up, down or up,down")
    gone = missing_clients()
    for c in [c for c in clients if c in gone]:
        log("clients: %s skipped: %s" % (c, gone[c]))
    clients = [c for c in clients if c not in gone]
    if not clients:
        die("no client to run")
    points = [(l, c, d) for l in links for c in clients for d in dirs]
    # a rough estimate: clients that keep little in flight run at ~1-2 MB per RTT
    est = sum(len(SERVERS) * (args.runs * (2 + args.size / min(parse_rate(l.rate) / 8 * 0.9,
                                                                 1.5e6 / (l.rtt / 1e3)))
                              + args.setup_runs * (1 + 10 * l.rtt / 1e3))
              for l, _, _ in points)
    if args.dry_run:
        for l, c, d in points:
            print("%-12s %-10s %-5s stock and lfn sshd, %d run(s)" % (l.spec, c, d, args.runs))
        print("%d points x %d servers x %d runs of %s: roughly %s" %
              (len(points), len(SERVERS), args.runs, "%d MiB" % (args.size // MIB), fmt_dur(est)))
        for c, why in sorted(gone.items()):
            print("not available: %s: %s" % (c, why))
        return 0
    if os.geteuid() != 0:
        die("needs root (network namespaces)")
    for t in (args.lfn_tree, args.stock_tree):
        if not os.access(os.path.join(t, "sshd"), os.X_OK):
            die("no sshd in %s (make all)" % t)

    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    outdir = os.path.abspath(args.out) if args.out else os.path.join(TOP, "build", "bench", "clients-" + ts)
    os.makedirs(outdir, exist_ok=True)
    args.data_dir = args.data_dir or os.path.join(TOP, "build", "bench", "data")
    args.data_cache = max(parse_size("16G"), args.size)
    env = Env(args, outdir)
    env.name = "clients-%d" % os.getpid()
    env.init()
    runner = Runner(env, args)
    srcs = {sz: env.datafile(sz) for sz in {min(args.size, SIZE_CAP.get((c, d), args.size))
                                               for c in clients for d in dirs}}
    log("clients: %d points, %d run(s) of %d MiB per server, roughly %s; results in %s" %
        (len(points), args.runs, args.size // MIB, fmt_dur(est), outdir))
    rows, emit, resf = results_log(os.path.join(outdir, "results.jsonl"))
    machine = machine_info(env, links)
    machine["argv"] = sys.argv[1:]
    machine["clients"] = versions()
    machine["links"] = {}
    table = []
    try:
        for link in links:
            why = wanemu_up(env, link)
            if why:
                die(why)
            machine["links"][link.spec] = link_info(link, args.tcp_buffers)
            env.start_sshds(link, SERVERS)
            runner.logpos = {}
            try:
                for client in clients:
                    for d in dirs:
                        setup = {}
                        for s in SERVERS:
                            w = []
                            for _ in range(args.setup_runs):
                                wall, _, ok, msg = runner.once(link, s, client, d, runner.empty)
                                if ok:
                                    w.append(wall)
                            setup[s] = median(w)
                            emit({"kind": "setup", "link": link.spec, "client": client, "dir": d,
                                  "server": s, "walls": w})
                        res = {s: [] for s in SERVERS}
                        size = min(args.size, SIZE_CAP.get((client, d), args.size))
                        src = srcs[size]
                        for i in range(args.runs):
                            for s in (SERVERS if i % 2 == 0 else SERVERS[::-1]):
                                page_in(src)
                                wall, cpu, ok, msg = runner.once(link, s, client, d, src)
                                net = wall - (setup[s] or 0)
                                row = {"kind": "run", "link": link.spec, "client": client, "dir": d,
                                       "server": s, "bytes": size, "wall": round(wall, 3),
                                       "setup": setup[s], "ok": ok, "msg": msg,
                                       "mbs_net": round(size / net / 1e6, 2) if ok and net > 0 else None,
                                       "mbs_wall": round(size / wall / 1e6, 2) if ok else None,
                                       "server_cpu_s_per_gb": round(cpu / (size / 1e9), 3),
                                       "max_window": runner.max_window}
                                emit(row)
                                res[s].append(row)
                                log("clients: %s %s %s %s: %s" % (link.spec, client, d, s,
                                    "%s MB/s net, %s wall, server CPU %.2f s/GB" %
                                    (fmt_mbs(row["mbs_net"]), fmt_mbs(row["mbs_wall"]),
                                     row["server_cpu_s_per_gb"]) if ok else "FAILED " + msg))
                        table.append((link.spec, client, d, res))
            finally:
                env.stop_sshds()
                link_down(env, link, machine)
    finally:
        resf.close()
        with open(os.path.join(outdir, "machine.json"), "w") as f:
            json.dump(machine, f, indent=1, sort_keys=True)
        write_table(outdir, args, table, machine)
    return 0


def write_table(outdir, args, table, machine):
    def med(rs, k):
        v = [r[k] for r in rs if r["ok"] and r[k] is not None]
        return median(v)
    lines = ["# Foreign clients: stock sshd vs openssh-lfn sshd",
             "",
             "%d MiB per transfer, median of %d runs per server (alternating), same link; MB/s net "
             "of setup (an empty file's transfer with the same client), wall MB/s in brackets; "
             "server CPU s/GB (sshd-session + sftp-server or the command); every transfer's bytes "
             "compared; the largest receive window openssh-lfn's sshd granted (its log; "
             "\"2 MiB (fixed)\": it never grew).  Dropbear's downloads move at most 16 MiB "
             "(its client keeps a 24 KiB receive window)." % (args.size // MIB, args.runs),
             "",
             "| link | client | dir | stock sshd MB/s | lfn sshd MB/s | lfn/stock | server CPU s/GB stock / lfn | lfn's largest window | bytes |",
             "|---|---|---|---|---|---|---|---|---|"]
    for link, client, d, res in table:
        s, l = med(res["stock"], "mbs_net"), med(res["lfn"], "mbs_net")
        sw, lw = med(res["stock"], "mbs_wall"), med(res["lfn"], "mbs_wall")
        cs = med(res["stock"], "server_cpu_s_per_gb")
        cl = med(res["lfn"], "server_cpu_s_per_gb")
        ok = all(r["ok"] for rs in res.values() for r in rs)
        mw = [r["max_window"] for r in res["lfn"] if r.get("max_window")]
        lines.append("| %s | %s | %s | %s (%s) | %s (%s) | %s | %s / %s | %s | %s |" % (
            link, CLIENT_DESC.get(client, client), d, fmt_mbs(s), fmt_mbs(sw), fmt_mbs(l), fmt_mbs(lw),
            "%.2f" % (l / s) if s and l else "–",
            "%.2f" % cs if cs is not None else "–", "%.2f" % cl if cl is not None else "–",
            "%.1f MiB" % (max(mw) / MIB) if mw else "2 MiB (fixed)",
            "verified" if ok else "FAILED"))
    lines += ["", "Clients: " + "; ".join("%s %s" % (k, v) for k, v in sorted(machine["clients"].items())),
              ""]
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
