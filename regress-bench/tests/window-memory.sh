#!/usr/bin/env bash
# window-memory: a receiver never buffers more than its window (patch 0202;
# the allocation bound below is 0203's).
# A consumer that does not read from the start keeps the window at its
# initial 2 MiB; one that stops after the window grew leaves the receiver
# holding at most MaxChannelWindow.  Checked on the client (download) and
# on sshd (upload) through the RSS of the receiving process: its current
# RSS stays within the window + slack.  Its peak (VmHWM) also holds, for
# the moment of a reallocation, the old buffer beside the new one: the
# queue's allocation stays within 1.5 x the window (sshbuf_allocate_queue),
# so old + new < 3 x the window + slack.
# Then 16 concurrent scp uploads to one sshd complete intact within 16 x
# the per-connection bound.  No timing assertions.
# Patches: 0202 0203
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-memory
lfn_wan_link wm$$ 50 1gbit

CAP=16777216	# MaxChannelWindow used here (16M) to keep the test short
# Allocator and buffer slack beyond the window: the kept packet buffers
# (0303), 128 KiB channel reads (0309), malloc arenas.  Observed client
# VmRSS over the idle base 13-20 MiB, VmHWM 28.7-36.0 MiB with the 16 MiB
# cap (most of it a reallocation's old + new buffer: 12 + 24 MiB at
# worst seen).  160 MiB are sent and the consumer stops after 48: the
# 112 MiB unbounded buffering would hold are beyond both bounds.
SLACK=12582912
MIB=1048576
dd if=/dev/urandom of="$T/data" bs=1M count=160 status=none
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<EOF
MaxChannelWindow 16M
MaxStartups 40
MaxSessions 40
EOF

c() { lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" "$@"; }
hwm() { awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
rss() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# client_pid TOKEN: the pid of our ssh client whose command line has TOKEN.
client_pid() {
	local p
	for _ in $(seq 1 50); do
		p=$(pgrep -f -- "$LFN_TREE/ssh .*$1" | head -1)
		[ -n "$p" ] && { echo "$p"; return; }
		sleep 0.1
	done
}
# session_hwm: the largest VmHWM among sshd-session processes of our sshd.
session_hwm() {
	local p q m=0 v
	for p in $(pgrep -P "$SSHD_PID"); do
		for q in $p $(pgrep -P "$p"); do
			v=$(hwm "$q"); [ "$v" -gt "$m" ] && m=$v
		done
	done
	echo "$m"
}

tid "client baseline"
c lfnpeer "sleep 3 # tokbase" & bpid=$!
sleep 2; p=$(client_pid tokbase); base=$(hwm "$p"); wait $bpid
verbose "idle client VmHWM $((base / 1024)) KiB"

tid "download, consumer stalls from the start: window stays at 2 MiB"
c -v -o MaxChannelWindow=128M lfnpeer "cat $T/data # tokstall" 2> "$T/stall.log" |
    (sleep 8; cmp -s - "$T/data" || echo corrupt > "$T/stall.cmp") &
spid=$!
sleep 6; p=$(client_pid tokstall); h=$(hwm "$p"); cp "$T/stall.log" "$T/stall.snap"; wait $spid
[ -e "$T/stall.cmp" ] && fail "stalled download corrupted"
# (once the consumer reads again the window may grow: look at the stall only)
[ "$(grew "$T/stall.snap")" -eq 0 ] || fail "window grew while the consumer did not read"
verbose "stalled client VmHWM $((h / 1024)) KiB"
[ "$h" -le $(( base + 2 * MIB + SLACK )) ] || fail "client buffered beyond its window: VmHWM $h"

tid "download, consumer stops after the window grew: bounded by MaxChannelWindow"
c -v -o MaxChannelWindow=16M lfnpeer "cat $T/data # tokgrow" 2> "$T/grow.log" |
    (head -c 50331648 > "$T/grow.head"; sleep 8; cat > "$T/grow.tail") &
spid=$!
sleep 1; p=$(client_pid tokgrow)
for _ in $(seq 1 100); do [ -s "$T/grow.head" ] && [ "$(stat -c %s "$T/grow.head")" -ge 50331648 ] && break; sleep 0.2; done
sleep 5; h=$(hwm "$p"); r=$(rss "$p"); wait $spid
cat "$T/grow.head" "$T/grow.tail" | cmp -s - "$T/data" || fail "download corrupted"
w=$(grew "$T/grow.log")
[ "$w" -gt 2097152 ] || fail "window did not grow before the stall"
[ "$w" -le "$CAP" ] || fail "window $w beyond MaxChannelWindow"
verbose "window $w; client VmRSS $((r / 1024)) KiB, VmHWM $((h / 1024)) KiB"
[ "$r" -le $(( base + CAP + SLACK )) ] || fail "client VmRSS $r beyond cap + slack"
[ "$h" -le $(( base + 3 * CAP + SLACK )) ] || fail "client VmHWM $h beyond 3 x cap + slack"

tid "upload, remote consumer sleeps first: sshd bounded"
c lfnpeer "sleep 3" & bpid=$!
sleep 2; sbase=$(session_hwm); wait $bpid
c lfnpeer "head -c 50331648 > $T/up.head; sleep 8; cat > $T/up.tail" < "$T/data" & upid=$!
sleep 8; h=$(session_hwm); wait $upid || fail "upload failed"
cat "$T/up.head" "$T/up.tail" | cmp -s - "$T/data" || fail "upload corrupted"
verbose "sshd-session VmHWM $((h / 1024)) KiB (idle $((sbase / 1024)) KiB)"
[ "$h" -le $(( sbase + 3 * CAP + SLACK )) ] || fail "sshd-session VmHWM $h beyond 3 x cap + slack"
grep -q 'receive window [0-9]* -> ' "$SSHD_LOG" || fail "server window never grew"

tid "16 concurrent scp uploads to one sshd"
head -c 8388608 "$T/data" > "$T/small"
peak=0
for i in $(seq 1 16); do
	rm -f "$T/up.$i"
	lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" -q "$T/small" "lfnpeer:$T/up.$i" &
	pids[$i]=$!
done
while :; do
	sum=0
	for p in $(pgrep -P "$SSHD_PID"); do
		for q in $p $(pgrep -P "$p"); do sum=$(( sum + $(hwm "$q") )); done
	done
	[ "$sum" -gt "$peak" ] && peak=$sum
	running=0
	for i in $(seq 1 16); do kill -0 "${pids[$i]}" 2>/dev/null && running=1; done
	[ $running = 1 ] || break
	sleep 0.5
done
for i in $(seq 1 16); do
	wait "${pids[$i]}" || fail "scp upload $i failed"
	cmp -s "$T/small" "$T/up.$i" || fail "scp upload $i corrupted"
done
verbose "sshd total VmHWM peak $((peak / MIB)) MiB for 16 connections"
[ "$peak" -le $(( 16 * (2 * sbase + CAP + SLACK) )) ] || fail "sshd total $peak beyond 16 x per-connection bound"

lfn_finish
