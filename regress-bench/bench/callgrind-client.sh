#!/usr/bin/env bash
# callgrind-client.sh [MIB] [CIPHER]: instructions the ssh client executes
# for one upload of MIB (default 64) MiB of random data, `ssh -c CIPHER
# host 'cat > /dev/null'` (default chacha20-poly1305@openssh.com), counted
# by valgrind's callgrind: repeatable, unlike times, so the way to see a
# CPU fast path on a shared machine.  One client per tree in TREES
# ("NAME=TREE ...", default stock=$STOCK_TREE lfn=$LFN_TREE; a tree built
# without a patch makes an A/B), each against the same sshd ($LFN_TREE's)
# on loopback, no emulated link.  Prints per client the total instructions
# (Ir) and the inclusive Ir of the functions in FUNCS (default: the
# Poly1305 entry points, upstream's poly1305_auth and libcrypto's EVP_MAC
# calls that 0301 uses), in millions; keeps the callgrind.out files and
# callgrind_annotate's output in OUT (default build/bench/callgrind-<UTC>).
# Needs valgrind (apt-get install valgrind) and a free port; not root.
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
command -v valgrind >/dev/null || lfn_die "needs valgrind (apt-get install -y valgrind)"
mib=${1:-64} cipher=${2:-chacha20-poly1305@openssh.com}
TREES=${TREES:-"stock=$STOCK_TREE lfn=$LFN_TREE"}
FUNCS=${FUNCS:-"poly1305_auth EVP_MAC_init EVP_MAC_update EVP_MAC_final"}
OUT=${OUT:-$LFN_TOP/build/bench/callgrind-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
trap 'lfn_cleanup' EXIT
lfn_env_init callgrind
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port"
head -c $((mib * 1024 * 1024)) /dev/urandom > "$T/data"
printf 'client upload of %s MiB, %s, loopback, sshd %s\n' "$mib" "$cipher" "$LFN_TREE"
printf '%-10s %12s' client "total Ir (M)"
for f in $FUNCS; do printf ' %16s' "$f"; done; echo
for nt in $TREES; do
	name=${nt%%=*} tree=${nt#*=}
	valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.$name" \
	    "$tree/ssh" -F "$T/ssh_config" -p "$port" -o HostKeyAlias=lfnpeer \
	    -o HostName=127.0.0.1 -c "$cipher" lfnpeer 'cat > /dev/null' \
	    < "$T/data" 2> "$OUT/valgrind.$name.log" || lfn_die "$name: ssh failed (see $OUT/valgrind.$name.log)"
	callgrind_annotate --inclusive=yes --threshold=100 "$OUT/callgrind.out.$name" \
	    > "$OUT/annotate.$name.txt" 2>/dev/null
	total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$OUT/annotate.$name.txt")
	printf '%-10s %12.1f' "$name" "$(awk -v t="${total:-0}" 'BEGIN { print t / 1e6 }')"
	for f in $FUNCS; do
		# inclusive Ir of the lines naming the function with its object
		# ("file:function [object]"; annotate also prints each without)
		v=$(awk -v f="$f" '/\]$/ { n = $0; sub(/^[ \t]*[0-9,]+ +(\([^)]*\) +)?/, "", n); sub(/ .*/, "", n);
		    k = n; sub(/^.*:/, "", k); if (k == f) { x = $1; gsub(",", "", x); s += x } }
		    END { print s / 1e6 }' "$OUT/annotate.$name.txt")
		printf ' %16.1f' "$v"
	done; echo
done
echo "files: $OUT"
