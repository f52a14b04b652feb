#!/usr/bin/env python3
"""compress-bomb-server.py: a hostile SSH server (paramiko) that sends
compressed SSH2_MSG_IGNORE packets inflating far beyond a packet's size to
a client once it authenticated and asked to run a command.

  compress-bomb-server.py --port P --host-key KEYFILE
                          [--ok-size BYTES] [--bomb-size BYTES] [--bombs N]

Accepts one connection, any public key, one session channel.  On the exec
request it sends an IGNORE of --ok-size zeros (must be accepted), then
--bombs IGNOREs of --bomb-size zeros, prints "bombs_sent" and waits up to
--linger seconds for the client to go away; then prints compression,
alive_after=yes|no and exits (exit status 0 either way; 2 on errors).
Test-only.
"""
import argparse
import socket
import sys
import threading
import time

import paramiko

from bomb_common import add_bomb_args, ignore


class Server(paramiko.ServerInterface):
    def __init__(self):
        self.exec_event = threading.Event()

    def get_allowed_auths(self, username):
        return "publickey"

    def check_auth_publickey(self, username, key):
        return paramiko.AUTH_SUCCESSFUL

    def check_channel_request(self, kind, chanid):
        if kind == "session":
            return paramiko.OPEN_SUCCEEDED
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_exec_request(self, channel, command):
        self.exec_event.set()
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host-key", required=True)
    add_bomb_args(ap)
    ap.add_argument("--linger", type=float, default=8)
    a = ap.parse_args()

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.port))
    ls.listen(1)
    print("listening", flush=True)
    ls.settimeout(30)
    sock, _ = ls.accept()
    t = paramiko.Transport(sock)
    t.use_compression(True)
    t.add_server_key(paramiko.Ed25519Key.from_private_key_file(a.host_key))
    srv = Server()
    t.start_server(server=srv)
    chan = t.accept(30)
    if chan is None or not srv.exec_event.wait(30):
        print("error=no session", flush=True)
        return 2
    print("compression=%s" % t.local_compression, flush=True)
    ignore(t, a.ok_size)
    time.sleep(0.5)
    print("ok_alive=%s" % ("yes" if t.is_active() else "no"), flush=True)
    for _ in range(a.bombs):
        try:
            ignore(t, a.bomb_size)
        except (EOFError, OSError, paramiko.SSHException):
            break
    print("bombs_sent", flush=True)
    end = time.time() + a.linger
    while time.time() < end and t.is_active():
        time.sleep(0.2)
    print("alive_after=%s" % ("yes" if t.is_active() else "no"), flush=True)
    try:
        chan.send_exit_status(0)
        chan.close()
    except Exception:
        pass
    t.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
