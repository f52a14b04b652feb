#!/usr/bin/python3
"""sftp-stray-bytes: sftp-server is sent INIT, then a few stray bytes (the
start of a packet that never comes), then EOF.  It must exit on the EOF at
once, as upstream's does.  A loop that works off every complete request
(ours, 0104's) must not take a packet length of 0 (four zero bytes) for a
complete request that process() would not take: one did (the held 0266's)
and spun at 100 % CPU for ever.

    sftp-stray-bytes.py SFTP_SERVER DIR

One line per case: "ok CASE exit RC cpu S" or "FAIL CASE ...".  Exit 1 if
any failed."""
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
from sftp_raw import Server, init, VERSION  # noqa: E402

server, d = sys.argv[1], sys.argv[2]
# a correct server exits in milliseconds; the defect never does (it burns
# a core until killed).  Exit within WAIT_S, under CPU_S of CPU; a server
# still running then without having used CPU (starved on a busy machine,
# not spinning) gets GRACE_S more before it fails.
WAIT_S, CPU_S, GRACE_S = 1.0, 0.5, 5.0
cases = [("%d zero bytes" % n, b"\0" * n) for n in range(5)]
cases += [("length 1, no type", b"\0\0\0\x01"),
          ("length 5, 3 bytes of it", b"\0\0\0\x05\x03\0\0"),
          ("a whole empty packet (length 0) and a byte", b"\0\0\0\0\x11")]
bad = 0
for name, stray in cases:
    s = Server([server, "-e", "-l", "DEBUG3"], d)
    s.send(init() + stray)
    t, _ = s.reply(WAIT_S)
    s.close()
    rc, cpu, err = s.wait(WAIT_S, grace=GRACE_S, grace_cpu=0.1)
    # (a server that works off every complete request before it writes
    # may end on the garbage before its VERSION is out: not a failure)
    if rc is None or cpu >= CPU_S:
        print("FAIL %s: %s, %.2f s of CPU (a loop that does not see the EOF)" %
              (name, "still running after %.0f s, killed" % WAIT_S
               if rc is None else "exit %d" % rc, cpu))
        bad = 1
    else:
        print("ok %s: exit %d cpu %.3f s%s" % (name, rc, cpu, "" if t == VERSION
              else " (no VERSION)"))
sys.exit(bad)
