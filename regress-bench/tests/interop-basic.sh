#!/usr/bin/env bash
# interop-basic: openssh-lfn <-> stock 10.3p1 <-> the system's ssh, both
# directions, with the build identity visible where patch 0901 says.
# Patches: 0901
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init interop-basic
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }

dd if=/dev/urandom of="$T/data" bs=1M count=8 status=none

tid "ssh -V identifies openssh-lfn; stock does not"
"$LFN_TREE/ssh" -V 2>&1 | grep -q '^OpenSSH_[0-9.]*p[0-9]* lfn[0-9]*, ' || fail "patched ssh -V: $("$LFN_TREE/ssh" -V 2>&1)"
"$STOCK_TREE/ssh" -V 2>&1 | grep -q 'lfn' && fail "stock ssh -V mentions lfn"
"$LFN_TREE/sshd" -V 2>&1 | grep -q ' lfn[0-9]*, ' || fail "patched sshd -V: $("$LFN_TREE/sshd" -V 2>&1)"

p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn"; lfn_log_lfn=$SSHD_LOG
p_stock=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stock"; lfn_log_stock=$SSHD_LOG

# xfer CLIENT_TREE PORT LABEL: upload and download 8 MiB, compare.
xfer() {
	local c=$1 port=$2 label=$3
	tid "$label: ssh upload/download"
	rm -f "$T/up" "$T/down"
	lfn_ssh "$c" "$port" lfnpeer "cat > $T/up" < "$T/data" || fail "upload failed"
	cmp -s "$T/data" "$T/up" || fail "upload corrupted"
	lfn_ssh "$c" "$port" lfnpeer "cat $T/data" > "$T/down" || fail "download failed"
	cmp -s "$T/data" "$T/down" || fail "download corrupted"
	tid "$label: scp (SFTP) and sftp"
	rm -f "$T/up"
	lfn_scp "$c" "$port" -q "$T/data" "lfnpeer:$T/up" || fail "scp upload failed"
	cmp -s "$T/data" "$T/up" || fail "scp upload corrupted"
	rm -f "$T/down"
	echo "get $T/data $T/down" | lfn_sftp "$c" "$port" -q -b - lfnpeer >/dev/null || fail "sftp get failed"
	cmp -s "$T/data" "$T/down" || fail "sftp get corrupted"
}
xfer "$LFN_TREE" "$p_stock" "lfn client -> stock sshd"
xfer "$STOCK_TREE" "$p_lfn" "stock client -> lfn sshd"
xfer "$LFN_TREE" "$p_lfn" "lfn client -> lfn sshd"

tid "banner carries 'lfn' as a comment after upstream's version token"
lfn_ssh "$STOCK_TREE" "$p_lfn" -v lfnpeer true 2>&1 | tr -d '\r' > "$T/v1.log"
grep -q 'remote software version OpenSSH_[0-9.]* lfn[0-9]*$' "$T/v1.log" || \
	fail "stock client saw: $(grep 'remote software version' "$T/v1.log")"
lfn_ssh "$LFN_TREE" "$p_stock" -v lfnpeer true 2>&1 | tr -d '\r' > "$T/v2.log"
grep -q 'remote software version OpenSSH_[0-9.]*$' "$T/v2.log" || \
	fail "lfn client saw: $(grep 'remote software version' "$T/v2.log")"
grep -q 'compat_banner: match: OpenSSH_[0-9.]* lfn[0-9]* pat OpenSSH\*' "$T/v1.log" || \
	fail "stock client did not match our banner as OpenSSH: $(grep compat_banner "$T/v1.log")"

if command -v /usr/bin/ssh >/dev/null; then
	tid "system ssh ($(/usr/bin/ssh -V 2>&1 | cut -d, -f1)) -> lfn sshd"
	rm -f "$T/up"
	/usr/bin/ssh -F "$T/ssh_config" -p "$p_lfn" -o HostKeyAlias=lfnpeer 127.0.0.1 "cat > $T/up" < "$T/data" 2> "$T/sys.log" || fail "system ssh upload failed: $(tail -n 3 "$T/sys.log")"
	cmp -s "$T/data" "$T/up" || fail "system ssh upload corrupted"
fi
lfn_finish
