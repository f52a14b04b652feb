#!/usr/bin/env bash
# sftp-server-copies: sftp-server writes an upload's data from where it
# arrived (0315).  Upstream copied each write request's data out of its
# input queue before writing it.  Checked, with sftp -D (a local
# sftp-server on pipes, no sshd) and an LD_PRELOAD shim counting the bytes
# sftp-server moves with memcpy/memmove calls of >= 64 KiB
# (regress-bench/lib/copy-count-shim.c):
#  - a 32 MiB + 1000 byte upload arrives intact, and sftp-server copied
#    less than half its size (before 0315: a little more than its size);
#  - uploads of 0, 1, 261119, 261120, 261121 and 1000000 bytes, a resumed
#    upload (reput) from an odd offset, and an upload by stock 10.5p1's
#    sftp client (when build/stock is there) all arrive intact.
# (0314, which read a download straight into its DATA reply, was withdrawn
# on 2026-12-06, and this test's download checks with it.)
# Patches: 0315
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init sftp-server-copies
cc -shared -fPIC -o "$T/shim.so" "$LFN_TOP/regress-bench/lib/copy-count-shim.c" -ldl ||
	fail "cannot build the copy counting shim"
cat > "$T/server" <<SH
#!/bin/sh
COPY_COUNT_FILE=$T/copies LD_PRELOAD=$T/shim.so exec $LFN_TREE/sftp-server
SH
chmod +x "$T/server"

# copies_check WHAT CMD DEST: run sftp batch command CMD (copying $T/big to
# DEST) on the shimmed sftp-server; the copy is intact and sftp-server
# moved less than half the file's size in bulk memcpy/memmove.
copies_check() {
	local what=$1 cmd=$2 dest=$3 copied
	tid "$what: data copied inside sftp-server"
	rm -f "$T/copies" "$dest"
	echo "$cmd" | "$LFN_TREE/sftp" -q -D "$T/server" -b - > "$T/log" 2>&1 ||
		{ cat "$T/log"; fail "sftp $what failed"; }
	cmp -s "$T/big" "$dest" || fail "$what differs"
	copied=$(awk '{s += $2} END {print s + 0}' "$T/copies" 2>/dev/null)
	[ -s "$T/copies" ] || fail "the shim reported nothing"
	verbose "file $size bytes, sftp-server copied $copied bytes in bulk memcpy/memmove"
	[ "${copied:-0}" -lt $((size / 2)) ] ||
		fail "sftp-server copied $copied bytes for a $size byte $what"
}
head -c $((32 * 1024 * 1024 + 1000)) /dev/urandom > "$T/big"
size=$(stat -c %s "$T/big")
copies_check upload "put $T/big $T/put" "$T/put"

tid "uploads of edge sizes, resumed, and by stock's client"
for n in 0 1 261119 261120 261121 1000000; do
	head -c "$n" /dev/urandom > "$T/f$n"
	rm -f "$T/g$n"
	echo "put $T/f$n $T/g$n" | "$LFN_TREE/sftp" -q -D "$T/server" -b - > "$T/log" 2>&1 ||
		{ cat "$T/log"; fail "put of $n bytes failed"; }
	cmp -s "$T/f$n" "$T/g$n" || fail "$n bytes: the copy differs"
done
head -c 777777 "$T/big" > "$T/part"
echo "reput $T/big $T/part" | "$LFN_TREE/sftp" -q -D "$T/server" -b - > "$T/log" 2>&1 ||
	{ cat "$T/log"; fail "reput failed"; }
cmp -s "$T/big" "$T/part" || fail "resumed upload differs"
if [ -x "$STOCK_TREE/sftp" ]; then
	rm -f "$T/put"
	echo "put $T/big $T/put" | "$STOCK_TREE/sftp" -q -D "$T/server" -b - > "$T/log" 2>&1 ||
		{ cat "$T/log"; fail "stock sftp put failed"; }
	cmp -s "$T/big" "$T/put" || fail "upload by stock's sftp differs"
else
	verbose "no stock build at $STOCK_TREE: its client not tried"
fi
lfn_finish
