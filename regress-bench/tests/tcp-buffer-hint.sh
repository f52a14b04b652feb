#!/usr/bin/env bash
# tcp-buffer-hint: on an untuned host the kernel's TCP buffer maxima, not
# ssh, limit a long fat link, and ssh -v / sshd at LogLevel VERBOSE say so
# once per connection, naming the sysctl and a value that would do (patch
# 0251).  Over an emulated 1 Gbit/s x 100 ms link:
#  - namespaces with Debian's defaults (tcp_rmem max 6291456, tcp_wmem max
#    4194304): an upload and a download each give the hint (on the client
#    or in sshd's log), at most once per process;
#  - the same with raised buffers (128 MiB): no hint at all.
# The end-of-connection TCP report (congestion control, retransmissions)
# appears in ssh -v.  No timing is asserted.  Needs root (namespaces).
# Patches: 0251
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init tcp-buffer-hint
"$LFN_TREE/ssh" -G -F /dev/null x 2>/dev/null | grep -q '^tcpcongestioncontrol ' ||
	echo "ssh has no TCPCongestionControl (patches 0250/0251 missing): expect failures"
dd if=/dev/urandom of="$T/data" bs=1M count=160 status=none

hint='TCP (send|receive) buffer limits this connection.*net\.ipv4\.tcp_[rw]mem|TCP receive window of the peer limits'
# run BUFFERS: an upload and a download over a fresh link
run() {
	local b=$1 p
	lfn_wan_link "h$b$$" 100 1gbit --tcp-buffers "$b"
	verbose "$b: tcp_rmem $(ip netns exec "$NA" cat /proc/sys/net/ipv4/tcp_rmem | tr '\t' ' '), tcp_wmem $(ip netns exec "$NA" cat /proc/sys/net/ipv4/tcp_wmem | tr '\t' ' ')"
	p=$(lfn_free_port)
	lfn_sshd_start "$LFN_TREE" "$p" "$NB" </dev/null
	lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p" -v lfnpeer 'cat > /dev/null' \
		< "$T/data" 2> "$T/up.$b" || fail "$b: upload failed: $(tail -3 "$T/up.$b")"
	lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p" -v lfnpeer "cat $T/data" \
		2> "$T/down.$b" > "$T/got" || fail "$b: download failed: $(tail -3 "$T/down.$b")"
	cmp -s "$T/data" "$T/got" || fail "$b: download corrupted"
	sleep 1
	cp "$SSHD_LOG" "$T/sshd.$b"
	lfn_cleanup
	lfn_wan_cleanup
}

tid "Debian's default TCP buffers, 1 Gbit/s x 100 ms: the hint appears"
run debian
for d in up down; do
	c=$(grep -cE "$hint" "$T/$d.debian")
	verbose "$d: client: $(grep -hE "$hint" "$T/$d.debian" | sed 's/^debug1: //' | head -1)"
	[ "$c" -le 1 ] || fail "$d: the client said it $c times"
done
s=$(grep -cE "$hint" "$T/sshd.debian")
verbose "sshd ($s): $(grep -hE "$hint" "$T/sshd.debian" | head -2 | tr '\n' '|')"
[ "$s" -le 2 ] || fail "sshd said it $s times for 2 connections"
grep -qE "$hint" "$T/up.debian" "$T/sshd.debian" || fail "upload: no hint on either side"
grep -qE "$hint" "$T/down.debian" "$T/sshd.debian" || fail "download: no hint on either side"
grep -qE 'TCP (send|receive) buffer limits.*sysctl -w net\.ipv4\.tcp_[rw]mem="[0-9]+ [0-9]+ [0-9]+"' \
	"$T/up.debian" "$T/down.debian" "$T/sshd.debian" || fail "no hint names a sysctl value"

tid "ssh -v reports the congestion control and retransmissions at the end"
grep -qE 'TCP: congestion control [a-z0-9_]+, min RTT .* retransmitted [0-9]+' "$T/up.debian" ||
	fail "no TCP report in ssh -v: $(grep 'TCP' "$T/up.debian" | tail -3)"
grep -q 'TCP congestion control: ' "$T/up.debian" || fail "ssh -v did not report the congestion control in use"

tid "raised TCP buffers: no hint"
run raised
for f in up.raised down.raised sshd.raised; do
	grep -qE "$hint" "$T/$f" && fail "$f: hint with raised buffers: $(grep -hE "$hint" "$T/$f" | head -1)"
done
lfn_finish
