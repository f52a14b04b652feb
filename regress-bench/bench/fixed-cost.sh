#!/usr/bin/env bash
# fixed-cost.sh [RTT_MS] [RATE]: what a tool costs before and after its
# bytes, on an emulated link: wall time of `ssh true` against zero-byte
# transfers with scp (SFTP mode) and sftp, openssh-lfn on both ends, 3 runs.
# The difference is SFTP's own round trips (version, limits@openssh.com,
# stat, open, fsetstat, close, ...), which `make bench` does not subtract
# (its setup is `ssh true`).  Needs root (network namespaces).
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
rtt=${1:-200} rate=${2:-1gbit}
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init fixed-cost
lfn_wan_link fc$$ "$rtt" "$rate"
# an empty HOME: Debian's bash sources ~/.bashrc under sshd (see bench.py)
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "PermitUserEnvironment HOME"
: > "$T/empty"
echo "put $T/empty /dev/null" > "$T/put"; echo "get $T/empty /dev/null" > "$T/get"
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'; }
c=(-n "$NA" -h "$ADDR" "$port")
for i in 1 2 3; do
	a=$(secs lfn_ssh "$LFN_TREE" "${c[@]}" lfnpeer true < /dev/null)
	b=$(secs lfn_scp "$LFN_TREE" "${c[@]}" -q "$T/empty" lfnpeer:/dev/null < /dev/null)
	d=$(secs lfn_scp "$LFN_TREE" "${c[@]}" -q "lfnpeer:$T/empty" /dev/null < /dev/null)
	e=$(secs lfn_sftp "$LFN_TREE" "${c[@]}" -q -b - lfnpeer < "$T/put")
	f=$(secs lfn_sftp "$LFN_TREE" "${c[@]}" -q -b - lfnpeer < "$T/get")
	printf 'rtt %s ms: ssh-true %.2f  scp-up0 %.2f  scp-down0 %.2f  sftp-put0 %.2f  sftp-get0 %.2f s\n' \
	    "$rtt" "$a" "$b" "$d" "$e" "$f"
done
