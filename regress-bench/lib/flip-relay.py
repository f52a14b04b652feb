#!/usr/bin/env python3
# flip-relay.py LPORT DPORT FLIP_AT: a loopback TCP relay for the tests that
# flips one byte (xor 0x01) of the server->client stream at offset FLIP_AT.
# Accepts one connection on 127.0.0.1:LPORT, connects it to 127.0.0.1:DPORT,
# prints "listening" once ready and "flipped byte at N" when it flipped.
import socket, sys, threading
lport, dport, flip_at = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", lport))
ls.listen(1)
print("listening", flush=True)
c, _ = ls.accept()
d = socket.create_connection(("127.0.0.1", dport))
def pump(src, dst, flip):
    n = 0
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            if flip is not None and n <= flip < n + len(b):
                b = bytearray(b)
                b[flip - n] ^= 0x01
                b = bytes(b)
                print("flipped byte at", flip, flush=True)
            n += len(b)
            dst.sendall(b)
    except OSError:
        pass
    for x in (src, dst):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
t = threading.Thread(target=pump, args=(c, d, None))
t.start()
pump(d, c, flip_at)
t.join()
