#!/bin/bash
# A/B: scp -X connections=4 upload, CUBIC, 1gbit/100ms/loss
set -u
cd "$(dirname "$0")/../../.."   # the checkout
LOSS=${LOSS:-1e-4}; RUNS=${RUNS:-4}; SIZE=${SIZE:-384}
W=regress-bench/wanemu
$W/wanemu-up -n tl --rtt 100 --rate 1gbit --loss $LOSS --replace --quiet || exit 1
modprobe tcp_cubic 2>/dev/null
for pair in "lfn-tl-a 198.18.0.2" "lfn-tl-b 198.18.0.1"; do set -- $pair
  cur=$(ip -n $1 route show $2/32); ip -n $1 route replace $cur congctl ${CC:-cubic} || exit 1
  ip -n $1 route show $2/32; done
. regress-bench/lib/sshenv.sh
LFN_TREE=/work/main/build/series
lfn_env_init tailab
trap 'lfn_cleanup; regress-bench/wanemu/wanemu-down -n tl --quiet' EXIT
lfn_sshd_start /work/main/build/series 22022 lfn-tl-b
[ -f /tmp/tail/src ] || head -c ${SIZE}M /dev/urandom > /tmp/tail/src
for r in $(seq 1 $RUNS); do
  for t in ${ORDER:-A B}; do
    rm -f /tmp/tail/dst
    s=$(date +%s.%N)
    if [ "${DIR:-up}" = up ]; then
    lfn_scp /tmp/ab$t -n lfn-tl-a -h 198.18.0.2 22022 -v -X connections=${NC:-4} /tmp/tail/src lfnpeer:/tmp/tail/dst 2>/tmp/tail/log.$t.$r
    else
    lfn_scp /tmp/ab$t -n lfn-tl-a -h 198.18.0.2 22022 -v -X connections=${NC:-4} lfnpeer:/tmp/tail/src /tmp/tail/dst 2>/tmp/tail/log.$t.$r
    fi
    rc=$?
    e=$(date +%s.%N)
    cmp -s /tmp/tail/src /tmp/tail/dst || echo "MISMATCH $t $r"
    tails=$(grep TAILDIAG /tmp/tail/log.$t.$r | awk '{print $8":"$10}' | sort -n | tr '\n' ' ')
    echo "$t run$r rc=$rc wall=$(echo "$e - $s" | bc) dones: $tails"
  done
done
