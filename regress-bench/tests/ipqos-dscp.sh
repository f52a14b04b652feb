#!/usr/bin/env bash
# ipqos-dscp: which DSCP the bytes of each kind of flow carry, counted by
# the WAN emulator per direction (a = client, b = server), not by timing.
#
#  1. The post-7.8 scp upload regression: with CS1 policed to 8 Mbit/s
#     (everything else 1 Gbit/s, RTT 10 ms), an scp upload from a client
#     using upstream 7.8-10.0's default marking (Debian's /usr/bin/scp with
#     IPQoS "af21 cs1") carries its bulk bytes as CS1 (throttled); the
#     openssh-lfn client at its defaults sends them as CS0.
#  2. Classification (upstream since 10.4; our patch 0101 until the 10.5p1
#     rebase), both
#     directions: ssh host cmd, ssh -tt, scp, sftp, -L, -W (ProxyJump), -D,
#     a mux session: bulk = CS0 (never CS1); tty = EF; a connection with a
#     tty and a bulk channel is bulk while the bulk channel is open and
#     interactive again once it has closed.
# Asserted for LFN_TREE; the same checks run for STOCK_TREE are printed for
# comparison only (stock 10.5p1 classifies as we do; 10.3p1 marked -W and
# -D as interactive).
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"

[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces)"; exit 77; }
ip netns list >/dev/null 2>&1 || { echo "skipped: network namespaces unavailable"; exit 77; }
command -v jq >/dev/null || { echo "skipped: jq not installed"; exit 77; }
WANEMU=$LFN_TOP/regress-bench/wanemu
[ -x "$WANEMU/wanemu-up" ] || { echo "skipped: WAN emulator missing ($WANEMU/wanemu-up)"; exit 77; }

TAG=ipq$$
NSA=lfn-$TAG-a NSB=lfn-$TAG-b ADDR=198.18.0.2
ipq_cleanup() {
	lfn_cleanup
	"$WANEMU/wanemu-down" -n "$TAG" >/dev/null 2>&1
}
trap ipq_cleanup EXIT
lfn_env_init ipqos-dscp

"$WANEMU/wanemu-up" -n "$TAG" --rtt 10 --rate 1gbit --dscp-rate 8:8mbit --quiet ||
	{ echo "skipped: wanemu-up failed (no TUN or namespaces?)"; exit 77; }

P=$((1024 * 1024))		# bulk payload per direction
dd if=/dev/urandom of="$T/data" bs=1M count=1 status=none
base64 "$T/data" | head -c 1000000 > "$T/data.b64"	# tty payload (text)
PT=$(stat -c %s "$T/data.b64")
BIG=$((4 * 1024 * 1024))
dd if=/dev/urandom of="$T/big" bs=1M count=4 status=none

# snap FILE: the emulator's counters now
snap() { "$WANEMU/wanemu-stats" -n "$TAG" > "$1" || fail "wanemu-stats failed"; }
# delta BEFORE AFTER DIR DSCP: bytes of DSCP in direction DIR (ab|ba)
delta() {
	local a b
	a=$(jq -r ".$3.dscp[\"$4\"].bytes // 0" "$1")
	b=$(jq -r ".$3.dscp[\"$4\"].bytes // 0" "$2")
	echo $((b - a))
}
# other BEFORE AFTER DIR: bytes of DSCPs other than 0, 8 and 46
other() {
	local a b
	a=$(jq -r "[.$3.dscp | to_entries[] | select(.key != \"0\" and .key != \"8\" and .key != \"46\") | .value.bytes] | add // 0" "$1")
	b=$(jq -r "[.$3.dscp | to_entries[] | select(.key != \"0\" and .key != \"8\" and .key != \"46\") | .value.bytes] | add // 0" "$2")
	echo $((b - a))
}

# C TREE [ssh args]: a client of TREE in namespace a talking to b's sshd
# (every foreground client is bounded by timeout(1): a hang is a failure)
C() {
	local tr=$1; shift
	timeout 120 ip netns exec "$NSA" "$tr/ssh" -F "$T/ssh_config" -p "$PORT" \
	    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" "$@"
}
SCP() {
	local tr=$1; shift
	timeout 120 ip netns exec "$NSA" "$tr/scp" -F "$T/ssh_config" -S "$tr/ssh" \
	    -P "$PORT" -o HostKeyAlias=lfnpeer -o HostName="$ADDR" "$@"
}
SFTP() {
	local tr=$1; shift
	timeout 120 ip netns exec "$NSA" "$tr/sftp" -F "$T/ssh_config" -S "$tr/ssh" \
	    -P "$PORT" -o HostKeyAlias=lfnpeer -o HostName="$ADDR" "$@"
}
# inner TREE LPORT [ssh args]: a client connecting to 127.0.0.1:LPORT in a
inner() {
	local tr=$1 lp=$2; shift 2
	timeout 120 ip netns exec "$NSA" "$tr/ssh" -F "$T/ssh_config" -p "$lp" \
	    -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 "$@"
}
# wait_listen NS PORT
wait_listen() {
	local i
	for i in $(seq 1 100); do
		ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}
# bulk cmd: upload $T/data, then download it
BULKCMD="cat > /dev/null; cat $T/data"

# A SOCKS5 ProxyCommand in bash (no netcat needed): socks5 PORT HOST PORT
cat > "$T/socks5" <<'EOF'
#!/bin/bash
exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
printf '\x05\x01\x00' >&3
head -c 2 <&3 >/dev/null
IFS=. read -r a b c d <<< "$2"
printf "$(printf '\\x05\\x01\\x00\\x01\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x' \
    "$a" "$b" "$c" "$d" $(($3 >> 8)) $(($3 & 255)))" >&3
head -c 10 <&3 >/dev/null
cat <&3 &
cat >&3
wait
EOF
chmod +x "$T/socks5"

# result NAME DIR KIND BEFORE AFTER: record and (for ours) assert what
# DIR's bytes carried; KIND bulk = CS0 (never CS1), tty = EF.
declare -a TABLE
result() {
	local name=$1 dir=$2 kind=$3 b=$4 a=$5 payload=$6
	local d0 d8 d46 dx
	d0=$(delta "$b" "$a" "$dir" 0); d8=$(delta "$b" "$a" "$dir" 8)
	d46=$(delta "$b" "$a" "$dir" 46); dx=$(other "$b" "$a" "$dir")
	TABLE+=("$(printf '%-6s %-22s %-2s %-4s cs0=%-9s cs1=%-9s ef=%-9s other=%s' \
	    "$WHO" "$name" "$dir" "$kind" "$d0" "$d8" "$d46" "$dx")")
	verbose "$WHO $name $dir ($kind, payload $payload): cs0=$d0 cs1=$d8 ef=$d46 other=$dx"
	[ "$WHO" = ours ] || return 0
	[ "$d8" -eq 0 ] || fail "$name $dir: $d8 bytes marked CS1"
	case $kind in
	bulk)
		[ "$d0" -ge "$payload" ] || fail "$name $dir: bulk bytes not CS0 (cs0=$d0 < $payload, ef=$d46)"
		[ "$d46" -lt $((payload / 4)) ] || fail "$name $dir: $d46 bulk bytes marked EF" ;;
	tty)
		[ "$d46" -ge "$payload" ] || fail "$name $dir: tty bytes not EF (ef=$d46 < $payload, cs0=$d0)"
		[ "$d0" -lt $((payload / 4)) ] || fail "$name $dir: $d0 tty bytes marked CS0" ;;
	ack-tty)
		[ "$d46" -gt "$d0" ] || fail "$name $dir: client not interactive again (ef=$d46 cs0=$d0)" ;;
	esac
}

PORT=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$PORT" "$NSB" </dev/null
LFN_SSHD_PID=$SSHD_PID

###
### 1. scp upload: Debian system client with upstream 7.8-10.0 marking vs ours
###
WHO=ours
if [ -x /usr/bin/scp ] && [ -x /usr/bin/ssh ]; then
	tid "scp upload, system client with IPQoS 'af21 cs1' (7.8-10.0 default) -> lfn sshd: throttled"
	rm -f "$T/up"; snap "$T/s0"; t0=$(date +%s.%N)
	timeout 300 ip netns exec "$NSA" /usr/bin/scp -q -F "$T/ssh_config" -S /usr/bin/ssh -P "$PORT" \
	    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -o "IPQoS=af21 cs1" \
	    "$T/big" "lfnpeer:$T/up" || fail "system scp upload failed"
	t1=$(date +%s.%N); snap "$T/s1"
	cmp -s "$T/big" "$T/up" || fail "system scp upload corrupted"
	d8=$(delta "$T/s0" "$T/s1" ab 8); d0=$(delta "$T/s0" "$T/s1" ab 0)
	slow=$(awk -v n=$BIG -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f MB/s (%.1f s)", n / (b - a) / 1e6, b - a }')
	verbose "system scp (af21 cs1) upload of $BIG bytes: $slow; a->b cs1=$d8 cs0=$d0"
	[ "$d8" -ge "$BIG" ] || fail "bulk bytes were not CS1 (cs1=$d8 < $BIG): not the regression scenario"
else
	verbose "no /usr/bin/scp: the 7.8-10.0 client half is not run"
fi

tid "scp upload, openssh-lfn client at its defaults -> lfn sshd: not throttled"
rm -f "$T/up"; snap "$T/s0"; t0=$(date +%s.%N)
SCP "$LFN_TREE" -q "$T/big" "lfnpeer:$T/up" || fail "scp upload failed"
t1=$(date +%s.%N); snap "$T/s1"
cmp -s "$T/big" "$T/up" || fail "scp upload corrupted"
d8=$(delta "$T/s0" "$T/s1" ab 8); d0=$(delta "$T/s0" "$T/s1" ab 0)
fast=$(awk -v n=$BIG -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f MB/s (%.1f s)", n / (b - a) / 1e6, b - a }')
verbose "openssh-lfn scp upload of $BIG bytes: $fast; a->b cs1=$d8 cs0=$d0"
[ "$d8" -eq 0 ] || fail "openssh-lfn scp upload: $d8 bytes marked CS1"
[ "$d0" -ge "$BIG" ] || fail "openssh-lfn scp upload: bulk bytes not CS0 (cs0=$d0 < $BIG)"

###
### 2. classification, ours (asserted) and stock (reported)
###
classify() {
	local tr=$1 b=$T/c0 a=$T/c1 pid lp
	# background clients: not a function, so that $! is the client's PID
	local -a BG=(timeout 120 ip netns exec "$NSA" "$tr/ssh" -F "$T/ssh_config"
	    -p "$PORT" -o HostKeyAlias=lfnpeer -o HostName="$ADDR")

	tid "$WHO: ssh host cmd"
	snap "$b"; C "$tr" lfnpeer "$BULKCMD" < "$T/data" > /dev/null || fail "ssh cmd failed"; snap "$a"
	result "ssh-cmd" ab bulk "$b" "$a" $P; result "ssh-cmd" ba bulk "$b" "$a" $P

	tid "$WHO: ssh -tt host cmd"
	snap "$b"
	C "$tr" -tt lfnpeer "stty raw -echo; head -c $PT > /dev/null; cat $T/data.b64" \
	    < "$T/data.b64" > "$T/tty.out" 2>/dev/null || fail "ssh -tt failed"
	snap "$a"
	result "ssh-tty" ab tty "$b" "$a" $PT; result "ssh-tty" ba tty "$b" "$a" $PT

	tid "$WHO: scp upload and download"
	snap "$b"; rm -f "$T/up" "$T/down"
	SCP "$tr" -q "$T/data" "lfnpeer:$T/up" || fail "scp up failed"
	SCP "$tr" -q "lfnpeer:$T/data" "$T/down" || fail "scp down failed"
	snap "$a"; cmp -s "$T/data" "$T/down" || fail "scp corrupted"
	result "scp" ab bulk "$b" "$a" $P; result "scp" ba bulk "$b" "$a" $P

	tid "$WHO: sftp put and get"
	snap "$b"; rm -f "$T/up" "$T/down"
	printf 'put %s %s\nget %s %s\n' "$T/data" "$T/up" "$T/data" "$T/down" |
	    SFTP "$tr" -q -b - lfnpeer > /dev/null || fail "sftp failed"
	snap "$a"; cmp -s "$T/data" "$T/down" || fail "sftp corrupted"
	result "sftp" ab bulk "$b" "$a" $P; result "sftp" ba bulk "$b" "$a" $P

	tid "$WHO: -L forward"
	lp=$((PORT + 1))
	"${BG[@]}" -N -o ExitOnForwardFailure=yes -L "127.0.0.1:$lp:127.0.0.1:$PORT" lfnpeer &
	pid=$!; LFN_PIDS+=("$pid")
	wait_listen "$NSA" "$lp" || fail "-L listener did not come up"
	snap "$b"; inner "$tr" "$lp" lfnpeer "$BULKCMD" < "$T/data" > /dev/null || fail "ssh via -L failed"; snap "$a"
	kill "$pid"; wait "$pid" 2>/dev/null
	result "-L" ab bulk "$b" "$a" $P; result "-L" ba bulk "$b" "$a" $P

	tid "$WHO: -W (ProxyJump)"
	snap "$b"
	timeout 120 ip netns exec "$NSA" "$tr/ssh" -F "$T/ssh_config" -J "$(id -un)@$ADDR:$PORT" -p "$PORT" \
	    -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 lfnpeer "$BULKCMD" < "$T/data" > /dev/null ||
	    fail "ssh -J failed"
	snap "$a"
	result "-W/ProxyJump" ab bulk "$b" "$a" $P; result "-W/ProxyJump" ba bulk "$b" "$a" $P

	tid "$WHO: -D dynamic forward"
	lp=$((PORT + 2))
	"${BG[@]}" -N -o ExitOnForwardFailure=yes -D "127.0.0.1:$lp" lfnpeer &
	pid=$!; LFN_PIDS+=("$pid")
	wait_listen "$NSA" "$lp" || fail "-D listener did not come up"
	snap "$b"
	inner "$tr" 22 -o "ProxyCommand=$T/socks5 $lp 127.0.0.1 $PORT" lfnpeer "$BULKCMD" \
	    < "$T/data" > /dev/null || fail "ssh via -D failed"
	snap "$a"
	kill "$pid"; wait "$pid" 2>/dev/null
	result "-D" ab bulk "$b" "$a" $P; result "-D" ba bulk "$b" "$a" $P

	tid "$WHO: mux session"
	rm -f "$S/ctl"
	"${BG[@]}" -N -M -S "$S/ctl" -o ControlPersist=no lfnpeer &
	pid=$!; LFN_PIDS+=("$pid")
	for _ in $(seq 1 100); do [ -S "$S/ctl" ] && break; sleep 0.1; done
	[ -S "$S/ctl" ] || fail "mux master did not come up"
	snap "$b"; C "$tr" -S "$S/ctl" lfnpeer "$BULKCMD" < "$T/data" > /dev/null || fail "mux session failed"; snap "$a"
	C "$tr" -S "$S/ctl" -O exit lfnpeer 2>/dev/null; wait "$pid" 2>/dev/null
	result "mux" ab bulk "$b" "$a" $P; result "mux" ba bulk "$b" "$a" $P

	tid "$WHO: tty session and a bulk -L channel at once, then tty alone"
	lp=$((PORT + 3)); rm -f "$T/go"
	"${BG[@]}" -tt -o ExitOnForwardFailure=yes -L "127.0.0.1:$lp:127.0.0.1:$PORT" lfnpeer \
	    "while [ ! -e $T/go ]; do sleep 0.1; done; cat $T/data.b64" < /dev/null > "$T/tty.out" 2>/dev/null &
	pid=$!; LFN_PIDS+=("$pid")
	wait_listen "$NSA" "$lp" || fail "-L listener did not come up"
	sleep 1		# let the tty session settle (not an assertion)
	snap "$b"; inner "$tr" "$lp" lfnpeer "$BULKCMD" < "$T/data" > /dev/null || fail "ssh via -L failed"; snap "$a"
	result "tty+bulk(bulk)" ab bulk "$b" "$a" $P; result "tty+bulk(bulk)" ba bulk "$b" "$a" $P
	sleep 1		# the forwarded channel closes
	snap "$b"; touch "$T/go"; wait "$pid" || fail "tty session failed"; snap "$a"
	result "tty+bulk(tty after)" ba tty "$b" "$a" $PT; result "tty+bulk(tty after)" ab ack-tty "$b" "$a" $PT
}

WHO=ours classify "$LFN_TREE"
if [ -x "$STOCK_TREE/ssh" ] && [ "$STOCK_TREE" != "$LFN_TREE" ]; then
	# stock client against stock sshd, for comparison (not asserted)
	kill "$LFN_SSHD_PID"; wait "$LFN_SSHD_PID" 2>/dev/null
	PORT=$(lfn_free_port)
	lfn_sshd_start "$STOCK_TREE" "$PORT" "$NSB" </dev/null
	WHO=stock classify "$STOCK_TREE"
fi

echo "=== bytes per DSCP (ab = client->server, ba = server->client) ==="
printf '%s\n' "${TABLE[@]}"
[ -n "${slow:-}" ] && echo "scp upload under CS1 policing: system client (af21 cs1) $slow; openssh-lfn $fast"
lfn_finish
