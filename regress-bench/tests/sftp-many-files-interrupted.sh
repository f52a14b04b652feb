#!/usr/bin/env bash
# sftp-many-files-interrupted: a download of many files in flight (0271)
# that is stopped at any point leaves every destination file as it was
# before, or whole: never a new head over an old tail, never cut short.
# Each file in flight is written beside its destination (DEST.lfn-part)
# and renamed over it once whole; stock's client, one file at a time,
# writes scp's in place and could leave one file mixed; the series before
# this left every file in flight mixed.
# The destination already holds an older copy of most of the tree (files
# longer and shorter than the new ones, a few missing); each round copies
# the tree down with scp -r or sftp get -R and stops the copy at a random
# moment: SIGKILL, SIGINT or SIGTERM to the client, or SIGKILL to the
# server; the server is sftp-server, or the sequential server listing
# stale sizes (files that grew and shrank since their listing, lib/
# sftp-sequential-server.py SFTP_SEQ_STALE=1), both through -D.  Then
# every destination file must be its old bytes or the source's, one that
# was there must still be there, and no DEST.lfn-part may be left unless
# the client was killed (SIGKILL) or was sftp losing its server (SIGPIPE
# ends it as it ends stock's); scp and sftp remove the parts when SIGINT,
# SIGTERM or a lost connection ends them at once.  Last, the same copy
# again completes byte-identical.
# Uploads over the older tree (scp -r, sftp put -R), UP_ROUNDS (12) more:
# the server (lib/sftp-quirky-server.py in its "threads" mode, which
# carries out the requests of different handles taking turns, and those
# naming no handle in between, as a server with a thread per handle may)
# dies after a random number of requests, or the client is stopped at a
# random moment (SIGKILL, SIGINT).
# scp writes an existing file in place, as stock's does, so a file can be
# left with a new head over an old tail while its writes are out; sftp
# empties it first, as stock's OPEN with TRUNC does, so it can be left cut
# short (never mixed).  Either writes over one existing file at a time: at
# most one file that was there may be left neither as it was nor whole
# (stock's client, one file at a time, can leave one); a file whose one
# write replaces all its old bytes goes at once.  A new file is written
# beside (DEST.lfn-part) and renamed once its writes and close are
# answered (0276): it is left absent or whole, never cut short (the
# series before 0276 left each new file in flight cut short; stock's
# client one); parts may be left, as by a killed download.  Last, servers
# that will not rename or remove (sftp-server -P rename,posix-rename; -P
# remove): the client's probe finds it (-v says so once) and writes new
# files in place, as stock's does: scp -r and put -R complete, byte-
# identical, and no part is made.
# ROUNDS (16) and UP_ROUNDS from SEED (printed; set it to replay).
# Patches: 0271 0276
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/foreign-sftp-servers.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-many-files-interrupted
ROUNDS=${ROUNDS:-16}
UP_ROUNDS=${UP_ROUNDS:-12}
SEED=${SEED:-$((($$ * 7919 + $(date +%s)) % 32768))}
RANDOM=$SEED
verbose "seed $SEED (SEED=$SEED replays these rounds)"
umask 022
mkdir -p "$T/src/sub" "$T/old/sub"
n=0
for d in . sub; do
	for i in $(seq 1 150); do
		case $((i % 3)) in 0) nm=f${i}g ;; 1) nm=f${i}s ;; *) nm=f${i}n ;; esac
		head -c $((1 + RANDOM % 40000)) /dev/urandom > "$T/src/$d/$nm"
		# the older copy: longer or shorter, other bytes; a few missing
		if [ $((i % 10)) != 0 ]; then
			head -c $((1 + RANDOM % 80000)) /dev/urandom > "$T/old/$d/$nm"
		fi
		n=$((n + 1))
	done
done
lfn_sequential_server "$T/seq-stale" SFTP_SEQ_STALE=1
pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }
# fg CMD...: run CMD with every signal a stop sends at its default,
# whatever make check inherited (nohup leaves SIGHUP ignored, a background
# job SIGINT); called in a background subshell, it becomes CMD ($! is CMD)
fg() { exec env --default-signal=INT,TERM,HUP,PIPE "$@"; }

# check WHEN: every destination file old or whole, none lost
check() {
	local f rel bad=0 mixed=0 lost=0
	while read -r f; do
		rel=${f#"$T/src/"}
		if [ -e "$T/dst/$rel" ]; then
			cmp -s "$T/dst/$rel" "$f" && continue
			[ -e "$T/old/$rel" ] && cmp -s "$T/dst/$rel" "$T/old/$rel" && continue
			mixed=$((mixed + 1)); bad=1
			[ $mixed -le 3 ] && fail "$1: $rel is neither its old bytes nor the source's ($(stat -c %s "$T/dst/$rel") bytes)"
		elif [ -e "$T/old/$rel" ]; then
			lost=$((lost + 1)); bad=1
			[ $lost -le 3 ] && fail "$1: $rel was there before and is gone"
		fi
	done < <(find "$T/src" -type f)
	[ $mixed -gt 3 ] && fail "$1: $mixed files in all neither old nor new"
	[ $lost -gt 3 ] && fail "$1: $lost files in all lost"
	return $bad
}

for round in $(seq 1 "$ROUNDS"); do
	tool=$(pick scp sftp)
	how=$(pick client:KILL client:INT client:TERM server:KILL)
	srv=$(pick sftp-server stale)
	server="$LFN_TREE/sftp-server"; [ $srv = stale ] && server="$T/seq-stale"
	ms=$((10 + RANDOM % 200))
	tid "round $round: $tool, $srv, $how after $ms ms"
	rm -rf "$T/dst"; cp -a "$T/old" "$T/dst"
	if [ $tool = scp ]; then
		( fg "$LFN_TREE/scp" -q -r -D "$server" "localhost:$T/src/." "$T/dst" > /dev/null 2> "$T/err" ) &
	else
		( fg "$LFN_TREE/sftp" -q -D "$server" -b - <<< "get -R $T/src/. $T/dst" > /dev/null 2> "$T/err" ) &
	fi
	cpid=$!
	sleep "$(echo "$ms / 1000" | bc -l)"
	if [ "${how%%:*}" = client ]; then
		kill -"${how#*:}" "$cpid" 2> /dev/null || verbose "the copy ended before the stop"
	else
		spid=$(pgrep -P "$cpid" | head -n 1)
		[ -n "$spid" ] && kill -KILL "$spid" 2> /dev/null || verbose "the copy ended before the stop"
	fi
	for _ in $(seq 1 300); do kill -0 "$cpid" 2> /dev/null || break; sleep 0.1; done
	if kill -0 "$cpid" 2> /dev/null; then
		kill -KILL "$cpid"; fail "the copy still ran 30 s after $how"
	fi
	spid=$(pgrep -P "$cpid" | head -n 1)
	wait "$cpid"; rc=$?
	# (a killed client's server ends when it reads the end of its input)
	[ -n "$spid" ] && for _ in $(seq 1 50); do kill -0 "$spid" 2> /dev/null || break; sleep 0.1; done
	check "exit $rc after $how"
	parts=$(find "$T/dst" -name '*.lfn-part' | wc -l)
	case $tool:$how in
	*:client:KILL|sftp:server:KILL) verbose "exit $rc; $parts part(s) left" ;;
	*) [ "$parts" = 0 ] || fail "$parts DEST.lfn-part left after $how (exit $rc)" ;;
	esac
done

# check_up WHEN MAX: an upload stopped: each file old or whole, or (a new
# one) absent; at most one that was there is neither, at most MAX with a
# new head over an old tail; none lost
check_up() {
	local f rel s mixed=0 hurt=0 lost=0 short=0
	while read -r f; do
		rel=${f#"$T/src/"}
		if [ ! -e "$T/dst/$rel" ]; then
			[ -e "$T/old/$rel" ] || continue
			lost=$((lost + 1))
			fail "$1: $rel was there before and is gone"
			continue
		fi
		cmp -s "$T/dst/$rel" "$f" && continue
		[ -e "$T/old/$rel" ] && cmp -s "$T/dst/$rel" "$T/old/$rel" && continue
		s=$(stat -c %s "$T/dst/$rel")
		if [ ! -e "$T/old/$rel" ]; then
			short=$((short + 1))
			[ $short -le 3 ] && fail "$1: $rel, a new file, left neither absent nor whole ($s bytes of $(stat -c %s "$f"))"
			continue
		fi
		if [ "$s" -le "$(stat -c %s "$f")" ] && cmp -s -n "$s" "$T/dst/$rel" "$f"; then
			verbose "$1: $rel: was there, left cut short ($s bytes)"
		else
			mixed=$((mixed + 1))
			verbose "$1: $rel: a new head over an old tail ($s bytes)"
		fi
		hurt=$((hurt + 1))
	done < <(find "$T/src" -type f)
	[ $short -gt 3 ] && fail "$1: $short new files in all left neither absent nor whole"
	[ $mixed -le "$2" ] || fail "$1: $mixed files with a new head over an old tail (at most $2)"
	[ $hurt -le 1 ] || fail "$1: $hurt files that were there left neither as they were nor whole (at most 1, as stock's client)"
}

for round in $(seq 1 "$UP_ROUNDS"); do
	tool=$(pick scp scp sftp)
	how=$(pick server server client:KILL client:INT)
	n=$((40 + RANDOM % 1200))
	ms=$((5 + RANDOM % 120))
	rm -rf "$T/dst"; cp -a "$T/old" "$T/dst"
	if [ $how = server ]; then
		tid "upload round $round: $tool, the server dies after $n requests"
		lfn_quirky_server "$T/threads" SFTP_QUIRK_MODE=threads SFTP_QUIRK_BATCH=64 \
			SFTP_QUIRK_DIE_AFTER=$n
	else
		tid "upload round $round: $tool, $how after $ms ms"
		lfn_quirky_server "$T/threads" SFTP_QUIRK_MODE=threads SFTP_QUIRK_BATCH=64
	fi
	if [ $tool = scp ]; then
		( fg "$LFN_TREE/scp" -q -r -D "$T/threads" "$T/src/." "localhost:$T/dst" > /dev/null 2> "$T/err" ) &
	else
		( fg "$LFN_TREE/sftp" -q -D "$T/threads" -b - <<< "put -R $T/src/. $T/dst" > /dev/null 2> "$T/err" ) &
	fi
	cpid=$!
	if [ $how != server ]; then
		sleep "$(echo "$ms / 1000" | bc -l)"
		kill -"${how#*:}" "$cpid" 2> /dev/null || verbose "the copy ended before the stop"
	fi
	spid=$(pgrep -P "$cpid" | head -n 1)
	wait "$cpid"; rc=$?
	# (the server carries out what it has read before it ends)
	[ -n "$spid" ] && for _ in $(seq 1 100); do kill -0 "$spid" 2> /dev/null || break; sleep 0.1; done
	if [ $tool = scp ]; then check_up "exit $rc" 1; else check_up "exit $rc" 0; fi
	diff -r -x '*.lfn-part' "$T/src" "$T/dst" > /dev/null 2>&1 || [ $rc != 0 ] || fail "exit 0, yet the copy is not whole"
	verbose "exit $rc; $(find "$T/dst" -name '*.lfn-part' | wc -l) part(s) left"
done

tid "the same copy again, over what the rounds left: byte-identical"
for tool in scp sftp; do
	if [ $tool = scp ]; then
		"$LFN_TREE/scp" -q -r -D "$LFN_TREE/sftp-server" "localhost:$T/src/." "$T/dst" 2> "$T/err"
	else
		"$LFN_TREE/sftp" -q -D "$LFN_TREE/sftp-server" -b - <<< "get -R $T/src/. $T/dst" > /dev/null 2> "$T/err"
	fi || fail "$tool: the copy again failed: $(tail -n 2 "$T/err")"
	find "$T/dst" -name '*.lfn-part' -delete
	diff -r "$T/src" "$T/dst" > /dev/null || fail "$tool: the copy again differs from the source"
done
lfn_quirky_server "$T/threads" SFTP_QUIRK_MODE=threads SFTP_QUIRK_BATCH=64
for tool in scp sftp; do
	rm -rf "$T/dst"; cp -a "$T/old" "$T/dst"
	if [ $tool = scp ]; then
		"$LFN_TREE/scp" -q -r -D "$T/threads" "$T/src/." "localhost:$T/dst" 2> "$T/err"
	else
		"$LFN_TREE/sftp" -q -D "$T/threads" -b - <<< "put -R $T/src/. $T/dst" > /dev/null 2> "$T/err"
	fi || fail "$tool: the upload over the older tree failed: $(tail -n 2 "$T/err")"
	diff -r "$T/src" "$T/dst" > /dev/null || fail "$tool: the upload over the older tree differs from the source (or left a part)"
done
for pol in rename,posix-rename remove; do
	printf '#!/bin/sh\nexec "%s/sftp-server" -P %s\n' "$LFN_TREE" "$pol" > "$T/deny"
	chmod +x "$T/deny"
	for tool in scp sftp; do
		tid "$tool: a server that will not $pol: new files written in place, no part"
		rm -rf "$T/dst"; mkdir -p "$T/dst"; cp -a "$T/old/sub" "$T/dst/"
		if [ $tool = scp ]; then
			"$LFN_TREE/scp" -v -r -D "$T/deny" "$T/src/." "localhost:$T/dst" 2> "$T/err"
		else
			"$LFN_TREE/sftp" -v -D "$T/deny" -b - <<< "put -R $T/src/. $T/dst" > /dev/null 2> "$T/err"
		fi || fail "exit $?: $(grep -v 'debug[123]:' "$T/err" | tail -n 2)"
		diff -r "$T/src" "$T/dst" > /dev/null || fail "the copy differs from the source (or left a part)"
		n=$(grep -c 'does not rename or remove' "$T/err")
		[ "$n" = 1 ] || fail "$n lines say the server does not rename or remove (want 1)"
	done
done
lfn_finish
