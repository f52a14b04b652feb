#!/usr/bin/env bash
# fastpath-session-pipes: patches 0308 and 0309, the bulk session data path.
# 0308: sshd gives a no-tty session's stdin pipe 256 KiB (F_SETPIPE_SZ;
# stdout, stderr and stock keep the kernel's 64 KiB).
# 0309: channels read and send up to 128 KiB per poll (several packets of
# the peer's maximum size).  Data must arrive intact both ways, between two
# openssh-lfn peers and against stock in both roles.
# Patches: 0308 0309
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init fastpath-session-pipes
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }
grep -q SESSION_PIPE_SIZE "$LFN_TREE/session.c" ||
	{ echo "tree has no session pipe sizing (0308): skipped"; exit 77; }
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }

# F_GETPIPE_SZ (1032) of the remote command's fds 0, 1, 2
probe='python3 -c "import fcntl; print(*(fcntl.fcntl(f, 1032) for f in (0, 1, 2)))"'

p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn"
p_stock=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stock"

tid "openssh-lfn sshd: session stdin pipe is 256 KiB, stdout and stderr 64 KiB"
got=$(lfn_ssh "$LFN_TREE" "$p_lfn" lfnpeer "$probe" </dev/null) || fail "probe failed"
[ "$got" = "262144 65536 65536" ] || fail "pipe sizes: '$got', want '262144 65536 65536'"

tid "stock sshd: the kernel's 64 KiB (the baseline this test can tell apart)"
got=$(lfn_ssh "$LFN_TREE" "$p_stock" lfnpeer "$probe" </dev/null) || fail "probe failed"
[ "$got" = "65536 65536 65536" ] || fail "stock pipe sizes: '$got'"

# 24 MiB + an odd tail: several 128 KiB reads, packets cut at odd places
head -c $((24 * 1048576 + 12345)) /dev/urandom > "$T/data"
for pair in "lfn lfn $p_lfn" "lfn stock $p_stock" "stock lfn $p_lfn"; do
	set -- $pair
	cli=$LFN_TREE; [ "$1" = stock ] && cli=$STOCK_TREE
	for c in aes128-gcm@openssh.com chacha20-poly1305@openssh.com; do
		tid "$1 client -> $2 sshd, $c: upload and download intact"
		rm -f "$T/up" "$T/down"
		lfn_ssh "$cli" "$3" -c "$c" lfnpeer "cat > $T/up" < "$T/data" ||
			fail "upload failed"
		cmp -s "$T/data" "$T/up" || fail "upload differs"
		lfn_ssh "$cli" "$3" -c "$c" lfnpeer "cat $T/data" > "$T/down" </dev/null ||
			fail "download failed"
		cmp -s "$T/data" "$T/down" || fail "download differs"
	done
done

tid "a command that reads its stdin slowly still gets every byte (lfn <-> lfn)"
rm -f "$T/up"
lfn_ssh "$LFN_TREE" "$p_lfn" lfnpeer \
	"python3 -c 'import sys,time
o=open(\"$T/up\",\"wb\")
while True:
    b=sys.stdin.buffer.read1(65536)
    if not b: break
    o.write(b); time.sleep(0.001)'" < "$T/data" || fail "slow reader failed"
cmp -s "$T/data" "$T/up" || fail "slow reader's copy differs"
lfn_finish
