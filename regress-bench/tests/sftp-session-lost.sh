#!/usr/bin/env bash
# sftp-session-lost: a copy of many files whose SFTP session dies in the
# middle goes on over one new session with fewer files in flight (0275),
# where stock's client, one file at a time, completes it.  What a user
# would see go wrong: scp -r or sftp -R failing against a server that
# crashes under many open handles (the Green End SFTP server did past
# 128), a file missing or not whole after an exit 0, a DEST.lfn-part left
# behind, a password asked in the middle of a copy, or a copy that does
# not fail when the new session dies too.
# The server: lib/sftp-quirky-server.py with SFTP_QUIRK_DIE_HANDLES=20
# (it exits before opening a 21st handle, each session anew), through -D
# and as the sftp Subsystem of a test sshd.  A tree of 60 small files in
# three directories goes up and down with scp -r, sftp put -R and get -R,
# and as a remote glob (scp -r 'host:src/*' dir/): each copy exits 0, is
# byte-identical (diff -r), says once under -v why it goes on over a new
# session, leaves no part; the server died once and had two sessions
# (the control: the new session had fewer than 21 handles open).  Stock's
# client completes the same download (one file at a time).  Then a server
# that dies on every session (SFTP_QUIRK_DIE_AFTER=40 requests): each copy
# fails (nonzero exit) after one new session; a download leaves no part
# behind; an upload leaves no file cut short (each new file is written
# beside, DEST.lfn-part, and renamed once whole: 0276), only parts, on
# the server, as a killed one does.
# Then uploads over an older tree (scp -r, sftp put -R): 120 files in one
# directory, each there before and longer, so each is written over old
# bytes one at a time; the server carries out requests as a server with a
# thread per handle may (SFTP_QUIRK_MODE=threads: later files answered
# first, so the file written over old bytes is far back in the queue) and
# dies at its 41st handle: the new session must finish the copy, within
# 60 s (timeout; before the fix the files it had room for all waited for
# that one, which had no room to be opened, and the client spun at
# 100 % CPU for ever).
# Before 0275: the first loss fails every copy ("Connection closed").
# Before 0276: an upload whose every session died left new files cut short.
# Patches: 0275 0276
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/foreign-sftp-servers.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-session-lost
[ -x "$STOCK_TREE/scp" ] || lfn_die "stock build missing"
umask 022
SRC=$T/src
mkdir -p "$SRC/a/b"
for i in $(seq 1 30); do head -c $((1 + RANDOM % 20000)) /dev/urandom > "$SRC/f$i"; done
for i in $(seq 1 20); do head -c $((1 + RANDOM % 20000)) /dev/urandom > "$SRC/a/g$i"; done
for i in $(seq 1 10); do head -c $((RANDOM % 20000)) /dev/urandom > "$SRC/a/b/h$i"; done

lfn_quirky_server "$T/die20" SFTP_QUIRK_DIE_HANDLES=20 SFTP_QUIRK_LOG="$T/die20.log"
lfn_quirky_server "$T/dieall" SFTP_QUIRK_DIE_AFTER=40 SFTP_QUIRK_LOG="$T/dieall.log"
p20=$(lfn_free_port)
LFN_SSHD_SFTP=$T/die20 lfn_sshd_start "$LFN_TREE" "$p20" < /dev/null
pall=$(lfn_free_port)
LFN_SSHD_SFTP=$T/dieall lfn_sshd_start "$LFN_TREE" "$pall" < /dev/null

# run TREE SERVER OP D: OP's copy (scp-down, scp-up, get, put, glob) with
# TREE's client, into or from D, -v, through SERVER (D:PROGRAM or
# ssh:PORT); its exit status in rc, its stderr and stdout in $T/err
run() {
	local tree=$1 srv=$2 op=$3 d=$4 h
	local -a c
	if [ "${srv%%:*}" = D ]; then
		h=localhost:
		c=(-D "${srv#D:}")
	else
		h=lfnpeer:
		c=(-S "$tree/ssh" -P "${srv#ssh:}" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1)
	fi
	rm -rf "$d"; mkdir -p "$d"
	local -a s=(env --default-signal=HUP,INT,TERM,PIPE timeout -k 5 120 "$tree/scp" -v -F "$T/ssh_config" "${c[@]}")
	local -a f=(env --default-signal=HUP,INT,TERM,PIPE timeout -k 5 120 "$tree/sftp" -v -F "$T/ssh_config" "${c[@]}" -b -)
	[ "${srv%%:*}" = D ] || f+=(lfnpeer)
	case $op in
	scp-down) "${s[@]}" -r "${h}$SRC" "$d/t" ;;
	scp-up)   "${s[@]}" -r "$SRC" "${h}$d/t" ;;
	get)      "${f[@]}" <<< "get -R $SRC $d/t" ;;
	put)      "${f[@]}" <<< "put -R $SRC $d/t" ;;
	glob)     mkdir "$d/t"; "${s[@]}" -r "${h}$SRC/*" "$d/t/" ;;
	esac < /dev/null > "$T/err" 2>&1
	rc=$?
}

for srv in D:$T/die20 ssh:$p20; do
	for op in scp-down scp-up get put glob; do
		tid "$op, ${srv%%:*}: the server dies at its 21st handle; a new session finishes the copy"
		: > "$T/die20.log"
		run "$LFN_TREE" "$srv" $op "$T/dst"
		[ $rc = 0 ] || fail "exit $rc: $(grep -v 'debug[123]:' "$T/err" | tail -n 3)"
		diff -r "$SRC" "$T/dst/t" > /dev/null 2>&1 || fail "the copy differs from the source"
		n=$(grep -c 'going on over a new session' "$T/err")
		[ "$n" = 1 ] || fail "$n lines say why it goes on over a new session (want 1)"
		verbose "$(grep -m1 -o 'Lost the session.*' "$T/err")"
		[ -z "$(find "$T/dst" -name '*.lfn-part')" ] || fail "a part was left: $(find "$T/dst" -name '*.lfn-part' | head -n 3)"
		d=$(grep -c 'session died' "$T/die20.log"); e=$(grep -c 'session ended' "$T/die20.log")
		[ "$d" = 1 ] && [ "$e" = 1 ] || fail "the server: $d sessions died, $e ended (want 1 and 1): the loss was not tried"
	done
done

tid "stock's client completes the same download (one file at a time)"
: > "$T/die20.log"
run "$STOCK_TREE" "D:$T/die20" scp-down "$T/dst"
[ $rc = 0 ] && diff -r "$SRC" "$T/dst/t" > /dev/null 2>&1 || fail "stock: exit $rc: $(tail -n 2 "$T/err")"
[ "$(grep -c 'session died' "$T/die20.log")" = 0 ] || fail "stock's copy crashed the server"

# over an older tree: each file goes over old bytes, one at a time
mkdir -p "$T/many" "$T/older"
for i in $(seq 1 120); do
	head -c $((1 + RANDOM % 20000)) /dev/urandom > "$T/many/f$i"
	head -c $((20001 + RANDOM % 20000)) /dev/urandom > "$T/older/f$i"
done
lfn_quirky_server "$T/thr40" SFTP_QUIRK_MODE=threads SFTP_QUIRK_BATCH=64 \
	SFTP_QUIRK_DIE_HANDLES=40 SFTP_QUIRK_LOG="$T/thr40.log"
for op in scp-up put; do
	for try in 1 2 3; do
		tid "$op over an older tree ($try), a threads server that dies at its 41st handle: the new session finishes, never hangs"
		: > "$T/thr40.log"
		rm -rf "$T/dst"; mkdir -p "$T/dst"; cp -a "$T/older" "$T/dst/t"
		o=(env --default-signal=HUP,INT,TERM,PIPE timeout -k 5 60)
		if [ $op = scp-up ]; then
			"${o[@]}" "$LFN_TREE/scp" -v -F "$T/ssh_config" -D "$T/thr40" -r "$T/many/." "localhost:$T/dst/t" < /dev/null > "$T/err" 2>&1
		else
			"${o[@]}" "$LFN_TREE/sftp" -v -F "$T/ssh_config" -D "$T/thr40" -b - <<< "put -R $T/many/. $T/dst/t" > "$T/err" 2>&1
		fi
		rc=$?
		case $rc in
		124|137) fail "the copy hung: killed after 60 s" ;;
		0) ;;
		*) fail "exit $rc: $(grep -v 'debug[123]:' "$T/err" | tail -n 3)" ;;
		esac
		diff -r "$T/many" "$T/dst/t" > /dev/null 2>&1 || fail "the copy differs from the source"
		n=$(grep -c 'going on over a new session' "$T/err")
		[ "$n" = 1 ] || fail "$n lines say why it goes on over a new session (want 1)"
		verbose "$(grep -m1 -o 'Lost the session.*' "$T/err")"
		d=$(grep -c 'session died' "$T/thr40.log")
		[ "$d" = 1 ] || fail "the server: $d sessions died (want 1): the loss was not tried"
	done
done

for srv in D:$T/dieall ssh:$pall; do
	for op in scp-down scp-up get put glob; do
		tid "$op, ${srv%%:*}: every session dies: the copy fails, no part left down, no file cut short up"
		: > "$T/dieall.log"
		run "$LFN_TREE" "$srv" $op "$T/dst"
		[ $rc != 0 ] || fail "exit 0 from a copy whose every session died"
		diff -r "$SRC" "$T/dst/t" > /dev/null 2>&1 && fail "the copy is whole, yet every session died"
		n=$(grep -c 'going on over a new session' "$T/err")
		[ "$n" = 1 ] || fail "$n new sessions (want 1: a second loss fails the copy)"
		case $op in
		scp-up|put)
			bad=$(cd "$T/dst/t" 2> /dev/null && find . -type f ! -name '*.lfn-part' | while read -r x; do
				cmp -s "$x" "$SRC/$x" || echo "$x"; done)
			[ -z "$bad" ] || fail "an upload left files cut short: $(echo $bad | head -c 200)"
			verbose "$(find "$T/dst" -name '*.lfn-part' | wc -l) part(s) left on the server" ;;
		*)
			[ -z "$(find "$T/dst" -name '*.lfn-part')" ] || fail "a part was left: $(find "$T/dst" -name '*.lfn-part' | head -n 3)" ;;
		esac
		verbose "exit $rc: $(grep -v 'debug[123]:' "$T/err" | grep -v '^$' | tail -n 1)"
	done
done
lfn_finish
