#!/bin/bash
# sample ss -tin for the ssh connections in both namespaces during one split upload and download
cd "$(dirname "$0")/../../../.."   # the checkout
regress-bench/wanemu/wanemu-up -n tl --rtt 100 --rate 1gbit --loss 1e-4 --replace --quiet || exit 1
for pair in "lfn-tl-a 198.18.0.2" "lfn-tl-b 198.18.0.1"; do set -- $pair
  cur=$(ip -n $1 route show $2/32); ip -n $1 route replace $cur congctl cubic; done
. regress-bench/lib/sshenv.sh
lfn_env_init tailss
trap 'lfn_cleanup; regress-bench/wanemu/wanemu-down -n tl --quiet' EXIT
lfn_sshd_start /work/main/build/series 22022 lfn-tl-b
for dir in up down; do
 for r in 1 2; do
  rm -f /tmp/tail/dst
  if [ $dir = up ]; then ns=lfn-tl-a; else ns=lfn-tl-b; fi
  ( while :; do echo "T $(date +%s.%N)"; ip netns exec $ns ss -tin state established '( dport = :22022 or sport = :22022 )'; sleep 0.5; done ) > /tmp/tail/ss.$dir.$r 2>&1 &
  sp=$!
  s=$(date +%s.%N)
  if [ $dir = up ]; then
    lfn_scp /work/main/build/series -n lfn-tl-a -h 198.18.0.2 22022 -X connections=4 /tmp/tail/src lfnpeer:/tmp/tail/dst
  else
    lfn_scp /work/main/build/series -n lfn-tl-a -h 198.18.0.2 22022 -X connections=4 lfnpeer:/tmp/tail/src /tmp/tail/dst
  fi
  e=$(date +%s.%N); kill $sp
  echo "$dir $r wall $(echo "$e - $s" | bc)"
 done
done
