#!/usr/bin/env bash
# sftp-upload-truncate: an scp upload whose final truncate (the size
# fsetstat that 0208 sends back to back with the close) fails, fails: scp
# exits nonzero, as for a failed write (0209; issue 20, finding 9).  The server
# is our sftp-server with fsetstat denied (-P fsetstat), and a character
# device (truncating it fails).  A -p mode/times fsetstat that fails stays
# a message only, as upstream (sftp-roundtrips.sh compares that with
# stock).  Stock scp exits 0 on a failed truncate: the old series did too.
. "$(dirname "$0")/../lib/sshenv.sh"

trap 'lfn_cleanup' EXIT
lfn_env_init sftp-upload-truncate
head -c 1000000 /dev/urandom > "$T/f1m"
mknod "$T/null" c 1 3 && chmod 666 "$T/null" || { echo "cannot mknod: skipped"; exit 77; }
p_ok=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_ok"
p_deny=$(lfn_free_port)
# ForceCommand also replaces the sftp subsystem
lfn_sshd_start "$LFN_TREE" "$p_deny" <<EOF
ForceCommand $LFN_TREE/sftp-server -P fsetstat
EOF

tid "scp upload, truncate allowed: exit 0"
rm -f "$T/up"
lfn_scp "$LFN_TREE" "$p_ok" -q "$T/f1m" "lfnpeer:$T/up" || fail "scp upload failed"
cmp -s "$T/f1m" "$T/up" || fail "scp upload corrupted"

tid "scp upload, server refuses the truncate (sftp-server -P fsetstat): nonzero exit"
rm -f "$T/up"
lfn_scp "$LFN_TREE" "$p_deny" "$T/f1m" "lfnpeer:$T/up" > "$T/deny.out" 2>&1; rc=$?
verbose "rc $rc: $(tr '\n' ' ' < "$T/deny.out" | head -c 200)"
[ "$rc" -ne 0 ] || fail "scp exited 0 although the truncate was refused"
grep -q 'fsetstat' "$T/deny.out" || fail "no fsetstat error reported"

tid "scp -p upload, truncate refused: nonzero exit"
rm -f "$T/up"
lfn_scp "$LFN_TREE" "$p_deny" -p "$T/f1m" "lfnpeer:$T/up" > "$T/denyp.out" 2>&1; rc=$?
[ "$rc" -ne 0 ] || fail "scp -p exited 0 although the truncate was refused"

tid "scp upload onto a character device (truncate fails): nonzero exit"
lfn_scp "$LFN_TREE" "$p_ok" "$T/f1m" "lfnpeer:$T/null" > "$T/null.out" 2>&1; rc=$?
verbose "rc $rc: $(tr '\n' ' ' < "$T/null.out" | head -c 200)"
[ "$rc" -ne 0 ] || fail "scp to a character device exited 0"

lfn_finish
