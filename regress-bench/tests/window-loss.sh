#!/usr/bin/env bash
# window-loss: while packets arrive out of order, a receive window may grow
# to 6x the BDP it measured instead of 2x (patch 0232).  A lost packet makes
# TCP hold back everything after it until the retransmission comes, about
# one RTT, and the consumer reads nothing meanwhile: with 2x the sender
# stalls on the window at nearly every loss (one BBR connection moved 0.71
# of one BBR TCP stream at 1 Gbit/s x 100 ms, loss 1e-4; 0.86-0.90 with 6x
# and the rate over a sliding span of RTTs).
# On an emulated 1 Gbit/s x 50 ms link (BDP 6.25 MB) with random loss 1e-3,
# BBR on both ends (TCPCongestionControl, 0250: under CUBIC such a link
# moves too little for any window to grow), an upload (sshd receives) and
# a download (the client receives) of 256 MiB: the receiver must log growth
# "receive window A -> W (..., bdp B, headroom 6)", every step within its
# stated headroom (W <= H x B, B as logged: rounded), and the largest
# window at most 6x the link's nominal BDP (+30 %: the eight-RTT rate can
# read high, as a loss delivers at once what it held back for a RTT and
# RACK's quarter min RTT; measured up to 1.18 x in 30 runs, and up to
# 1.4 x when the span was four RTTs).  The same bound at 2x without loss
# is window-bdp.sh's.  Read from the logs, no timing.
# Needs: 0232 (0230 the BDP, 0250 TCPCongestionControl, 0901 the peer
# recognised as openssh-lfn).
# Patches: 0230 0232 0250 0901
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"

grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null ||
	modprobe tcp_bbr 2>/dev/null
grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null ||
	{ echo "no bbr in this kernel: skipped"; exit 77; }
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-loss
head -c 268435456 /dev/zero > "$T/data"
bdp=$(( 1000 * 1000000 / 8 * 50 / 1000 ))

# check LABEL LOG: the growth steps LOG shows
check() {
	local label=$1 log=$2 n4 bad w
	grep -o 'receive window [0-9]* -> [0-9]* .*' "$log" | tr -d '\r' > "$T/steps"
	sed 's/^/    /' "$T/steps"
	[ -s "$T/steps" ] || { fail "$label: the window did not grow"; return; }
	n4=$(grep -c 'headroom 6)' "$T/steps")
	verbose "$label: $(wc -l < "$T/steps") steps, $n4 with headroom 6"
	[ "$n4" -ge 1 ] || fail "$label: no growth step with headroom 6 on a lossy link"
	# B is logged rounded (%.0f), the window is H times the unrounded
	# one: W <= H x (B + 0.5)
	bad=$(awk '{ w = $5; b = $0; sub(/.* bdp /, "", b); b += 0;
	    h = $0; sub(/.* headroom /, "", h); h += 0;
	    if (h != 2 && h != 6 || w > h * (b + 0.5)) print }' "$T/steps")
	[ -z "$bad" ] || fail "$label: beyond the stated headroom: $bad"
	w=$(awk '{ if ($5 > m) m = $5 } END { print m + 0 }' "$T/steps")
	[ "$w" -le $(( 6 * bdp * 13 / 10 )) ] || fail "$label: window $w > 6 x link BDP $bdp (+30 %)"
}

lfn_wan_link wl$$ 50 1gbit --loss 0.001
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "TCPCongestionControl bbr"
c() { lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" -o TCPCongestionControl=bbr "$@"; }

tid "1 Gbit/s x 50 ms, loss 1e-3, BBR: upload, sshd's window"
m=$(mark)
c lfnpeer "cat > /dev/null" < "$T/data" || fail "upload failed"
sleep 0.5
grep -q 'congestion control bbr' "$(since "$m")" || fail "sshd's connection did not use bbr"
check upload "$(since "$m")"

tid "1 Gbit/s x 50 ms, loss 1e-3, BBR: download, the client's window"
c -v lfnpeer "cat $T/data" 2> "$T/dl.log" | cmp -s - "$T/data" || fail "download corrupted"
grep -q 'congestion control: bbr\|congestion control bbr' "$T/dl.log" || fail "the client did not use bbr"
check download "$T/dl.log"

lfn_finish
