#!/usr/bin/env bash
# window-budget: one connection's receive windows together grow at most
# ChannelWindowBudget beyond their initial windows (patch 0231), however
# many channels it opens.  On an emulated 1 Gbit/s x 50 ms link, with
# MaxChannelWindow 16M (each channel alone would grow to ~12.5 MB, twice
# its BDP) and, set under Match in sshd_config, ChannelWindowBudget 8M:
# one ControlMaster connection opens, one after the other (so that each
# has the link to itself and its window would grow), 10 upload sessions
# and 10 -L forwarded connections whose consumers read 24 MiB and then
# stall, all staying open.  sshd's log ("channel N: receive window A ->
# B") must show the sum of the channels' windows <= budget + channels x
# 2 MiB, and the sshd-session's VmRSS must stay within 1.5 x that (the
# queue's allocation policy) + slack.  Without a budget each window grows
# on its own (20 x ~12.5 MB).  Also: ssh -G / sshd -T print the option.
# No timing assertions (the sleeps only let each channel ramp alone).
# Patches: 0231
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-budget
lfn_wan_link wg$$ 50 1gbit

MIB=1048576
BUDGET=$((8 * MIB))
INIT=$((2 * MIB))
NSES=10
NFWD=10
SLACK=$((16 * MIB))
port=$(lfn_free_port)
tport=$(( port + 1 )); lport=$(( port + 2 ))

tid "ssh -G and sshd -T print ChannelWindowBudget"
g=$("$LFN_TREE/ssh" -G -F /dev/null -o ChannelWindowBudget=64M x 2>&1 | grep -i '^channelwindowbudget ' | tr A-Z a-z)
[ "$g" = "channelwindowbudget 67108864" ] || fail "ssh -G: '$g'"
g=$("$LFN_TREE/ssh" -G -F /dev/null x 2>&1 | grep -i '^channelwindowbudget ' | tr A-Z a-z)
[ "$g" = "channelwindowbudget 134217728" ] || fail "ssh -G default: '$g'"

cfg="MaxChannelWindow 16M
MaxSessions 40
Match User $(id -un)
	ChannelWindowBudget 8M"
lfn_sshd_config "$LFN_TREE" "$port" <<< "$cfg" > "$T/try.conf"
if ! "$LFN_TREE/sshd" -t -f "$T/try.conf" 2>/dev/null; then
	fail "sshd does not accept ChannelWindowBudget (measuring without it)"
	cfg="MaxChannelWindow 16M
MaxSessions 40"
else
	g=$("$LFN_TREE/sshd" -T -f "$T/try.conf" -C "user=$(id -un),addr=198.18.0.1,host=x,laddr=198.18.0.2,lport=$port" | grep -i '^channelwindowbudget ' | tr A-Z a-z)
	[ "$g" = "channelwindowbudget 8388608" ] || fail "sshd -T -C (Match): '$g'"
	g=$("$LFN_TREE/sshd" -T -f "$T/try.conf" | grep -i '^channelwindowbudget ' | tr A-Z a-z)
	[ "$g" = "channelwindowbudget 134217728" ] || fail "sshd -T default: '$g'"
fi
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "$cfg"

# The forwards' target (in sshd's namespace): reads 24 MiB per connection,
# then stops reading and keeps the connection open.
cat > "$T/fwd.py" <<'EOF'
import socket, sys, threading, time
mode, port = sys.argv[1], int(sys.argv[2])
if mode == "sink":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(64)
    def serve(c):
        n = 0
        while n < 24 << 20:
            b = c.recv(1 << 20)
            if not b: return
            n += len(b)
        time.sleep(3600)
    print("listening", flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
else:   # source: one connection pushing zeros until killed
    c = socket.create_connection(("127.0.0.1", port))
    z = bytes(1 << 20)
    while True:
        c.sendall(z)
EOF
ip netns exec "$NB" python3 "$T/fwd.py" sink "$tport" > "$T/sink.out" 2>&1 &
LFN_PIDS+=("$!")
ip netns exec "$NA" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$port" \
    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -o ControlMaster=yes \
    -o ControlPath="$S/ctl" -o ExitOnForwardFailure=yes -N \
    -L "127.0.0.1:$lport:127.0.0.1:$tport" lfnpeer 2> "$T/master.log" &
LFN_PIDS+=("$!")
for _ in $(seq 1 100); do [ -S "$S/ctl" ] && break; sleep 0.1; done
[ -S "$S/ctl" ] || { cat "$T/master.log"; lfn_die "master did not start"; }
# An idle sshd-session of this connection, before any channel grows.
sleep 1
rss() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
session_rss() {
	local p q m=0 v
	for p in $(pgrep -P "$SSHD_PID"); do
		for q in $p $(pgrep -P "$p"); do
			v=$(rss "$q"); [ "$v" -gt "$m" ] && m=$v
		done
	done
	echo "$m"
}
base=$(session_rss)

tid "$NSES sessions and $NFWD forwarded channels, each stalled after 24 MiB"
m=$(mark)
for i in $(seq 1 $NSES); do
	ip netns exec "$NA" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$port" \
	    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -o ControlPath="$S/ctl" \
	    lfnpeer "head -c 25165824 > /dev/null; sleep 3600" < /dev/zero \
	    > /dev/null 2>&1 &
	LFN_PIDS+=("$!")
	sleep 1.5
done
for i in $(seq 1 $NFWD); do
	ip netns exec "$NA" python3 "$T/fwd.py" source "$lport" > /dev/null 2>&1 &
	LFN_PIDS+=("$!")
	sleep 1.5
done
sleep 2
r=$(session_rss)
log=$(since "$m")
# per channel: the largest window it was granted (2 MiB if it never grew)
grown=$(grep -o 'channel [0-9]*: receive window [0-9]* -> [0-9]*' "$log" |
    awk '{ c = $2; if ($7 > w[c]) w[c] = $7 } END { for (c in w) print w[c] }')
ngrown=$(echo "$grown" | grep -c .)
sum=$(echo "$grown" | awk -v i=$INIT '{ s += $1 - i } END { print s + 0 }')
nch=$(( NSES + NFWD ))
verbose "$ngrown of $nch channels grew, by $sum bytes in all (budget $BUDGET)"
verbose "windows: $(echo $grown)"
[ "$ngrown" -ge 1 ] || fail "no window grew (the test needs growth)"
[ "$sum" -le "$BUDGET" ] ||
	fail "windows grew by $sum > budget $BUDGET: sum $(( sum + nch * INIT )) > budget + $nch x 2 MiB"
verbose "sshd-session VmRSS $((r / MIB)) MiB (idle $((base / MIB)) MiB)"
[ "$r" -le $(( base + (BUDGET + nch * INIT) * 3 / 2 + SLACK )) ] ||
	fail "sshd-session VmRSS $r beyond 1.5 x (budget + $nch x 2 MiB) + slack"
grep -q 'exited\|fatal\|Disconnect' "$log" && grep 'exited\|fatal\|Disconnect' "$log" | head -3
ssh_ok=$(ip netns exec "$NA" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$port" \
    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -o ControlPath="$S/ctl" \
    lfnpeer "echo alive" 2>&1)
[ "$ssh_ok" = alive ] || fail "connection unusable after the stall: $ssh_ok"

lfn_finish
