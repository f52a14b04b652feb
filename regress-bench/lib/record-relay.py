#!/usr/bin/env python3
# record-relay.py LPORT DPORT OUTPREFIX: a loopback TCP relay for the tests.
# Accepts connections on 127.0.0.1:LPORT, connects each to 127.0.0.1:DPORT
# and appends every byte it forwards to OUTPREFIX.c2s / OUTPREFIX.s2c (the
# raw wire, both directions, all connections).  Prints "listening" once
# ready.  Runs until killed.
import socket, sys, threading

lport, dport, prefix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
outs = {d: open(prefix + "." + d, "ab", buffering=0) for d in ("c2s", "s2c")}


def pump(src, dst, name):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            with lock:
                outs[name].write(b)
            dst.sendall(b)
    except OSError:
        pass
    for x, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
        try:
            x.shutdown(how)
        except OSError:
            pass


def serve(c):
    try:
        d = socket.create_connection(("127.0.0.1", dport))
    except OSError:
        c.close()
        return
    t = threading.Thread(target=pump, args=(c, d, "c2s"), daemon=True)
    t.start()
    pump(d, c, "s2c")
    t.join()
    c.close()
    d.close()


ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", lport))
ls.listen(8)
print("listening", flush=True)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
