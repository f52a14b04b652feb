#!/usr/bin/env bash
# Download-only same-run A/B of several trees: window-ab-down.sh RTT_MS RATE SIZE_MIB RUNS TREE...
. "$(dirname "$0")/../lib/sshenv.sh"
RTT=$1 RATE=$2 SIZE=$3 RUNS=$4; shift 4
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init ab-win2d
lfn_wan_link abd$$ "$RTT" "$RATE"
head -c $((SIZE << 20)) /dev/zero > "$T/data"
declare -A P
for tr in "$@"; do p=$(lfn_free_port); lfn_sshd_start "$tr" "$p" "$NB" < /dev/null; P[$tr]=$p; done
now() { date +%s.%N; }
for r in $(seq 1 "$RUNS"); do for tr in "$@"; do
	c() { lfn_ssh "$tr" -n "$NA" -h "$ADDR" "${P[$tr]}" "$@"; }
	t0=$(now); c lfnpeer true; t1=$(now); setup=$(echo "$t1 - $t0" | bc)
	t0=$(now); c -v lfnpeer "cat $T/data" 2> "$T/dl.log" > /dev/null; t1=$(now)
	w=$(grep -o 'receive window [0-9]* -> [0-9]*' "$T/dl.log" | awk '{ if ($5 > m) m = $5 } END { print m + 0 }')
	echo "run $r $(basename $tr) down $(echo "scale=1; $SIZE * 1.048576 / ($t1 - $t0 - $setup)" | bc) MB/s window $w"
done; done
