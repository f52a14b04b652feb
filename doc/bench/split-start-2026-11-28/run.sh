#!/bin/bash
# usage: cmp.sh N VARIANTS DIRS [cc]
set -u
N=$1 VARS=$2 DIRS=$3 CC=${4:-cubic}
LFN_TOP=/work/main; export LFN_TOP
LFN_TREE=/work/main/build/series; export LFN_TREE
. $LFN_TOP/regress-bench/lib/sshenv.sh
lfn_env_init exp6
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_wan_link exp6 100 1gbit --loss ${LOSS:-1e-4}
for p in "$NA:198.18.0.2" "$NB:198.18.0.1"; do r=$(ip -n ${p%%:*} route show ${p#*:}/32); ip -n ${p%%:*} route replace $r congctl $CC; done
mkdir -p $T/home; sed -i "s|^|environment=\"HOME=$T/home\" |" $T/authorized_keys
lfn_sshd_start "$LFN_TREE" 22 "$NB" <<< "PermitUserEnvironment HOME"
mkdir -p /tmp/exp/dst
for i in $(seq 1 $N); do
  for v in $VARS; do for d in $DIRS; do
    t0=$(date +%s.%N)
    if [ $d = up ]; then
      lfn_scp /tmp/exp/tree$v -n $NA -h $ADDR 22 -q -X connections=4 /tmp/exp/data lfnpeer:/tmp/exp/dst/f
    else
      lfn_scp /tmp/exp/tree$v -n $NA -h $ADDR 22 -q -X connections=4 lfnpeer:/tmp/exp/data /tmp/exp/dst/g
    fi
    rc=$?; t1=$(date +%s.%N)
    echo "$v $d $i rc=$rc $(echo "$t1 - $t0" | bc)"
    rm -f /tmp/exp/dst/f /tmp/exp/dst/g
  done; done
done
