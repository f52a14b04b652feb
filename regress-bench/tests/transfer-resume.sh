#!/usr/bin/env bash
# transfer-resume: a copy stopped at any point never leaves a destination
# with wrong bytes, and the same split copy started again moves only what
# is missing and ends byte-identical.
# Patches: 0106 0273
# Also: a full disk on either side (a tmpfs with room for half the file).
# Each round picks at random: download or upload; 1 or 4 connections
# (-X connections=N); openssh-lfn's or stock 10.5p1's sshd; and what stops
# the copy: SIGKILL or SIGTERM to scp, SIGINT or SIGHUP to its process group
# (Ctrl-C, a terminal closed), SIGKILL to an extra
# connection's ssh, or SIGKILL to one of the server's sftp-servers, once
# 1-36 MiB of the 48 MiB file are written (over an emulated 100 Mbit/s x
# 20 ms link; SIZE_MIB, RATE, AT_MIB below).  Then:
#  - the destination is absent or a correct prefix of the source (one
#    connection writes in place, as stock scp does), never anything else;
#  - a destination that is a prefix resumes with sftp reget / reput to the
#    source's bytes;
#  - the same scp again exits 0, the copy is byte-identical, no
#    DEST.lfn-part is left, and a split copy says it took up what the
#    part's journal marks (and nothing more).
# ROUNDS (8) rounds from seed SEED (random, printed; set it to replay).
# The bench's longer run: ROUNDS=40 regress-bench/tests/transfer-resume.sh
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'umount "$T/full" 2> /dev/null; lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init transfer-resume
[ -x "$STOCK_TREE/sshd" ] || fail "stock build missing"
ROUNDS=${ROUNDS:-8}
SEED=${SEED:-$((($$ * 7919 + $(date +%s)) % 32768))}
RANDOM=$SEED
trace "seed $SEED (SEED=$SEED replays these rounds)"
mib=1048576
# SIZE_MIB (48, at most 16384: 1 MiB chunks), RATE (100mbit), AT_MIB (a
# fixed stopping point), CONNS ("1 4"), DIRS ("down up"), SERVERS
# ("lfn stock"), HOW (one way to stop, e.g. scp:KILL) for longer runs,
# e.g. what a resume moves:
# SIZE_MIB=1024 RATE=1gbit AT_MIB=512 CONNS=4 HOW=scp:KILL ROUNDS=6
nmib=${SIZE_MIB:-48}
size=$((nmib * mib))
head -c "$size" /dev/urandom > "$T/src"
lfn_wan_link rs$$ 20 "${RATE:-100mbit}"
# (mounted before the sshds start: their mount namespace is a copy)
mkdir -p "$T/full"
mount -t tmpfs -o size=$((size / 2)) tmpfs "$T/full" || fail "cannot mount a tmpfs"
pl=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$pl" "$NB" < /dev/null; lfn_sshd=$SSHD_PID
ps=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$ps" "$NB" < /dev/null; stock_sshd=$SSHD_PID

# scp_args PORT: the options that point our scp or sftp at the sshd on PORT
scp_args() {
	echo -F "$T/ssh_config" -S "$LFN_TREE/ssh" -P "$1" -o HostKeyAlias=lfnpeer -o HostName="$ADDR"
}
# sftp_servers SSHD_PID: the sftp-servers under that sshd
sftp_servers() {
	local s u
	for s in $(pgrep -P "$1"); do
		for u in $(pgrep -P "$s"); do pgrep -P "$u" -f "sftp-server"; done
	done
}
# marked PART: the chunks its journal marks done (its last bytes, one each)
marked() {
	if [ -f "$1" ] && [ "$(stat -c %s "$1")" = $((size + 64 + nmib)) ]; then
		tail -c "$nmib" "$1" | tr -cd '\001' | wc -c
	else
		echo 0
	fi
}
# written FILE: MiB there (a part's journal, or a file written in order)
written() {
	case $1 in
	*.lfn-part) marked "$1" ;;
	*) echo $(($(stat -c %s "$1" 2> /dev/null || echo 0) / mib)) ;;
	esac
}
# took_up MARKED: the copy again (its -v output in $T/err) took up what the
# journal marked (MARKED MiB), or with an openssh-lfn server (0262) what
# the hashes found, the journal's chunks and any written after it: $had
took_up() {
	had=$(sed -n 's/.*: \([0-9]*\) of [0-9]* bytes are there from an earlier copy.*/\1/p' "$T/err")
	had=${had:-0}
	if grep -q "from an earlier copy (checked by hash)" "$T/err"; then
		[ "$had" -ge $(($1 * mib)) ] ||
			fail "the journal marks $1 MiB, the hashes found only $had bytes"
	else
		[ "$had" = $(($1 * mib)) ] ||
			fail "the journal marks $1 MiB, the copy took up $had bytes"
	fi
}
pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }
# rate_bits: RATE in bit/s
rate_bits() {
	local r=${RATE:-100mbit}
	case $r in
	*gbit) echo $((${r%gbit} * 1000000000)) ;;
	*mbit) echo $((${r%mbit} * 1000000)) ;;
	*) echo "$r" ;;
	esac
}
PY=/usr/bin/python3
# (every signal a stop sends at its default: `nohup make check` leaves
# SIGHUP ignored, and an ignored signal stays ignored across exec)
fg='import os, signal, sys
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
    signal.signal(s, signal.SIG_DFL)
os.setpgid(0, 0)
os.execvp(sys.argv[1], sys.argv[1:])'

for round in $(seq 1 "$ROUNDS"); do
	# shellcheck disable=SC2086
	dir=$(pick ${DIRS:-down up})
	# shellcheck disable=SC2086
	n=$(pick ${CONNS:-1 4})
	# shellcheck disable=SC2086
	server=$(pick ${SERVERS:-lfn stock})
	port=$pl sshd=$lfn_sshd; [ $server = stock ] && port=$ps sshd=$stock_sshd
	ways="scp:KILL scp:INT scp:TERM scp:HUP sftp-server:KILL"
	[ "$n" = 4 ] && ways="$ways ssh:KILL"
	# shellcheck disable=SC2086
	how=${HOW:-$(pick $ways)}
	at=${AT_MIB:-$((1 + RANDOM % (nmib * 3 / 4)))}
	# (dst: the destination's path, here or on the server: one machine)
	if [ $dir = down ]; then
		from="lfnpeer:$T/src" to=$T/down dst=$T/down
	else
		from=$T/src to="lfnpeer:$T/up" dst=$T/up
	fi
	tid "round $round: $dir, $n connection(s), $server sshd, $how at $at MiB"
	rm -f "$dst" "$dst.lfn-part"
	# in a process group of its own, SIGINT not ignored (a background job's
	# is): Ctrl-C and a hangup reach scp, its ssh and its workers together
	# shellcheck disable=SC2046
	"$PY" -c "$fg" ip netns exec "$NA" "$LFN_TREE/scp" $(scp_args "$port") -q -X "connections=$n" "$from" "$to" 2> "$T/err" &
	cpid=$!
	for _ in $(seq 1 600); do
		if [ $dir = up ]; then
			# what the server has written lags far behind what scp
			# sent: from the moment the file appears, by the clock
			# (100 Mbit/s: 12.5 MB/s)
			[ -e "$dst.lfn-part" ] || [ -e "$dst" ] &&
				{ sleep "$(echo "$at * $mib * 8 / $(rate_bits)" | bc -l)"; break; }
		else
			# (the destination too: a build without parts writes there)
			[ "$(written "$dst.lfn-part")" -ge "$at" ] || [ "$(written "$dst")" -ge "$at" ] && break
		fi
		kill -0 "$cpid" 2> /dev/null || break
		sleep 0.02
	done
	victim=""
	case $how in
	scp:INT|scp:HUP) victim=-$cpid ;;
	scp:*) victim=$cpid ;;
	ssh:*) for w in $(pgrep -P "$cpid"); do victim=$(pgrep -P "$w" -x ssh | head -n 1); [ -n "$victim" ] && break; done ;;
	sftp-server:*) victim=$(sftp_servers "$sshd" | sort -R --random-source=<(yes "$RANDOM") | head -n 1) ;;
	esac
	stopped=0
	[ -n "$victim" ] && kill -"${how#*:}" -- "$victim" 2> /dev/null && stopped=1
	# a copy that does not end within 2 minutes of the stop hangs: a failure
	# (an upload whose sftp-server was killed did, scp and ssh each waiting
	# for the other to read, until 0106)
	for _ in $(seq 1 1200); do kill -0 "$cpid" 2> /dev/null || break; sleep 0.1; done
	if kill -0 "$cpid" 2> /dev/null; then
		kill -KILL -- -"$cpid" 2> /dev/null
		fail "the copy still ran 2 minutes after $how"
	fi
	wait "$cpid" 2> /dev/null; rc=$?
	[ $stopped = 1 ] || verbose "the copy ended (exit $rc) before it could be stopped${victim:+ (pid $victim)}"
	# whatever it left: gone with it (the workers follow scp, PDEATHSIG)
	for _ in $(seq 1 100); do
		[ -z "$(pgrep -P "$cpid" 2> /dev/null)" ] && [ -z "$(sftp_servers "$sshd")" ] && break
		sleep 0.05
	done
	[ -n "$(sftp_servers "$sshd")" ] && fail "sftp-servers still running after the copy stopped"
	# the invariant: no destination, or a correct prefix of the source
	if [ -e "$dst" ]; then
		got=$(stat -c %s "$dst")
		[ "$got" -le "$size" ] && cmp -s -n "$got" "$T/src" "$dst" ||
			fail "exit $rc left $dst with $got bytes that are not the source's"
		if [ $rc = 0 ] && [ "$got" != "$size" ]; then fail "exit 0 with a $got-byte destination"; fi
		if [ "$got" -lt "$size" ]; then
			# a user's resume of what is there: reget / reput
			if [ $dir = down ]; then cmd="reget $T/src $dst"; else cmd="reput $T/src $dst"; fi
			# shellcheck disable=SC2046
			ip netns exec "$NA" "$LFN_TREE/sftp" $(scp_args "$port") -q -b - lfnpeer <<< "$cmd" > "$T/out" 2>&1 ||
				fail "$cmd after a $got-byte prefix failed: $(tail -n 2 "$T/out")"
			cmp -s "$T/src" "$dst" || fail "$cmd: the result differs from the source"
			verbose "$cmd took up a $got-byte prefix"
			continue
		fi
	else
		[ $rc != 0 ] || fail "exit 0 and no destination"
	fi
	# what the part's journal marks (its last bytes: one per 1 MiB chunk)
	marked=$(marked "$dst.lfn-part")
	# the same copy again
	# shellcheck disable=SC2046
	ip netns exec "$NA" "$LFN_TREE/scp" $(scp_args "$port") -v -q -X "connections=$n" "$from" "$to" 2> "$T/err" ||
		fail "the same copy again failed: $(grep -v '^debug' "$T/err" | tail -n 3)"
	cmp -s "$T/src" "$dst" || fail "the same copy again: the result differs from the source"
	[ -e "$dst.lfn-part" ] && fail "a part is left after the copy completed"
	took_up "$marked"
	verbose "exit $rc; resumed with $((had / mib)) of $nmib MiB there (journal: $marked): moved $((nmib - had / mib)) MiB ($(( (nmib - had / mib) * 100 / nmib )) %) again"
done

# A full disk, here (download) or on the server (upload): a tmpfs with
# room for half the file.  The copy fails with a nonzero exit and leaves
# no destination (split) or a correct prefix (one connection, in place);
# with room made, the same copy (or reget/reput) ends byte-identical.
# (not in runs that set SIZE_MIB: those measure what a resume moves)
[ -n "${SIZE_MIB:-}" ] && set -- || set -- "down 4" "up 4" "down 1" "up 1"
for c in "$@"; do
	set -- $c; dir=$1 n=$2
	tid "disk full on the $([ $dir = down ] && echo client || echo server)'s side: $dir, $n connection(s)"
	rm -f "$T/full/"*
	mount -o remount,size=$((size / 2)) "$T/full" || fail "cannot shrink the tmpfs"
	unset got
	if [ $dir = down ]; then
		from="lfnpeer:$T/src" to=$T/full/f
	else
		from=$T/src to="lfnpeer:$T/full/f"
	fi
	dst=$T/full/f
	# shellcheck disable=SC2046
	ip netns exec "$NA" "$LFN_TREE/scp" $(scp_args "$pl") -q -X "connections=$n" "$from" "$to" 2> "$T/err" &&
		fail "exit 0 with the disk full"
	grep -q "No space left\|Failure" "$T/err" || fail "no clear error: $(tail -n 2 "$T/err")"
	if [ -e "$dst" ]; then
		got=$(stat -c %s "$dst")
		[ "$n" = 1 ] || fail "a split copy made the destination on a full disk"
		cmp -s -n "$got" "$T/src" "$dst" || fail "the disk full left $got bytes that are not the source's"
	fi
	marked=$(marked "$dst.lfn-part")
	mount -o remount,size=$((size * 3)) "$T/full" || fail "cannot grow the tmpfs"
	if [ -e "$dst" ]; then
		if [ $dir = down ]; then cmd="reget $T/src $dst"; else cmd="reput $T/src $dst"; fi
		# shellcheck disable=SC2046
		ip netns exec "$NA" "$LFN_TREE/sftp" $(scp_args "$pl") -q -b - lfnpeer <<< "$cmd" > "$T/out" 2>&1 ||
			fail "$cmd after the disk full failed: $(tail -n 2 "$T/out")"
	else
		# shellcheck disable=SC2046
		ip netns exec "$NA" "$LFN_TREE/scp" $(scp_args "$pl") -v -q -X "connections=$n" "$from" "$to" 2> "$T/err" ||
			fail "the same copy with room made failed: $(grep -v '^debug' "$T/err" | tail -n 3)"
		took_up "$marked"
	fi
	cmp -s "$T/src" "$dst" || fail "with room made: the result differs from the source"
	[ -e "$dst.lfn-part" ] && fail "a part is left after the copy completed"
	verbose "resumed with ${got:-$((marked * mib))} bytes there"
done
umount "$T/full"
lfn_finish
