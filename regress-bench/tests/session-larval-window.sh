#!/usr/bin/env bash
# session-larval-window: patch 0242.  sshd opens a session channel with a
# one-packet window (32 KiB) instead of 0, and keeps what the client sends
# into it before its exec/shell/subsystem request for the command.  With a
# client built on paramiko (regress-bench/lib/larval-session-client.py):
#  - data sent before the exec request reaches the command whole and in
#    order (stock sshd opens with a window of 0: the same client cannot
#    send at all, checked as the control);
#  - a client that ignores that window (96 KiB before its request) is
#    disconnected ("peer ignored channel window"): what a session holds
#    before its command starts stays bounded (32 KiB + grace + a packet);
#  - a request that fails after data came in drops the data with the
#    channel, and the connection keeps working.
# The round trips this saves are counted by sftp-small-roundtrips.sh.
# Patches: 0242
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }
lfn_paramiko_python
trap lfn_cleanup EXIT
lfn_env_init session-larval-window
C="$LFN_TOP/regress-bench/lib/larval-session-client.py"
p=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p"; slog=$SSHD_LOG
ps=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$ps"
client() {	# PORT MODE: output in $T/MODE.PORT
	timeout 60 "$PY" "$C" 127.0.0.1 "$1" "$(id -un)" "$T/id_ed25519" "$2" \
	    > "$T/$2.$1" 2> "$T/$2.$1.err"
}

tid "data sent before the exec request reaches the command"
client "$p" early || fail "early data: $(cat "$T/early.$p" "$T/early.$p.err" | tail -n 3)"
grep -q '^early ok 20000' "$T/early.$p" || fail "early data: $(cat "$T/early.$p")"
grep -q '^exit 0' "$T/early.$p" || fail "exit status: $(cat "$T/early.$p")"
client "$ps" early && fail "control: stock sshd let data in before the request"
grep -q 'window closed before the request' "$T/early.$ps" ||
	fail "control (stock sshd): $(cat "$T/early.$ps" "$T/early.$ps.err" | tail -n 3)"

tid "a client that ignores the larval window is disconnected"
client "$p" overrun
grep -q '^disconnected' "$T/overrun.$p" || fail "overrun: $(cat "$T/overrun.$p" "$T/overrun.$p.err" | tail -n 3)"
grep -q 'transport still active' "$T/overrun.$p" && fail "overrun: connection kept"
for _ in $(seq 30); do grep -q 'peer ignored channel window' "$slog" && break; sleep 0.1; done
grep -q 'peer ignored channel window' "$slog" || fail "sshd did not log the overrun"

tid "a refused request drops the data; the connection keeps working"
client "$p" refused || fail "refused: $(tail -n 3 "$T/refused.$p.err")"
grep -q '^refused ok' "$T/refused.$p" || fail "refused: $(cat "$T/refused.$p")"
lfn_finish
