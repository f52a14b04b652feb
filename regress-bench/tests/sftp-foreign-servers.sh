#!/usr/bin/env bash
# sftp-foreign-servers: our scp and sftp against SFTP servers nobody here
# wrote; what a user would see go wrong is a copy that works with stock
# 10.5p1's client and fails with ours, or ends "successfully" with other
# bytes, or leaves a DEST.lfn-part behind.  The servers, each started by
# this test on 127.0.0.1 (own config under $T, foreground, own port,
# stopped by PID; lib/foreign-sftp-servers.sh):
#   ges          the Green End SFTP server (gesftpserver) as the sftp
#                Subsystem of a test sshd (openssh-lfn's)
#   ges-D        the same through scp -D / sftp -D (no ssh)
#   proftpd      ProFTPD 1.3.8's mod_sftp (proftpd -n), AllowOverwrite and
#                AllowStoreRestart on (writes over a file, resumes)
#   proftpd-dflt the same with ProFTPD's defaults (both off)
#   rclone       rclone serve sftp, default VFS mode (a file is written
#                only from start to end)
#   reorder-D, maxh-D, reorder-sub, maxh-sub
#                lib/sftp-quirky-server.py through -D and as a Subsystem:
#                one sends replies out of order (batches reversed), one
#                allows 8 open handles and fails the 9th OPEN with
#                SSH_FX_FAILURE "too many open handles" (controls at the
#                end: it did reorder; never more than 8 handles)
# For each server, the new client (LFN_TREE) and stock's (STOCK_TREE)
# each make the same copy into destinations of their own: scp -r up and
# down and sftp put -R / get -R of a tree (three empty files, 200 files of
# 10 kB, 150 of them in one directory, a 5 MiB file, an empty directory),
# a remote glob (scp 'host:src/flat/*' dir/), sftp reget and reput of a
# 2 MiB prefix of the 5 MiB file; over ssh (ges, proftpd*, rclone) also a
# 20 MiB file up and down with -X connections=4 (stock: the plain copy),
# and that copy stopped by SIGTERM once its part (stock: the destination)
# appears, then the same copy again.  Every client runs with the default
# dispositions of SIGHUP, SIGINT, SIGTERM and SIGPIPE (env
# --default-signal: `nohup make check` ignores SIGHUP), under timeout.
# The rule: the new client exits 0 wherever stock does, and whenever it
# exits 0 its copy is byte-identical to the source (cmp, diff -r); no
# *.lfn-part is left in a destination after any copy, exit 0 or not (the
# stopped copy keeps its part for the copy again, which must not).  Where
# stock fails too, both are recorded (verbose) and the step passes -
# except "beyond stock" steps: ProFTPD refuses REALPATH of a path that
# does not exist yet, so stock's scp -r up and sftp put -R to a new
# directory fail ("realpath ...: No such file", "path canonicalization
# failed"); the new client must resolve it through its parent (0108).
# rclone sends no exit-status when a session ends (ssh -v: "Exit status
# -1"): scp exits 1 after every copy with rclone, stock's and ours, having
# said nothing; that counts as exit 0 here (a failed copy says why).
# What the series before these fixes did (committed 2b939e0 built, the
# test run with LFN_TREE on it): gesftpserver overran with 128+ files in
# flight (256 when a server does not say its limit) and corrupted its heap
# ("corrupted size vs. prev_size", "munmap_chunk(): invalid pointer"):
# scp -r and put -R, down and up, get -R and the glob failed ("lost
# connection", "read remote ...: Failure", "write remote ...: Failure");
# the capped server's "too many open handles" failed files stock copies
# ("remote open ...: Failure", "dest open ...: Failure"); rclone refused
# the split upload's journal ("remote journal: Failure"), ProFTPD with
# AllowOverwrite off the extra connections' opens of the part ("dest open
# DEST.lfn-part: Permission denied"), and DEST.lfn-part stayed; ProFTPD's
# beyond-stock uploads failed as stock's.  About 90 s on loopback (2
# cores; 2 min when loaded).
# Last, on every server the new client's scp -r up of 150 new files
# writes each beside its destination (DEST.lfn-part, renamed: 0276): its
# OPENs name the parts (-vvv), the copy is byte-identical, no part left.
# Patches: 0108 0271 0273 0276
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/foreign-sftp-servers.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-foreign-servers
[ -x "$STOCK_TREE/scp" ] && [ -x "$STOCK_TREE/sftp" ] || lfn_die "stock build missing ($STOCK_TREE)"
lfn_foreign_need
R=$T/res; mkdir -p "$R"
SRC=$T/src BIG=$T/big20 mib=1048576
TMO=${FOREIGN_TIMEOUT:-90}

tid "the source tree"
mkdir -p "$SRC/flat" "$SRC/a/b" "$SRC/a/empty-dir"
for i in $(seq -w 1 150); do head -c 10240 /dev/urandom > "$SRC/flat/f$i"; done
for i in $(seq -w 1 30); do head -c 10240 /dev/urandom > "$SRC/a/g$i"; done
for i in $(seq -w 1 20); do head -c 10240 /dev/urandom > "$SRC/a/b/h$i"; done
: > "$SRC/empty0"; : > "$SRC/flat/empty1"; : > "$SRC/a/b/empty2"
head -c $((5 * mib)) /dev/urandom > "$SRC/big5m"
head -c $((20 * mib)) /dev/urandom > "$BIG"
verbose "$(find "$SRC" -type f | wc -l) files, $(find "$SRC" -mindepth 1 -type d | wc -l) directories"

tid "the servers start"
p_ges=$(lfn_free_port)
LFN_SSHD_SFTP=$GESFTPSERVER lfn_sshd_start "$LFN_TREE" "$p_ges" < /dev/null
p_pro=$(lfn_free_port)
lfn_proftpd_start "$p_pro" proftpd <<< $'AllowOverwrite on\nAllowStoreRestart on'
p_prd=$(lfn_free_port); lfn_proftpd_start "$p_prd" proftpd-dflt < /dev/null
p_rcl=$(lfn_free_port); lfn_rclone_sftp_start "$p_rcl"
lfn_quirky_server "$T/quirky-reorder" SFTP_QUIRK_MODE=reorder SFTP_QUIRK_LOG="$T/quirky-reorder.log"
lfn_quirky_server "$T/quirky-maxh" SFTP_QUIRK_MODE=maxhandles SFTP_QUIRK_MAX_HANDLES=8 \
	SFTP_QUIRK_LOG="$T/quirky-maxh.log"
p_reo=$(lfn_free_port)
LFN_SSHD_SFTP=$T/quirky-reorder lfn_sshd_start "$LFN_TREE" "$p_reo" < /dev/null
p_mxh=$(lfn_free_port)
LFN_SSHD_SFTP=$T/quirky-maxh lfn_sshd_start "$LFN_TREE" "$p_mxh" < /dev/null
tid "rclone sends no exit-status: scp exits 1 after a copy that worked, having said nothing (stock too)"
"$STOCK_TREE/scp" -v -F "$T/ssh_config" -S "$STOCK_TREE/ssh" -P "$p_rcl" -o HostKeyAlias=lfnpeer \
    -o HostName=127.0.0.1 "$SRC/flat/f001" "lfnpeer:$T/rclone-probe" < /dev/null > /dev/null 2> "$R/rclone-probe.err"
rc=$?
cmp -s "$SRC/flat/f001" "$T/rclone-probe" || fail "stock's scp of one file to rclone failed: exit $rc: $(grep -v '^debug' "$R/rclone-probe.err" | tail -n 3)"
verbose "stock's scp: exit $rc; ssh: $(grep -m1 'Exit status' "$R/rclone-probe.err")"

# NAME:ssh:PORT (through ssh) or NAME:D:PROGRAM (scp -D, sftp -D)
SERVERS="ges:ssh:$p_ges ges-D:D:$GESFTPSERVER proftpd:ssh:$p_pro proftpd-dflt:ssh:$p_prd rclone:ssh:$p_rcl
	reorder-D:D:$T/quirky-reorder maxh-D:D:$T/quirky-maxh
	reorder-sub:ssh:$p_reo maxh-sub:ssh:$p_mxh"
CLIENTS="new:$LFN_TREE stock:$STOCK_TREE"

# client_cmd TREE SERVER PROG ARGS...: CMD, the command line of TREE's PROG
# (scp, sftp) pointed at SERVER (NAME:KIND:ARG); "@:" in an argument is
# the host part ("lfnpeer:" or "localhost:").  Bounded (exit 124 after TMO
# s; timeout passes a SIGTERM it gets on to the client), with the default
# dispositions of the signals a copy may be stopped by (under `nohup make
# check` SIGHUP is ignored, and a background job's SIGINT)
client_cmd() {
	local tree=$1 srv=$2 prog=$3 kind arg h a; shift 3
	kind=${srv#*:}; arg=${kind#*:}; kind=${kind%%:*}
	local -a args=()
	h=lfnpeer:; [ "$kind" = D ] && h=localhost:
	for a in "$@"; do args+=("${a//@:/$h}"); done
	CMD=(env --default-signal=HUP,INT,TERM,PIPE timeout -k 5 "$TMO" "$tree/$prog" -F "$T/ssh_config")
	if [ "$kind" = ssh ]; then
		CMD+=(-S "$tree/ssh" -P "$arg" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 "${args[@]}")
		[ "$prog" = sftp ] && CMD+=(lfnpeer)
	else
		CMD+=(-D "$arg" "${args[@]}")
	fi
}
# client TREE SERVER PROG ARGS...: run it
client() { client_cmd "$@"; "${CMD[@]}"; }

# xfer TREE SERVER OP D: OP's copy with TREE's client, its result in D/out
xfer() {
	local tree=$1 srv=$2 op=$3 d=$4
	case $op in
	scp-up) client "$tree" "$srv" scp -r "$SRC" "@:$d/out" < /dev/null ;;
	scp-down) client "$tree" "$srv" scp -r "@:$SRC" "$d/out" < /dev/null ;;
	sftp-put) client "$tree" "$srv" sftp -b - <<< "put -R $SRC $d/out" ;;
	sftp-get) client "$tree" "$srv" sftp -b - <<< "get -R $SRC $d/out" ;;
	glob) mkdir "$d/out"; client "$tree" "$srv" scp "@:$SRC/flat/*" "$d/out/" < /dev/null ;;
	reget) head -c $((2 * mib)) "$SRC/big5m" > "$d/out"
		client "$tree" "$srv" sftp -b - <<< "reget $SRC/big5m $d/out" ;;
	reput) head -c $((2 * mib)) "$SRC/big5m" > "$d/out"
		client "$tree" "$srv" sftp -b - <<< "reput $SRC/big5m $d/out" ;;
	conn-up|conn-down)
		local -a x=(-X connections=4)
		[ "$tree" = "$STOCK_TREE" ] && x=()		# stock: the plain copy
		if [ "$op" = conn-up ]; then
			client "$tree" "$srv" scp "${x[@]}" "$BIG" "@:$d/out" < /dev/null
		else
			client "$tree" "$srv" scp "${x[@]}" "@:$BIG" "$d/out" < /dev/null
		fi ;;
	esac
}

# want OP: what D/out must be the same as
want() {
	case $1 in
	scp-*|sftp-*) echo "$SRC" ;;
	glob) echo "$SRC/flat" ;;
	reget|reput) echo "$SRC/big5m" ;;
	conn-*) echo "$BIG" ;;
	esac
}

# same A B: A and B (files or trees) hold the same bytes
same() { if [ -d "$1" ]; then diff -r "$1" "$2" > /dev/null 2>&1; else cmp -s "$1" "$2"; fi; }

# said LABEL.CLIENT: what the client said, less what says nothing wrong
said() {
	grep -hv -e '^sftp> ' -e '^Retrieving ' -e '^Entering ' -e '^Uploading ' \
	    -e '^Fetching ' -e '^File ".*" was not modified' -e '^ *$' "$R/$1.err" "$R/$1.out" 2> /dev/null |
	    sed -e 's#^[^ ]*/\(scp\|sftp\): #\1: #' -e "s#$T/##g"
}

# run LABEL SERVER OP: both clients; per client C: $R/LABEL.C.{rc,erc,out,err}
# (erc: the exit status that counts: rclone's silent scp exit 1 is 0)
run() {
	local l=$1 srv=$2 op=$3 cl name tree d rc
	for cl in $CLIENTS; do
		name=${cl%%:*} tree=${cl#*:}
		d=$T/o/$l/$name; rm -rf "$d"; mkdir -p "$d"
		xfer "$tree" "$srv" "$op" "$d" > "$R/$l.$name.out" 2> "$R/$l.$name.err"
		rc=$?
		echo "$rc" > "$R/$l.$name.rc"
		case "${srv%%:*}:$op:$rc" in
		rclone:scp-*:1|rclone:glob:1|rclone:conn-*:1)
			[ -z "$(said "$l.$name")" ] && rc=0 ;;
		esac
		echo "$rc" > "$R/$l.$name.erc"
	done
}

# parts D: the *.lfn-part files under D
parts() { find "$1" -name '*.lfn-part' 2> /dev/null | sed "s#^$T/##"; }

# judge LABEL OP [beyond]: the rule (see the top); "beyond": the new client
# must make the copy whatever stock does
judge() {
	local l=$1 op=$2 beyond=${3:-} w n_rc s_rc n_ok=0 s_ok=0 cl left n_said s_said
	w=$(want "$op")
	n_rc=$(cat "$R/$l.new.erc") s_rc=$(cat "$R/$l.stock.erc")
	same "$w" "$T/o/$l/new/out" && n_ok=1
	same "$w" "$T/o/$l/stock/out" && s_ok=1
	for cl in new stock; do
		left=$(parts "$T/o/$l/$cl")
		[ -z "$left" ] || fail "$cl client (exit $(cat "$R/$l.$cl.rc")) left a part behind: $(echo $left)"
	done
	n_said=$(said "$l.new" | head -n 4 | tr '\n' ' ')
	s_said=$(said "$l.stock" | head -n 4 | tr '\n' ' ')
	if [ -n "$beyond" ]; then
		if [ "$n_rc" != 0 ]; then
			fail "beyond stock: the new client must make this copy (stock: exit $s_rc${s_said:+: $s_said}); it exited $n_rc: $n_said"
		elif [ $n_ok != 1 ]; then
			fail "beyond stock: the new client exited 0, but its copy is not the source"
		else
			verbose "beyond stock: the new client made the copy; stock: exit $s_rc${s_said:+: $s_said}"
		fi
		return
	fi
	if [ "$s_rc" = 0 ] && [ "$n_rc" != 0 ]; then
		fail "the new client exited $n_rc where stock exited 0: $n_said"
	fi
	if [ "$n_rc" = 0 ] && [ $n_ok != 1 ]; then
		fail "the new client exited 0, but its copy is not the source: $(diff -rq "$w" "$T/o/$l/new/out" 2>&1 | head -n 3 | tr '\n' ' ')"
	fi
	if [ "$s_rc" != 0 ]; then
		verbose "stock failed too (exit $s_rc: $s_said); new: exit $n_rc${n_said:+: $n_said}"
	elif [ $s_ok != 1 ]; then
		verbose "stock exited 0 with a copy that is not the source"
	fi
	[ "$n_rc" = "$(cat "$R/$l.new.rc")" ] || verbose "scp exited $(cat "$R/$l.new.rc") (stock $(cat "$R/$l.stock.rc")) having said nothing: rclone sends no exit-status"
}

# stop_again LABEL SERVER DIR: each client's copy of BIG (DIR up or down:
# the new client's split over 4 connections, stock's plain) stopped by
# SIGTERM once its part (stock: the destination, written in place) appears,
# then the same copy again, judged as the others (results as run's)
stop_again() {
	local l=$1 srv=$2 dir=$3 cl name tree d pid rc stopped watch left kids k bad
	local -a args x
	for cl in $CLIENTS; do
		name=${cl%%:*} tree=${cl#*:}
		d=$T/o/$l/$name; rm -rf "$d"; mkdir -p "$d"
		args=("$BIG" "@:$d/out"); [ "$dir" = down ] && args=("@:$BIG" "$d/out")
		x=(-X connections=4) watch=$d/out.lfn-part
		[ "$name" = stock ] && x=() watch=$d/out
		client_cmd "$tree" "$srv" scp "${x[@]}" "${args[@]}"
		"${CMD[@]}" < /dev/null > "$R/$l.$name.out" 2> "$R/$l.$name.err" &
		pid=$!		# timeout's (env execs it), scp below it
		stopped=0 kids=""
		for _ in $(seq 1 1000); do
			if [ -e "$watch" ]; then
				kids=$(lfn_descendants "$pid")
				kill -TERM "$pid" 2> /dev/null && stopped=1
				break
			fi
			kill -0 "$pid" 2> /dev/null || break
			sleep 0.01
		done
		wait "$pid"; rc=$?
		# scp's ssh and extra connections end with it (they hold the
		# part's lock)
		for _ in $(seq 1 100); do
			left=""
			for k in $kids; do kill -0 "$k" 2> /dev/null && left="$left $k"; done
			[ -z "$left" ] && break
			sleep 0.1
		done
		if [ -n "$left" ]; then
			fail "$name client: processes of the stopped copy still run 10 s later:$(for k in $left; do
				printf ' %s' "$(tr '\0' ' ' < "/proc/$k/cmdline" 2> /dev/null | cut -c1-60)"; done)"
			kill $left 2> /dev/null
		fi
		if [ $stopped = 1 ]; then
			verbose "$name client stopped: exit $rc, left $(ls "$d" | tr '\n' ' ')"
		else
			verbose "$name client: the copy ended (exit $rc) before it could be stopped: $(said "$l.$name" | head -n 2 | tr '\n' ' ')"
		fi
		# (stock's, written in place, may: a server with threads can
		# carry out its writes out of order and leave a hole)
		if [ -e "$d/out" ] && ! cmp -s -n "$(stat -c %s "$d/out")" "$BIG" "$d/out"; then
			bad="$name client: the stopped copy left $(stat -c %s "$d/out") bytes in out that are not the source's"
			if [ "$name" = stock ]; then verbose "$bad"; else fail "$bad"; fi
		fi
		client "$tree" "$srv" scp "${x[@]}" "${args[@]}" < /dev/null > "$R/$l.$name.out" 2> "$R/$l.$name.err"
		rc=$?
		echo "$rc" > "$R/$l.$name.rc"
		case "${srv%%:*}:$rc" in rclone:1) [ -z "$(said "$l.$name")" ] && rc=0 ;; esac
		echo "$rc" > "$R/$l.$name.erc"
	done
	judge "$l" "conn-$dir"
}

# beyond SERVER OP: a step where the new client must do better than stock
beyond() {
	case "$1:$2" in
	proftpd*:scp-up|proftpd*:sftp-put) echo beyond ;;
	esac
}

for s in $SERVERS; do
	name=${s%%:*} kind=${s#*:}; kind=${kind%%:*}
	ops="scp-up scp-down sftp-put sftp-get glob reget reput"
	[ "$kind" = ssh ] && case $name in ges|proftpd*|rclone) ops="$ops conn-up conn-down" ;; esac
	for op in $ops; do
		l=$name.$op
		b=$(beyond "$name" "$op")
		tid "$name: $op${b:+ (beyond stock)}: the new client exits 0 where stock does, its copy the source, no part left"
		run "$l" "$s" "$op"
		judge "$l" "$op" "$b"
	done
	if [ "$kind" = ssh ] && case $name in ges|proftpd*|rclone) true ;; *) false ;; esac; then
		for dir in up down; do
			tid "$name: scp -X connections=4 $dir (stock: plain) stopped by SIGTERM, then the same copy again: as the rule"
			stop_again "$name.stop-$dir" "$s" "$dir"
		done
	fi
done

for s in $SERVERS; do
	name=${s%%:*}
	tid "$name: the new client's scp -r up writes new files beside and renames them"
	d=$T/parts-$name; rm -rf "$d"; mkdir -p "$d"
	client "$LFN_TREE" "$s" scp -vvv -r "$SRC/flat" "@:$d/out" < /dev/null > /dev/null 2> "$R/parts-$name.err"
	rc=$?
	n=$(grep -c 'Sent queued SSH2_FXP_OPEN .*\.lfn-part' "$R/parts-$name.err")
	diff -r "$SRC/flat" "$d/out" > /dev/null 2>&1 || fail "exit $rc, the copy differs from the source: $(grep -v 'debug[123]:' "$R/parts-$name.err" | tail -n 2)"
	[ -z "$(find "$d" -name '*.lfn-part')" ] || fail "a part was left: $(find "$d" -name '*.lfn-part' | head -n 2)"
	[ "$n" -ge 150 ] || fail "$n OPENs of a part for 150 new files: $(grep -m1 'does not rename' "$R/parts-$name.err")"
	verbose "exit $rc, $n parts"
done

# the controls: the quirky servers did what they claim
tid "the reordering server sent replies out of order"
n=$(awk '{s += $7} END {print s + 0}' "$T/quirky-reorder.log" 2> /dev/null)
[ "${n:-0}" -gt 0 ] || fail "no batch of replies went out reordered: the server does not test what it says"
verbose "$n batches reversed in $(wc -l < "$T/quirky-reorder.log") sessions (largest $(sed -n 's/.*(largest \([0-9]*\)).*/\1/p' "$T/quirky-reorder.log" | sort -n | tail -n 1))"
tid "the handle-capping server never held more than 8 handles"
peak=$(sed -n 's/.*at most \([0-9]*\) handles open.*/\1/p' "$T/quirky-maxh.log" | sort -n | tail -n 1)
[ -n "$peak" ] && [ "$peak" -le 8 ] || fail "it held ${peak:-?} handles at once"
verbose "at most $peak handles at once; $(awk '{s += $(NF-2)} END {print s + 0}' "$T/quirky-maxh.log") opens refused in $(wc -l < "$T/quirky-maxh.log") sessions"
lfn_finish
