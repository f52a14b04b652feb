#!/usr/bin/env bash
# glob.sh: scp 'host:dir/*' and sftp get dir/* of 200 files of 10 kB
# at 1 Gbit/s x 100 ms, client WITHOUT (a build without 0272, also the
# server) against client WITH, 3 rounds interleaved.  Root (namespaces):
#   WITHOUT=TREE WITH=TREE regress-bench/bench/glob.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${WITHOUT:?a tree without 0272}" "${WITH:?a tree with 0272}"
. regress-bench/lib/sshenv.sh
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init glob
mkdir -p "$T/home" "$T/src"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
for i in $(seq 1 200); do head -c 10000 /dev/urandom > "$T/src/f$i"; done
lfn_wan_link gb$$ 100 1gbit
port=$(lfn_free_port)
lfn_sshd_start "$WITHOUT" "$port" "$NB" <<< "PermitUserEnvironment HOME"
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1 || echo FAILED >&2; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'; }
for r in 1 2 3; do
 for t in "$WITHOUT" "$WITH"; do
  rm -rf "$T/d"; mkdir "$T/d"
  a=$(secs lfn_scp "$t" -n "$NA" -h "$ADDR" "$port" -q "lfnpeer:$T/src/*" "$T/d/")
  [ "$(ls "$T/d" | wc -l)" = 200 ] || echo "scp: not 200 files"
  rm -rf "$T/d"; mkdir "$T/d"
  printf 'get %s/src/* %s/d/\n' "$T" "$T" > "$T/batch"
  b=$(secs lfn_sftp "$t" -n "$NA" -h "$ADDR" "$port" -q -b "$T/batch" lfnpeer)
  [ "$(ls "$T/d" | wc -l)" = 200 ] || echo "sftp: not 200 files"
  echo "round $r $t: scp 'host:dir/*' $a s, sftp get dir/* $b s"
 done
done
