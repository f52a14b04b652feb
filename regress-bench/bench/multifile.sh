#!/usr/bin/env bash
# multifile.sh TREE...: wall time of one `scp f1 ... f5 host:dir/` (5 x 10 kB)
# at 1 Gbit/s x 200 ms, client TREE against the lfn sshd, 3 rounds, trees
# interleaved.  Each further file of a multi-file upload costs its own round
# trips (open, write, fsetstat+close; stock: also the target's stat).
# Needs root (network namespaces).
set -u
cd "$(dirname "$0")/../.." || exit 1
[ $# -ge 1 ] || { sed -n '2,6p' "$0" >&2; exit 2; }
. regress-bench/lib/sshenv.sh
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init multi
lfn_wan_link mu$$ 200 1gbit
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "PermitUserEnvironment HOME"
for i in 1 2 3 4 5; do head -c 10000 /dev/urandom > "$T/f$i"; done
mkdir "$T/dst"
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'; }
for r in 1 2 3; do
	for t in "$@"; do
		x=$(secs lfn_scp "$t" -n "$NA" -h "$ADDR" "$port" -q "$T"/f1 "$T"/f2 "$T"/f3 "$T"/f4 "$T"/f5 "lfnpeer:$T/dst/" < /dev/null)
		echo "$t: scp 5 files up $x s"
	done
done
