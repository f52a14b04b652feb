#!/usr/bin/env bash
# sftp-many-files-room: a tree of many more files than the files in flight
# have room for (0271).  With a descriptor limit of 64, scp and sftp keep
# at most 16 files in flight (a quarter of it), so a tree of 300 files
# fills the room over and over: new files wait for a file's close to be
# answered, and an upload writes at most half of what the files in flight
# hold while they wait.  What a user would see go wrong: a copy that hangs
# when every file in flight is empty or already written, a file lost or
# cut when its room is taken, a non-zero exit.  The tree: empty files
# (30 in a row, then scattered), files of 1 byte to 3 MiB, the large ones
# together; scp -r and sftp put -R / get -R, the new client over sftp -D
# (scp -D) with its sftp-server under the same limit; each copy identical
# to its source, exit 0, within 120 s, and scp's log says the room was 16.
# Patches: 0271
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-many-files-room
mkdir -p "$T/src/sub"
/usr/bin/python3 - "$T/src" <<'PY'
import os, random, sys
d = sys.argv[1]
r = random.Random(11)
sizes = [0] * 30 + [3 * 1048576] * 12
sizes += [r.choice([0, 1, 1000, 65536, 261121, 700000, 1048576]) for _ in range(258)]
for i, n in enumerate(sizes):
    sub = "sub" if i % 7 == 3 else ""
    with open(os.path.join(d, sub, "f%03d" % i), "wb") as f:
        f.write(r.randbytes(n))
PY
[ "$(find "$T/src" -type f | wc -l)" = 300 ] || fail "the tree is not 300 files"

# run WHAT CMD...: under a descriptor limit of 64 (soft and hard)
run() {
	local what=$1; shift
	( ulimit -n 64 && exec timeout ${ROOM_TIMEOUT:-120} "$@" ) > "$T/out" 2> "$T/err"
	local rc=$?
	[ "$rc" = 0 ] || fail "$what: exit $rc: $(grep -v 'debug' "$T/err" | tail -n 3)"
}
room() {	# room WHAT: the log says 16 files in flight at most
	grep -q 'pipe_max_files: 16 files in flight at most' "$T/err" ||
		fail "$1: the room was not 16 files: $(grep -m1 'files in flight at most' "$T/err")"
}

tid "scp -r up: 300 files through a room of 16"
run "scp -r up" "$LFN_TREE/scp" -vv -r -D "$LFN_TREE/sftp-server" "$T/src" "localhost:$T/up"
diff -r "$T/src" "$T/up" > "$T/diff" 2>&1 || fail "scp -r up: the copy differs: $(head -n 3 "$T/diff")"
room "scp -r up"

tid "scp -r down: the same"
run "scp -r down" "$LFN_TREE/scp" -vv -r -D "$LFN_TREE/sftp-server" "localhost:$T/src" "$T/down"
diff -r "$T/src" "$T/down" > "$T/diff" 2>&1 || fail "scp -r down: the copy differs: $(head -n 3 "$T/diff")"
room "scp -r down"

tid "sftp put -R and get -R: the same"
run "sftp put -R" "$LFN_TREE/sftp" -vv -D "$LFN_TREE/sftp-server" -b - <<< "put -R $T/src $T/put"
diff -r "$T/src" "$T/put" > "$T/diff" 2>&1 || fail "put -R: the copy differs: $(head -n 3 "$T/diff")"
room "sftp put -R"
run "sftp get -R" "$LFN_TREE/sftp" -vv -D "$LFN_TREE/sftp-server" -b - <<< "get -R $T/src $T/get"
diff -r "$T/src" "$T/get" > "$T/diff" 2>&1 || fail "get -R: the copy differs: $(head -n 3 "$T/diff")"
room "sftp get -R"

tid "scp -r up of 300 empty files through the same room"
rm -rf "$T/empty"; mkdir "$T/empty"
for i in $(seq 1 300); do : > "$T/empty/e$i"; done
run "scp -r up (empty files)" "$LFN_TREE/scp" -vv -r -D "$LFN_TREE/sftp-server" "$T/empty" "localhost:$T/empty.up"
diff -r "$T/empty" "$T/empty.up" > "$T/diff" 2>&1 || fail "scp -r up (empty files): the copy differs: $(head -n 3 "$T/diff")"
room "scp -r up (empty files)"
lfn_finish
