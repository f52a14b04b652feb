#!/usr/bin/env bash
# fastpath-pipe-quota: 0308 enlarges a no-tty session's stdin pipe to
# 256 KiB only while the user stays well below fs.pipe-user-pages-soft:
# sshd-session first asks for 1 MiB, which Linux
# refuses (EPERM) to an unprivileged user whose pipe pages would then go
# over the soft limit, and keeps the kernel's 64 KiB if it is refused.
# Tests run sshd as root (no quota), so an LD_PRELOAD shim
# (regress-bench/lib/pipe-quota-shim.c) makes sshd-session's F_SETPIPE_SZ
# above 256 KiB fail as the kernel would for a user 768 KiB or less from
# the limit: the stdin pipe must stay at 64 KiB.  Without the shim it is
# 256 KiB (as fastpath-session-pipes.sh checks).  Linux only.
# Patches: 0308
. "$(dirname "$0")/../lib/sshenv.sh"
[ "$(uname -s)" = Linux ] || { echo "not Linux: skipped"; exit 77; }
soft=$(cat /proc/sys/fs/pipe-user-pages-soft 2>/dev/null || echo 1)
[ "$soft" != 0 ] || { echo "fs.pipe-user-pages-soft is 0 (no quota): skipped"; exit 77; }
trap 'lfn_cleanup' EXIT
lfn_env_init fastpath-pipe-quota
cc -shared -fPIC -o "$T/shim.so" "$LFN_TOP/regress-bench/lib/pipe-quota-shim.c" -ldl ||
	{ echo "cannot build the shim: skipped"; exit 77; }
probe='python3 -c "import fcntl; print(fcntl.fcntl(0, 1032))"'
p_near=$(lfn_free_port)
PIPE_QUOTA_ROOM=262144 LD_PRELOAD=$T/shim.so lfn_sshd_start "$LFN_TREE" "$p_near"
p_far=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p_far"

tid "user far from the pipe quota: stdin pipe 256 KiB"
got=$(lfn_ssh "$LFN_TREE" "$p_far" lfnpeer "$probe" </dev/null) || fail "probe failed"
[ "$got" = 262144 ] || fail "stdin pipe $got, want 262144"

tid "user near the pipe quota (1 MiB refused): stdin pipe stays 64 KiB"
got=$(lfn_ssh "$LFN_TREE" "$p_near" lfnpeer "$probe" </dev/null) || fail "probe failed"
[ "$got" = 65536 ] || fail "stdin pipe $got, want 65536 (enlarged although near the quota)"

tid "upload through the unenlarged pipe intact"
head -c 3000000 /dev/urandom > "$T/data"
lfn_ssh "$LFN_TREE" "$p_near" lfnpeer "cat > $T/up" < "$T/data" || fail "upload failed"
cmp -s "$T/data" "$T/up" || fail "upload corrupted"
lfn_finish
