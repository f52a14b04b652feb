#!/usr/bin/python3
# none-hostile-client.py HOST PORT USER KEYFILE MODE: a client built on
# paramiko that can re-key to cipher "none" after authentication (HPN-SSH
# style), to check what an openssh-lfn sshd accepts from any client.
#   MODE after:   authenticate, re-key to none, then ask for a pty, X11,
#                 agent forwarding, tcpip-forward, streamlocal-forward,
#                 direct-tcpip, direct-streamlocal and a tunnel; finally run
#                 a command to show the connection still works.
#   MODE control: the same requests without switching (all encrypted).
#   MODE ptyfirst: get a pty (encrypted), then try to re-key to none.
# Prints one line per step: "cipher NAME MAC NAME", "REQUEST ok|refused",
# "exec ok".
import socket, struct, sys
import paramiko
from paramiko.transport import Transport
from paramiko.message import Message
from paramiko.common import cMSG_CHANNEL_REQUEST


class NullCipher:
    def update(self, data):
        return data

    def finalize(self):
        return b""


_orig_get_cipher = Transport._get_cipher


def _get_cipher(self, name, key, iv, operation):
    if name == "none":
        return NullCipher()
    return _orig_get_cipher(self, name, key, iv, operation)


Transport._get_cipher = _get_cipher
Transport._cipher_info = dict(Transport._cipher_info)
Transport._cipher_info["none"] = {"class": None, "mode": None,
                                  "block-size": 8, "key-size": 0}

host, port, user, keyfile, mode = sys.argv[1], int(sys.argv[2]), \
    sys.argv[3], sys.argv[4], sys.argv[5]
sock = socket.create_connection((host, port), timeout=20)
t = Transport(sock)
t._preferred_ciphers = ("aes128-ctr",)
t._preferred_macs = ("hmac-sha2-256",)
t.start_client(timeout=20)
t.auth_publickey(user, paramiko.Ed25519Key.from_private_key_file(keyfile))


def say(*a):
    print(*a, flush=True)


def switch():
    t._preferred_ciphers = ("none", "aes128-ctr")
    t.renegotiate_keys()
    say("cipher", t.local_cipher, "MAC", t.local_mac)


def chan_req(name, payload=b""):
    """A channel request with want-reply on a fresh session channel."""
    ch = t.open_session(timeout=20)
    m = Message()
    m.add_byte(cMSG_CHANNEL_REQUEST)
    m.add_int(ch.remote_chanid)
    m.add_string(name)
    m.add_boolean(True)
    m.add_bytes(payload)
    ch._event_pending()
    t._send_user_message(m)
    try:
        ch._wait_for_event()
        ok = True
    except paramiko.SSHException:
        ok = False
    ch.close()
    return ok


def sstr(b):
    return struct.pack(">I", len(b)) + b


def chan_open(kind, extra=b"", **kw):
    orig = t._send_user_message
    if extra:
        def send(m):
            t._send_user_message = orig
            m.add_bytes(extra)
            orig(m)
        t._send_user_message = send
    try:
        ch = t.open_channel(kind, timeout=20, **kw)
        ch.close()
        return True
    except paramiko.ChannelException:
        return False
    finally:
        t._send_user_message = orig


def requests():
    res = {}
    res["pty-req"] = chan_req("pty-req", sstr(b"xterm") +
                              struct.pack(">IIII", 80, 24, 0, 0) + sstr(b"\0"))
    res["x11-req"] = chan_req("x11-req", b"\0" + sstr(b"MIT-MAGIC-COOKIE-1") +
                              sstr(b"00" * 16) + struct.pack(">I", 0))
    res["auth-agent-req@openssh.com"] = chan_req("auth-agent-req@openssh.com")
    res["tcpip-forward"] = t.global_request(
        "tcpip-forward", ("127.0.0.1", 0), wait=True) is not None
    res["streamlocal-forward@openssh.com"] = t.global_request(
        "streamlocal-forward@openssh.com",
        ("/tmp/lfn-none-hostile-%d.sock" % port,), wait=True) is not None
    res["direct-tcpip"] = chan_open("direct-tcpip", dest_addr=(host, port),
                                    src_addr=("127.0.0.1", 1))
    res["direct-streamlocal@openssh.com"] = chan_open(
        "direct-streamlocal@openssh.com",
        sstr(b"/nonexistent/lfn.sock") + sstr(b"") + struct.pack(">I", 0))
    res["tun@openssh.com"] = chan_open(
        "tun@openssh.com", struct.pack(">II", 1, 0x7fffffff))
    for k, v in res.items():
        say(k, "ok" if v else "refused")


def exec_check():
    ch = t.open_session(timeout=20)
    ch.exec_command("echo exec-ok")
    out = ch.makefile().read()
    say("exec", "ok" if b"exec-ok" in out else "failed")


if mode == "after":
    switch()
    requests()
    exec_check()
elif mode == "control":
    say("cipher", t.local_cipher, "MAC", t.local_mac)
    requests()
    exec_check()
elif mode == "ptyfirst":
    ch = t.open_session(timeout=20)
    ch.get_pty()
    say("pty-req ok")
    switch()
    exec_check()
t.close()
