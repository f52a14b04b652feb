#!/usr/bin/env bash
# window-forwards: the receive windows of forwarded channels grow beyond
# upstream's 2 MiB on a long fat link (patch 0202), like session and -L
# channels (window-autotune.sh): remote forwards (-R), dynamic SOCKS forwards
# (-D) and stdio forwards (-W, which ProxyJump uses), in both directions,
# data cmp-checked.  An inner ssh rides each forward; growth is read from
# the receiving end's log ("channel N: receive window A -> B"): the outer
# client's -v log when data flows towards it, sshd's VERBOSE log otherwise.
# No timing assertions.
# Needs: 0202, 0205 (its sshd_config sets HPNDisabled in a Match block).
# Patches: 0202 0205
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-forwards
lfn_wan_link wf$$ 100 1gbit

dd if=/dev/urandom of="$T/data" bs=1M count=24 status=none
port=$(lfn_free_port)
# Inner connections that reach sshd through a forward come from 127.0.0.1:
# their own session windows stay fixed, so growth in sshd's log is the
# forward's (checked: exactly one channel grows per upload).
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<EOF2
Match Address 127.0.0.1
	HPNDisabled yes
EOF2

c() { lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" "$@"; }
# both LABEL DOWNLOG UPLOG INNER...: a download and an upload with the inner
# ssh command INNER (given "lfnpeer CMD"); DOWNLOG/UPLOG name the receivers'
# logs: "client" (the outer client's $T/outer.log) or "server" (sshd's log).
both() {
	local label=$1 downlog=$2 uplog=$3; shift 3
	xfer "$label download" "$downlog" down "$@" lfnpeer "cat $T/data"
	xfer "$label upload" "$uplog" up "$@" lfnpeer "cat > $T/up"
}
# xfer LABEL WHO DIR CMD...: one transfer; the receiver WHO's window must grow.
xfer() {
	local label=$1 who=$2 dir=$3 m log n; shift 3
	m=$(mark); rm -f "$T/down" "$T/up"
	cp "$T/outer.log" "$T/outer.before" 2>/dev/null || : > "$T/outer.before"
	if [ "$dir" = down ]; then
		"$@" > "$T/down" || fail "$label failed"
		cmp -s "$T/data" "$T/down" || fail "$label corrupted"
	else
		"$@" < "$T/data" || fail "$label failed"
		cmp -s "$T/data" "$T/up" || fail "$label corrupted"
	fi
	sleep 0.5
	if [ "$who" = client ]; then
		log="$T/outer.$dir"
		diff "$T/outer.before" "$T/outer.log" | sed -n 's/^> //p' > "$log"
	else
		log=$(since "$m")
		if [ "$dir" = up ]; then
			n=$(grep -c 'receive window 2097152 -> ' "$log")
			[ "$n" -eq 1 ] || fail "$label: $n channels grew on sshd, expected the forward's only"
		fi
	fi
	check_grew "$label ($who receives)" "$log"
}
# outer ARGS...: a long-lived outer ssh (-N) with forwarding ARGS, logging
# to $T/outer.log; waits for WAITFOR in the log.
outer() {
	local waitfor=$1; shift
	: > "$T/outer.log"
	# started directly (not through a function) so that $! is ssh itself
	ip netns exec "$NA" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$port" \
	    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -v -E "$T/outer.log" \
	    -N -o ExitOnForwardFailure=yes "$@" lfnpeer &
	OUTER=$!; LFN_PIDS+=("$OUTER")
	for _ in $(seq 1 150); do grep -q "$waitfor" "$T/outer.log" 2>/dev/null && return; sleep 0.1; done
	fail "outer ssh $*: no '$waitfor'"; cat "$T/outer.log" >&2
}

tid "-R forward: both directions grow"
# sshd listens on 127.0.0.1:rport inside the server's namespace; each
# connection comes back to the outer client, which connects to a second
# sshd on 127.0.0.1:aport in the client's namespace.  The inner ssh runs in
# the server's namespace, so its data crosses the link once, on the -R
# channel, as with -D and -W.  (Sending the inner connection back across the
# link to the first sshd made the -R channel wait on the inner session's
# own window growth over twice the round trip: CI once saw no growth.)
rport=$(( port + 1 )) aport=$(( port + 3 ))
nb_log=$SSHD_LOG
lfn_sshd_start "$LFN_TREE" "$aport" "$NA" <<EOF2
Match Address 127.0.0.1
	HPNDisabled yes
EOF2
SSHD_LOG=$nb_log
outer "remote forward success" -R "127.0.0.1:$rport:127.0.0.1:$aport"
inner_r() { lfn_ssh "$LFN_TREE" -n "$NB" -h 127.0.0.1 "$rport" "$@"; }
# download = inner client receives: the -R channel carries it sshd-wards
both "-R" server client inner_r
kill "$OUTER" 2>/dev/null; wait "$OUTER" 2>/dev/null

tid "-D dynamic (SOCKS) forward: both directions grow"
dport=$(( port + 2 ))
outer "Local forwarding listening" -D "127.0.0.1:$dport"
inner_d() {
	lfn_ssh "$LFN_TREE" -n "$NA" -h "127.0.0.1" "$port" -o ProxyCommand="python3 $LFN_TOP/regress-bench/lib/socks5-connect.py 127.0.0.1 $dport 127.0.0.1 $port" "$@"
}
both "-D" client server inner_d
kill "$OUTER" 2>/dev/null; wait "$OUTER" 2>/dev/null

tid "-W stdio forward (ProxyJump): both directions grow"
: > "$T/outer.log"
inner_w() {
	lfn_ssh "$LFN_TREE" -n "$NA" -h 127.0.0.1 "$port" -o ProxyCommand="$LFN_TREE/ssh -F $T/ssh_config -p $port -o HostKeyAlias=lfnpeer -o HostName=$ADDR -v -E $T/outer.log -W 127.0.0.1:$port lfnpeer" "$@"
}
both "-W" client server inner_w

lfn_finish
