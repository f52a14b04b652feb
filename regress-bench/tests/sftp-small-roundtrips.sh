#!/usr/bin/env bash
# sftp-small-roundtrips: the round trips 0240 and 0241 take out of scp and
# sftp of a small file, counted from a packet capture on an emulated 200 ms
# link (regress-bench/lib/roundtrips.py: the times the client sent data at
# least 100 ms after its previous data; the capture runs until the client's
# FIN, so the channel's close is counted too):
#  - 0240: an upload into a truncated file (sftp put) sends its -p fsetstat
#    and close right behind its last write, not a round trip later;
#  - 0241: the first stat, lstat or realpath goes out with the SFTP init
#    instead of after the server's version, and a download waits for the
#    limits reply only after its open.
# openssh-lfn client against openssh-lfn and stock 10.5p1 servers: scp
# up, scp down and sftp put at most 12 round trips, sftp get 13 (the
# series before: 13, 13, 14, 14); against Debian 9.2p1's sshd and
# sftp-server (when $DEB92_SSHD is there) one more each (its login takes
# one more: 14, 14, 15, 15 before).  Nothing weakened: a failed write fails the
# put exactly as with the stock client, -p still sets times and modes, a
# directory target, a multi-block upload and -l work.
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }
command -v tcpdump > /dev/null || { echo "FATAL: tcpdump missing (./install-deps installs it)"; exit 1; }
DEB92_SSHD=${DEB92_SSHD:-/work/deb92/root/usr/sbin/sshd}
SYS_SFTP_SERVER=/usr/lib/openssh/sftp-server
rtt=200
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init sftp-small-roundtrips
lfn_wan_link ss$$ "$rtt" 1gbit
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" "$NB" <<< "PermitUserEnvironment HOME"
p_stk=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stk" "$NB" <<< "PermitUserEnvironment HOME"
servers="lfn:$p_lfn stock:$p_stk"
if [ -x "$DEB92_SSHD" ] && [ -x "$SYS_SFTP_SERVER" ]; then
	p_deb=$(lfn_free_port)
	mkdir -p /run/sshd
	cat > "$T/sshd_config.deb92" <<CFG
Port $p_deb
ListenAddress 0.0.0.0
HostKey $T/host_ed25519
AuthorizedKeysFile $T/authorized_keys
StrictModes no
PidFile none
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitUserEnvironment HOME
Subsystem sftp $SYS_SFTP_SERVER
CFG
	ip netns exec "$NB" "$DEB92_SSHD" -D -e -f "$T/sshd_config.deb92" 2> "$T/deb92.log" &
	LFN_PIDS+=($!)
	for _ in $(seq 50); do grep -q "Server listening" "$T/deb92.log" && break; sleep 0.1; done
	grep -q "Server listening" "$T/deb92.log" && servers="$servers deb92:$p_deb"
fi
head -c 10240 /dev/urandom > "$T/small"

# captured PORT CMD...: run CMD with a capture of PORT in the client's
# namespace (unbuffered, so the last packets are in it); sets RT.
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
# check_rt WHAT MAXWAITS: one whole connection, at most MAXWAITS waits, no stalls
check_rt() {
	local n w s
	n=$(grep -c '^conn' <<< "$RT")
	[ "$n" = 1 ] || { fail "$1: capture has $n connections: $RT"; return; }
	[ "${RT##* }" = 1 ] || { fail "$1: capture missed the connection's start: $RT"; return; }
	read -r _ _ _ w _ s _ <<< "$RT"
	verbose "$1: $w round trips, $s stalls"
	[ "$w" -le "$2" ] || fail "$1: $w round trips (at most $2): $RT"
	[ "$s" = 0 ] || fail "$1: $s stall(s), client data held back: $RT"
}

for srv in $servers; do
	name=${srv%%:*} port=${srv#*:}
	x=0; [ "$name" = deb92 ] && x=1
	c=(-n "$NA" -h "$ADDR" "$port")
	tid "scp up/down, sftp put/get of 10 kB against $name sshd"
	rm -f "$T/home/up" "$T/down" "$T/home/put" "$T/get"
	captured "$port" lfn_scp "$LFN_TREE" "${c[@]}" -vvv "$T/small" "lfnpeer:$T/home/up" \
	    < /dev/null 2> "$T/scpup-$name.log" || fail "scp upload failed"
	cmp -s "$T/small" "$T/home/up" || fail "scp upload corrupted"
	check_rt "scp up ($name)" $((12 + x))
	grep -q "request type 17 sent before the server's version" "$T/scpup-$name.log" ||
	    fail "scp up: the target's stat waited for the server's version"

	captured "$port" lfn_scp "$LFN_TREE" "${c[@]}" -vvv "lfnpeer:$T/small" "$T/down" \
	    < /dev/null 2> "$T/scpdown-$name.log" || fail "scp download failed"
	cmp -s "$T/small" "$T/down" || fail "scp download corrupted"
	check_rt "scp down ($name)" $((12 + x))
	grep -q "request type 7 sent before the server's version" "$T/scpdown-$name.log" ||
	    fail "scp down: the lookup waited for the server's version"

	echo "put $T/small $T/home/put" > "$T/put.b"
	captured "$port" lfn_sftp "$LFN_TREE" "${c[@]}" -vvv -b "$T/put.b" lfnpeer \
	    < /dev/null > /dev/null 2> "$T/put-$name.log" || fail "sftp put failed"
	cmp -s "$T/small" "$T/home/put" || fail "sftp put corrupted"
	check_rt "sftp put ($name)" $((12 + x))
	grep -q "request type 16 sent before the server's version" "$T/put-$name.log" ||
	    fail "sftp put: the realpath waited for the server's version"
	grep -q "last block sent, ending" "$T/put-$name.log" ||
	    fail "sftp put: the close waited for the write's status"

	echo "get $T/small $T/get" > "$T/get.b"
	captured "$port" lfn_sftp "$LFN_TREE" "${c[@]}" -vvv -b "$T/get.b" lfnpeer \
	    < /dev/null > /dev/null 2> "$T/get-$name.log" || fail "sftp get failed"
	cmp -s "$T/small" "$T/get" || fail "sftp get corrupted"
	check_rt "sftp get ($name)" $((13 + x))
done

# The rest on loopback: behaviour, compared with the stock client.
p_lo=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lo" <<< "PermitUserEnvironment HOME"
p_nw=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_nw" <<EOF
PermitUserEnvironment HOME
ForceCommand $LFN_TREE/sftp-server -P write
EOF

tid "a failed write fails the put as with the stock client"
for t in lfn stock; do
	tr=$LFN_TREE; [ $t = stock ] && tr=$STOCK_TREE
	rm -f "$T/home/nw"
	echo "put $T/small $T/home/nw" > "$T/nw.b"
	lfn_sftp "$tr" "$p_nw" -b "$T/nw.b" lfnpeer < /dev/null > "$T/nw-$t.out" 2> "$T/nw-$t.err"
	echo "exit $?" >> "$T/nw-$t.err"
	echo "size $(stat -c %s "$T/home/nw" 2>/dev/null)" >> "$T/nw-$t.err"
done
grep -q "^exit 0" "$T/nw-lfn.err" && fail "put with refused writes exited 0"
diff "$T/nw-stock.err" "$T/nw-lfn.err" > "$T/nw.diff" || fail "differs from stock: $(cat "$T/nw.diff")"

tid "put -p, a directory target, a multi-block file, -l"
head -c 3000000 /dev/urandom > "$T/big"
chmod 640 "$T/small"; touch -d '2001-02-03 04:05:06' "$T/small"
mkdir -p "$T/home/dir"; rm -f "$T/home/dir/small" "$T/home/p" "$T/home/big" "$T/home/lim"
lfn_sftp "$LFN_TREE" "$p_lo" -b - lfnpeer > /dev/null 2> "$T/misc.err" <<EOF || fail "sftp batch failed: $(cat "$T/misc.err")"
put -p $T/small $T/home/p
put $T/small $T/home/dir
put $T/big $T/home/big
EOF
[ "$(stat -c '%a %Y' "$T/home/p")" = "$(stat -c '%a %Y' "$T/small")" ] || fail "put -p: mode/times not set"
cmp -s "$T/small" "$T/home/dir/small" || fail "put into a directory"
cmp -s "$T/big" "$T/home/big" || fail "multi-block put corrupted"
lfn_sftp "$LFN_TREE" "$p_lo" -l 100000 -b - lfnpeer > /dev/null 2> "$T/lim.err" <<EOF || fail "sftp -l failed: $(cat "$T/lim.err")"
put $T/small $T/home/lim
EOF
cmp -s "$T/small" "$T/home/lim" || fail "sftp -l put corrupted"
for t in lfn stock; do
	tr=$LFN_TREE; [ $t = stock ] && tr=$STOCK_TREE
	lfn_scp "$tr" "$p_lo" -q "lfnpeer:$T/nonexistent" "$T/ne" 2>&1 | sed 's#^[^ ]*/scp: #scp: #' > "$T/ne-$t.err"
	echo "exit ${PIPESTATUS[0]}" >> "$T/ne-$t.err"
done
grep -q "^exit 0" "$T/ne-lfn.err" && fail "scp of a missing source exited 0"
diff "$T/ne-stock.err" "$T/ne-lfn.err" > /dev/null || fail "missing source: differs from stock: $(cat "$T/ne-lfn.err")"

lfn_finish
