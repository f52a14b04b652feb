#!/usr/bin/env bash
# sftp-download-end: a download's CLOSE goes right behind its read at the
# expected end (0246), so its status comes with the EOF's, one round trip
# sooner for each scp download and sftp get.  Read from the client's -vvv
# log (exact, no timing): the close is sent before the EOF arrives.  A
# file that is not what its stat said still comes whole: a server that
# reports sizes 100000 bytes too small (a file that grew after its stat:
# the reads past the "end" go out on the file opened again), and one whose
# reply to the exact last block is short (the rest is asked for on the
# file opened again); every copy is compared byte for byte, with our
# sftp-server and Debian's.
# (Old numbers: 0240 and 0243 are now in 0208, 0209, 0241 and 0245 in
# 0210, as are 0211 and 0246; folded 2026-11-28, renumbered 2026-12-07:
# doc/patches.md#old-numbers.)
# Patches: 0210
. "$(dirname "$0")/../lib/sshenv.sh"
SYS_SFTP_SERVER=/usr/lib/openssh/sftp-server

trap 'lfn_cleanup' EXIT
lfn_env_init sftp-download-end
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" <<< "PermitUserEnvironment HOME"
head -c 10240 /dev/urandom > "$T/f10k"
head -c 5000000 /dev/urandom > "$T/f5m"
: > "$T/empty"

tid "scp down, sftp get: the close goes out before the EOF comes back"
for f in f10k f5m; do
	rm -f "$T/down"
	lfn_scp "$LFN_TREE" "$p_lfn" -vvv "lfnpeer:$T/$f" "$T/down" 2> "$T/scp-$f.log" || fail "scp $f failed"
	cmp -s "$T/$f" "$T/down" || fail "scp $f corrupted"
	first_before "$T/scp-$f.log" "Sent message fd [0-9]* T:4 " "Received reply T:101 " ||
		fail "scp $f: the close waited for the EOF"
	grep -q "opened again" "$T/scp-$f.log" && fail "scp $f: opened again although the file was as its stat said"
done
rm -f "$T/get" "$T/get0"
printf 'get %s %s\nget %s %s\n' "$T/f5m" "$T/get" "$T/empty" "$T/get0" > "$T/batch"
lfn_sftp "$LFN_TREE" "$p_lfn" -vvv -b "$T/batch" lfnpeer > /dev/null 2> "$T/get.log" < /dev/null ||
	fail "sftp get failed"
cmp -s "$T/f5m" "$T/get" || fail "sftp get corrupted"
[ -f "$T/get0" ] && [ ! -s "$T/get0" ] || fail "empty file not downloaded empty"
first_before "$T/get.log" "Sent message fd [0-9]* T:4 " "Received reply T:101 " ||
	fail "sftp get: the close waited for the EOF"

for srv in lfn sys; do
	sftp_server=$LFN_TREE/sftp-server
	if [ $srv = sys ]; then
		[ -x "$SYS_SFTP_SERVER" ] || { verbose "no $SYS_SFTP_SERVER: system sftp-server part not run"; continue; }
		sftp_server=$SYS_SFTP_SERVER
	fi
	for mode in smaller short; do
		tid "a file other than its stat said ($mode, $srv sftp-server): whole, on the file opened again"
		port=$(lfn_free_port)
		lfn_sshd_config "$LFN_TREE" "$port" <<< "PermitUserEnvironment HOME" |
			sed "s|^Subsystem sftp .*|Subsystem sftp /usr/bin/python3 $LFN_TOP/regress-bench/lib/sftp-reply-shaper.py $mode $sftp_server|" \
			> "$T/sshd_config.$mode.$srv"
		_lfn_sshd_run "shaping sshd" "$port" "$T/sshd.$mode.$srv.log" "" "$LFN_TREE/sshd" -D -e -f "$T/sshd_config.$mode.$srv"
		for f in f10k f5m; do
			[ $mode = smaller ] && [ $f = f10k ] && continue	# (its size would be < 0)
			rm -f "$T/down"
			lfn_scp "$LFN_TREE" "$port" -vvv "lfnpeer:$T/$f" "$T/down" 2> "$T/$mode-$f.log" ||
				fail "scp $f failed: $(grep -v debug "$T/$mode-$f.log" | tail -2)"
			cmp -s "$T/$f" "$T/down" || fail "scp $f: not the whole file ($(stat -c %s "$T/down" 2>/dev/null) bytes)"
			grep -q "opened again" "$T/$mode-$f.log" || fail "scp $f: the rest was not read on the file opened again"
		done
	done
done

lfn_finish
