#!/usr/bin/env bash
# sftp-cwd-when-needed: sftp asks for the remote working directory
# (REALPATH ".") with the SFTP init (0240) and, with 0243, takes the reply
# only when the cwd is needed: a batch command whose remote paths are all
# absolute (put, get, ls, cd, rm, chmod...) sends its first lookup with
# the init too and gets the cwd with its answer; anything else (relative
# paths, pwd, a local command, the prompt, the end) waits for it first.
# Read from the client's -vvv log (no timing): the series before 0243
# fails the structure checks.  Nothing the user sees changes: against
# our sftp-server started in a directory of its own (sftp -D), the lfn and
# the stock client print the same, exit alike and leave the same files
# for relative and absolute put/get, pwd, cd and commands after it, ls,
# comments and blank lines, errors (-b and without it, and on a tty);
# against a fake server whose REALPATH fails, both print "realpath .:
# <error>" and "Need cwd" and exit 255 whatever the batch, and the lfn
# client sent nothing but lookups (stat, lstat, realpath): no mkdir, open
# or write reached the server.
# (Old numbers: 0240 and 0243 are now in 0208, 0209, 0241 and 0245 in
# 0210, as are 0211 and 0246; folded 2026-11-28, renumbered 2026-12-07:
# doc/patches.md#old-numbers.)
# Patches: 0208
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/sftp" ] || { echo "stock build missing: skipped"; exit 77; }
ST=${STRUCT_TREE:-$LFN_TREE}

trap 'lfn_cleanup' EXIT
lfn_env_init sftp-cwd-when-needed
head -c 10240 /dev/urandom > "$T/small"
# the server: our sftp-server, its working directory $T/rhome
cat > "$T/srv.sh" <<EOF
#!/bin/sh
cd "$T/rhome" && exec "$LFN_TREE/sftp-server"
EOF
chmod +x "$T/srv.sh"
reset_dirs() {
	rm -rf "$T/rhome" "$T/local"
	mkdir -p "$T/rhome/sub" "$T/local"
	cp "$T/small" "$T/local/f"; cp "$T/small" "$T/rhome/r"
}
# run TREE TAG [sftp args]: sftp -D srv.sh (or, with SSH_PORT, over ssh
# to an sshd that runs srv.sh) from $T/local; out.TAG: stdout+stderr+exit,
# files.TAG: what is where
run() {
	local tree=$1 tag=$2; shift 2
	reset_dirs
	if [ -n "${SSH_PORT:-}" ]; then
		(cd "$T/local" && lfn_sftp "$tree" "$SSH_PORT" "$@") > "$T/out.$tag" 2>&1
	else
		(cd "$T/local" && timeout 20 "$tree/sftp" -D "$T/srv.sh" "$@") > "$T/out.$tag" 2>&1
	fi
	echo "exit $?" >> "$T/out.$tag"
	# sftp's SIGCHLD handler prints this when ssh exits before sftp
	# reaps it: a race at the end of a session, for either client
	sed -i '/^.\?Connection closed\. *$/d' "$T/out.$tag"
	(cd "$T" && find rhome local -type f -exec md5sum {} + | sort -k2) > "$T/files.$tag"
}
# same_as_stock LABEL [sftp args]: both clients, stdin $T/batch (-b
# $T/batch unless args are given)
same_as_stock() {
	local label=$1; shift
	[ $# -gt 0 ] || set -- -b "$T/batch"
	run "$STOCK_TREE" stock "$@" < "$T/batch"
	run "$LFN_TREE" lfn "$@" < "$T/batch"
	if cmp -s "$T/out.stock" "$T/out.lfn" && cmp -s "$T/files.stock" "$T/files.lfn"; then
		verbose "$label: $(tail -n 1 "$T/out.lfn"), $(wc -l < "$T/files.lfn") files"
	else
		fail "$label: lfn and stock differ"
		diff "$T/out.stock" "$T/out.lfn" | sed 's/^/    /' | head -10
		diff "$T/files.stock" "$T/files.lfn" | sed 's/^/    /' | head -10
	fi
}
has() { grep -qF -- "$2" "$T/$1" || fail "$1: no '$2'"; }
file_is() { cmp -s "$T/small" "$T/$1" || fail "$1 missing or wrong"; }

tid "an absolute put or get sends its lookup with the init"
printf 'put %s %s\n' "$T/local/f" "$T/rhome/a" > "$T/batch"
run "$ST" vput -vvv -b "$T/batch" < /dev/null
file_is rhome/a
grep -q "request type 17 sent before the server's version" "$T/out.vput" ||
    fail "put: the target's stat waited for the working directory"
printf 'get %s %s\n' "$T/rhome/r" "$T/local/b" > "$T/batch"
run "$ST" vget -vvv -b "$T/batch" < /dev/null
file_is local/b
grep -q "request type 7 sent before the server's version" "$T/out.vget" ||
    fail "get: the source's lstat waited for the working directory"
grep -q "request type 16 sent before the server's version" "$T/out.vget" ||
    fail "get: REALPATH . not sent with the init"
printf 'put f a\n' > "$T/batch"
run "$ST" vrel -vvv -b "$T/batch" < /dev/null
file_is rhome/a
grep -q "request type 17 sent before the server's version" "$T/out.vrel" &&
    fail "put to a relative path did not wait for the working directory"
a=$(tr -d '\r' < "$T/out.vrel" | grep -n -m1 "SSH2_FXP_REALPATH \. -> $T/rhome\$" | cut -d: -f1)
b=$(grep -n -m1 "Sent message fd [0-9]* T:17 " "$T/out.vrel" | cut -d: -f1)
[ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ] ||
    fail "put to a relative path: stat before the working directory ($a, $b)"

tid "relative paths, pwd, cd: the same as stock, in the right places"
cat > "$T/batch" <<EOF
put f
put f sub/f2
get r
get sub/f2 f3
pwd
EOF
same_as_stock "relative put/get"
file_is rhome/f; file_is rhome/sub/f2; file_is local/r; file_is local/f3
has out.lfn "Remote working directory: $T/rhome"
cat > "$T/batch" <<EOF
# absolute first: the working directory comes with their replies

put $T/local/f $T/rhome/a
get $T/rhome/r $T/local/b
pwd
cd sub
pwd
put f c
ls
cd
get sub/c d
pwd
EOF
same_as_stock "absolute, then pwd, cd and relative"
file_is rhome/a; file_is local/b; file_is rhome/sub/c; file_is local/d
has out.lfn "Remote working directory: $T/rhome"
has out.lfn "Remote working directory: $T/rhome/sub"
same_as_stock "the same without -b (progress lines, no abort)" -R 64
cat > "$T/batch" <<EOF
cd $T/rhome/sub
pwd
put f e
cd ..
pwd
ls $T/rhome/sub
EOF
same_as_stock "cd to an absolute path first"
file_is rhome/sub/e
has out.lfn "Remote working directory: $T/rhome/sub"
for b in "get $T/rhome/missing" "-get $T/rhome/missing|pwd" "bogus|pwd" \
    "-bogus|pwd" "put $T/local/missing $T/rhome/x" "ls $T/rhome|lls" \
    "rm $T/rhome/r|pwd" "mkdir $T/rhome/d|ls" "" "#|quit" "get|pwd"; do
	tr '|' '\n' <<< "$b" > "$T/batch"
	same_as_stock "-b: $b"
	same_as_stock "stdin: $b" -R 64
done
if command -v script > /dev/null; then
	for t in lfn stock; do
		tr=$LFN_TREE; [ $t = stock ] && tr=$STOCK_TREE
		reset_dirs
		(sleep 1; printf 'pwd\nls\ncd sub\npwd\nquit\n') |
		    (cd "$T/local" && timeout 20 script -qec "$tr/sftp -D $T/srv.sh" /dev/null) > "$T/tty.$t" 2>&1
		echo "exit $?" >> "$T/tty.$t"
	done
	# what the tty echoes of the typed lines depends on when they come
	# (a loaded machine): compare what the commands printed
	for t in lfn stock; do
		tr -d '\r' < "$T/tty.$t" | grep -oE '(Remote working directory: .*|exit [0-9]+)$' > "$T/tty.$t.cmp"
	done
	cmp -s "$T/tty.stock.cmp" "$T/tty.lfn.cmp" ||
		fail "on a tty: lfn and stock differ: $(diff "$T/tty.stock.cmp" "$T/tty.lfn.cmp" | head -5)"
	has tty.lfn "Remote working directory: $T/rhome"
else
	echo "no script(1): the tty case is not checked"
fi

tid "sftp host:path (a file: get; a directory: cd), over ssh"
SSH_PORT=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$SSH_PORT" <<< "ForceCommand $T/srv.sh"
run "$ST" vfile -vvv "lfnpeer:$T/rhome/r" "$T/local/z" < /dev/null
file_is local/z
grep -q "request type 17 sent before the server's version" "$T/out.vfile" ||
    fail "sftp host:/abs/file: the stat waited for the working directory"
: > "$T/batch"
same_as_stock "host:/abs/file" "lfnpeer:$T/rhome/r" "$T/local/z"
file_is local/z
same_as_stock "host:file" "lfnpeer:r" z
file_is local/z
printf 'pwd\nput f\ncd\npwd\n' > "$T/batch"
same_as_stock "host:/abs/dir" -b "$T/batch" "lfnpeer:$T/rhome/sub"
file_is rhome/sub/f
has out.lfn "Remote working directory: $T/rhome/sub"
has out.lfn "Remote working directory: $T/rhome"
same_as_stock "host:dir" -b "$T/batch" lfnpeer:sub
file_is rhome/sub/f
same_as_stock "host:/abs/missing" "lfnpeer:$T/rhome/missing" "$T/local/z"
unset SSH_PORT

tid "a server whose REALPATH fails: Need cwd, as with the stock client"
cat > "$T/fakecwd.py" <<'PY'
#!/usr/bin/env python3
# An SFTP server whose REALPATH fails; logs the request types it gets.
import os, struct, sys
i, o = sys.stdin.buffer, sys.stdout.buffer
log = open(os.environ["FAKE_LOG"], "a")
def msg():
    h = i.read(4)
    if len(h) < 4:
        os._exit(0)     # no flush at exit: stdout may be a closed pipe
    return i.read(struct.unpack('>I', h)[0])
def send(b):
    o.write(struct.pack('>I', len(b)) + b); o.flush()
def status(rid, code, text):
    t = text.encode()
    send(struct.pack('>BIII', 101, rid, code, len(t)) + t + struct.pack('>I', 0))
try:
    assert msg()[0] == 1                        # SSH2_FXP_INIT
    send(struct.pack('>BI', 2, 3))              # SSH2_FXP_VERSION 3
    while True:
        m = msg()
        t, rid = m[0], struct.unpack('>I', m[1:5])[0]
        log.write("%d\n" % t); log.flush()
        if t == 16:                             # REALPATH: refused
            status(rid, 3, "no working directory here")
        elif t in (7, 17):                      # LSTAT, STAT
            status(rid, 2, "No such file")
        else:                                   # anything else: fails
            status(rid, 4, "Failure")
except (OSError, AssertionError):
    os._exit(0)         # as above: no "BrokenPipeError" noise on stderr
PY
chmod +x "$T/fakecwd.py"
for b in "put $T/local/f $T/rhome/x" "get $T/rhome/r $T/local/y" "ls $T/rhome" \
    "cd $T/rhome|put f" "rm $T/rhome/r" "chmod 600 $T/rhome/r" "mkdir $T/rhome/d" \
    "rename $T/rhome/r $T/rhome/s" "pwd" "put f" "lls" "bogus" "#" ""; do
	tr '|' '\n' <<< "$b" > "$T/batch"
	for mode in -b stdin; do
		for t in lfn stock; do
			tr=$LFN_TREE; [ $t = stock ] && tr=$STOCK_TREE
			reset_dirs; : > "$T/req.$t"
			arg=(-b "$T/batch"); [ $mode = stdin ] && arg=(-R 64)
			(cd "$T/local" && FAKE_LOG=$T/req.$t timeout 20 "$tr/sftp" -D "$T/fakecwd.py" \
			    "${arg[@]}" < "$T/batch") > "$T/fo.$t" 2>&1
			echo "exit $?" >> "$T/fo.$t"
			(cd "$T" && find rhome local -type f -exec md5sum {} + | sort -k2) >> "$T/fo.$t"
		done
		cmp -s "$T/fo.stock" "$T/fo.lfn" || fail "$mode '$b': differs from stock: $(diff "$T/fo.stock" "$T/fo.lfn" | head -5)"
		grep -q "^exit 255" "$T/fo.lfn" && grep -q "^Need cwd" "$T/fo.lfn" &&
		    grep -q "^realpath \.: no working directory here" "$T/fo.lfn" ||
		    fail "$mode '$b': not 'Need cwd', exit 255: $(head -c 300 "$T/fo.lfn")"
		grep -qv -e '^7$' -e '^16$' -e '^17$' "$T/req.lfn" &&
		    fail "$mode '$b': more than lookups reached the server: $(tr '\n' ' ' < "$T/req.lfn")"
	done
	verbose "'$b': Need cwd, exit 255; lfn sent $(tr '\n' ' ' < "$T/req.lfn")"
done

lfn_finish
