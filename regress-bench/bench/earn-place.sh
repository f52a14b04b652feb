#!/usr/bin/env bash
# earn-place.sh [RTT_MS] [RATE]: does a patch earn its place?  Same-run A/B
# of variants of openssh-lfn on the workloads doc/patches.md judges
# patches by, over one emulated link (default 100 ms, 1gbit):
#   scp -r of 1,000 files of 10 kB, up and down
#   scp of one 1 GiB file, up and down
#   ssh host true
# and, in WORKLOADS (default: those five, small-up small-down big-up
# big-down true), also one-up / one-down: scp of one 10 kB file to a name
# of its own (what a patch taking round trips out of a single copy gains).
# Each variant is NAME=CLIENT_TREE:SERVER_TREE[:SFTP_SERVER_FLAGS] in
# VARIANTS (default: the series, and stock 10.5p1 at both ends).  A tree
# built without a patch (a series prefix, or the series with one patch
# dropped) is a variant; so is the same tree with SFTP_SERVER_FLAGS such
# as "-P name", which is how a client behaves against a server that does
# not know what a patch added (it falls back to the standard requests).  ROUNDS (default 3)
# rounds; within a round the variants take turns on each workload, so the
# machine's load falls on all of them alike.  Prints every time, then per
# workload the median of each variant and its ratio to the first.  Every
# copy is checked (cmp / diff -r).  SCP_ARGS (e.g. "-X connections=4")
# go to every scp.  Needs root (network namespaces).
# RTT_MS 0: loopback, no emulated link: every sshd listens in this
# namespace and the clients connect to 127.0.0.1 (as the fastpath tests
# do), RATE is ignored, and times have 3 decimals (ssh host true takes
# ~0.03 s there).  For CPU fast paths: the emulator itself burns CPU, and a
# 100 ms link hides what a patch saves per byte.
# ROTATE=1: round r starts with the r-th variant (then the next ones, in
# order, wrapping around) instead of the first one every time: the first
# copy of each workload is often slower on loopback (an A/A pair of one
# source built twice differed by up to 35 % in fixed order); with ROUNDS a
# multiple of the number of variants each one takes each place equally.
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
rtt=${1:-100} rate=${2:-1gbit}
rounds=${ROUNDS:-3}
SCP_ARGS=${SCP_ARGS:-}
VARIANTS=${VARIANTS:-"series=$LFN_TREE:$LFN_TREE: stock=$STOCK_TREE:$STOCK_TREE:"}
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init earnplace
if [ "$rtt" = 0 ]; then
	NA="" NB="" ADDR=127.0.0.1 digits=3	# -n "": in this namespace
	echo "link: loopback (127.0.0.1, no emulator)"
else
	lfn_wan_link ep$$ "$rtt" "$rate"
	digits=2
	echo "link: emulated, rtt $rtt ms, $rate"
fi
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"

names=() clients=() ports=()
while read -r v; do
	[ -n "$v" ] || continue
	name=${v%%=*} rest=${v#*=}
	ctree=${rest%%:*} rest=${rest#*:}
	stree=${rest%%:*} flags=""
	[ "$rest" != "$stree" ] && flags=${rest#*:}
	ctree=$(cd "$ctree" && pwd) stree=$(cd "$stree" && pwd) || lfn_die "variant $name: no such tree"
	port=$(lfn_free_port)
	cfg="$T/sshd_config.$name"
	lfn_sshd_config "$stree" "$port" <<< "PermitUserEnvironment HOME" |
		sed "s#^Subsystem sftp .*#Subsystem sftp $stree/sftp-server $flags#" > "$cfg"
	"$stree/sshd" -t -f "$cfg" || lfn_die "sshd -t rejected $cfg"
	_lfn_sshd_run "sshd $name" "$port" "$T/sshd.$name.log" "$NB" "$stree/sshd" -D -e -f "$cfg"
	names+=("$name") clients+=("$ctree") ports+=("$port")
	echo "variant $name: client $ctree, server $stree, sftp-server $flags"
done < <(echo "$VARIANTS" | sed 's/ \([A-Za-z0-9_.+-]*=\)/\n\1/g')

mkdir -p "$T/small"
for i in $(seq 1 1000); do head -c 10000 /dev/urandom > "$T/small/f$i"; done
head -c $((1024 * 1024 * 1024)) /dev/urandom > "$T/big"

secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1 || echo FAILED >&2; e=$(date +%s.%N); awk -v s="$s" -v e="$e" -v d="$digits" 'BEGIN { printf "%.*f", d, e - s }'; }
res="$T/results"; : > "$res"
for round in $(seq 1 "$rounds"); do
	for w in ${WORKLOADS:-small-up small-down big-up big-down true}; do
		for k in "${!names[@]}"; do
			i=$k
			[ "${ROTATE:-0}" = 1 ] && i=$(((k + round - 1) % ${#names[@]}))
			tree=${clients[$i]} c=(-n "$NA" -h "$ADDR" "${ports[$i]}")
			rm -rf "$T/dst" "$T/back" "$T/big.up" "$T/big.down" "$T/one.up" "$T/one.down"
			case $w in
			small-up) t=$(secs lfn_scp "$tree" "${c[@]}" -q $SCP_ARGS -r "$T/small" "lfnpeer:$T/dst")
				diff -r "$T/small" "$T/dst" > /dev/null || t=CORRUPTED ;;
			small-down) t=$(secs lfn_scp "$tree" "${c[@]}" -q $SCP_ARGS -r "lfnpeer:$T/small" "$T/back")
				diff -r "$T/small" "$T/back" > /dev/null || t=CORRUPTED ;;
			big-up) t=$(secs lfn_scp "$tree" "${c[@]}" -q $SCP_ARGS "$T/big" "lfnpeer:$T/big.up")
				cmp -s "$T/big" "$T/big.up" || t=CORRUPTED ;;
			big-down) t=$(secs lfn_scp "$tree" "${c[@]}" -q $SCP_ARGS "lfnpeer:$T/big" "$T/big.down")
				cmp -s "$T/big" "$T/big.down" || t=CORRUPTED ;;
			one-up) t=$(secs lfn_scp "$tree" "${c[@]}" -q $SCP_ARGS "$T/small/f1" "lfnpeer:$T/one.up")
				cmp -s "$T/small/f1" "$T/one.up" || t=CORRUPTED ;;
			one-down) t=$(secs lfn_scp "$tree" "${c[@]}" -q $SCP_ARGS "lfnpeer:$T/small/f1" "$T/one.down")
				cmp -s "$T/small/f1" "$T/one.down" || t=CORRUPTED ;;
			true) t=$(secs lfn_ssh "$tree" "${c[@]}" lfnpeer true) ;;
			*) lfn_die "unknown workload $w" ;;
			esac
			printf 'round %s %-10s %-16s %s s\n' "$round" "$w" "${names[$i]}" "$t"
			echo "$w ${names[$i]} $t" >> "$res"
		done
	done
done
rm -rf "$T/dst" "$T/back" "$T/big.up" "$T/big.down" "$T/big"
echo "load: $(uptime)"
python3 - "$res" "$digits" "${names[@]}" <<'PY'
import sys, statistics
res, digits, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
t = {}
for line in open(res):
    w, n, s = line.split()
    t.setdefault((w, n), []).append(s)
print(f"{'workload':<12}" + "".join(f"{n:>18}" for n in names) + "   (median s; ratio to " + names[0] + ")")
for w in dict.fromkeys(line.split()[0] for line in open(res)):
    cells, base = [], None
    for n in names:
        v = t.get((w, n), [])
        if not v or any(x == "CORRUPTED" for x in v):
            cells.append("CORRUPTED" if v else "-"); continue
        m = statistics.median(float(x) for x in v)
        base = m if base is None else base
        cells.append(f"{m:.{digits}f} ({m / base:.3f})")
    print(f"{w:<12}" + "".join(f"{c:>18}" for c in cells))
PY
