#!/usr/bin/env bash
# manyfiles-grid.sh: trees of many files over long fat links, scp -r and
# sftp -R against the same bytes through one stream (tar over ssh) and
# rsync's first copy, against openssh-lfn's sshd and stock's sshd.
#
#   regress-bench/bench/manyfiles-grid.sh                 # the whole grid
#   RTTS=200 TOOLS=tar,rsync,lfn-scp regress-bench/bench/manyfiles-grid.sh
#
# Trees (generated from SEED, the same bytes every time):
#   small  SMALL_N (200) files of SMALL_BYTES (10000) random bytes
#   big    BIG_N (10000) files, sizes log-uniform in [BIG_MIN, BIG_MAX]
#          (1000 .. 1048576 bytes; mean ~150 kB, ~1.5 GB in all), flat
#          unless BIG_DIRS=K spreads them over K subdirectories
# Tools (TOOLS, comma list), each up (local -> server) and down:
#   tar        tar -C src -cf - . | ssh host 'tar -C dst -xf -' (and the
#              reverse), openssh-lfn's ssh
#   rsync      rsync -a -e "openssh-lfn's ssh" src/ host:dst/ into an
#              empty directory (Debian's rsync at both ends)
#   lfn-scp    openssh-lfn scp -r (SFTP mode)
#   lfn-scp-xN openssh-lfn scp -r -X connections=N (N from 2 to 64)
#   alt-scp    scp -r of another openssh-lfn build, ALT_TREE (its client
#              only: the same-run A/B of a client change)
#   stock-scp  stock 10.5p1 scp -r; on the big tree it copies every
#              STOCK_BIG_EVERY-th file (100: 100 files) and the table
#              scales its time by the number of files (marked "est."): one
#              file after another, its time is the sum of per-file costs
#   lfn-sftp   openssh-lfn sftp -b with put -R / get -R
# Servers (SERVERS): lfn, stock (each tree's own sshd and sftp-server on
# the link's server side, same keys and config).  Links: 1 Gbit/s (RATE)
# x each of RTTS (100 200) ms, TCP buffers raised (wanemu's default).
# Every copy goes into an empty directory, is compared with its source
# (diff -r), and the written tree is removed and synced before the next.
# Per run: wall seconds, client CPU (user+sys of the command and all it
# waited for) and server CPU (what the sshd listener reaped: sshd-session,
# sftp-server, tar or rsync).  RUNS (1) rounds, the order of servers and
# tools alternating between rounds.
#
# Output in OUT (default build/bench/manyfiles-grid-<UTC timestamp>):
# results.tsv (one line per run), table.md (per link, tree and direction:
# wall seconds per server and tool, the ratio to tar over ssh on the same
# server, CPU), machine.txt (load before and after, versions, tree sizes).
# Needs root (network namespaces), rsync, tar.  Takes about an hour for
# the whole grid (stock scp's 200 files alone: ~1.5 min per direction and
# server at 100 ms).
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
RTTS=${RTTS:-100 200} RATE=${RATE:-1gbit}
TREES=${TREES:-small,big} SERVERS=${SERVERS:-lfn,stock} DIRS=${DIRS:-up,down}
TOOLS=${TOOLS:-tar,rsync,lfn-scp,lfn-sftp,stock-scp}
SEED=${SEED:-1} RUNS=${RUNS:-1}
SMALL_N=${SMALL_N:-200} SMALL_BYTES=${SMALL_BYTES:-10000}
BIG_N=${BIG_N:-10000} BIG_MIN=${BIG_MIN:-1000} BIG_MAX=${BIG_MAX:-1048576} BIG_DIRS=${BIG_DIRS:-0}
STOCK_BIG_EVERY=${STOCK_BIG_EVERY:-100} TIMEOUT=${TIMEOUT:-1800}
OUT=${OUT:-build/bench/manyfiles-grid-$(date -u +%Y%m%dT%H%M%SZ)}
RTTS=${RTTS//,/ }
command -v rsync > /dev/null || lfn_die "rsync not installed (apt-get install rsync)"
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init manyfiles-grid
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"

# the trees (manyfiles-tree.py): the same bytes for the same SEED and sizes
python3 regress-bench/bench/manyfiles-tree.py "$T" "$SEED" "$SMALL_N" "$SMALL_BYTES" "$BIG_N" "$BIG_MIN" "$BIG_MAX" \
    "$BIG_DIRS" "$STOCK_BIG_EVERY" || lfn_die "tree generation failed"
nfiles() { find "$1" -type f | wc -l; }
bytes() { find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
SUB_SCALE=$(awk -v a="$(nfiles "$T/big")" -v b="$(nfiles "$T/bigsub")" 'BEGIN { printf "%.4f", a / b }')
{
	echo "date: $(date -u +%FT%TZ)"
	echo "host: $(uname -srm), $(nproc) cores"
	echo "load before: $(cat /proc/loadavg)"
	echo "lfn:   $("$LFN_TREE/ssh" -V 2>&1)"
	echo "stock: $("$STOCK_TREE/ssh" -V 2>&1)"
	[ -n "${ALT_TREE:-}" ] && echo "alt:   $ALT_TREE ($(git -C "$ALT_TREE" log -1 --format='%h %s' 2>/dev/null || "$ALT_TREE/ssh" -V 2>&1))"
	echo "rsync: $(rsync --version | head -1)"
	echo "tar:   $(tar --version | head -1)"
	echo "trees: small $(nfiles "$T/small") files $(bytes "$T/small") bytes; big $(nfiles "$T/big") files $(bytes "$T/big") bytes (BIG_DIRS=$BIG_DIRS); stock scp's big subset $(nfiles "$T/bigsub") files $(bytes "$T/bigsub") bytes (x$SUB_SCALE)"
	echo "seed $SEED; links $RATE x $RTTS ms; servers $SERVERS; tools $TOOLS; dirs $DIRS; runs $RUNS"
} | tee "$OUT/machine.txt"
printf 'rtt\ttree\tserver\ttool\tdir\trun\twall\tok\tclient_cpu\tserver_cpu\tfiles\tbytes\tscale\n' > "$OUT/results.tsv"

ticks=$(getconf CLK_TCK)
# server CPU: cutime+cstime of the sshd listener once it has reaped every session
srv_cpu() {
	local pid=$1 i line
	for i in $(seq 1 150); do
		[ -z "$(lfn_descendants "$pid")" ] && break
		sleep 0.05
	done
	read -r line < "/proc/$pid/stat"
	set -- ${line##*) }
	echo $(( ${14} + ${15} ))
}
# read a tree through (DAMON reclaim here pages out files unread for 60 s)
warm() { find "$1" -type f -exec cat {} + > /dev/null; }

declare -A PORT PID
cmd_for() {	# cmd_for TOOL DIR SERVER SRC: the command line, as an array CMD
	local tool=$1 dir=$2 server=$3 src=$4 port=${PORT[$3]}
	local sshcmd="$LFN_TREE/ssh -F $T/ssh_config -p $port -o HostKeyAlias=lfnpeer -o HostName=$ADDR"
	case "$tool.$dir" in
	tar.up) CMD=(bash -c "tar -C $src -cf - . | ip netns exec $NA $sshcmd lfnpeer 'mkdir -p $T/dst && tar -C $T/dst -xf -'") ;;
	tar.down) CMD=(bash -c "mkdir -p $T/back && ip netns exec $NA $sshcmd lfnpeer 'tar -C $src -cf - .' | tar -C $T/back -xf -") ;;
	rsync.up) CMD=(ip netns exec "$NA" rsync -a -e "$sshcmd" "$src/" "lfnpeer:$T/dst/") ;;
	rsync.down) CMD=(ip netns exec "$NA" rsync -a -e "$sshcmd" "lfnpeer:$src/" "$T/back/") ;;
	lfn-scp.*|lfn-scp-x[0-9]*.*|stock-scp.*|alt-scp.*)
		local tr=$LFN_TREE; [ "$tool" = stock-scp ] && tr=$STOCK_TREE
		[ "$tool" = alt-scp ] && tr=${ALT_TREE:?alt-scp needs ALT_TREE}
		CMD=(ip netns exec "$NA" "$tr/scp" -F "$T/ssh_config" -S "$tr/ssh" -P "$port" -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -q -r)
		case $tool in lfn-scp-x*) CMD+=(-X "connections=${tool#lfn-scp-x}") ;; esac
		if [ "$dir" = up ]; then CMD+=("$src" "lfnpeer:$T/dst"); else CMD+=("lfnpeer:$src" "$T/back"); fi ;;
	lfn-sftp.*)
		if [ "$dir" = up ]; then printf 'put -R %s %s\n' "$src" "$T/dst"; else printf 'get -R %s %s\n' "$src" "$T/back"; fi > "$T/batch"
		CMD=(ip netns exec "$NA" "$LFN_TREE/sftp" -F "$T/ssh_config" -S "$LFN_TREE/ssh" -P "$port" -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -q -b "$T/batch" lfnpeer) ;;
	*) lfn_die "unknown tool $tool" ;;
	esac
}
# one run: prints and records a line
one() {
	local rtt=$1 tree=$2 server=$3 tool=$4 dir=$5 run=$6
	local src="$T/$tree" scale=1 s e wall ok c0 c1 tm cu cs out
	[ "$tool" = stock-scp ] && [ "$tree" = big ] && { src="$T/bigsub"; scale=$SUB_SCALE; }
	rm -rf "$T/dst" "$T/back"; sync
	[ "$tree" = big ] && warm "$src"
	cmd_for "$tool" "$dir" "$server" "$src"
	c0=$(srv_cpu "${PID[$server]}")
	s=$(date +%s.%N)
	tm=$( ( timeout "$TIMEOUT" "${CMD[@]}" > "$T/client.out" 2> "$T/client.err" < /dev/null; echo "rc=$?" >> "$T/client.err"; times ) | tail -1)
	e=$(date +%s.%N)
	c1=$(srv_cpu "${PID[$server]}")
	wall=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }')
	# times' second line: children's user and system time, "0m1.230s 0m0.450s"
	cu=$(awk '{ for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] } } END { printf "%.2f", t }' <<< "$tm")
	cs=$(awk -v a="$c0" -v b="$c1" -v t="$ticks" 'BEGIN { printf "%.2f", (b - a) / t }')
	out="$T/dst"; [ "$dir" = down ] && out="$T/back"
	if grep -q '^rc=0$' "$T/client.err" && diff -r "$src" "$out" > /dev/null 2>&1; then ok=ok
	else ok=FAILED; sed 's/^/    /' "$T/client.err" | tail -5 >&2; fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rtt" "$tree" "$server" "$tool" "$dir" "$run" \
	    "$wall" "$ok" "$cu" "$cs" "$(nfiles "$src")" "$(bytes "$src")" "$scale" >> "$OUT/results.tsv"
	printf '%s ms %-5s %-5s sshd %-9s %-4s run %s: %7s s (%s) client CPU %s s, server CPU %s s%s  [load %s]\n' \
	    "$rtt" "$tree" "$server" "$tool" "$dir" "$run" "$wall" "$ok" "$cu" "$cs" \
	    "$([ "$scale" = 1 ] || echo ", $(nfiles "$src") files: x$scale")" "$(cut -d' ' -f1 /proc/loadavg)"
	rm -rf "$T/dst" "$T/back"
}

tag=mg$$
for rtt in $RTTS; do
	lfn_wan_link "$tag" "$rtt" "$RATE"
	for server in ${SERVERS//,/ }; do
		case $server in lfn) tree=$LFN_TREE ;; stock) tree=$STOCK_TREE ;; *) lfn_die "unknown server $server" ;; esac
		PORT[$server]=$(lfn_free_port)
		lfn_sshd_start "$tree" "${PORT[$server]}" "$NB" <<< "PermitUserEnvironment HOME"
		PID[$server]=$SSHD_PID
	done
	for run in $(seq 1 "$RUNS"); do
		for t in ${TREES//,/ }; do
			for d in ${DIRS//,/ }; do
				srvs=(${SERVERS//,/ }) tools=(${TOOLS//,/ })
				if [ $((run % 2)) = 0 ]; then	# the other order every other round
					srvs=($(printf '%s\n' "${srvs[@]}" | tac)) tools=($(printf '%s\n' "${tools[@]}" | tac))
				fi
				for server in "${srvs[@]}"; do
					for tool in "${tools[@]}"; do
						one "$rtt" "$t" "$server" "$tool" "$d" "$run"
					done
				done
			done
		done
	done
	lfn_cleanup; lfn_wan_cleanup
done
echo "load after: $(cat /proc/loadavg)" | tee -a "$OUT/machine.txt"
python3 regress-bench/bench/manyfiles-table.py "$OUT" | tee "$OUT/table.md"
