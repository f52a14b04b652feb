#!/usr/bin/env bash
# Same-run A/B of two trees (lfn client -> lfn sshd and back) on one
# emulated link (root): window-ab.sh TREE_A TREE_B RTT_MS RATE SIZE_MIB RUNS
# Prints per run: tree dir MB/s (net of `ssh true`) and the largest window.
. "$(dirname "$0")/../lib/sshenv.sh"
A=$1 B=$2 RTT=$3 RATE=$4 SIZE=$5 RUNS=${6:-2}
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init ab-win2
lfn_wan_link ab$$ "$RTT" "$RATE"
head -c $((SIZE << 20)) /dev/zero > "$T/data"
pa=$(lfn_free_port); lfn_sshd_start "$A" "$pa" "$NB" < /dev/null; la=$SSHD_LOG
pb=$(( pa + 1 )); lfn_sshd_start "$B" "$pb" "$NB" < /dev/null; lb=$SSHD_LOG
now() { date +%s.%N; }
for r in $(seq 1 "$RUNS"); do
	for t in A B; do
		if [ $t = A ]; then tree=$A port=$pa log=$la; else tree=$B port=$pb log=$lb; fi
		c() { lfn_ssh "$tree" -n "$NA" -h "$ADDR" "$port" "$@"; }
		t0=$(now); c lfnpeer true; t1=$(now); setup=$(echo "$t1 - $t0" | bc)
		n=$(wc -l < "$log")
		t0=$(now); c lfnpeer "cat > /dev/null" < "$T/data"; t1=$(now)
		sleep 0.3
		w=$(tail -n +"$n" "$log" | grep -o 'receive window [0-9]* -> [0-9]*' | awk '{ if ($5 > m) m = $5 } END { print m + 0 }')
		echo "run $r $t up   $(echo "scale=1; $SIZE * 1.048576 / ($t1 - $t0 - $setup)" | bc) MB/s  setup ${setup}s  window $w"
		t0=$(now); c -v lfnpeer "cat $T/data" 2> "$T/dl.log" > /dev/null; t1=$(now)
		w=$(grep -o 'receive window [0-9]* -> [0-9]*' "$T/dl.log" | awk '{ if ($5 > m) m = $5 } END { print m + 0 }')
		echo "run $r $t down $(echo "scale=1; $SIZE * 1.048576 / ($t1 - $t0 - $setup)" | bc) MB/s  setup ${setup}s  window $w"
	done
done
