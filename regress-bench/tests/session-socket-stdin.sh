#!/usr/bin/env bash
# session-socket-stdin: ssh whose stdin and stdout are one socketpair (as
# scp and sftp start it) does not leave its writer blocked for ever when
# the server ends the session while data still waits to be sent: a remote
# command that never reads its input and writes 1 MB (less than the window) exits; ssh, told the
# channel is closed, stops reading, and the program feeding it must then
# get an error (EPIPE), as with a pipe, and ssh must exit.  Before 0106
# ssh only closed its own descriptor: the socket stayed open through
# stdout, the writer blocked, and ssh waited for it to read (an scp
# upload whose sftp-server was killed hung that way, stock sshd or ours).
# Patches: 0106
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init session-socket-stdin
port=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$port"
for server in lfn stock; do
	tree=$LFN_TREE
	if [ $server = stock ]; then
		[ -x "$STOCK_TREE/sshd" ] || fail "stock build missing"
		p2=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p2"; port=$p2
	fi
	tid "$server sshd: the command ends unread; the socket's writer gets EPIPE, ssh exits"
	/usr/bin/python3 - "$tree/ssh" -F "$T/ssh_config" -p "$port" -o HostKeyAlias=lfnpeer \
	    -o HostName=127.0.0.1 lfnpeer 'head -c 1000000 /dev/zero; sleep 1' > "$T/out" 2>&1 <<'EOF'
import signal, socket, subprocess, sys, time
# a blocking writer, as scp's: poll() never reports a socket whose peer
# stopped reading as writable, only a blocked write returns EPIPE
def late(signo, frame):
    raise TimeoutError
signal.signal(signal.SIGALRM, late)
a, b = socket.socketpair()
p = subprocess.Popen(sys.argv[1:], stdin=b, stdout=b)
b.close()
t0 = time.time()
signal.alarm(20)
try:
    while True:
        a.sendall(b"x" * 65536)
except TimeoutError:
    print("the writer is still blocked after 20 s")
    p.kill()
    sys.exit(1)
except (BrokenPipeError, ConnectionResetError):
    signal.alarm(0)
a.close()
try:
    rc = p.wait(20)
except subprocess.TimeoutExpired:
    print("ssh still runs 20 s after its writer gave up")
    p.kill()
    sys.exit(1)
print("EPIPE after %.1f s, ssh exit %d" % (time.time() - t0, rc))
EOF
	rc=$?
	verbose "$(tail -n 1 "$T/out")"
	[ $rc = 0 ] || fail "$(tail -n 1 "$T/out")"
done
lfn_finish
