#!/usr/bin/env bash
# sftp-many-files-changed: files that changed between the listing and
# their copy come down whole (0271, 0210).  What a user would see go
# wrong: a file that grew since the directory was listed cut at its old
# size, one that shrank padded or failed, in scp -r or sftp get -R of a
# tree being written to.
# Deterministic, not timed: lib/sftp-sequential-server.py with
# SFTP_SEQ_STALE=1 lists (and stats) files whose name ends in "g" at half
# their size and those ending in "s" at twice their size plus 1000, as a
# listing taken before they changed would; reads see the files as they
# are.  A tree of such files from 0 bytes to 3 MiB (block edges, several
# reads, in flight together) and unchanged ones, by scp -r and sftp get -R
# (sftp -D / scp -D), with the new client and stock's: each copy is the
# tree as it is now, byte for byte, and exits 0.  Uploads of files that
# change during the copy are not tried (their outcome depends on timing).
# Patches: 0210 0271
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-many-files-changed
[ -x "$STOCK_TREE/scp" ] || lfn_die "stock build missing"
srv=$T/stale-server
lfn_sequential_server "$srv" SFTP_SEQ_STALE=1
mkdir -p "$T/src/sub"
/usr/bin/python3 - "$T/src" <<'PY'
import os, sys
d = sys.argv[1]
sizes = [0, 1, 1000, 10000, 65536, 261120, 261121, 522240, 1048576, 3 * 1048576]
for i, n in enumerate(sizes):
    for tag in "gsu":
        with open(os.path.join(d, "f%02d%s" % (i, tag)), "wb") as f:
            f.write(os.urandom(n))
for i in range(40):
    with open(os.path.join(d, "sub", "n%02d%s" % (i, "gsu"[i % 3])), "wb") as f:
        f.write(os.urandom(i * 997))
PY

for client in "$LFN_TREE" "$STOCK_TREE"; do
	who=$([ "$client" = "$LFN_TREE" ] && echo new || echo stock)
	tid "$who client: scp -r of a tree changed since its listing comes down as it is now"
	rm -rf "$T/d1"
	timeout 120 "$client/scp" -q -r -D "$srv" "localhost:$T/src" "$T/d1" > "$T/out" 2> "$T/err" ||
		fail "$who scp -r: exit $?: $(tail -n 3 "$T/err")"
	diff -r "$T/src" "$T/d1" > "$T/diff" 2>&1 || fail "$who scp -r: the copy differs: $(head -n 3 "$T/diff")"

	tid "$who client: sftp get -R of the same tree"
	rm -rf "$T/d2"
	timeout 120 "$client/sftp" -q -D "$srv" -b - > "$T/out" 2> "$T/err" <<< "get -R $T/src $T/d2" ||
		fail "$who get -R: exit $?: $(tail -n 3 "$T/err")"
	diff -r "$T/src" "$T/d2" > "$T/diff" 2>&1 || fail "$who get -R: the copy differs: $(head -n 3 "$T/diff")"
done
lfn_finish
