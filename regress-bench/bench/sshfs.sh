#!/usr/bin/env bash
# sshfs.sh [RTT_MS] [SIZE_MIB]: what limits an sshfs download over a long
# fat link, and which client setting lifts it.  One file of SIZE_MIB (256)
# random MiB is read through an sshfs mount (Debian's sshfs 3.x, with
# openssh-lfn's ssh as -o ssh_command) over 1 Gbit/s x RTT_MS (100), once
# per setting: sshfs options, the mount's kernel read-ahead
# (/sys/class/bdi/MAJ:MIN/read_ahead_kb), FUSE's max_background
# (/sys/fs/fuse/connections/N/max_background) and the reader (cat, dd with
# a block size).  Each setting mounts afresh (nothing cached), reads the
# whole file, compares its checksum and unmounts (fusermount -u).  sshfs,
# the reader and the mount live in the client's namespace (ip netns exec).
#   SETTINGS="name|server|sshfs -o options|read_ahead_kb|max_background|reader;..."
#   (server lfn or stock; empty fields = the default; reader cat, cp or ddBS)
# overrides the list below.  Prints one line per setting and writes
# OUT/results.tsv (OUT: build/bench/sshfs-<UTC timestamp>).  Needs root,
# sshfs (apt-get install sshfs) and /dev/fuse.
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
rtt=${1:-100} mib=${2:-256}
command -v sshfs > /dev/null || lfn_die "sshfs not installed (apt-get install sshfs)"
[ -c /dev/fuse ] || lfn_die "no /dev/fuse"
OUT=${OUT:-build/bench/sshfs-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
SETTINGS=${SETTINGS:-"\
default|lfn||||cat;\
default, dd bs=1M|lfn||||dd1M;\
max_conns=4|lfn|max_conns=4|||cat;\
max_read=65536|lfn|max_read=65536|||cat;\
kernel_cache|lfn|kernel_cache|||cat;\
direct_io, dd bs=1M|lfn|direct_io|||dd1M;\
direct_io, dd bs=16M|lfn|direct_io|||dd16M;\
max_readahead=16M (libfuse)|lfn|max_readahead=16777216|||cat;\
read_ahead_kb=1024|lfn||1024||cat;\
read_ahead_kb=4096|lfn||4096||cat;\
read_ahead_kb=16384|lfn||16384||cat;\
read_ahead_kb=16384, cp|lfn||16384||cp;\
read_ahead_kb=16384, dd bs=1M|lfn||16384||dd1M;\
read_ahead_kb=65536|lfn||65536||cat;\
read_ahead_kb=16384, max_background=64|lfn||16384|64|cat;\
read_ahead_kb=16384, max_conns=4|lfn|max_conns=4|16384||cat;\
default|stock||||cat;\
read_ahead_kb=16384|stock||16384||cat"}
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init sshfs
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
lfn_wan_link sf$$ "$rtt" 1gbit
declare -A PORT
for server in lfn stock; do
	case $server in lfn) tree=$LFN_TREE ;; stock) tree=$STOCK_TREE ;; esac
	PORT[$server]=$(lfn_free_port)
	lfn_sshd_start "$tree" "${PORT[$server]}" "$NB" <<< "PermitUserEnvironment HOME"
done
mkdir -p "$T/data" "$T/mnt"
head -c $((mib << 20)) /dev/urandom > "$T/data/f"
sum=$(md5sum < "$T/data/f")
{
	echo "date: $(date -u +%FT%TZ); link 1gbit x $rtt ms; $mib MiB"
	echo "load before: $(cat /proc/loadavg)"
	echo "sshfs: $(sshfs --version 2>&1 | tr '\n' ';')"
	echo "ssh (client, ssh_command): $("$LFN_TREE/ssh" -V 2>&1); kernel $(uname -r)"
} | tee "$OUT/machine.txt"
printf 'setting\tserver\toptions\tread_ahead_kb\tmax_background\treader\tseconds\tMB_s\tok\n' > "$OUT/results.tsv"

# the worker: runs inside the client's namespace (its own mount namespace:
# ip netns exec), mounts, tunes, reads, unmounts; prints "RA BG SECONDS OK"
worker='
set -u
M=$1 opts=$2 ra=$3 bg=$4 reader=$5 f=$6 sum=$7
sshfs lfnpeer:"$(dirname "$f")" "$M" -o "ssh_command=$SSHCMD" ${opts:+-o "$opts"} || exit 1
dev=$(mountpoint -d "$M")
[ -n "$ra" ] && echo "$ra" > /sys/class/bdi/$dev/read_ahead_kb
mountpoint -q /sys/fs/fuse/connections || mount -t fusectl none /sys/fs/fuse/connections
c=/sys/fs/fuse/connections/${dev#*:}
[ -n "$bg" ] && echo "$bg" > $c/max_background
stat "$M/$(basename "$f")" > /dev/null
s=$(date +%s.%N)
case $reader in
cat) cat "$M/$(basename "$f")" ;;
cp) cp "$M/$(basename "$f")" /dev/stdout ;;
dd*) dd if="$M/$(basename "$f")" bs=${reader#dd} status=none ;;
esac | md5sum > "$M.sum"
e=$(date +%s.%N)
ok=FAILED; [ "$(cat "$M.sum")" = "$sum" ] && ok=ok
echo "$(cat /sys/class/bdi/$dev/read_ahead_kb) $(cat $c/max_background) $(awk -v s=$s -v e=$e "BEGIN { printf \"%.2f\", e - s }") $ok"
fusermount -u "$M"
'
IFS=';' read -ra rows <<< "$SETTINGS"
for row in "${rows[@]}"; do
	IFS='|' read -r name server opts ra bg reader <<< "$row"
	port=${PORT[$server]}
	case $server in lfn) tree=$LFN_TREE ;; stock) tree=$STOCK_TREE ;; esac
	sshcmd="$LFN_TREE/ssh -F $T/ssh_config -p $port -o HostKeyAlias=lfnpeer -o HostName=$ADDR"
	cat "$T/data/f" > /dev/null	# the server's copy in the page cache
	r=$(SSHCMD=$sshcmd timeout 300 ip netns exec "$NA" bash -c "$worker" worker \
	    "$T/mnt" "$opts" "$ra" "$bg" "$reader" "$T/data/f" "$sum" 2> "$T/worker.err")
	mountpoint -q "$T/mnt" && fusermount -u "$T/mnt" 2>/dev/null
	read -r gra gbg secs ok <<< "$r"
	[ -n "${secs:-}" ] || { ok=FAILED secs=0; sed 's/^/    /' "$T/worker.err" | tail -3 >&2; }
	mbs=$(awk -v s="$secs" -v m="$mib" 'BEGIN { if (s > 0) printf "%.1f", m * 1048576 / s / 1e6; else print "-" }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$server" "${opts:--}" "${gra:--}" "${gbg:--}" "$reader" "$secs" "$mbs" "$ok" >> "$OUT/results.tsv"
	printf '%-40s %-5s sshd: %6s s %7s MB/s (%s; read_ahead_kb %s, max_background %s)  [load %s]\n' \
	    "$name" "$server" "$secs" "$mbs" "$ok" "${gra:--}" "${gbg:--}" "$(cut -d' ' -f1 /proc/loadavg)"
done
echo "load after: $(cat /proc/loadavg)" | tee -a "$OUT/machine.txt"
