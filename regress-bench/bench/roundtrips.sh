#!/usr/bin/env bash
# roundtrips.sh [RTT_MS...]: the fixed cost of a connection, in round trips,
# counted from a packet capture on an emulated link (not from timings):
# `ssh true`, scp up/down, sftp put/get and rsync -e ssh of a 10 kB file,
# stock and openssh-lfn clients against an openssh-lfn server and a stock
# server.  "rt" = times the client waited for the network (a client data
# segment sent >= RTT/2 after its previous one; regress-bench/lib/roundtrips.py),
# "stalls" = those waits with no server data in between (data held back),
# "fin" = SYN to the client's FIN in RTTs (what a user waits for, plus
# process start-up).  Default RTTs: 50 100 200.  Needs root (namespaces),
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

# count CLIENT_TREE PORT OP RTT: capture one run of OP, print its counts
count() {
	local ct=$1 port=$2 what=$3 rtt=$4 tp
	rm -f "$T/cap.pcap" "$T"/home/*.out
	ip netns exec "$NA" tcpdump -i any -n -U -w "$T/cap.pcap" "tcp port $port" 2>/dev/null & tp=$!
	for _ in $(seq 50); do [ -s "$T/cap.pcap" ] && break; sleep 0.1; done	# capturing
	sleep 0.3
	op "$what" "$ct" "$port" > "$T/op.log" 2>&1 || { kill "$tp"; wait "$tp" 2>/dev/null; echo "FAILED"; return; }
	sleep 0.5; kill "$tp"; wait "$tp" 2>/dev/null
	tcpdump -n -tt -r "$T/cap.pcap" 2>/dev/null | python3 regress-bench/lib/roundtrips.py "$rtt" "$port" |
		awk '{ printf "%d/%d/%s", $4, $6, $8; exit }'
}

ops="ssh-true scp-up scp-down sftp-put sftp-get rsync-up"
printf 'cells: rt/stalls/fin (round trips waited / of them stalls / SYN..FIN in RTTs)\n'
for rtt in "$@"; do
	lfn_wan_link rt$$-$rtt "$rtt" 1gbit
	plfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$plfn" "$NB" <<< "PermitUserEnvironment HOME"
	pstk=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$pstk" "$NB" <<< "PermitUserEnvironment HOME"
	printf '\nRTT %s ms\n%-22s' "$rtt" "client -> server"
	for o in $ops; do printf ' %-13s' "$o"; done; echo
	for pair in "stock:$STOCK_TREE:$pstk:stock" "lfn:$LFN_TREE:$pstk:stock" \
	            "stock:$STOCK_TREE:$plfn:lfn" "lfn:$LFN_TREE:$plfn:lfn"; do
		IFS=: read -r cn ct port sn <<< "$pair"
		printf '%-22s' "$cn -> $sn"
		for o in $ops; do printf ' %-13s' "$(count "$ct" "$port" "$o" "$rtt")"; done; echo
	done
	lfn_cleanup; lfn_wan_cleanup
done
