#!/usr/bin/env bash
# roundtrips.sh [RTT_MS...]: the fixed cost of a connection, in round trips,
# counted from a packet capture on an emulated link (not from timings):
# `ssh true`, scp up/down, sftp put/get and rsync -e ssh of a 10 kB file,
# stock and openssh-lfn clients against an openssh-lfn server and a stock
# server.  "rt" = times the client waited for the network (a client data
# segment sent >= RTT/2 after its previous one; regress-bench/lib/roundtrips.py),
# "stalls" = those waits with no server data in between (data held back),
# "fin" = SYN to the client's FIN in RTTs (what a user waits for, plus
# process start-up); "?" marks a capture that missed the SYN (3 tries).  Default RTTs: 50 100 200.  Needs root (namespaces),
# tcpdump and rsync.
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
command -v tcpdump >/dev/null || lfn_die "needs tcpdump (apt-get install -y tcpdump)"
[ $# -gt 0 ] || set -- 50 100 200
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init roundtrips
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
head -c 10240 /dev/urandom > "$T/small"
echo "put $T/small $T/home/put.out" > "$T/put"; echo "get $T/small $T/get.out" > "$T/get"

# op CLIENT_TREE PORT: run one operation (as $1 names it) against PORT
op() {
	local what=$1 ct=$2 port=$3 c
	c=(-n "$NA" -h "$ADDR" "$port")
	case $what in
	ssh-true) lfn_ssh "$ct" "${c[@]}" lfnpeer true < /dev/null ;;
	scp-up)   lfn_scp "$ct" "${c[@]}" -q "$T/small" "lfnpeer:$T/home/scp.out" < /dev/null ;;
	scp-down) lfn_scp "$ct" "${c[@]}" -q "lfnpeer:$T/small" "$T/scp.down" < /dev/null ;;
	sftp-put) lfn_sftp "$ct" "${c[@]}" -q -b "$T/put" lfnpeer < /dev/null ;;
	sftp-get) lfn_sftp "$ct" "${c[@]}" -q -b "$T/get" lfnpeer < /dev/null ;;
	rsync-up) ip netns exec "$NA" rsync -e "$ct/ssh -F $T/ssh_config -p $port -o HostKeyAlias=lfnpeer -o HostName=$ADDR" \
	              "$T/small" "lfnpeer:$T/home/rsync.out" < /dev/null ;;
	esac
}

ops="ssh-true scp-up scp-down sftp-put sftp-get rsync-up"
pairs="stock:stock lfn:stock stock:lfn lfn:lfn"
tree() { [ "$1" = lfn ] && echo "$LFN_TREE" || echo "$STOCK_TREE"; }
printf 'cells: rt/stalls/fin (round trips waited / of them stalls / SYN..FIN in RTTs)\n'
for rtt in "$@"; do
	lfn_wan_link rt$$-$rtt "$rtt" 1gbit
	plfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$plfn" "$NB" <<< "PermitUserEnvironment HOME"
	pstk=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$pstk" "$NB" <<< "PermitUserEnvironment HOME"
	# one capture for the whole table: each operation is one connection,
	# in the order they ran (no capture start-up race per operation)
	rm -f "$T/cap.pcap"
	ip netns exec "$NA" tcpdump -i any --immediate-mode -n -U -w "$T/cap.pcap" "tcp port $plfn or tcp port $pstk" 2>/dev/null & tp=$!
	sleep 3
	: > "$T/labels"
	for pair in $pairs; do
		cn=${pair%:*} sn=${pair#*:}
		port=$pstk; [ "$sn" = lfn ] && port=$plfn
		for o in $ops; do
			st=ok; op "$o" "$(tree "$cn")" "$port" > "$T/op.log" 2>&1 || st=FAILED
			echo "$cn $sn $o $port $st" >> "$T/labels"
			sleep 0.3
		done
	done
	sleep 2; kill "$tp"; wait "$tp" 2>/dev/null
	# roundtrips.py counts per connection; the server port tells which
	# connection belongs to which sshd, order within a port is run order
	for port in $plfn $pstk; do
		tcpdump -n -tt -r "$T/cap.pcap" "tcp port $port" 2>/dev/null |
		    python3 regress-bench/lib/roundtrips.py "$rtt" "$port" > "$T/counts.$port"
	done
	printf '\nRTT %s ms\n%-22s' "$rtt" "client -> server"
	for o in $ops; do printf ' %-13s' "$o"; done; echo
	for pair in $pairs; do
		cn=${pair%:*} sn=${pair#*:}
		printf '%-22s' "$cn -> $sn"
		for o in $ops; do
			read -r _ _ _ port st < <(grep "^$cn $sn $o " "$T/labels")
			# the n-th connection to this port is the n-th label with it
			n=$(awk -v p="$port" -v k="$cn $sn $o" '$4 == p { i++ } $1" "$2" "$3 == k { print i; exit }' "$T/labels")
			cell=$(sed -n "${n}p" "$T/counts.$port" | awk '{ printf "%d/%d/%s%s", $4, $6, $8, ($11 == 1 ? "" : "?") }')
			[ "$st" = ok ] || cell=FAILED
			printf ' %-13s' "$cell"
		done; echo
	done
	lfn_cleanup; lfn_wan_cleanup
done
