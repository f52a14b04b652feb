#!/usr/bin/env bash
# hostile-compress-bomb-client: the reverse of hostile-compress-bomb: a
# hostile server (regress-bench/hostile/compress-bomb-server.py, paramiko)
# sends compressed SSH2_MSG_IGNORE packets to `ssh -C` once the session
# runs (patches 0303/0304):
#  - a 200 KiB one must be accepted;
#  - two that inflate to 16 MiB each must make ssh disconnect, saying
#    "Decompressed packet too large" (the old series kept running with both
#    16 MiB buffers; its VmRSS is printed).
# Patches: 0303 0304
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init hostile-compress-bomb-client
lfn_paramiko_python
PORT=$(lfn_free_port) || lfn_die "no free port"

tid "compressed IGNORE bomb from the server"
"$PY" "$LFN_TOP/regress-bench/hostile/compress-bomb-server.py" --port "$PORT" \
	--host-key "$T/host_ed25519" > "$T/server.out" 2> "$T/server.err" &
SRV_PID=$!; LFN_PIDS+=("$SRV_PID")
for _ in $(seq 1 100); do grep -q listening "$T/server.out" && break; sleep 0.1; done
lfn_ssh "$LFN_TREE" "$PORT" -C -o LogLevel=INFO lfnpeer true \
	> "$T/ssh.out" 2> "$T/ssh.err" &
SSH_PID=$!; LFN_PIDS+=("$SSH_PID")
for _ in $(seq 1 300); do
	grep -q -e bombs_sent -e error= "$T/server.out" && break
	kill -0 "$SRV_PID" 2>/dev/null || break
	sleep 0.1
done
sleep 2
# $SSH_PID is the subshell running lfn_ssh: the ssh is its child
rss=""
for p in $(ps -o pid= --ppid "$SSH_PID" 2>/dev/null); do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = ssh ] &&
		rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$p/status")
done
wait "$SRV_PID"
sed 's/^/  server: /' "$T/server.out"
sed 's/^/  ssh: /' "$T/ssh.err" | head -5
val() { sed -n "s/^$1=//p" "$T/server.out" | tail -1; }
if [ -n "$(val error)" ] || ! grep -q bombs_sent "$T/server.out"; then
	cat "$T/server.err"
	fail "hostile server failed: $(val error)"
else
	[ "$(val compression)" = zlib@openssh.com ] ||
		fail "no delayed compression negotiated ($(val compression))"
	[ "$(val ok_alive)" = yes ] ||
		fail "a compressed 200 KiB IGNORE was not accepted"
	[ -z "$rss" ] || fail "ssh still runs after IGNOREs inflating to 16 MiB (VmRSS $rss kB)"
	[ "$(val alive_after)" = no ] || fail "the connection survived the bombs"
	grep -q "Decompressed packet too large" "$T/ssh.err" ||
		fail "ssh did not say why it disconnected"
fi
lfn_finish
