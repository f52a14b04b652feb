# regress-bench/lib/window.sh — helpers shared by the window tests (patches
# 0202-0205), sourced after sshenv.sh.  Growth is read from a receiver's log:
# "channel N: receive window A -> B" (ssh -v, or sshd at LogLevel VERBOSE).

# grew LOG: the largest window B that LOG shows a channel growing to (0: none).
grew() {
	grep -o 'receive window [0-9]* -> [0-9]*' "$1" 2>/dev/null |
	    awk '{ if ($5 > m) m = $5 } END { print m + 0 }'
}
# mark / since MARK: the part of $SSHD_LOG written after mark was taken,
# as a file name.
mark() { wc -l < "$SSHD_LOG"; }
since() { tail -n +"$(( $1 + 1 ))" "$SSHD_LOG" > "$T/sshd.part"; echo "$T/sshd.part"; }
# check_grew LABEL LOG: fail unless LOG shows a window beyond upstream's 2 MiB.
check_grew() {
	local w; w=$(grew "$2")
	if [ "$w" -gt 2097152 ]; then
		verbose "$1: window grew to $w"
	else
		fail "$1: receive window did not grow beyond 2 MiB"
		grep -i 'window\|error\|fatal' "$2" | tail -5 | sed 's/^/    /'
	fi
}
