#!/usr/bin/python3
# regress-bench/lib/hostile-window.py -- a hostile SSH server (paramiko) that
# abuses a client's channel receive window (patches 0201 and 0202: overruns,
# and windows that must stay fixed).  It starts the ssh client itself (the command after "--", with
# "-p PORT" appended before the host argument by the caller via {PORT}) and
# drains the client's stdout, so it can stop the client's consumer.
#
#   hostile-window.py MODE HOSTKEY LOG -- ssh ... -p {PORT} host cmd
#
# MODE
#   overrun[:LIMIT[:ROUNDS]]  every round, send the client its whole window
#       plus 9 % of it (upstream's grace is 10 %), raw CHANNEL_DATA past
#       what was granted; the client's consumer keeps up.  Fails if the
#       window the client grants ever exceeds LIMIT (bytes), i.e. the
#       overrun was granted back or counted as growth.
#   x11:LIMIT[:ROUNDS]  the same on an X11 channel the server opens
#       (client run with -X, ForwardX11Trusted=yes, DISPLAY at our fake
#       X server); bulk data first (growth would show), then overruns.
#   full  grow the session window to the client's cap (the channel open is
#       confirmed 2 s late: the client's RTT fallback), stop the client's
#       consumer, fill the window, then overrun it by up to its 10 % grace.
#       Passes if the client disconnects with a protocol error ("peer
#       ignored channel window"); fails if it dies in fatal() (the buffer
#       limit) or anything else happens.
# Exit: 0 pass, 1 fail, 77 skip (paramiko missing).
import os
import re
import socket
import subprocess
import sys
import threading
import time

try:
    import paramiko
    from paramiko.common import cMSG_CHANNEL_DATA
    from paramiko.message import Message
except ImportError:
    print("python3-paramiko not installed: skipped")
    sys.exit(77)

mode, hostkey, logfile = sys.argv[1], sys.argv[2], sys.argv[3]
cmd = sys.argv[sys.argv.index("--") + 1:]
parts = mode.split(":")
kind = parts[0]
limit = int(parts[1]) if len(parts) > 1 else 0
rounds = int(parts[2]) if len(parts) > 2 else 6
# The client's RTT fallback is its session's open round trip: a late
# confirmation makes it long, so that windows can grow on loopback.
open_delay = {"full": 2.0, "x11": 1.0}.get(kind, 0.0)


def say(*a):
    print("hostile:", *a, flush=True)


class Window:
    """The client's local_window as the client computes it."""
    def __init__(self):
        self.cv = threading.Condition()
        self.lw = None
        self.most = 0
        self.adjusts = 0

    def start(self, n):
        with self.cv:
            self.lw = n
            self.most = n

    def adjust(self, n):
        with self.cv:
            self.lw += n
            self.adjusts += 1
            self.most = max(self.most, self.lw)
            self.cv.notify_all()

    def sent(self, n):
        with self.cv:
            self.lw = 0 if n > self.lw else self.lw - n


win = {}


def patched_adjust(self, m):
    pos = m.packet.tell() if hasattr(m, "packet") else None
    n = m.get_int()
    w = win.get(self.chanid)
    if w is not None:
        w.adjust(n)
    if pos is not None:
        m.packet.seek(pos)
    orig_adjust(self, m)


from paramiko.common import MSG_CHANNEL_WINDOW_ADJUST
# No re-key of paramiko's own at 512 MB in the middle of a test (it stalls
# our raw sends); the client's RekeyLimit is far off.
paramiko.packet.Packetizer.REKEY_BYTES = 1 << 40
orig_adjust = paramiko.Channel._window_adjust
paramiko.Transport._channel_handler_table[MSG_CHANNEL_WINDOW_ADJUST] = \
    patched_adjust


class Server(paramiko.ServerInterface):
    def __init__(self):
        self.ready = threading.Event()
        self.x11 = None

    def get_allowed_auths(self, username):
        return "none,publickey"

    def check_auth_none(self, username):
        return paramiko.AUTH_SUCCESSFUL

    def check_auth_publickey(self, username, key):
        return paramiko.AUTH_SUCCESSFUL

    def check_channel_request(self, kind, chanid):
        if open_delay:
            time.sleep(open_delay)
        return paramiko.OPEN_SUCCEEDED

    def check_channel_pty_request(self, *a):
        return True

    def check_channel_x11_request(self, channel, single, proto, cookie, screen):
        self.x11 = (proto, cookie)
        return True

    def check_channel_env_request(self, *a):
        return True

    def check_channel_exec_request(self, channel, command):
        self.ready.set()
        return True

    def check_channel_shell_request(self, channel):
        self.ready.set()
        return True


def raw_send(chan, data):
    m = Message()
    m.add_byte(cMSG_CHANNEL_DATA)
    m.add_int(chan.remote_chanid)
    m.add_string(data)
    chan.transport._send_user_message(m)


# The client's stdout: drained unless paused.
drain_go = threading.Event()
drain_go.set()


def drain(f):
    # overrun: a one-page pipe read a page at a time: once paused, the
    # client can hand its consumer at most two pages more.
    fd = f.fileno()
    n = 1 << 20
    if kind == "overrun":
        n = 4096
        try:
            import fcntl
            fcntl.fcntl(fd, 1031, n)     # F_SETPIPE_SZ
        except OSError:
            pass
    while True:
        drain_go.wait()
        if not os.read(fd, n):
            return


def xsink(s):
    while True:
        drain_go.wait()
        if not s.recv(4096):
            return


def xserver(lsock):
    """A fake X server: accept and discard everything (unless paused)."""
    while True:
        try:
            s, _ = lsock.accept()
        except OSError:
            return
        threading.Thread(target=xsink, args=(s,), daemon=True).start()


def main():
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    port = lsock.getsockname()[1]
    env = dict(os.environ)
    if kind == "x11":
        xs = socket.socket()
        xs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        for n in range(40, 100):
            try:
                xs.bind(("127.0.0.1", 6000 + n))
                break
            except OSError:
                continue
        else:
            say("no free X display port")
            return 1
        xs.listen(4)
        env["DISPLAY"] = "127.0.0.1:%d" % n
        threading.Thread(target=xserver, args=(xs,), daemon=True).start()
    argv = [a.replace("{PORT}", str(port)) for a in cmd]
    log = open(logfile, "wb")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=log, env=env)
    threading.Thread(target=drain, args=(proc.stdout,), daemon=True).start()
    lsock.settimeout(30)
    sock, _ = lsock.accept()
    t = paramiko.Transport(sock)
    t.add_server_key(paramiko.Ed25519Key(filename=hostkey))
    srv = Server()
    t.start_server(server=srv)
    chan = t.accept(30)
    if chan is None or not srv.ready.wait(30):
        say("client opened no session")
        proc.kill()
        return 1
    if kind == "x11":
        if srv.x11 is None:
            say("client sent no x11-req")
            proc.kill()
            return 1
        proto, cookie = srv.x11
        xch = t.open_x11_channel(("127.0.0.1", 1234))
        if isinstance(proto, str):
            proto = proto.encode()
        if isinstance(cookie, bytes):
            cookie = cookie.decode()
        p, d = proto, bytes.fromhex(cookie)
        pad = lambda b: b + b"\0" * (-len(b) % 4)
        setup = (b"l\0" + (11).to_bytes(2, "little") + (0).to_bytes(2, "little") +
                 len(p).to_bytes(2, "little") + len(d).to_bytes(2, "little") +
                 b"\0\0" + pad(p) + pad(d))
        chan_under_test = xch
    else:
        chan_under_test = chan
    w = Window()
    win[chan_under_test.chanid] = w
    w.start(chan_under_test.out_window_size)
    chunk = min(32768, chan_under_test.out_max_packet_size)
    start = w.lw
    say("%s: client window %d, max packet %d" % (kind, start, chunk))
    rc = 0
    if kind == "x11":
        raw_send(chan_under_test, setup)
        w.sent(len(setup))
    if kind in ("overrun", "x11"):
        rc = overrun_rounds(chan_under_test, w, chunk)
    elif kind == "full":
        rc = full(chan_under_test, w, chunk, logfile, proc)
    drain_go.set()
    try:
        t.close()
    except Exception:
        pass
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
    return rc


def send_window(chan, w, extra=0, until=None):
    """Send what the client's window allows (+extra bytes past it)."""
    with w.cv:
        n = w.lw + extra
    left = n
    while left > 0:
        k = min(left, chan.out_max_packet_size, 32768)
        raw_send(chan, b"x" * k)
        w.sent(k)
        left -= k
    return n


def wait_window(w, want, timeout):
    end = time.time() + timeout
    with w.cv:
        while w.lw < want and time.time() < end:
            w.cv.wait(0.1)
        return w.lw


def settle(w):
    """Wait until the client's grants stop coming."""
    last = -1
    while True:
        with w.cv:
            if w.adjusts == last:
                return
            last = w.adjusts
        time.sleep(0.5)


def client_window(chan):
    """The window the client last granted (W + A of its last grant)"""
    txt = open(logfile, errors="replace").read()
    last = None
    for a, b in re.findall(r"channel %d: window (\d+) sent adjust (\d+)"
                           % chan.remote_chanid, txt):
        last = int(a) + int(b)
    return last


def overrun_rounds(chan, w, chunk):
    if kind == "x11":
        # Bulk data the consumer keeps up with, for a few of the client's
        # RTTs (1 s: the session's open): a growing window would show.
        end = time.time() + 4
        while time.time() < end:
            send_window(chan, w)
            wait_window(w, 1, 5)
        settle(w)
        say("x11 bulk: largest grant %d" % w.most)
    for r in range(rounds):
        lw = wait_window(w, w.most * 3 // 4, 10)
        if lw == 0:
            say("round %d: client granted nothing" % r)
            return 1
        # The consumer stops during the burst so that no grant overtakes
        # it: the client sees its window run out, then 9 % more.  Its
        # grants for what it had already written to the consumer must have
        # arrived (settled), or a grant crossing the burst makes our view
        # of its window larger than its own, and the burst overruns it by
        # more than the grace (seen on a loaded machine).
        drain_go.clear()
        time.sleep(0.3)
        settle(w)
        with w.cv:
            lw = w.lw
        # Our view also counts the grants that crossed the last burst,
        # which the client's overrun absorbed: its own last grant (its -vv
        # log, read once the grants have settled) is the window it has.
        real = client_window(chan)
        if real is not None and real < lw:
            with w.cv:
                w.lw = lw = real
        extra = lw * 9 // 100
        send_window(chan, w, extra)
        time.sleep(0.3)
        drain_go.set()
        settle(w)
        say("round %d: sent %d + %d overrun; largest grant so far %d"
            % (r, lw, extra, w.most))
        if not chan.transport.is_active():
            say("client disconnected")
            return 1
    wait_window(w, w.most, 3)
    # The window the client grants, as the client computes it: its log
    # (-vv) says "channel N: window W sent adjust A" for every grant, so
    # W + A is the window it now lets us fill.  Our own running view above
    # cannot be exact: a grant the client sent while our burst was on its
    # way was absorbed by the overrun on its side, but not on ours.  An
    # overrun granted back (upstream) shows as W + A = the window + 9 %.
    txt = open(logfile, errors="replace").read()
    grants = [int(a) + int(b) for a, b in re.findall(
        r"channel %d: window (\d+) sent adjust (\d+)" % chan.remote_chanid, txt)]
    if not grants:
        say("FAIL: no grants in the client's log (run it with -vv)")
        return 1
    most = max(grants)
    say("client's largest window %d (our running view %d)" % (most, w.most))
    if most > limit:
        say("FAIL: client granted a window of %d > %d" % (most, limit))
        return 1
    say("ok: largest window granted %d <= %d" % (most, limit))
    return 0


def full(chan, w, chunk, logfile, proc):
    cap = None
    end = time.time() + 240
    # Phase 1: grow the window to its cap (the client logs the cap at debug1)
    while time.time() < end:
        send_window(chan, w)
        wait_window(w, 1, 5)
        txt = open(logfile, errors="replace").read()
        if cap is None:
            m = re.search(r"receive window \d+, may grow to (\d+)", txt)
            if m:
                cap = int(m.group(1))
                say("client's cap %d" % cap)
        if cap and re.search(r"receive window \d+ -> %d " % cap, txt):
            break
    else:
        say("window did not reach the cap (largest grant %d)" % w.most)
        return 1
    # Phase 2: stop the consumer, fill the window.
    drain_go.clear()
    time.sleep(0.5)
    for _ in range(20):
        send_window(chan, w)
        if wait_window(w, 1, 1) == 0:
            break
    say("window full (largest grant %d); overrunning" % w.most)
    # Phase 3: overrun by up to the grace and a bit, until the client goes.
    sent = 0
    while sent < cap // 10 + (2 << 20) and chan.transport.is_active():
        try:
            raw_send(chan, b"x" * chunk)
        except Exception:
            break
        sent += chunk
    say("overran by %d bytes" % sent)
    # The consumer stays stopped: the client must not grant (and so forgive
    # the overrun) while it works through what sits in the socket buffers.
    try:        # the client logs every packet past its window: not quick
        proc.wait(300)
    except subprocess.TimeoutExpired:
        pass
    drain_go.set()
    txt = open(logfile, errors="replace").read()
    if re.search(r"append data|fatal|Fatal", txt) and "peer ignored channel window" not in txt:
        say("FAIL: client died in fatal(): " +
            "; ".join(l for l in txt.splitlines() if "append" in l or "atal" in l)[:300])
        return 1
    if "peer ignored channel window" in txt or "overran the receive buffer" in txt:
        say("ok: client disconnected with a protocol error")
        return 0
    say("FAIL: client neither disconnected nor died")
    return 1


sys.exit(main())
