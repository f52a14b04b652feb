#!/usr/bin/env python3
"""roundtrips.py RTT_MS PORT < `tcpdump -n -tt -r CAPTURE`

Counts, per TCP connection to PORT in a capture taken at the client, how
often the client waited for the network: a client data segment (or the SYN)
sent at least RTT/2 after the client's previous data segment is a "wait".
A wait with server data in between is a protocol round trip; one without
(the client held data back, e.g. Nagle waiting for an ACK) is a "stall".
On an emulated link the RTT is fixed, so this counts what the protocol
did, not how fast the machine was: a gap of RTT/2 is 50 ms at 100 ms.

Prints one line per connection:
  conn ADDR waits N stalls S until-fin F.FF rtt syn 1
("syn 0": the capture missed the connection's start; its counts are short.)
"""
import re
import sys


def main():
    half = float(sys.argv[1]) / 2000.0
    port = sys.argv[2]
    conns = {}
    pat = re.compile(r'^(\S+) .*?IP (\S+) > (\S+): Flags \[([^\]]*)\]'
                     r'.*length (\d+)')
    for line in sys.stdin:
        m = pat.match(line)
        if not m:
            continue
        t, src, dst, flags, ln = float(m[1]), m[2], m[3], m[4], int(m[5])
        if src.endswith('.' + port):
            conns.setdefault(dst, []).append((t, 'S', flags, ln))
        else:
            conns.setdefault(src, []).append((t, 'C', flags, ln))
    for cli, pkts in conns.items():
        waits = stalls = 0
        last = None          # time of the client's last data segment / SYN
        server_data = False  # server sent data since then
        t0 = pkts[0][0]
        fin = None
        for t, d, flags, ln in pkts:
            if d == 'S':
                if ln or 'S' in flags:      # data, or the SYN-ACK
                    server_data = True
                continue
            if 'F' in flags and fin is None:
                fin = t
            if not (ln or 'S' in flags):
                continue
            if last is not None and t - last >= half:
                waits += 1
                if not server_data:
                    stalls += 1
            last, server_data = t, False
        end = fin if fin is not None else pkts[-1][0]
        syn = int(pkts[0][1] == 'C' and pkts[0][2] == 'S')
        print('conn %s waits %d stalls %d until-fin %.2f rtt syn %d'
              % (cli, waits, stalls, (end - t0) / (2 * half), syn))


if __name__ == '__main__':
    main()
