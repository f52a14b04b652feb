#!/usr/bin/env bash
# window-interop: dynamic windows (0202) and the SFTP pipelining ramp (0206)
# against stock 10.3p1 and the system's ssh, over a long fat link: every
# path stays intact, and the receiver's side decides whether the window
# grows (an lfn receiver grows, a stock one keeps its 2 MiB).  Also scp,
# sftp put/get/reput/reget, -R/-B overrides and rsync -e ssh.
# Patches: 0202 0206
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-interop
lfn_wan_link wi$$ 50 1gbit

dd if=/dev/urandom of="$T/data" bs=1M count=32 status=none
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" "$NB" </dev/null; log_lfn=$SSHD_LOG
p_stock=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stock" "$NB" </dev/null; log_stock=$SSHD_LOG

since_log() { tail -n +"$(( $2 + 1 ))" "$1" > "$T/part"; echo "$T/part"; }

# ssh_xfer CLIENT_TREE PORT SERVERLOG LABEL EXPECT_DOWN EXPECT_UP
# EXPECT_*: grow = window must grow, fixed = must not, any = not checked.
ssh_xfer() {
	local ct=$1 port=$2 slog=$3 label=$4 edown=$5 eup=$6 m w
	tid "$label: ssh download/upload"
	rm -f "$T/down" "$T/up"
	lfn_ssh "$ct" -n "$NA" -h "$ADDR" "$port" -v lfnpeer "cat $T/data" > "$T/down" 2> "$T/c.log" || fail "download failed"
	cmp -s "$T/data" "$T/down" || fail "download corrupted"
	w=$(grew "$T/c.log")
	case $edown in
	grow) [ "$w" -gt 2097152 ] || fail "client window did not grow" ;;
	fixed) [ "$w" -eq 0 ] || fail "client window grew" ;;
	esac
	m=$(wc -l < "$slog")
	lfn_ssh "$ct" -n "$NA" -h "$ADDR" "$port" lfnpeer "cat > $T/up" < "$T/data" || fail "upload failed"
	cmp -s "$T/data" "$T/up" || fail "upload corrupted"
	sleep 0.5; w=$(grew "$(since_log "$slog" "$m")")
	case $eup in
	grow) [ "$w" -gt 2097152 ] || fail "server window did not grow" ;;
	fixed) [ "$w" -eq 0 ] || fail "server window grew" ;;
	esac
}
ssh_xfer "$LFN_TREE" "$p_lfn" "$log_lfn" "lfn -> lfn" grow grow
ssh_xfer "$LFN_TREE" "$p_stock" "$log_stock" "lfn -> stock sshd" grow fixed
ssh_xfer "$STOCK_TREE" "$p_lfn" "$log_lfn" "stock ssh -> lfn" any grow

if [ -x /usr/bin/ssh ]; then
	tid "system ssh ($(/usr/bin/ssh -V 2>&1 | cut -d, -f1)) -> lfn sshd"
	sys() { ip netns exec "$NA" /usr/bin/ssh -F "$T/ssh_config" -p "$p_lfn" -o HostKeyAlias=lfnpeer "$ADDR" "$@"; }
	rm -f "$T/down" "$T/up"
	sys "cat $T/data" > "$T/down" || fail "download failed"
	cmp -s "$T/data" "$T/down" || fail "download corrupted"
	m=$(wc -l < "$log_lfn")
	sys "cat > $T/up" < "$T/data" || fail "upload failed"
	cmp -s "$T/data" "$T/up" || fail "upload corrupted"
	sleep 0.5; [ "$(grew "$(since_log "$log_lfn" "$m")")" -gt 2097152 ] || fail "server window did not grow"
fi

# sftp_xfer CLIENT_TREE PORT LABEL [sftp options]
sftp_xfer() {
	local ct=$1 port=$2 label=$3; shift 3
	tid "$label: scp (SFTP) upload/download"
	rm -f "$T/up" "$T/down"
	lfn_scp "$ct" -n "$NA" -h "$ADDR" "$port" -q "$T/data" "lfnpeer:$T/up" || fail "scp upload failed"
	cmp -s "$T/data" "$T/up" || fail "scp upload corrupted"
	lfn_scp "$ct" -n "$NA" -h "$ADDR" "$port" -q "lfnpeer:$T/data" "$T/down" || fail "scp download failed"
	cmp -s "$T/data" "$T/down" || fail "scp download corrupted"
	tid "$label: sftp put/get/reput/reget $*"
	rm -f "$T/up" "$T/down"
	head -c 9000000 "$T/data" > "$T/up"
	head -c 7000000 "$T/data" > "$T/down"
	lfn_sftp "$ct" -n "$NA" -h "$ADDR" "$port" "$@" -q -b - lfnpeer > /dev/null <<EOF || fail "sftp batch failed"
reput $T/data $T/up
reget $T/data $T/down
put $T/data $T/up2
get $T/data $T/down2
EOF
	cmp -s "$T/data" "$T/up" || fail "reput corrupted"
	cmp -s "$T/data" "$T/down" || fail "reget corrupted"
	cmp -s "$T/data" "$T/up2" || fail "put corrupted"
	cmp -s "$T/data" "$T/down2" || fail "get corrupted"
	rm -f "$T/up2" "$T/down2"
}
sftp_xfer "$LFN_TREE" "$p_lfn" "lfn -> lfn"
sftp_xfer "$LFN_TREE" "$p_lfn" "lfn -> lfn, fixed pipeline" -R 16 -B 65536
sftp_xfer "$LFN_TREE" "$p_stock" "lfn -> stock sshd"
sftp_xfer "$STOCK_TREE" "$p_lfn" "stock -> lfn sshd"

tid "sftp: the pipeline ramps past stock's 64 requests (512 blocks of 64 KiB)"
lfn_sftp "$LFN_TREE" -n "$NA" -h "$ADDR" "$p_lfn" -vvv -B 65536 -b - lfnpeer > /dev/null 2> "$T/sftp.log" <<EOF || fail "sftp get failed"
get $T/data $T/down
EOF
cmp -s "$T/data" "$T/down" || fail "get corrupted"
# "Request range A -> B (N/M)": N requests in flight, M allowed.
n=$(grep -o 'Request range [0-9]* -> [0-9]* ([0-9]*/[0-9]*)' "$T/sftp.log" | tr -d '()' | tr '/' ' ' | awk '{ if ($6 > m) m = $6 } END { print m + 0 }')
verbose "download pipeline reached $n requests"
[ "$n" -gt 64 ] || fail "download pipeline stayed at $n requests"

if command -v rsync >/dev/null; then
	tid "rsync -e ssh both ways"
	rs="$LFN_TREE/ssh -F $T/ssh_config -p $p_lfn -o HostKeyAlias=lfnpeer"
	rm -f "$T/up" "$T/down"
	ip netns exec "$NA" rsync -e "$rs" "$T/data" "$ADDR:$T/up" || fail "rsync upload failed"
	cmp -s "$T/data" "$T/up" || fail "rsync upload corrupted"
	ip netns exec "$NA" rsync -e "$rs" "$ADDR:$T/data" "$T/down" || fail "rsync download failed"
	cmp -s "$T/data" "$T/down" || fail "rsync download corrupted"
fi
lfn_finish
