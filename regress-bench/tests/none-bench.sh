#!/usr/bin/env bash
# none-bench: NoneEnabled throughput (patch 0401); a benchmark, not a test:
# skipped unless LFN_BENCH=1.  Loopback, one connection each, LFN_BENCH_MB
# (default 2048) MiB of random data uploaded with `ssh host 'cat >/dev/null'`:
#   stock aes128-gcm, lfn aes128-gcm, lfn none + umac-64-etm, raw TCP
#   (MAC none is no longer possible: NoneMacEnabled is ignored).
# Prints MB/s and CPU seconds per GB for the client (ssh, rusage via bash's
# time) and the server (the post-auth sshd-session, from its
# /proc stat read by the remote command when the data is in).
# LFN_BENCH_RUNS (default 3) runs each; the median MB/s run is reported.
# Patches: 0401
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
[ "${LFN_BENCH:-0}" = 1 ] || { echo "benchmark: set LFN_BENCH=1 to run"; exit 77; }
lfn_env_init none-bench
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }
mb=${LFN_BENCH_MB:-2048}; runs=${LFN_BENCH_RUNS:-3}
data=${LFN_BENCH_DATA:-/dev/shm/lfn-none-bench.$$}
dd if=/dev/urandom of="$data" bs=1M count="$mb" status=none || lfn_die "no space for $mb MiB"
trap 'rm -f "$data"; lfn_cleanup' EXIT
bytes=$((mb * 1024 * 1024)); hz=$(getconf CLK_TCK)

p_stock=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stock" <<< "LogLevel ERROR"
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" <<EOF
LogLevel ERROR
NoneEnabled yes
EOF

# timeit FILE CMD...: "wall user sys" of CMD (and its children) into FILE.
timeit() { local f=$1 TIMEFORMAT='%R %U %S'; shift; { time "$@" 2>/dev/null; } 2> "$f"; }
# one TREE PORT ARGS...: prints "MB/s client_cpu_s_per_GB server_cpu_s_per_GB"
one() {
	local tree=$1 port=$2; shift 2
	timeit "$T/time" \
	    "$tree/ssh" -F "$T/ssh_config" -p "$port" -oHostKeyAlias=lfnpeer -oLogLevel=QUIET "$@" 127.0.0.1 \
	    'cat >/dev/null; cut -d" " -f14,15 /proc/$PPID/stat' < "$data" > "$T/srv" || { echo "fail"; return; }
	read -r wall cu cs < "$T/time"; read -r su ss < "$T/srv"
	awk -v b="$bytes" -v w="$wall" -v cu="$cu" -v cs="$cs" -v su="$su" -v ss="$ss" -v hz="$hz" \
	    'BEGIN { gb = b / 1e9; printf "%.0f %.2f %.2f\n", b / 1e6 / w, (cu + cs) / gb, (su + ss) / hz / gb }'
}
raw() {
	local rp; rp=$(lfn_free_port)
	python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); print("up", flush=True)
c, _ = s.accept(); buf = bytearray(1 << 20); n = 0
while True:
    k = c.recv_into(buf)
    if not k: break
    n += k
' "$rp" > "$T/raw.log" &
	local pid=$!
	for _ in $(seq 50); do grep -q up "$T/raw.log" && break; sleep 0.1; done
	timeit "$T/time" bash -c "cat '$data' > /dev/tcp/127.0.0.1/$rp"
	wait "$pid"
	read -r wall cu cs < "$T/time"
	awk -v b="$bytes" -v w="$wall" -v c="$cu" -v s="$cs" 'BEGIN { printf "%.0f %.2f -\n", b / 1e6 / w, (c + s) / (b / 1e9) }'
}
median() { sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }
bench() {	# bench LABEL CMD...
	local label=$1 i; shift
	for i in $(seq "$runs"); do "$@"; done > "$T/runs"
	printf '%-34s %s\n' "$label" "$(median < "$T/runs")"
	sed 's/^/    run: /' "$T/runs"
}
echo "# $mb MiB upload, loopback, median of $runs: MB/s  client-CPU-s/GB  server-CPU-s/GB"
bench "stock aes128-gcm" one "$STOCK_TREE" "$p_stock" -c aes128-gcm@openssh.com
bench "lfn aes128-gcm" one "$LFN_TREE" "$p_lfn" -c aes128-gcm@openssh.com
bench "lfn none + umac-64-etm" one "$LFN_TREE" "$p_lfn" -oNoneEnabled=yes
bench "raw TCP (bash /dev/tcp -> python)" raw
exit 0
