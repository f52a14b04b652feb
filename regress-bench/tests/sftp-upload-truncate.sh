#!/usr/bin/env bash
# sftp-upload-truncate: an scp upload whose final truncate (the size
# fsetstat that 0210 sends back to back with the close) fails, and that
# leaves a regular file at the wrong length, fails: scp exits nonzero, as
# for a failed write (0210, was 0209).  The server is our
# sftp-server with fsetstat denied (-P fsetstat), writing over a longer
# file.  A new file and a character device (`scp f host:/dev/null`) are
# not cut at all (0245: the destination's STAT goes with the OPEN), so
# nothing is refused or said; writes that fail after the close went out
# (0244, 0245) are cut by name to what was written whole.  A -p
# mode/times fsetstat that fails stays a message only, as upstream
# (sftp-roundtrips.sh compares that with stock).  Stock scp exits 0 on any
# failed truncate.
# Patches: 0210 0244
. "$(dirname "$0")/../lib/sshenv.sh"

trap 'umount "$T/full" 2> /dev/null; lfn_cleanup' EXIT
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

tid "scp upload over a longer file, server refuses the truncate (sftp-server -P fsetstat): nonzero exit"
head -c 2000000 /dev/zero > "$T/up"
lfn_scp "$LFN_TREE" "$p_deny" "$T/f1m" "lfnpeer:$T/up" > "$T/deny.out" 2>&1; rc=$?
verbose "rc $rc: $(tr '\n' ' ' < "$T/deny.out" | head -c 200)"
[ "$(stat -c %s "$T/up")" = 2000000 ] || fail "sftp-server -P fsetstat truncated after all"
[ "$rc" -ne 0 ] || fail "scp exited 0 although the file was left at the wrong length"
grep -q 'fsetstat' "$T/deny.out" || fail "no fsetstat error reported"

tid "scp -p upload over a longer file, truncate refused: nonzero exit"
head -c 2000000 /dev/zero > "$T/up"
lfn_scp "$LFN_TREE" "$p_deny" -p "$T/f1m" "lfnpeer:$T/up" > "$T/denyp.out" 2>&1; rc=$?
[ "$rc" -ne 0 ] || fail "scp -p exited 0 although the file was left at the wrong length"

tid "scp upload of a new file, truncate refused: no cut is sent (0245), whole, exit 0, quiet"
rm -f "$T/up"
lfn_scp "$LFN_TREE" "$p_deny" "$T/f1m" "lfnpeer:$T/up" > "$T/denynew.out" 2>&1; rc=$?
verbose "rc $rc: $(tr '\n' ' ' < "$T/denynew.out" | head -c 200)"
[ "$rc" -eq 0 ] || fail "scp of a new file exited $rc although the file is whole"
cmp -s "$T/f1m" "$T/up" || fail "new file not whole"
grep -q 'fsetstat' "$T/denynew.out" && fail "a cut was sent to a new file"

tid "scp upload onto a character device (cannot be cut): no cut is sent (0245), exit 0, quiet"
lfn_scp "$LFN_TREE" "$p_ok" "$T/f1m" "lfnpeer:$T/null" > "$T/null.out" 2>&1; rc=$?
verbose "rc $rc: $(tr '\n' ' ' < "$T/null.out" | head -c 200)"
[ "$rc" -eq 0 ] || fail "scp to a character device exited $rc"
grep -q 'fsetstat' "$T/null.out" && fail "a cut was sent to a character device"

tid "scp whose writes fail after its close went out (0245): cut by name to the part written"
# a 4 MiB tmpfs, a 16 MiB file: every write is out before the first
# status (0244), the close right behind them; the cut then goes by name
mkdir -p "$T/full"
mount -t tmpfs -o size=4m tmpfs "$T/full" || fail "cannot mount a tmpfs"
head -c 16777216 /dev/urandom > "$T/f16m"
lfn_scp "$LFN_TREE" "$p_ok" -vvv "$T/f16m" "lfnpeer:$T/full/f" > "$T/full.out" 2>&1 &&
	fail "scp to a full disk exited 0"
got=$(stat -c %s "$T/full/f" 2>/dev/null || echo 0)
verbose "left $got bytes"
cmp -s -n "$got" "$T/f16m" "$T/full/f" && [ "$got" -lt 16777216 ] ||
	fail "the full disk's file is not a prefix of the source ($got bytes)"
first_close=$(grep -n -m1 "Sent message fd [0-9]* T:4 " "$T/full.out" | cut -d: -f1)
cut=$(grep -n -m1 "Sent message fd [0-9]* T:9 " "$T/full.out" | cut -d: -f1)
[ -n "$first_close" ] && [ -n "$cut" ] && [ "$first_close" -lt "$cut" ] ||
	fail "not the close first, then a setstat by name (close line ${first_close:-none}, setstat ${cut:-none})"
umount "$T/full"

lfn_finish
