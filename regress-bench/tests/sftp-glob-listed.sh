#!/usr/bin/env bash
# sftp-glob-listed: a remote glob takes each match's attributes from its
# directory's listing instead of an LSTAT per match (0272).  What a user
# would see: `scp 'host:dir/*' .`, sftp's `get dir/*.log` and `ls -l
# dir/a*` waited a round trip per matching name before the first byte
# moved (200 names at 100 ms: 20 s).  Deterministic, not timed:
# lib/sftp-sequential-server.py logs the requests it gets; the new client
# sends no LSTAT for the names a listing gave (stock's client: one per
# match, the control that shows the count can fail), and its results are
# stock's: the same files copied (a symlink's target by scp, a directory
# and a symlink skipped by sftp's get with the same messages), the same
# `ls -l` lines, the same exit codes, for patterns in a named directory,
# in a subdirectory, over two levels (dir/s*/n*), in the working directory
# (sftp's cd, then `get f*`), and one that matches nothing.
# Patches: 0272
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-glob-listed
[ -x "$STOCK_TREE/sftp" ] || lfn_die "stock build missing"
srv=$T/logging-server
lfn_sequential_server "$srv" SFTP_SEQ_LOG="$T/log"
mkdir -p "$T/src/fdir" "$T/src/sub"
for i in $(seq -w 1 40); do head -c $((10#$i * 131)) /dev/urandom > "$T/src/f$i"; done
for i in 1 2 3; do head -c 999 /dev/urandom > "$T/src/sub/n$i"; done
ln -s f01 "$T/src/flink"
: > "$T/src/g-other"

lstats() { grep -c '^LSTAT$' "$T/log"; }
# one CLIENT-NAME RUN...: the command's exit code, output and errors into
# $T/NAME.{rc,out,err}, the server's log fresh
one() {
	local name=$1; shift
	: > "$T/log"
	"$@" > "$T/$name.out" 2> "$T/$name.err"
	echo $? > "$T/$name.rc"
	lstats > "$T/$name.lstats"
}
same() {	# same WHAT A B: A's and B's exit codes, outputs and errors agree
	local f
	for f in rc out err; do
		sed "s#$T/d-[a-z]*#DEST#g; s#^[^ ]*/\(scp\|sftp\): #\1: #" "$T/$2.$f" > "$T/cmp.a"
		sed "s#$T/d-[a-z]*#DEST#g; s#^[^ ]*/\(scp\|sftp\): #\1: #" "$T/$3.$f" > "$T/cmp.b"
		cmp -s "$T/cmp.a" "$T/cmp.b" || fail "$1: the new client's $f differs from stock's: $(diff "$T/cmp.b" "$T/cmp.a" | head -n 4)"
	done
}
few() {		# few WHAT NAME MATCHES: no LSTAT per match for the new client, one for stock's
	[ "$(cat "$T/$2-new.lstats")" = 0 ] || fail "$1: the new client sent $(cat "$T/$2-new.lstats") LSTATs for $3 matches"
	[ "$(cat "$T/$2-stock.lstats")" -ge "$3" ] || fail "$1: stock's client sent $(cat "$T/$2-stock.lstats") LSTATs for $3 matches (the control)"
	echo "    $1: LSTATs new $(cat "$T/$2-new.lstats"), stock $(cat "$T/$2-stock.lstats") for $3 matches"
}

tid "scp 'host:dir/f*' dir/: no LSTAT per match, stock's result"
for c in new stock; do
	tree=$LFN_TREE; [ $c = stock ] && tree=$STOCK_TREE
	rm -rf "$T/d-$c"; mkdir "$T/d-$c"
	one "scp-$c" timeout 60 "$tree/scp" -q -D "$srv" "localhost:$T/src/f*" "$T/d-$c/"
done
same "scp glob" scp-new scp-stock
few "scp glob" scp 42
diff -r "$T/d-new" "$T/d-stock" > /dev/null 2>&1 || fail "scp glob: the new client copied other files than stock's"
cmp -s "$T/src/f01" "$T/d-new/flink" || fail "scp glob: the symlink's target was not copied"

tid "sftp get dir/f*, dir/sub/* and dir/s*/n*: the same"
for c in new stock; do
	tree=$LFN_TREE; [ $c = stock ] && tree=$STOCK_TREE
	rm -rf "$T/d-$c"; mkdir "$T/d-$c"
	one "get-$c" timeout 60 "$tree/sftp" -D "$srv" -b - <<-EOF
	-get $T/src/f* $T/d-$c/
	get $T/src/sub/* $T/d-$c/
	get $T/src/s*/n* $T/d-$c/
	EOF
done
sort "$T/get-new.err" > "$T/get-new.err.s" && mv "$T/get-new.err.s" "$T/get-new.err"
sort "$T/get-stock.err" > "$T/get-stock.err.s" && mv "$T/get-stock.err.s" "$T/get-stock.err"
same "get glob" get-new get-stock
few "get glob" get 48
diff -r "$T/d-new" "$T/d-stock" > /dev/null 2>&1 || fail "get glob: the new client copied other files than stock's"
[ -e "$T/d-new/f40" ] && [ -e "$T/d-new/n3" ] || fail "get glob: files missing"

tid "sftp cd, then get f* (a pattern in the working directory) and ls -l"
for c in new stock; do
	tree=$LFN_TREE; [ $c = stock ] && tree=$STOCK_TREE
	rm -rf "$T/d-$c"; mkdir "$T/d-$c"
	one "cwd-$c" timeout 60 "$tree/sftp" -D "$srv" -b - <<-EOF
	cd $T/src
	lcd $T/d-$c
	get f1*
	ls -l f2*
	-get nothing-matches*
	EOF
done
same "cwd glob" cwd-new cwd-stock
few "cwd glob" cwd 20
[ -e "$T/d-new/f19" ] || fail "cwd glob: f19 missing"
grep -q "f29" "$T/cwd-new.out" || fail "cwd glob: ls -l did not list f29"
lfn_finish
