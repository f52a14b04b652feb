#!/usr/bin/env bash
# sftp-upload-disk-full: an upload that fills the server's disk leaves a
# correct prefix of the source, never a file of the full length with
# zeros where the writes failed (which reput or put -a would then take up
# as written, exit 0).  Upstream 10.5p1 counted refused writes as written
# and cut the file after them.  The server's disk is a 4 MiB tmpfs; the
# file is 16 MiB; scp (in place, one connection) and sftp reput.
# Patches: 0105
. "$(dirname "$0")/../lib/sshenv.sh"

trap 'umount "$T/full" 2> /dev/null; lfn_cleanup' EXIT
lfn_env_init sftp-upload-disk-full
mib=1048576
head -c $((16 * mib)) /dev/urandom > "$T/src"
mkdir -p "$T/full"
mount -t tmpfs -o size=$((4 * mib)) tmpfs "$T/full" || fail "cannot mount a tmpfs"
port=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$port"

# prefix_or_absent FILE: FILE is absent or a correct prefix of the source
prefix_or_absent() {
	local got
	[ -e "$1" ] || return 0
	got=$(stat -c %s "$1")
	[ "$got" -le $((16 * mib)) ] && cmp -s -n "$got" "$T/src" "$1" ||
		fail "$2 left $got bytes that are not the source's"
	verbose "$2 left a $got-byte prefix"
}

for how in scp "sftp reput"; do
	tid "$how to a full disk: nonzero exit, a correct prefix; with room made, reput ends byte-identical"
	rm -f "$T/full/"*
	mount -o remount,size=$((4 * mib)) "$T/full" || fail "cannot shrink the tmpfs"
	if [ "$how" = scp ]; then
		lfn_scp "$LFN_TREE" "$port" -q "$T/src" "lfnpeer:$T/full/f" > "$T/out" 2>&1 &&
			fail "scp exited 0 with the disk full"
	else
		# a prefix there already: reput takes it up, then the disk fills
		head -c $((1 * mib)) "$T/src" > "$T/full/f"
		lfn_sftp "$LFN_TREE" "$port" -q -b - lfnpeer <<< "reput $T/src $T/full/f" > "$T/out" 2>&1 &&
			fail "reput exited 0 with the disk full"
	fi
	grep -q "write remote" "$T/out" || fail "no clear error: $(tail -n 2 "$T/out")"
	prefix_or_absent "$T/full/f" "$how"
	mount -o remount,size=$((64 * mib)) "$T/full" || fail "cannot grow the tmpfs"
	if [ -e "$T/full/f" ]; then
		lfn_sftp "$LFN_TREE" "$port" -q -b - lfnpeer <<< "reput $T/src $T/full/f" > "$T/out" 2>&1 ||
			fail "reput with room made failed: $(tail -n 2 "$T/out")"
		cmp -s "$T/src" "$T/full/f" || fail "reput with room made: the result differs from the source"
	fi
done
umount "$T/full"
lfn_finish
