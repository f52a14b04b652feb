#!/usr/bin/env bash
# none-tools: NoneEnabled (patch 0401) with scp, sftp, rsync -e ssh, rekeying
# after the switch (RekeyLimit on either side), a multiplexed connection
# (switches back to encryption for a tty session), and interop with the
# stock build, the system ssh and the system sshd (they never switch;
# nothing fails; the refused switch and later rekeys pass OpenSSH 10.4's
# strict key exchange checks).
# Needs: 0401 (and its rekeys), 0404 (mux tty).
# Patches: 0401 0404
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init none-tools
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }

dd if=/dev/urandom of="$T/data" bs=1M count=8 status=none
p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<< "NoneEnabled yes"
slog=$SSHD_LOG
switched() { grep -c 'switched to cipher none' "$slog"; }
# refused_rekeys PORT WHO SSHD_LOG: lfn client with NoneEnabled and
# RekeyLimit 1M against a server that does not permit none, upload then
# download: data intact, several rekeys, never none, one refusal notice, and
# no strict-KEX complaint (OpenSSH 10.4+ disconnects a peer that sends
# anything but KEX messages during a key exchange) on either side.
refused_rekeys() {
	rm -f "$T/up" "$T/down"
	lfn_ssh "$LFN_TREE" "$1" -v -oNoneEnabled=yes -oRekeyLimit=1M lfnpeer \
	    "cat > $T/up && cat $T/up" < "$T/data" > "$T/down" 2> "$T/err" || fail "connection failed: $(tail -n 2 "$T/err")"
	cmp -s "$T/data" "$T/up" || fail "upload corrupted"
	cmp -s "$T/data" "$T/down" || fail "download corrupted"
	n=$(grep -c 'kex: client->server cipher:' "$T/err")
	[ "$n" -ge 4 ] || fail "expected several rekeys, got $n key exchanges"
	grep 'kex: client->server cipher:' "$T/err" | grep -q 'cipher: none' && fail "switched with $2"
	[ "$(grep -c 'server does not permit the none cipher' "$T/err")" = 1 ] || fail "refusal notice not printed once"
	grep -qi 'non-transport message\|multiple KEXINIT\|protocol error' "$T/err" "$3" &&
		fail "strict KEX complaint: $(grep -hi 'non-transport\|multiple KEXINIT\|protocol error' "$T/err" "$3" | head -n 2)"
}

tid "scp (SFTP protocol) upload with NoneEnabled"
n0=$(switched); rm -f "$T/up"
lfn_scp "$LFN_TREE" "$p" -oNoneEnabled=yes "$T/data" "lfnpeer:$T/up" 2> "$T/err" || fail "scp failed: $(cat "$T/err")"
cmp -s "$T/data" "$T/up" || fail "scp upload corrupted"
sleep 0.2; [ "$(switched)" -gt "$n0" ] || fail "scp did not switch"
grep -q 'NOT ENCRYPTED' "$T/err" || fail "scp: no warning on stderr"

tid "scp -O (legacy protocol) download with NoneEnabled"
n0=$(switched); rm -f "$T/down"
lfn_scp "$LFN_TREE" "$p" -O -q -oNoneEnabled=yes "lfnpeer:$T/data" "$T/down" 2> "$T/err" || fail "scp -O failed: $(cat "$T/err")"
cmp -s "$T/data" "$T/down" || fail "scp -O download corrupted"
sleep 0.2; [ "$(switched)" -gt "$n0" ] || fail "scp -O did not switch"

tid "sftp get/put with NoneEnabled"
n0=$(switched); rm -f "$T/down" "$T/up"
printf 'get %s %s\nput %s %s\n' "$T/data" "$T/down" "$T/data" "$T/up" |
	lfn_sftp "$LFN_TREE" "$p" -q -oNoneEnabled=yes -b - lfnpeer > /dev/null 2> "$T/err" || fail "sftp failed: $(cat "$T/err")"
cmp -s "$T/data" "$T/down" || fail "sftp get corrupted"
cmp -s "$T/data" "$T/up" || fail "sftp put corrupted"
sleep 0.2; [ "$(switched)" -gt "$n0" ] || fail "sftp did not switch"

if command -v rsync >/dev/null; then
	tid "rsync -e ssh with NoneEnabled"
	n0=$(switched); rm -rf "$T/rs"; mkdir "$T/rs"
	rsync -a -e "$LFN_TREE/ssh -F $T/ssh_config -p $p -oHostKeyAlias=lfnpeer -oNoneEnabled=yes" \
	    "$T/data" "127.0.0.1:$T/rs/" 2> "$T/err" || fail "rsync failed: $(cat "$T/err")"
	cmp -s "$T/data" "$T/rs/data" || fail "rsync copy corrupted"
	sleep 0.2; [ "$(switched)" -gt "$n0" ] || fail "rsync did not switch"
else
	verbose "rsync not installed: rsync case skipped"
fi

tid "rekey after the switch (client RekeyLimit 1M): none kept, fresh MAC keys"
# 32 MiB: on a loaded machine (or under the sanitizers) the switch can
# come several MiB into the data, whose re-keys then are not none's
dd if=/dev/urandom of="$T/data32" bs=1M count=32 status=none
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes -oRekeyLimit=1M lfnpeer "cat $T/data32" > "$T/down" 2> "$T/err" ||
	fail "connection failed"
cmp -s "$T/data32" "$T/down" || fail "download corrupted"
n=$(grep -c 'rekeyed: cipher none, fresh keys for MAC umac-64-etm' "$T/err")
[ "$n" -ge 3 ] || fail "expected several rekeys keeping none, got $n"
grep 'kex: client->server cipher:' "$T/err" | tail -n +2 | grep -qv 'cipher: none' &&
	fail "a rekey after the switch left cipher none"

tid "rekey after the switch (server RekeyLimit 1M)"
p2=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p2" <<-EOF
NoneEnabled yes
RekeyLimit 1M
EOF
rm -f "$T/up"
lfn_ssh "$LFN_TREE" "$p2" -v -oNoneEnabled=yes lfnpeer "cat > $T/up" < "$T/data32" 2> "$T/err" || fail "connection failed"
cmp -s "$T/data32" "$T/up" || fail "upload corrupted"
n=$(grep -c 'rekeyed: cipher none' "$T/err")
[ "$n" -ge 3 ] || fail "expected several server-initiated rekeys keeping none, got $n"

tid "multiplexed connection: non-tty mux sessions switch, a tty session re-encrypts"
ctl="$S/ctl"
lfn_ssh "$LFN_TREE" "$p" -v -E "$T/master.log" -oNoneEnabled=yes -M -S "$ctl" -oControlPersist=no -fN lfnpeer ||
	fail "mux master failed"
mpid=$("$LFN_TREE/ssh" -S "$ctl" -O check x 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
[ -n "$mpid" ] && LFN_PIDS+=("$mpid")
rm -f "$T/down"
lfn_ssh "$LFN_TREE" "$p" -S "$ctl" lfnpeer "cat $T/data" > "$T/down" || fail "mux session failed"
cmp -s "$T/data" "$T/down" || fail "mux download corrupted"
grep 'kex: client->server cipher:' "$T/master.log" | tail -1 | grep -q 'cipher: none' || fail "mux master did not switch"
lfn_ssh "$LFN_TREE" "$p" -S "$ctl" -tt lfnpeer "echo tty-ok" < /dev/null > "$T/out" 2>/dev/null || fail "mux tty session failed"
grep -q tty-ok "$T/out" || fail "mux tty session output missing"
sleep 0.3
grep -q 're-keying to encrypt the session again' "$T/master.log" || fail "master did not re-encrypt for the tty session"
grep 'kex: client->server cipher:' "$T/master.log" | tail -1 | grep -q 'cipher: none' && fail "still cipher none after a tty session"
grep -q 'encryption re-enabled' "$slog" || fail "sshd did not log re-encryption"
rm -f "$T/down"
lfn_ssh "$LFN_TREE" "$p" -S "$ctl" lfnpeer "cat $T/data" > "$T/down" || fail "mux session after re-encryption failed"
cmp -s "$T/data" "$T/down" || fail "mux download after re-encryption corrupted"
"$LFN_TREE/ssh" -S "$ctl" -O exit x 2>/dev/null

if [ -x "$STOCK_TREE/sshd" ]; then
	tid "interop: lfn client NoneEnabled -> stock sshd (stays encrypted, one notice)"
	ps=$(lfn_free_port)
	lfn_sshd_start "$STOCK_TREE" "$ps" < /dev/null
	rm -f "$T/down"
	lfn_ssh "$LFN_TREE" "$ps" -v -oNoneEnabled=yes lfnpeer "cat $T/data" > "$T/down" 2> "$T/err" || fail "connection failed"
	cmp -s "$T/data" "$T/down" || fail "download corrupted"
	[ "$(grep -c 'server does not permit the none cipher' "$T/err")" = 1 ] || fail "no single refusal notice"
	grep 'kex: client->server cipher:' "$T/err" | grep -q 'cipher: none' && fail "switched with stock sshd"
	lfn_scp "$LFN_TREE" "$ps" -q -oNoneEnabled=yes "$T/data" "lfnpeer:$T/up2" 2>/dev/null || fail "scp to stock failed"
	cmp -s "$T/data" "$T/up2" || fail "scp to stock corrupted"

	tid "interop: refused switch, then rekeys (client and stock sshd RekeyLimit 1M)"
	ps2=$(lfn_free_port)
	lfn_sshd_start "$STOCK_TREE" "$ps2" <<< "RekeyLimit 1M"
	refused_rekeys "$ps2" "stock sshd" "$SSHD_LOG"

	tid "interop: stock client -> lfn sshd NoneEnabled (never switches)"
	n0=$(switched); rm -f "$T/down"
	lfn_ssh "$STOCK_TREE" "$p" lfnpeer "cat $T/data" > "$T/down" || fail "connection failed"
	cmp -s "$T/data" "$T/down" || fail "download corrupted"
	sleep 0.2; [ "$(switched)" = "$n0" ] || fail "stock client switched"
else
	verbose "stock build missing: stock interop skipped"
fi
if [ -x /usr/bin/ssh ]; then
	tid "interop: system ssh ($(/usr/bin/ssh -V 2>&1 | cut -d, -f1)) -> lfn sshd NoneEnabled"
	n0=$(switched); rm -f "$T/down"
	/usr/bin/ssh -F "$T/ssh_config" -p "$p" -o HostKeyAlias=lfnpeer 127.0.0.1 "cat $T/data" > "$T/down" || fail "connection failed"
	cmp -s "$T/data" "$T/down" || fail "download corrupted"
	sleep 0.2; [ "$(switched)" = "$n0" ] || fail "system ssh switched"
fi
# Debian's sshd (Debian 12: 9.2p1, regress-bench/lib/debian-sshd;
# LFN_SYSTEM_SSHD=PATH to use another) as the server: the switch is
# refused, rekeys on both sides stay clean.
DEBIAN_SSHD=$("$LFN_TOP/regress-bench/lib/debian-sshd" path || true)
if [ -n "$DEBIAN_SSHD" ] && [ -x "$DEBIAN_SSHD" ] && [ "$(id -u)" = 0 ]; then
	tid "interop: lfn client NoneEnabled -> system sshd ($("$DEBIAN_SSHD" -V 2>&1 | cut -d, -f1)), rekeys both sides"
	pq=$(lfn_free_port)
	lfn_debian_sshd_start "$pq" <<-EOF
	RekeyLimit 1M
	Subsystem sftp internal-sftp
	EOF
	refused_rekeys "$pq" "the system sshd" "$DEBIAN_SSHD_LOG"
	lfn_sftp "$LFN_TREE" "$pq" -q -oNoneEnabled=yes -b - lfnpeer > /dev/null 2>&1 <<< "get $T/data $T/down2" ||
		fail "sftp from the system sshd failed"
	cmp -s "$T/data" "$T/down2" || fail "sftp download corrupted"
else
	verbose "no system sshd ($DEBIAN_SSHD) or not root: system sshd interop skipped"
fi
lfn_finish
