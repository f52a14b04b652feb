#!/usr/bin/env bash
# none-sshd-enforce: sshd enforces "a tty or
# forwarding is never carried unencrypted" whatever the client:
#  - a hostile client (regress-bench/lib/none-hostile-client.py, paramiko
#    taught to re-key to cipher none like HPN-SSH) that switched, then asks
#    for a pty, X11, agent forwarding, tcpip-forward, streamlocal-forward,
#    direct-tcpip, direct-streamlocal and a tunnel: all refused (and logged),
#    the connection keeps working;
#  - the same client without the switch: pty, agent, tcpip-forward,
#    direct-tcpip granted (so the refusals above are the none policy);
#  - a client that got a pty first cannot switch afterwards;
#  - our own ssh as a ControlMaster with NoneForwarding: forwards added by
#    a mux client (-O forward -L / -R) after the switch are refused;
#  - clients that never switch (ours without NoneEnabled, stock) keep their
#    -L forwarding on a NoneEnabled sshd, also while it re-keys.
# Needs: 0401, 0403.
# Patches: 0401 0403
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init none-sshd-enforce
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }
lfn_paramiko_python

p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<-EOF
NoneEnabled yes
X11Forwarding yes
LogLevel VERBOSE
EOF
slog=$SSHD_LOG
hostile() {
	timeout 120 "$PY" "$LFN_TOP/regress-bench/lib/none-hostile-client.py" 127.0.0.1 "$p" "$(id -un)" \
	    "$T/id_ed25519" "$1" > "$T/hostile.$1" 2> "$T/hostile.$1.err" ||
		fail "hostile client ($1) failed: $(tail -n 3 "$T/hostile.$1.err")"
}
reqs="pty-req x11-req auth-agent-req@openssh.com tcpip-forward streamlocal-forward@openssh.com
	direct-tcpip direct-streamlocal@openssh.com tun@openssh.com"

tid "hostile client switched to cipher none: pty, X11, agent, port/streamlocal forwarding, tunnel refused"
hostile after
grep -q '^cipher none MAC hmac-sha2-256' "$T/hostile.after" || fail "did not switch: $(head -n 1 "$T/hostile.after")"
sleep 0.3
for r in $reqs; do
	if grep -q "^$r refused" "$T/hostile.after" && grep -q "NoneEnabled: refused $r from" "$slog"; then
		verbose "$r refused"
	else
		fail "$r not refused after the switch: $(grep "^$r " "$T/hostile.after")"
	fi
done
grep -q '^exec ok' "$T/hostile.after" || fail "the connection stopped working after the refusals"

tid "control: the same client without the switch gets them"
hostile control
grep -q '^cipher aes128-ctr' "$T/hostile.control" || fail "control connection: $(head -n 1 "$T/hostile.control")"
for r in pty-req auth-agent-req@openssh.com tcpip-forward direct-tcpip; do
	grep -q "^$r ok" "$T/hostile.control" || fail "$r refused on an encrypted connection"
done

tid "a client that got a pty cannot switch to cipher none afterwards"
hostile ptyfirst
grep -q '^pty-req ok' "$T/hostile.ptyfirst" || fail "pty refused before the switch"
grep '^cipher' "$T/hostile.ptyfirst" | grep -q 'cipher none' && fail "switched to none with a pty granted"
grep -q '^exec ok' "$T/hostile.ptyfirst" || fail "connection broken"

tid "mux client adds forwards after the switch (master NoneForwarding yes): refused by sshd"
ctl="$S/ctl"
lfn_ssh "$LFN_TREE" "$p" -v -E "$T/master.log" -oNoneEnabled=yes -oNoneForwarding=yes -M -S "$ctl" \
    -oControlPersist=no -fN lfnpeer || fail "mux master failed"
mpid=$("$LFN_TREE/ssh" -S "$ctl" -O check x 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
[ -n "$mpid" ] && LFN_PIDS+=("$mpid")
for _ in $(seq 50); do grep -q 'NOT ENCRYPTED' "$T/master.log" && break; sleep 0.1; done
grep -q 'NOT ENCRYPTED' "$T/master.log" || fail "mux master did not switch"
lp=$(lfn_free_port)
"$LFN_TREE/ssh" -S "$ctl" -O forward -L "127.0.0.1:$lp:127.0.0.1:$p" x 2>/dev/null || fail "-O forward -L failed locally"
banner=$(timeout 10 "$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
try:
    print(s.recv(64).decode(errors="replace").strip())
except OSError:
    pass' "$lp" 2>/dev/null)
case "$banner" in SSH-*) fail "direct-tcpip through the unencrypted connection was granted ($banner)" ;; esac
"$LFN_TREE/ssh" -S "$ctl" -O forward -R "127.0.0.1:0:127.0.0.1:$p" x > "$T/rfwd" 2>&1 &&
	fail "tcpip-forward (-R) granted after the switch: $(cat "$T/rfwd")"
sleep 0.3
grep -q 'NoneEnabled: refused direct-tcpip' "$slog" || fail "sshd did not refuse the -L channel"
grep -q 'NoneEnabled: refused tcpip-forward' "$slog" || fail "sshd did not refuse the -R request"
"$LFN_TREE/ssh" -S "$ctl" -O exit x 2>/dev/null

tid "clients that never switch keep their forwarding, also during rekeys (sshd RekeyLimit 256K)"
p2=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p2" <<-EOF
NoneEnabled yes
RekeyLimit 256K
PerSourcePenalties no
EOF
slog2=$SSHD_LOG
dd if=/dev/urandom of="$T/data" bs=1M count=1 status=none
clients=("$LFN_TREE")
[ -x "$STOCK_TREE/ssh" ] && clients+=("$STOCK_TREE")
for tree in "${clients[@]}"; do
	lp=$(lfn_free_port)
	lfn_ssh "$tree" "$p2" -oExitOnForwardFailure=yes -L "127.0.0.1:$lp:127.0.0.1:$p2" lfnpeer \
	    "for i in \$(seq 50); do head -c 1048576 $T/data; sleep 0.1; done; sleep 60" > /dev/null 2> "$T/err" &
	cpid=$!; LFN_PIDS+=("$cpid")
	got=0
	for i in $(seq 30); do
		b=$(timeout 5 "$PY" -c '
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    print(s.recv(64).decode(errors="replace").strip())
except OSError:
    pass' "$lp" 2>/dev/null)
		case "$b" in SSH-*) got=$((got + 1)) ;; esac
		sleep 0.05
	done
	kill -0 "$cpid" 2>/dev/null || fail "$(basename "$tree") client died: $(tail -n 3 "$T/err")"
	kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
	[ "$got" -ge 1 ] || fail "$(basename "$tree"): no forwarded connection worked"
	verbose "$(basename "$tree") client: $got of 30 forwarded connections during rekeys"
done
sleep 0.3
grep -q 'NoneEnabled: refused' "$slog2" && fail "sshd refused forwarding of a client that never switched: $(grep 'NoneEnabled: refused' "$slog2" | head -n 2)"
lfn_finish
