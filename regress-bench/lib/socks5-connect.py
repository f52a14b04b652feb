#!/usr/bin/env python3
"""socks5-connect.py PROXYHOST PROXYPORT HOST PORT: connect to HOST:PORT
through a SOCKS5 proxy (no authentication) and relay stdin/stdout, like
`nc -X 5 -x PROXY HOST PORT` -- a ProxyCommand for tests of ssh -D.
Standard library only."""
import os, selectors, socket, struct, sys


def main():
    phost, pport, host, port = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    s = socket.create_connection((phost, pport))
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        sys.exit("socks5: proxy refused no-auth")
    name = host.encode()
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack(">H", port))
    head = b""
    while len(head) < 5:
        chunk = s.recv(5 - len(head))
        if not chunk:
            sys.exit("socks5: proxy closed")
        head += chunk
    if head[1] != 0:
        sys.exit("socks5: connect failed, reply %d" % head[1])
    rest = {1: 4 + 2 - 1, 4: 16 + 2 - 1, 3: head[4] + 2}[head[3]]
    while rest > 0:
        rest -= len(s.recv(rest))
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ, "in")
    sel.register(s, selectors.EVENT_READ, "sock")
    open_in = True
    while True:
        for key, _ in sel.select():
            if key.data == "in":
                data = os.read(0, 262144)
                if not data:
                    sel.unregister(0)
                    s.shutdown(socket.SHUT_WR)
                    open_in = False
                else:
                    s.sendall(data)
            else:
                data = s.recv(262144)
                if not data:
                    return
                view = memoryview(data)
                while view:
                    view = view[os.write(1, view):]
        if not open_in and not sel.get_map():
            return


if __name__ == "__main__":
    main()
