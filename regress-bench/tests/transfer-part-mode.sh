#!/usr/bin/env bash
# transfer-part-mode: a split download's part (DEST.lfn-part) is the
# owner's alone while it fills, whatever the source's mode: downloading over
# an existing 0600 file (a secret) from a 0644 source left the new contents
# world-readable for the whole copy, and for good in a part kept for resume
# (stock scp writes into the existing file and never changes its mode).
# Each case stops the copy (SIGKILL to scp's process group) once the part holds data and
# checks its mode, then runs the copy again to the end and checks the
# destination's mode: the old file's when it existed, the source's less
# the umask when it did not (as stock scp), the source's with -p; a part
# left by an older build with a wider mode is narrowed when taken up.
# Patches: 0273
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init transfer-part-mode
mib=1048576
head -c $((48 * mib)) /dev/urandom > "$T/src"
lfn_wan_link pm$$ 20 100mbit
port=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$port" "$NB" < /dev/null
umask 022

# down DEST [ARGS]: the split download into DEST, in the background ($cpid,
# the leader of a process group of its own: scp, its ssh and its workers)
down() {
	local dst=$1; shift
	setsid ip netns exec "$NA" "$LFN_TREE/scp" -F "$T/ssh_config" -S "$LFN_TREE/ssh" \
		-P "$port" -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -q -X connections=4 "$@" \
		"lfnpeer:$T/src" "$dst" 2> "$T/err" &
	cpid=$!
}
# stop_when_filling DEST: SIGKILL scp once DEST.lfn-part holds 4 MiB
stop_when_filling() {
	local i s
	for i in $(seq 1 300); do
		s=$(stat -c %s "$1.lfn-part" 2> /dev/null || echo 0)
		[ "$s" -gt 0 ] && [ "$(tail -c 48 "$1.lfn-part" | tr -cd '\001' | wc -c)" -ge 4 ] && break
		kill -0 "$cpid" 2> /dev/null || break
		sleep 0.05
	done
	kill -KILL -- -"$cpid" 2> /dev/null; wait "$cpid" 2> /dev/null
	sleep 0.5	# (the workers' ends)
	[ -f "$1.lfn-part" ] || { fail "no part was written (${s:-0} bytes; $(tail -n 2 "$T/err"))"; return 1; }
}
mode() { stat -c %a "$1"; }
finish_copy() {
	down "$@"; wait "$cpid" || fail "the copy again failed: $(tail -n 3 "$T/err")"
	cmp -s "$T/src" "$1" || fail "the copy differs from the source"
	[ ! -e "$1.lfn-part" ] || fail "$1.lfn-part is left"
}

# stopped_then_whole DEST FINAL: the download into DEST stopped while its
# part fills (the part must be 0600), then run to the end (the file must
# end with mode FINAL)
stopped_then_whole() {
	down "$1"
	stop_when_filling "$1" || return
	[ "$(mode "$1.lfn-part")" = 600 ] || fail "the part is $(mode "$1.lfn-part") while it fills"
	finish_copy "$1"
	[ "$(mode "$1")" = "$2" ] || fail "the file ends $(mode "$1"), not $2"
}

tid "over an existing 0600 file from a 0644 source: the part is 0600, the file stays 0600"
chmod 0644 "$T/src"
echo secret > "$T/d1"; chmod 0600 "$T/d1"
stopped_then_whole "$T/d1" 600

tid "a new file from a 0640 source: the part is 0600, the file ends 0640 (the source's, less the umask)"
chmod 0640 "$T/src"
stopped_then_whole "$T/d2" 640

tid "a part an older build left 0666 is narrowed to 0600 when the copy takes it up; -p gives the source's mode"
chmod 0604 "$T/src"
down "$T/d3"
if stop_when_filling "$T/d3"; then
	chmod 0666 "$T/d3.lfn-part"
	down "$T/d3" -p
	sleep 1.5
	[ "$(mode "$T/d3.lfn-part" 2> /dev/null || echo gone)" = 600 ] ||
		fail "the part taken up is $(mode "$T/d3.lfn-part" 2> /dev/null || echo gone)"
	wait "$cpid" || fail "the copy again failed: $(tail -n 3 "$T/err")"
	cmp -s "$T/src" "$T/d3" || fail "the copy differs from the source"
	[ "$(mode "$T/d3")" = 604 ] || fail "-p: the file ends $(mode "$T/d3"), not 604"
fi
lfn_finish
