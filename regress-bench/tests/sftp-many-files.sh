#!/usr/bin/env bash
# sftp-many-files: scp -r, sftp put -R and get -R keep many small files in
# flight over one SFTP session (0271); what a user would see go wrong is a
# tree that comes out different from what stock 10.5p1 makes of it (a
# file missing, short, cut to a wrong length, a wrong mode or time, a
# symlink handled otherwise), an error that is not reported or is worded
# otherwise, a different exit status, or a hang.  The tree: 60 files of
# 1-20 kB (random sizes and bytes), empty files, a 3 MiB file (in flight
# with the others) and a 6 MiB one (copied on its own, the old way),
# three levels of directories, an empty one and a 0555 one (its files go
# in before its mode is set), files of modes 0600 and 0755, names with
# spaces, a symlink to a file and one to a directory, random times.
# Against four servers (openssh-lfn's sshd, stock 10.5p1's, Debian
# 9.2p1's with its sftp-server, asyncssh's SFTPServer: lib/
# asyncssh-sftp-server.py), the new client (LFN_TREE) and the stock one
# copy the same tree into separate destinations, each with scp -r and -rp
# up and down, sftp put -R/-Rp and get -R/-Rp; the two destinations must
# be identical (content, type, mode, size, and with -p the times), each
# must be the source as stock copies it (scp follows symlinks, sftp
# skips them and says so), the exit status equal and the stderr and
# stdout lines equal once sorted (files in flight may finish in another
# order).  Errors, compared the same way, with the other files copied:
# an unreadable file in the middle of the tree (up and down), a
# subdirectory that cannot be written in the destination (up and down);
# and the receiving disk full (a tmpfs of half the small files' size):
# nonzero exit, and every file the new client leaves at the source's size
# is byte-identical to it, every other one is named in an error (the
# sizes are printed; which files fit may differ from stock's, as the new
# client has several in flight); the same after scp -r and sftp put -R over
# an older, longer copy with the server refusing writes (sftp-server -P
# write; 0105: a file is cut where its written bytes end, not at the
# source's length over old bytes, as stock 10.5p1 does).  That the files
# are in flight at all: asyncssh's server sees the new client hold several
# files open at once, stock one (and the series before 0271).  A tree that
# changes during the copy is not tried (its outcome depends on timing).
# Last, several files named on the command line (scp f1 f2 host:dir/,
# scp 'host:dir/*' dir/, sftp put and get of a glob), one of them
# unreadable, against three servers.
# The whole test runs without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
# (capsh --drop, re-executed below): root without them is held to the mode
# bits like any user (capabilities(7)), so a file of mode 000 really cannot
# be opened and a 0555 directory really cannot be written, by the clients
# and by every server's sftp-server alike; everything here belongs to root,
# so nothing else changes.
# Patches: 0271
. "$(dirname "$0")/../lib/sshenv.sh"
[ "$(id -u)" = 0 ] || { echo "needs root (capabilities, tmpfs mounts): skipped"; exit 77; }
[ -x "$STOCK_TREE/sshd" ] && [ -x "$STOCK_TREE/scp" ] || { echo "stock build missing: skipped"; exit 77; }
command -v capsh > /dev/null || lfn_die "capsh missing (apt-get install libcap2-bin)"
if [ -z "${LFN_MANY_NODAC:-}" ]; then
	# with every capability still here: what a killed run left
	old="$LFN_TOP/build/test/sftp-many-files"
	findmnt -rno TARGET | grep "^$old/" | sort -r | while read -r m; do umount "$m"; done
	rm -rf "$old"
	LFN_MANY_NODAC=1 exec capsh --drop=cap_dac_override,cap_dac_read_search -- "$0" "$@"
	lfn_die "capsh did not run the test"
fi
grep -q '^CapEff:.*' /proc/self/status &&
	(( (0x$(awk '/^CapEff/ {print $2}' /proc/self/status) & 6) == 0 )) ||
	lfn_die "CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH still held"
/usr/bin/python3 -c 'import asyncssh' 2> /dev/null ||
	lfn_die "python3-asyncssh missing: run ./install-deps"
DEB92_SSHD=${DEB92_SSHD:-$("$LFN_TOP/regress-bench/lib/debian-sshd" path || true)}
[ -n "$DEB92_SSHD" ] && [ -x "$DEB92_SSHD" ] ||
	lfn_die "no Debian sshd: run regress-bench/lib/debian-sshd fetch"
SYS_SFTP_SERVER=/usr/lib/openssh/sftp-server
[ -x "$SYS_SFTP_SERVER" ] || lfn_die "$SYS_SFTP_SERVER missing: apt-get install openssh-sftp-server"

# scrub DIR...: remove what may hold 0555 directories (no DAC override)
scrub() { chmod -R u+rwX "$@" 2> /dev/null; rm -rf "$@"; }
trap 'for m in "$T"/full-*; do umount "$m" 2> /dev/null; done; chmod -R u+rwX "$T" 2> /dev/null; lfn_cleanup' EXIT
lfn_env_init sftp-many-files
umask 022
SRC=$T/src R=$T/res
mkdir -p "$R"

tid "the source tree"
mkdir -p "$SRC"/a/aa/aaa "$SRC"/b/empty-dir "$SRC/dir with space" "$SRC"/ro
dirs=(. a a/aa a/aa/aaa b "dir with space" ro)
small=0
for i in $(seq -w 1 60); do
	d=${dirs[$((10#$i % ${#dirs[@]}))]}
	n="f$i"; [ $((10#$i % 7)) = 0 ] && n="file $i with spaces"
	sz=$((1024 + RANDOM % 19457))
	head -c "$sz" /dev/urandom > "$SRC/$d/$n"
	small=$((small + sz))
done
: > "$SRC/empty0"; : > "$SRC/a/empty1"; : > "$SRC/a/aa/aaa/empty 2"; : > "$SRC/ro/empty3"
head -c $((6 * 1048576)) /dev/urandom > "$SRC/a/big6m"
head -c $((3 * 1048576)) /dev/urandom > "$SRC/b/mid3m"
head -c 5000 /dev/urandom > "$SRC/a/mode600"; chmod 600 "$SRC/a/mode600"
head -c 7000 /dev/urandom > "$SRC/b/mode755"; chmod 755 "$SRC/b/mode755"
# the unreadable file of the error cases (mode 000 only there)
head -c 9000 /dev/urandom > "$SRC/a/aa/secret"
ln -s aa/aaa/f03 "$SRC/a/lnk-file"
ln -s a/aa "$SRC/lnk-dir"
chmod 555 "$SRC/ro"
# times in the past, each its own, directories after their contents
while IFS= read -r -d '' p; do
	touch -h -d "@$((1500000000 + RANDOM * 3000 + RANDOM))" "$p"
done < <(find "$SRC" -mindepth 1 -depth -print0)
touch -d "@1600000000" "$SRC"
verbose "$(find "$SRC" -type f | wc -l) files, $(find "$SRC" -mindepth 1 -type d | wc -l) directories, $small bytes in the 60 small files"

p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" < /dev/null
p_stk=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stk" < /dev/null
p_deb=$(lfn_free_port)
DEBIAN_SSHD=$DEB92_SSHD lfn_debian_sshd_start "$p_deb" <<< "Subsystem sftp $SYS_SFTP_SERVER"
p_py=$(lfn_free_port)
_lfn_sshd_run "asyncssh's SFTP server" "$p_py" "$T/asyncssh.log" "" /usr/bin/python3 \
    "$LFN_TOP/regress-bench/lib/asyncssh-sftp-server.py" "$p_py" "$T/host_ed25519" "$T/authorized_keys"
SERVERS="lfn:$p_lfn stock:$p_stk deb92:$p_deb asyncssh:$p_py"
CLIENTS="new:$LFN_TREE stock:$STOCK_TREE"

# xfer TREE PORT OP P D: copy the source into D (which exists: the copy is
# D/src) with TREE's client; OP scp-up scp-down sftp-put sftp-get, P -p or
# empty.  Bounded: a client that hangs is killed (exit 124).
xfer() {
	local tree=$1 port=$2 op=$3 p=$4 d=$5
	local -a c=(-F "$T/ssh_config" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1)
	local -a scp=(timeout -k 5 90 "$tree/scp" "${c[@]}" -S "$tree/ssh" -P "$port")
	local -a sftp=(timeout -k 5 90 "$tree/sftp" "${c[@]}" -S "$tree/ssh" -P "$port" -b -)
	case $op in
	scp-up) "${scp[@]}" $p -r "$SRC" "lfnpeer:$d" < /dev/null ;;
	scp-down) "${scp[@]}" $p -r "lfnpeer:$SRC" "$d" < /dev/null ;;
	sftp-put) "${sftp[@]}" lfnpeer <<< "put -R $p $SRC $d" ;;
	sftp-get) "${sftp[@]}" lfnpeer <<< "get -R $p $SRC $d" ;;
	esac
}

# listing DIR TIMES [find options]: one line per entry below DIR: path,
# type, mode, size (files), and with TIMES=1 the mtime in seconds
listing() {
	local d=$1 t=$2; shift 2
	(cd "$d" && find "$@" . -mindepth 1 -printf '%P|%y|%m|%s|%T@\n') |
		awk -F'|' -v OFS='|' -v t="$t" '{
			if ($2 != "f") $4 = "-"
			if (t == 1) sub(/\..*/, "", $5); else $5 = ""
			print }' | LC_ALL=C sort
}

# expected OP TIMES: the source as stock copies it: scp follows symlinks
# (the linked directory comes out a directory), sftp's put -R and get -R
# skip them ("not a regular file")
expected() {
	case $1 in
	scp-*) listing "$SRC" "$2" -L ;;
	*) listing "$SRC" "$2" | grep -v '^[^|]*|l|' ;;
	esac
}

# run LABEL SRV PORT OP P [SETUP]: the new and the stock client each copy
# the tree into $T/o/LABEL/CLIENT (SETUP D prepares D first); results in
# $R/LABEL.CLIENT.{rc,out,err} (D written DST, the client's path cut from
# its messages: "/path/to/scp: ..."), the copy in D/src
run() {
	local label=$1 srv=$2 port=$3 op=$4 p=$5 setup=${6:-} cl name tree d rc
	for cl in $CLIENTS; do
		name=${cl%%:*} tree=${cl#*:}
		d=$T/o/$label/$name
		mkdir -p "$d"
		[ -n "$setup" ] && $setup "$d"
		xfer "$tree" "$port" "$op" "$p" "$d" > "$R/$label.$name.out1" 2> "$R/$label.$name.err1"
		rc=$?; echo "$rc" > "$R/$label.$name.rc"
		[ "$rc" = 124 ] && fail "$name client, $op $p against $srv: killed after 90 s"
		for f in out err; do
			sed -e "s#$d#DST#g" -e "s#^$tree/##" "$R/$label.$name.${f}1" |
				LC_ALL=C sort > "$R/$label.$name.$f"
		done
	done
}

# same_words LABEL: the new client's run and the stock one's give the same
# exit status, the same stderr and stdout lines
same_words() {
	local l=$1 f
	[ "$(cat "$R/$l.new.rc")" = "$(cat "$R/$l.stock.rc")" ] ||
		fail "exit status $(cat "$R/$l.new.rc"), stock's $(cat "$R/$l.stock.rc")"
	for f in err out; do
		cmp -s "$R/$l.new.$f" "$R/$l.stock.$f" && continue
		fail "std$f lines differ from stock's (< new, > stock):"
		diff "$R/$l.new.$f" "$R/$l.stock.$f" | grep '^[<>]' | head -n 20 | sed 's/^/    /'
	done
}

# same LABEL TIMES: as same_words, and the same tree
same() {
	local l=$1 t=$2 a=$T/o/$1/new/src b=$T/o/$1/stock/src
	same_words "$l"
	if [ -d "$a" ] || [ -d "$b" ]; then
		listing "$a" "$t" > "$R/$l.new.ls" 2> /dev/null
		listing "$b" "$t" > "$R/$l.stock.ls" 2> /dev/null
		cmp -s "$R/$l.new.ls" "$R/$l.stock.ls" || {
			fail "the tree differs from stock's (< new, > stock; path|type|mode|size|mtime):"
			diff "$R/$l.new.ls" "$R/$l.stock.ls" | grep '^[<>]' | head -n 20 | sed 's/^/    /'; }
		diff -r "$a" "$b" > "$R/$l.diff" 2>&1 || {
			fail "content differs from stock's:"; head -n 10 "$R/$l.diff" | sed 's/^/    /'; }
	fi
}

# like_source LABEL CLIENT OP TIMES [EXCLUDE]: CLIENT's copy is the source as
# stock copies it, apart from the paths EXCLUDE (an ERE) matches
like_source() {
	local l=$1 cl=$2 op=$3 t=$4 x=${5:-^$} d=$T/o/$1/$2/src p
	expected "$op" "$t" | grep -Ev "$x" > "$R/$l.$cl.want"
	listing "$d" "$t" 2> /dev/null | grep -Ev "$x" > "$R/$l.$cl.got"
	cmp -s "$R/$l.$cl.want" "$R/$l.$cl.got" || {
		fail "$cl client: the copy is not the source (< source, > copy):"
		diff "$R/$l.$cl.want" "$R/$l.$cl.got" | grep '^[<>]' | head -n 20 | sed 's/^/    /'; }
	while IFS='|' read -r p _; do
		cmp -s "$SRC/$p" "$d/$p" || fail "$cl client: $p differs from the source"
	done < <(grep '^[^|]*|f|' "$R/$l.$cl.got")
}

# The files are in flight at all: asyncssh's server counts the files a
# session holds open at once (lib/asyncssh-sftp-server.py).  Stock and the
# series before 0271 hold one (each file opened, copied, closed in turn);
# the new client sends the opens of a directory's small files before their
# data, whose handles it takes at its next wait (a correct run: 11 up, 30
# down; at most 64; "dir with space" alone has 8 small files and nothing
# to wait for between them).
for op in scp-up scp-down sftp-put sftp-get; do
	tid "$op: the new client keeps several files open on the server at once, stock one"
	for cl in $CLIENTS; do
		name=${cl%%:*} tree=${cl#*:}
		d=$T/o/inflight.$op.$name; mkdir -p "$d"
		n0=$(wc -l < "$T/asyncssh.log")
		xfer "$tree" "$p_py" "$op" "" "$d" > "$R/inflight.$name.out" 2>&1 ||
			fail "$name client: $op failed: $(tail -n 2 "$R/inflight.$name.out")"
		# (the server prints its line before the exit status ssh waits for)
		peak=$(tail -n +"$((n0 + 1))" "$T/asyncssh.log" |
			sed -n 's/^session ended: at most \([0-9]*\) files open at once$/\1/p' | sort -n | tail -n 1)
		verbose "$name client: at most ${peak:-?} files open at once"
		case $name in
		new) [ "${peak:-0}" -ge 4 ] || fail "the new client held ${peak:-?} files open at once (a correct run: 11 up, 30 down)" ;;
		stock) [ "${peak:-0}" = 1 ] || fail "stock held ${peak:-?} files open at once, not 1: the server counts wrong" ;;
		esac
		scrub "$d"
	done
done

for s in $SERVERS; do
	srv=${s%%:*} port=${s#*:}
	for op in scp-up scp-down sftp-put sftp-get; do
		for p in "" -p; do
			l=$srv.$op$p
			tid "$op ${p:+$p }against $srv's server: new and stock clients make the same copy of the source"
			run "$l" "$srv" "$port" "$op" "$p"
			t=0; [ -n "$p" ] && t=1
			same "$l" "$t"
			for cl in new stock; do like_source "$l" "$cl" "$op" "$t"; done
			[ "$(cat "$R/$l.stock.rc")" = 0 ] || fail "stock's copy failed: $(head -n 3 "$R/$l.stock.err")"
			verbose "exit $(cat "$R/$l.new.rc"); $(wc -l < "$R/$l.new.err") stderr lines$(
				[ -s "$R/$l.new.err" ] && echo ": $(head -n 2 "$R/$l.new.err" | tr '\n' ' ')")"
			scrub "$T/o/$l"
		done
	done
done

# The unreadable file: a/aa/secret (and through lnk-dir for scp)
secret='(^|/)secret\|'
# the subdirectory that cannot be written: D/src/a made 0555 first
ro_a() { mkdir -p "$1/src/a"; chmod 555 "$1/src/a"; }
for s in $SERVERS; do
	srv=${s%%:*} port=${s#*:}
	for op in scp-up scp-down sftp-put sftp-get; do
		l=$srv.$op.unreadable
		tid "$op against $srv's server, a file that cannot be read in the middle of the tree: as stock"
		chmod 000 "$SRC/a/aa/secret"
		run "$l" "$srv" "$port" "$op" ""
		chmod 644 "$SRC/a/aa/secret"
		same "$l" 0
		for cl in new stock; do like_source "$l" "$cl" "$op" 0 "$secret"; done
		[ "$(cat "$R/$l.new.rc")" != 0 ] || fail "exit 0 with a file unread"
		grep -q 'secret' "$R/$l.new.err" || fail "no error names the file"
		verbose "exit $(cat "$R/$l.new.rc"): $(tr '\n' ' ' < "$R/$l.new.err" | head -c 300)"
		scrub "$T/o/$l"

		l=$srv.$op.readonly
		tid "$op against $srv's server, a destination subdirectory that cannot be written: as stock"
		run "$l" "$srv" "$port" "$op" "" ro_a
		same "$l" 0
		for cl in new stock; do like_source "$l" "$cl" "$op" 0 '^a(/|\|)'; done
		[ "$(cat "$R/$l.new.rc")" != 0 ] || fail "exit 0 with a directory not written"
		verbose "exit $(cat "$R/$l.new.rc"): $(tr '\n' ' ' < "$R/$l.new.err" | head -c 300)"
		scrub "$T/o/$l"
	done
done

# full_check LABEL CLIENT OP D STRICT: after a copy that failed part way
# (the disk full, writes refused): exit not 0; each file at the source's
# size is the source's bytes (with STRICT a failure, else only reported:
# stock 10.5p1 counts refused writes as written and leaves such files,
# which 0105 fixed for one file at a time); each file at another size, or
# missing, is named in an error
full_check() {
	local l=$1 cl=$2 op=$3 d=$4/src strict=$5 p s g ok=0 wrong="" short="" nw=0 n0=0 nm=0
	[ "$(cat "$R/$l.$cl.rc")" != 0 ] || fail "$cl client exited 0 although files were not written"
	while IFS='|' read -r p _ _ s _; do
		g=missing; [ -f "$d/$p" ] && g=$(stat -c %s "$d/$p")
		if [ "$g" = "$s" ]; then
			cmp -s "$SRC/$p" "$d/$p" && { ok=$((ok + 1)); continue; }
			nw=$((nw + 1)); wrong="$wrong $p"
		elif [ "$g" = 0 ]; then
			n0=$((n0 + 1))
		elif [ "$g" = missing ]; then
			nm=$((nm + 1))
		else
			short="$short $p:$g/$s"
		fi
		grep -qF "/src/$p" "$R/$l.$cl.err1" || {
			# a file in a directory that failed is named by it
			[ "$g" = missing ] && grep -qF "/src/${p%/*}\"" "$R/$l.$cl.err1" ||
				fail "$cl client: $p left $g of $s bytes, no error names it"; }
	done < <(expected "$op" 0 | grep '^[^|]*|f|')
	if [ "$nw" -gt 0 ]; then
		wrong="$nw files at the source's size but not its bytes (cut past what was written):$(
			echo "$wrong" | cut -d' ' -f1-9)$([ "$nw" -gt 8 ] && echo " ...")"
		if [ "$strict" = 1 ]; then fail "$cl client: $wrong"; else verbose "$cl client: $wrong"; fi
	fi
	verbose "$cl client (exit $(cat "$R/$l.$cl.rc")): $ok files whole, $nw at full length but wrong, $n0 empty, $nm missing, the others (got/size):${short:- none}"
}

full=$((small / 2 / 4096 * 4096))
mkdir -p "$T/full-up" "$T/full-down"
mount -t tmpfs -o size=$full,mode=755 tmpfs "$T/full-up" || lfn_die "cannot mount a tmpfs"
mount -t tmpfs -o size=$full,mode=755 tmpfs "$T/full-down" || lfn_die "cannot mount a tmpfs"
# clean D: an empty tmpfs for the next copy
clean_full() { scrub "$1"/* 2> /dev/null; true; }
for s in $SERVERS; do
	srv=${s%%:*} port=${s#*:}
	for op in scp-up scp-down sftp-put sftp-get; do
		l=$srv.$op.full
		tid "$op against $srv's server, the receiving disk full ($full bytes): nonzero, no file cut silently"
		case $op in *-up|*-put) m=$T/full-up ;; *) m=$T/full-down ;; esac
		for cl in $CLIENTS; do
			name=${cl%%:*} tree=${cl#*:}
			clean_full "$m"; mkdir -p "$m"
			xfer "$tree" "$port" "$op" "" "$m" > "$R/$l.$name.out1" 2> "$R/$l.$name.err1"
			echo $? > "$R/$l.$name.rc"
			for f in out err; do
				sed -e "s#$m#DST#g" -e "s#^$tree/##" "$R/$l.$name.${f}1" |
					LC_ALL=C sort > "$R/$l.$name.$f"
			done
			full_check "$l" "$name" "$op" "$m" "$([ "$name" = new ] && echo 1 || echo 0)"
		done
		[ "$(cat "$R/$l.new.rc")" = "$(cat "$R/$l.stock.rc")" ] ||
			fail "exit status $(cat "$R/$l.new.rc"), stock's $(cat "$R/$l.stock.rc")"
		# which files fit depends on the order their data comes in (the
		# new client has several in flight): the lines may name others
		cmp -s "$R/$l.new.err" "$R/$l.stock.err" || {
			verbose "stderr names other files than stock's (< new, > stock):"
			diff "$R/$l.new.err" "$R/$l.stock.err" | grep '^[<>]' | head -n 6 | sed 's/^/    /'; }
	done
done
clean_full "$T/full-up"; clean_full "$T/full-down"
umount "$T/full-up" "$T/full-down"

# Writes refused over an older, longer copy: scp writes in place and cuts
# each file at its end; a file whose writes failed must be cut where the
# written bytes end (0105), not at the source's length over the old bytes
# (stock 10.5p1 does that: reported, not failed).  The server is
# openssh-lfn's sftp-server with writes denied (-P write).
p_deny=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p_deny" <<< "ForceCommand $LFN_TREE/sftp-server -P write"
# older D: an older copy in D/src, each file 3000 bytes longer
older() {
	local p s
	while IFS='|' read -r p _ _ s _; do
		mkdir -p "$1/src/$(dirname "$p")"
		yes old | head -c $((s + 3000)) > "$1/src/$p"
	done < <(expected "$op" 0 | grep '^[^|]*|f|')
}
for op in scp-up sftp-put; do
	l=deny.$op
	tid "$op over an older, longer copy, the server refusing writes: as stock's words, no file cut past what was written"
	run "$l" lfn-deny "$p_deny" "$op" "" older
	same_words "$l"
	full_check "$l" new "$op" "$T/o/$l/new" 1
	full_check "$l" stock "$op" "$T/o/$l/stock" 0
	scrub "$T/o/$l"
done

# Several files named on the command line into a directory (scp f1 f2
# host:dir/, scp 'host:dir/*' dir/, sftp's put and get of a glob): in
# flight too; the same files, exit
# status and words as stock's client, an unreadable one among them.
M=$T/multi; mkdir -p "$M"
for i in $(seq 1 25); do head -c $((RANDOM % 20000)) /dev/urandom > "$M/m$i"; done
head -c 4000 /dev/urandom > "$M/m-secret"; chmod 000 "$M/m-secret"
for srv in lfn:$p_lfn stock:$p_stk deb92:$p_deb; do
	port=${srv#*:}
	for dir in up down sftp-put sftp-get; do
		tid "$([ ${dir#sftp} = $dir ] && echo scp || echo sftp) of 26 named files ${dir#sftp-} against ${srv%%:*}'s server, one unreadable: as stock"
		for cl in new stock; do
			tree=$LFN_TREE; [ $cl = stock ] && tree=$STOCK_TREE
			o=$T/o/multi-$dir-${srv%%:*}-$cl; rm -rf "$o"; mkdir -p "$o"
			c=(timeout -k 5 90 "$tree/scp" -F "$T/ssh_config" -o HostKeyAlias=lfnpeer
				-o HostName=127.0.0.1 -S "$tree/ssh" -P "$port" -q)
			sf=(timeout -k 5 90 "$tree/sftp" -F "$T/ssh_config" -o HostKeyAlias=lfnpeer
				-o HostName=127.0.0.1 -S "$tree/ssh" -P "$port" -q -b -)
			case $dir in
			up) "${c[@]}" "$M"/m* "lfnpeer:$o/" > "$o.out" 2>&1 < /dev/null ;;
			down) "${c[@]}" "lfnpeer:$M/m*" "$o/" > "$o.out" 2>&1 < /dev/null ;;
			sftp-put) "${sf[@]}" lfnpeer <<< "put $M/m* $o/" > "$o.out" 2>&1 ;;
			sftp-get) "${sf[@]}" lfnpeer <<< "get $M/m* $o/" > "$o.out" 2>&1 ;;
			esac
			echo $? > "$o.rc"
			sed -e "s#$o#DEST#g" -e 's#^[^ ]*/\(s*ftp\|scp\): #\1: #' "$o.out" |
				LC_ALL=C sort > "$o.words"
		done
		n=$T/o/multi-$dir-${srv%%:*}-new s=$T/o/multi-$dir-${srv%%:*}-stock
		[ "$(cat "$n.rc")" = "$(cat "$s.rc")" ] ||
			fail "exit $(cat "$n.rc"), stock's $(cat "$s.rc")"
		cmp -s "$n.words" "$s.words" ||
			fail "words differ from stock's: $(diff "$s.words" "$n.words" | head -n 6 | tr '\n' ' ')"
		for f in "$M"/m*; do
			b=$(basename "$f")
			[ "$b" = m-secret ] && continue
			cmp -s "$f" "$n/$b" || fail "$b: not copied whole ($(stat -c %s "$n/$b" 2> /dev/null || echo missing))"
		done
		[ "$(ls "$n" | wc -l)" = "$(ls "$s" | wc -l)" ] ||
			fail "$(ls "$n" | wc -l) files copied, stock $(ls "$s" | wc -l)"
	done
done
chmod 644 "$M/m-secret"
lfn_finish
