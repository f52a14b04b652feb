#!/usr/bin/env bash
# sftp-many-files-stall: a download of many files keeps many requests in
# flight and still never blocks against a server that writes each reply
# whole before it reads the next request (0271).  What a user would see go
# wrong: scp -r or sftp get -R hanging for good, both sides blocked
# writing (the client its requests, the server its replies), as upstream's
# sftp-cmds "glob get to directory" once did over sftp -D.
# The server is lib/sftp-sequential-server.py over sftp -D / scp -D (a
# socketpair holds a few hundred small messages): 2,000 files of 10 and 70
# kB, by sftp get -R, a glob get and scp -r, each within 60 s (it takes
# about 2) and byte for byte.  Fails (times out) with the client's reading
# of replies while it sends taken out.
# Patches: 0271
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-many-files-stall
# (scp -D takes a program without arguments)
srv=$T/sequential-server
lfn_sequential_server "$srv"
mkdir -p "$T/src"
/usr/bin/python3 - "$T/src" <<'PY'
import os, sys
for i in range(2000):
    with open(os.path.join(sys.argv[1], "f%04d" % i), "wb") as f:
        f.write(os.urandom(70000 if i % 5 == 0 else 10000))
PY

run() {	# what, then the command
	local what=$1; shift
	timeout 60 "$@" > "$T/out" 2> "$T/err"
	local rc=$?
	[ $rc -ne 124 ] || fail "$what: still blocked after 60 s (both sides writing?)"
	[ $rc -eq 0 ] || fail "$what: exit $rc: $(tail -n 3 "$T/err")"
}

tid "sftp get -R of 2,000 files from a one-request-at-a-time server"
run "get -R" "$LFN_TREE/sftp" -q -D "$srv" -b - <<< "get -R $T/src $T/d1"
diff -r "$T/src" "$T/d1" > /dev/null || fail "get -R: the copy differs"

tid "sftp glob get of the same files into a directory"
mkdir -p "$T/d2"
run "glob get" "$LFN_TREE/sftp" -q -D "$srv" -b - <<< "get $T/src/f* $T/d2/"
diff -r "$T/src" "$T/d2" > /dev/null || fail "glob get: the copy differs"

tid "scp -r of the same tree"
run "scp -r" "$LFN_TREE/scp" -q -r -D "$srv" "localhost:$T/src" "$T/d3"
diff -r "$T/src" "$T/d3" > /dev/null || fail "scp -r: the copy differs"
lfn_finish
