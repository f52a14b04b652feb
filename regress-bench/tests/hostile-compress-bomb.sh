#!/usr/bin/env bash
# hostile-compress-bomb: a hostile client (regress-bench/hostile/
# compress-bomb.py, paramiko) sends compressed SSH2_MSG_IGNORE packets after
# auth (patches 0303/0304):
#  - a 200 KiB one (below PACKET_MAX_SIZE, what any peer may send
#    uncompressed) must be accepted;
#  - two that inflate to 16 MiB each must get the client disconnected,
#    sshd logging "Decompressed packet too large";
#  - the sshd-session's VmRSS must not grow by 8 MiB or more (the old series
#    kept both inflated 16 MiB buffers for the connection's life).
# Patches: 0303 0304
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init hostile-compress-bomb
lfn_paramiko_python
PORT=$(lfn_free_port) || lfn_die "no free port"
lfn_sshd_start "$LFN_TREE" "$PORT" <<< "Compression yes"

tid "compressed IGNORE bomb after auth"
out=$("$PY" "$LFN_TOP/regress-bench/hostile/compress-bomb.py" --port "$PORT" \
	--user "$(id -un)" --key "$T/id_ed25519" --sshd-pid "$SSHD_PID" 2>"$T/bomb.err")
rc=$?
printf '%s\n' "$out" | sed 's/^/  /'
val() { printf '%s\n' "$out" | sed -n "s/^$1=//p" | tail -1; }
if [ $rc -ne 0 ]; then
	cat "$T/bomb.err"
	fail "hostile client failed (rc $rc): $(val error)"
else
	[ "$(val ok_accepted)" = yes ] ||
		fail "a compressed 200 KiB IGNORE was not accepted"
	[ "$(val alive)" = no ] ||
		fail "the connection survived IGNOREs inflating to 16 MiB"
	grep -q "Decompressed packet too large" "$SSHD_LOG" ||
		fail "sshd did not log why it disconnected"
	before=$(val rss_before_kb) after=$(val rss_after_kb)
	verbose "sshd-session VmRSS: ${before} kB after auth, ${after} kB after the bombs (-1: exited)"
	if [ "${after:--1}" -ge 0 ] && [ "${before:--1}" -ge 0 ] &&
	    [ $((after - before)) -ge 8192 ]; then
		fail "sshd-session grew by $((after - before)) kB"
	fi
fi
grep -E "Decompressed|Disconnect|protocol error" "$SSHD_LOG" | sed 's/^/  sshd: /' | head -5
lfn_finish
