#!/usr/bin/env bash
# sftp-download-while-listing: a recursive download starts its files while
# the directory's listing is still coming (0271), against any server: a
# directory of 2,000 names is 20 READDIRs, which at 200 ms were ~0.5-1 s
# before the first file went in flight.  The server is
# lib/sftp-sequential-server.py over sftp -D / scp -D, logging the requests
# in the order it got them: an OPEN of a file must come before the READDIR
# that ends the listing (without 0271 every file's OPEN comes after it),
# and the copy is byte for byte the tree, including what the listing gave
# after the first files went: a subdirectory, a symlink (skipped by sftp,
# followed by scp, as before), a 5 MiB file (copied on its own, after the
# files in flight).
# The last case goes through sshd (the logging server as its sftp
# subsystem), where scp keeps -X connections' state; against real servers
# the same downloads run in sftp-many-files.sh.
# Patches: 0270 0271
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-download-while-listing
srv=$T/sequential-server
lfn_sequential_server "$srv"
mkdir -p "$T/src/zsub"
/usr/bin/python3 - "$T/src" <<'PY'
import os, sys
d = sys.argv[1]
for i in range(2000):
    with open(os.path.join(d, "f%04d" % i), "wb") as f:
        f.write(os.urandom(i % 7 * 3000))
for i in range(300):
    with open(os.path.join(d, "zsub", "g%03d" % i), "wb") as f:
        f.write(os.urandom(5000))
with open(os.path.join(d, "zbig"), "wb") as f:
    f.write(os.urandom(5 << 20))
PY
ln -s f0001 "$T/src/zlink"
# what a download of the tree gives: sftp skips the symlink, scp -r
# copies what it points to
expect() { (cd "$T/src" && { find . -type f; [ "$1" = sftp ] || echo ./zlink; } | LC_ALL=C sort); }

check() {	# check WHAT DEST LOG sftp|scp
	local what=$1 d=$2 log=$3 first_open eof
	diff -r --no-dereference "$T/src" "$d" 2>&1 | grep -v 'zlink' | grep -q . &&
		fail "$what: the copy differs: $(diff -rq --no-dereference "$T/src" "$d" 2>&1 | grep -v zlink | head -3)"
	[ "$(cd "$d" && find . -type f | LC_ALL=C sort)" = "$(expect "$4")" ] || fail "$what: not the same files"
	[ "$4" = sftp ] || cmp -s "$T/src/f0001" "$d/zlink" || fail "$what: the symlink's target differs"
	# the top directory's listing ends at the first EOF the server logged
	eof=$(grep -n -m1 '^EOF$' "$log" | cut -d: -f1)
	first_open=$(grep -n -m1 '^OPEN$' "$log" | cut -d: -f1)
	[ -n "$eof" ] && [ -n "$first_open" ] || fail "$what: no listing or no open in the server's log"
	[ "$first_open" -lt "$eof" ] ||
		fail "$what: the first file was opened after the listing ended (request $first_open, EOF at $eof)"
	echo "    $what: first OPEN at request $first_open, the listing's end at $eof"
}

tid "sftp get -R: files in flight before the listing ends"
SFTP_SEQ_LOG=$T/log1 timeout 120 "$LFN_TREE/sftp" -q -D "$srv" -b - <<< "get -R $T/src $T/d1" > "$T/out" 2> "$T/err" ||
	fail "get -R: exit $?: $(tail -n 3 "$T/err")"
check "get -R" "$T/d1" "$T/log1" sftp

tid "scp -r: the same"
SFTP_SEQ_LOG=$T/log2 timeout 120 "$LFN_TREE/scp" -q -r -D "$srv" "localhost:$T/src" "$T/d2" > "$T/out" 2> "$T/err" ||
	fail "scp -r: exit $?: $(tail -n 3 "$T/err")"
check "scp -r" "$T/d2" "$T/log2" scp

tid "scp -rp: times and modes as listed"
chmod 640 "$T/src/f0003"; touch -d '2001-02-03 04:05:06' "$T/src/f0004"
SFTP_SEQ_LOG=$T/log3 timeout 120 "$LFN_TREE/scp" -q -rp -D "$srv" "localhost:$T/src" "$T/d3" > "$T/out" 2> "$T/err" ||
	fail "scp -rp: exit $?: $(tail -n 3 "$T/err")"
check "scp -rp" "$T/d3" "$T/log3" scp
[ "$(stat -c %a "$T/d3/f0003")" = 640 ] || fail "scp -rp: mode $(stat -c %a "$T/d3/f0003"), not 640"
[ "$(stat -c %Y "$T/d3/f0004")" = "$(stat -c %Y "$T/src/f0004")" ] || fail "scp -rp: mtime not kept"
tid "scp -r over ssh (sshd's sftp subsystem: the same logging server)"
# scp over ssh keeps the state of -X connections (it asks ssh -G whether
# to use them), which -D does not: the files still go while listing
lfn_sequential_server "$T/logging-server" SFTP_SEQ_LOG="$T/log4"
port=$(lfn_free_port)
lfn_sshd_config "$LFN_TREE" "$port" | sed "s#^Subsystem sftp .*#Subsystem sftp $T/logging-server#" > "$T/sshd_config.seq"
"$LFN_TREE/sshd" -t -f "$T/sshd_config.seq" || fail "sshd -t rejected the config"
_lfn_sshd_run "sshd (logging sftp server)" "$port" "$T/sshd.seq.log" "" "$LFN_TREE/sshd" -D -e -f "$T/sshd_config.seq"
lfn_scp "$LFN_TREE" "$port" -q -r "lfnpeer:$T/src" "$T/d4" > "$T/out" 2> "$T/err" ||
	fail "scp -r over ssh: exit $?: $(tail -n 3 "$T/err")"
check "scp -r over ssh" "$T/d4" "$T/log4" scp
lfn_finish
