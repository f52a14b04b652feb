#!/usr/bin/env bash
# sftp-server-backlog: sftp-server works off a backlog of requests in O(1)
# per byte (0104).  A client may send a whole channel window of
# requests at once (PuTTY/WinSCP send 4 KiB writes back to back); upstream's
# loop read 16 KiB per request processed, so the queue grew with the backlog
# and every read copied all of it (64 MiB of 4 KiB writes: 136 s of CPU, a
# 130 MB queue; pscp uploads into openssh-lfn's large windows at 1-4 MB/s).
# lib/sftp-backlog.py drives the sftp-server binary directly: the whole
# stream of requests is written as fast as its stdin takes it, every reply
# and the data are checked, and the server's peak resident set (VmHWM) shows
# how much it queued: bounded by a few MiB whatever the backlog.  Stock
# 10.5p1's sftp-server is the control: the same run queues the backlog.
# Patches: 0104
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init sftp-server-backlog
H="$LFN_TOP/regress-bench/lib/sftp-backlog.py"
LIMIT_KIB=6144
# Under AddressSanitizer (make check-sanitize) freed memory sits in ASan's
# quarantine, so the peak resident set measures the allocator, not the
# queue: there the replies are checked and the bound is left to make
# check's ordinary build, which runs this test every time.
asan=0
grep -q __asan_init "$LFN_TREE/sftp-server" 2>/dev/null && asan=1

# run TREE MODE MIB CHUNK: one run, its JSON line in $out, fails on errors
run() {
	local d="$T/$1-$2-$3-$4"
	mkdir -p "$d"
	out=$(python3 "$H" "$1/sftp-server" "$d" "$2" "$3" "$4" 2> "$d.err") ||
		{ fail "$2 $3 MiB x $4 B with $(basename "$1"): $(cat "$d.err")"; out=; return 1; }
	rm -rf "$d"
	verbose "$(basename "$1") $2 $3 MiB in $4 B requests: $out"
}
hwm() { sed -n 's/.*"vmhwm_kib": \([0-9]*\).*/\1/p' <<< "$out"; }

for m in "up 32 4096" "down 32 4096" "down 32 32768" "up 8 261120"; do
	set -- $m
	tid "a backlog of $3-byte $([ $1 = up ] && echo write || echo read) requests, $2 MiB: all replies right, the queue bounded"
	run "$LFN_TREE" "$@" || continue
	h=$(hwm)
	if [ $asan = 1 ]; then
		verbose "AddressSanitizer build: peak ${h:-?} KiB, not checked against $LIMIT_KIB"
		continue
	fi
	[ -n "$h" ] && [ "$h" -le $LIMIT_KIB ] ||
		fail "sftp-server's peak resident set is ${h:-?} KiB (limit $LIMIT_KIB): it queued the backlog"
done

tid "control: stock sftp-server queues a backlog of 4 KiB writes (the check sees it)"
if run "$STOCK_TREE" up 8 4096; then
	h=$(hwm)
	[ -n "$h" ] && [ "$h" -gt $LIMIT_KIB ] ||
		fail "stock sftp-server peaked at ${h:-?} KiB: the check cannot see a queued backlog"
fi
lfn_finish
