#!/usr/bin/env bash
set -u
cd /work/main
. regress-bench/lib/sshenv.sh
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init globbench
mkdir -p "$T/home" "$T/src"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
for i in $(seq 1 200); do head -c 10000 /dev/urandom > "$T/src/f$i"; done
lfn_wan_link gb$$ 100 1gbit
port=$(lfn_free_port)
lfn_sshd_start /tmp/bench-lfn3 "$port" "$NB" <<< "PermitUserEnvironment HOME"
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1 || echo FAILED >&2; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'; }
for r in 1 2 3; do
 for t in /tmp/bench-lfn3 /tmp/bench-glob; do
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
