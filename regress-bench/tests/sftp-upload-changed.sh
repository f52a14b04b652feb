#!/usr/bin/env bash
# sftp-upload-changed: files that change between their stat and their
# read go up as they are when read, as stock scp and sftp send them (0271,
# 0210, 0273).  What a user would see go wrong: an upload of a tree being
# written to that cuts a grown file at the size it was listed with, pads
# or fails one that shrank, or exits 0 with a copy that is neither.
# Deterministic, not timed: lib/sftp-change-proxy.py sits between the
# client and sftp-server and changes a file's source when its
# destination's OPEN passes, before the client (which reads only once the
# OPEN is answered) reads it: names ending in "g" grow, in "s" shrink to
# half, others stay.  A tree of such files from 0 bytes to 5 MiB (block
# edges, in flight together, and one above the 4 MiB that go in flight),
# by scp -r, sftp put -R and a multi-file scp, new client and stock's
# (scp -D / sftp -D): each copy must be the source as it is after the
# changes, byte for byte, with exit 0 (stock's as well).  Then scp -r -X
# connections=3 through sshd (its Subsystem the proxy), whose 20 MiB
# files are split over the connections: one that grew comes whole, one
# that shrank fails with an error and exit 1, nothing at its destination.
# Patches: 0210 0271 0273
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-upload-changed
[ -x "$STOCK_TREE/scp" ] || lfn_die "stock build missing"

proxy() {	# proxy FILE: a program for -D / Subsystem, the proxy before sftp-server
	printf '#!/bin/sh\nexec env SFTP_CHANGE_SRC=%s SFTP_CHANGE_DST=%s SFTP_CHANGE_MARKS=%s SFTP_CHANGE_GROW=%s /usr/bin/python3 %s %s\n' \
		"$T/src" "$T/dst" "$T/marks" "${GROW:-1000}" "$LFN_TOP/regress-bench/lib/sftp-change-proxy.py" \
		"$LFN_TREE/sftp-server" > "$1" && chmod +x "$1"
}
tree() {	# tree [BIG]: a fresh source tree, the same bytes every time
	rm -rf "$T/src" "$T/dst" "$T/marks"; mkdir -p "$T/src/sub" "$T/marks"
	/usr/bin/python3 - "$T/src" "${1:-0}" <<'PY'
import os, random, sys
d, big = sys.argv[1], int(sys.argv[2])
r = random.Random(7)
sizes = [0, 1, 1000, 10000, 65536, 261120, 261121, 1048576, 3 * 1048576, 5 * 1048576]
for i, n in enumerate(sizes):
    for tag in "gsu":
        with open(os.path.join(d, "f%02d%s" % (i, tag)), "wb") as f:
            f.write(r.randbytes(n))
for i in range(30):
    with open(os.path.join(d, "sub", "n%02d%s" % (i, "gsu"[i % 3])), "wb") as f:
        f.write(r.randbytes(i * 997))
if big:
    for tag in "gs":
        with open(os.path.join(d, "huge" + tag), "wb") as f:
            f.write(r.randbytes(big))
PY
	find "$T/src" -type f -printf '%P %s\n' | LC_ALL=C sort > "$T/sizes.before"
}
same() {	# same WHAT [DIFF-ARGS]: dst is src as it is now; the changes happened
	diff -r "${@:2}" "$T/src" "$T/dst" > "$T/diff" 2>&1 || fail "$1: the copy differs from the files as read: $(head -n 3 "$T/diff")"
	find "$T/src" -type f -printf '%P %s\n' | LC_ALL=C sort > "$T/sizes.after"
	cmp -s "$T/sizes.before" "$T/sizes.after" && fail "$1: no source file changed (the proxy did not run)"
	grep -q "^f09g $((5 * 1048576 + ${GROW:-1000}))$" "$T/sizes.after" || fail "$1: f09g did not grow"
}
proxy "$T/change-server"

for client in "$LFN_TREE" "$STOCK_TREE"; do
	who=$([ "$client" = "$LFN_TREE" ] && echo new || echo stock)
	tid "$who client: scp -r of files that grow and shrink before they are read"
	tree
	timeout 120 "$client/scp" -q -r -D "$T/change-server" "$T/src" "localhost:$T/dst" > "$T/out" 2> "$T/err" ||
		fail "$who scp -r: exit $?: $(tail -n 3 "$T/err")"
	same "$who scp -r"

	tid "$who client: sftp put -R of the same"
	tree
	timeout 120 "$client/sftp" -q -D "$T/change-server" -b - > "$T/out" 2> "$T/err" <<< "put -R $T/src $T/dst" ||
		fail "$who put -R: exit $?: $(tail -n 3 "$T/err")"
	same "$who put -R"

	tid "$who client: scp of the files named one by one into a directory"
	tree; mkdir "$T/dst"; cp -a "$T/src/sub" "$T/dst/"
	timeout 120 "$client/scp" -q -D "$T/change-server" "$T"/src/f* "localhost:$T/dst/" > "$T/out" 2> "$T/err" ||
		fail "$who scp f...: exit $?: $(tail -n 3 "$T/err")"
	same "$who scp f..."
done

tid "scp -r -X connections=3 through sshd: split and whole files that change"
# A split file is read at several offsets at once: one that grew is copied
# to its new end; one that shrank fails the copy ("file shrank during the
# transfer", exit 1), its destination not created, its part kept.
GROW=$((3 * 1048576 + 17)); proxy "$T/change-server"
port=$(lfn_free_port)
lfn_sshd_config "$LFN_TREE" "$port" | sed "s#^Subsystem sftp .*#Subsystem sftp $T/change-server#" > "$T/sshd_config.chg"
"$LFN_TREE/sshd" -t -f "$T/sshd_config.chg" || fail "sshd -t rejected the config"
_lfn_sshd_run "sshd (changing proxy)" "$port" "$T/sshd.chg.log" "" "$LFN_TREE/sshd" -D -e -f "$T/sshd_config.chg"
tree $((20 * 1048576))
lfn_scp "$LFN_TREE" "$port" -v -r -X connections=3 "$T/src" "lfnpeer:$T/dst" > "$T/out" 2> "$T/err"
rc=$?
[ "$rc" = 1 ] || fail "scp -r -X connections=3 with a split file that shrank: exit $rc, not 1"
grep -q "file shrank during the transfer" "$T/err" || fail "no 'file shrank' error: $(grep -v debug "$T/err" | tail -n 3)"
grep -q "upload \"$T/src/huges\" to \"$T/dst/huges\" failed" "$T/err" || fail "the failed file is not named"
[ -e "$T/dst/huges" ] && fail "the split file that shrank was created at its destination"
[ -f "$T/dst/huges.lfn-part" ] || fail "the split file that shrank left no part to go on from"
same "scp -r -X connections=3" -x huges -x huges.lfn-part
cmp -s "$T/src/hugeg" "$T/dst/hugeg" || fail "the split file that grew is not its new self"
[ "$(stat -c %s "$T/src/hugeg")" = $((20 * 1048576 + GROW)) ] || fail "hugeg did not grow by $GROW bytes once"
for f in hugeg huges; do
	grep -q "\"[^\"]*/$f\(\.lfn-part\)\?\": [0-9]* bytes, [0-9]* chunks of [0-9]* over [2-3] connections" "$T/err" ||
		fail "scp -r -X connections=3: $f was not split over the connections"
done
lfn_finish
