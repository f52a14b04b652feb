#!/usr/bin/env bash
# foreign-clients: the clients users bring to a storage server work against
# openssh-lfn's sshd: PuTTY (pscp, psftp, plink; the SSH code of
# WinSCP and FileZilla), rclone (Go: x/crypto/ssh + pkg/sftp), Dropbear's
# dbclient, paramiko, asyncssh, and lftp over the system's ssh.  Each logs
# in, puts, lists, gets, renames and removes a file, runs a command, and
# fails (nonzero, nothing left behind) on a file that is not there, against
# sshd with its default configuration and with `NoneEnabled yes` (the none
# cipher is simply not used with them).  Then PuTTY's pscp uploads over an
# emulated 1 Gbit/s x 100 ms link, where openssh-lfn's large windows let it
# send requests far faster than one per read: the upload is intact and the
# server's sftp-server queued no backlog (peak resident set a few MiB; 0104:
# without it the queue grew to tens of MB and the upload crawled at 1-4 MB/s).
# Clients: lib/foreign-client.  0401 for NoneEnabled.
# Patches: 0104 0401
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init foreign-clients
FC="$LFN_TOP/regress-bench/lib/foreign-client"
for p in pscp psftp plink puttygen rclone dbclient dropbearconvert lftp; do
	command -v "$p" >/dev/null || lfn_die "$p missing: run ./install-deps"
done
/usr/bin/python3 -c 'import paramiko, asyncssh' 2>/dev/null ||
	lfn_die "python3-paramiko or python3-asyncssh missing: run ./install-deps"
export FC_DIR="$T/fc" FC_HOST=127.0.0.1 FC_USER=$(id -un) FC_SSH_CONFIG="$T/ssh_config" FC_NS=
"$FC" keys "$FC_DIR" "$T/id_ed25519" "$T/host_ed25519.pub" || lfn_die "client keys"
dd if=/dev/urandom of="$T/data" bs=1k count=1500 status=none
CLIENTS="pscp psftp rclone dropbear paramiko asyncssh lftp"

# exercise CLIENT DIR: the whole round on the server's directory DIR
exercise() {
	local c=$1 d=$2 out
	mkdir -p "$d"
	"$FC" "$c" put "$T/data" "$d/up.bin" > "$T/$c.out" 2>&1 || { fail "$c: put: $(tail -3 "$T/$c.out")"; return; }
	cmp -s "$T/data" "$d/up.bin" || fail "$c: put: the server's copy differs"
	out=$("$FC" "$c" ls "$d" 2> "$T/$c.err") || fail "$c: ls: $(tail -3 "$T/$c.err")"
	[ "$out" = up.bin ] || fail "$c: ls printed '$out', not up.bin"
	rm -f "$T/got.$c"
	"$FC" "$c" get "$d/up.bin" "$T/got.$c" > "$T/$c.out" 2>&1 || fail "$c: get: $(tail -3 "$T/$c.out")"
	cmp -s "$T/data" "$T/got.$c" || fail "$c: get: the copy differs"
	"$FC" "$c" mv "$d/up.bin" "$d/moved.bin" > "$T/$c.out" 2>&1 || fail "$c: mv: $(tail -3 "$T/$c.out")"
	[ -f "$d/moved.bin" ] && [ ! -e "$d/up.bin" ] || fail "$c: mv did not rename"
	"$FC" "$c" rm "$d/moved.bin" > "$T/$c.out" 2>&1 || fail "$c: rm: $(tail -3 "$T/$c.out")"
	[ ! -e "$d/moved.bin" ] || fail "$c: rm left the file"
	if [ "$c" = rclone ]; then
		# the command rclone runs: md5sum, on the server
		cp "$T/data" "$d/sum.bin"
		out=$("$FC" "$c" cmd "$d/sum.bin" 2> "$T/$c.err") || fail "$c: md5sum: $(tail -3 "$T/$c.err")"
		[ "${out%% *}" = "$(md5sum < "$T/data" | cut -d' ' -f1)" ] || fail "$c: md5sum printed '$out'"
		rm -f "$d/sum.bin"
	elif [ "$c" != lftp ]; then
		out=$("$FC" "$c" cmd "echo cmd-ok-$c" 2> "$T/$c.err") || fail "$c: command: $(tail -3 "$T/$c.err")"
		[ "$(printf '%s' "$out" | tr -d '\r')" = "cmd-ok-$c" ] || fail "$c: command printed '$out'"
	fi
	rm -f "$T/got.$c"
	"$FC" "$c" get "$d/not-there" "$T/got.$c" > "$T/$c.out" 2>&1 &&
		fail "$c: get of a missing file exited 0"
	[ -s "$T/got.$c" ] && fail "$c: get of a missing file left data"
	rmdir "$d" 2>/dev/null || fail "$c: left files in $d: $(ls -A "$d")"
}

for cfg in default none; do
	export FC_PORT=$(lfn_free_port)
	if [ $cfg = none ]; then
		lfn_sshd_start "$LFN_TREE" "$FC_PORT" <<< "NoneEnabled yes"
	else
		lfn_sshd_start "$LFN_TREE" "$FC_PORT" < /dev/null
	fi
	for c in $CLIENTS; do
		tid "$c against openssh-lfn's sshd ($cfg): put, ls, get, mv, rm, a command, a missing file"
		exercise "$c" "$T/srv/$cfg/$c"
	done
	lfn_cleanup
done

tid "pscp upload over 1 Gbit/s x 100 ms: intact, sftp-server queued no backlog"
lfn_env_init foreign-clients-link
export FC_DIR="$T/fc"; "$FC" keys "$FC_DIR" "$T/id_ed25519" "$T/host_ed25519.pub" || lfn_die "client keys"
lfn_wan_link fc$$ 100 1gbit
export FC_HOST=$ADDR FC_NS=$NA FC_PORT=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$FC_PORT" "$NB" < /dev/null
dd if=/dev/urandom of="$T/big" bs=1M count=48 status=none
mkdir -p "$T/srv"
"$FC" pscp put "$T/big" "$T/srv/big" > "$T/pscp.out" 2>&1 &
up=$!
hwm=0
while kill -0 $up 2>/dev/null; do
	for p in $(lfn_descendants "$SSHD_PID"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = sftp-server ] || continue
		h=$(awk '/^VmHWM:/ {print $2}' /proc/$p/status 2>/dev/null)
		[ -n "$h" ] && [ "$h" -gt $hwm ] && hwm=$h
	done
	sleep 0.1
done
wait $up || fail "pscp upload failed: $(tail -3 "$T/pscp.out")"
cmp -s "$T/big" "$T/srv/big" || fail "pscp upload: the server's copy differs"
verbose "sftp-server's peak resident set during the upload: $hwm KiB"
[ "$hwm" -gt 0 ] || fail "never saw the upload's sftp-server"
# (an AddressSanitizer build, make check-sanitize, starts near 14 MiB: its
# shadow memory and quarantine; a backlog still takes tens of MiB more)
limit=8192
grep -q __asan_init "$LFN_TREE/sftp-server" 2>/dev/null && limit=32768
[ "$hwm" -le $limit ] || fail "sftp-server peaked at $hwm KiB: it queued a backlog of requests"
lfn_finish
