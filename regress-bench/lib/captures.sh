# regress-bench/lib/captures.sh — round trips counted from a packet capture
# (auth-roundtrips.sh, sftp-small-roundtrips.sh).  Source after sshenv.sh,
# lfn_env_init and lfn_wan_link; uses $rtt (the link's RTT in ms), $NA (the
# client's namespace) and $T.

# captured PORT CMD...: run CMD with a capture of PORT in the client's
# namespace (unbuffered, so the last packets are in it); sets RT ("waits N
# stalls S ...", regress-bench/lib/roundtrips.py) from the capture.
captured() {
	local port=$1 tp rc; shift
	rm -f "$T/cap.pcap"
	ip netns exec "$NA" tcpdump -i any --immediate-mode -n -U -w "$T/cap.pcap" "tcp port $port" 2> "$T/tcpdump.err" & tp=$!
	for _ in $(seq 50); do [ -s "$T/cap.pcap" ] && break; sleep 0.1; done
	sleep 0.5
	"$@"; rc=$?
	sleep 1.5; kill "$tp"; wait "$tp" 2>/dev/null
	RT=$(tcpdump -n -tt -r "$T/cap.pcap" 2>/dev/null | python3 "$LFN_TOP/regress-bench/lib/roundtrips.py" "$rtt" "$port")
	trace "$RT"
	return $rc
}

# check_rt WHAT MAXWAITS [any]: the last capture held one whole connection,
# waited at most MAXWAITS round trips and had no stalls (unless "any": a
# stock client's Nagle stalls are not ours).
check_rt() {
	local n w s
	n=$(grep -c '^conn' <<< "$RT")
	[ "$n" = 1 ] || { fail "$1: capture has $n connections: $RT"; return; }
	[ "${RT##* }" = 1 ] || { fail "$1: capture missed the connection's start: $RT"; return; }
	read -r _ _ _ w _ s _ <<< "$RT"
	verbose "$1: $w round trips, $s stalls"
	[ "$w" -le "$2" ] || fail "$1: $w round trips (at most $2): $RT"
	[ "$s" = 0 ] || [ "${3:-}" = any ] || fail "$1: $s stall(s), client data held back: $RT"
}
