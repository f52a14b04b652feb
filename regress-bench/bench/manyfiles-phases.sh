#!/usr/bin/env bash
# manyfiles-phases.sh [RTT_MS] [TREE]: where the time of a recursive
# download goes.  On 1 Gbit/s x RTT_MS (100), against openssh-lfn's sshd
# (SERVER=stock: stock's), with manyfiles-grid.sh's trees (TREE: big or
# small; same SEED and sizes):
#   - the remote listing alone: `sftp -b` with `ls -1 DIR` less `sftp -b`
#     with `pwd` (the session's own cost), and the number of names;
#   - `scp -r host:DIR local` with scp's SFTP log at debug3 (ssh's own
#     log left at its default: -S a wrapper dropping -v), each line stamped
#     with the time since scp started: when the listing begins and ends
#     (READDIRs, their count), when the first file is opened, the end;
#   - the same copy untraced (wall, client CPU), and tar over ssh beside it.
# Output on stdout and in OUT (build/bench/manyfiles-phases-<UTC
# timestamp>): summary.txt, trace.txt (the stamped log, OPEN/READ/WRITE
# lines left out).  Needs root (network namespaces).
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
rtt=${1:-100} which=${2:-big} SERVER=${SERVER:-lfn}
SEED=${SEED:-1} SMALL_N=${SMALL_N:-200} SMALL_BYTES=${SMALL_BYTES:-10000}
BIG_N=${BIG_N:-10000} BIG_MIN=${BIG_MIN:-1000} BIG_MAX=${BIG_MAX:-1048576} BIG_DIRS=${BIG_DIRS:-0}
OUT=${OUT:-build/bench/manyfiles-phases-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init manyfiles-phases
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
python3 regress-bench/bench/manyfiles-tree.py "$T" "$SEED" "$SMALL_N" "$SMALL_BYTES" "$BIG_N" \
    "$BIG_MIN" "$BIG_MAX" "$BIG_DIRS" 100 > /dev/null || lfn_die "tree generation failed"
src=$T/$which
case $SERVER in lfn) stree=$LFN_TREE ;; stock) stree=$STOCK_TREE ;; *) lfn_die "SERVER: lfn or stock" ;; esac
lfn_wan_link mp$$ "$rtt" 1gbit
port=$(lfn_free_port)
lfn_sshd_start "$stree" "$port" "$NB" <<< "PermitUserEnvironment HOME"
c=(ip netns exec "$NA")
o=(-F "$T/ssh_config" -o HostKeyAlias=lfnpeer -o HostName="$ADDR")
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'; }
sftp_b() { printf '%s\n' "$1" > "$T/batch"; "${c[@]}" "$LFN_TREE/sftp" "${o[@]}" -P "$port" -S "$LFN_TREE/ssh" -q -b "$T/batch" lfnpeer; }
find "$src" -type f -exec cat {} + > /dev/null
{
	echo "1 Gbit/s x $rtt ms, $SERVER sshd, tree $which: $(find "$src" -type f | wc -l) files, $(du -sb "$src" | cut -f1) bytes; load $(cut -d' ' -f1-3 /proc/loadavg)"
	p=$(secs sftp_b pwd) l=$(secs sftp_b "ls -1 $src")
	names=$(sftp_b "ls -1 $src" 2> /dev/null | grep -vc '^sftp>')
	echo "sftp -b pwd: $p s; sftp -b 'ls -1 DIR': $l s ($names names): the listing alone $(awk -v a="$l" -v b="$p" -v r="$rtt" 'BEGIN { printf "%.2f s = %.1f RTT", a - b, (a - b) * 1000 / r }')"
	# ssh without -v: scp's own SFTP log only
	printf '#!/bin/bash\na=(); for x in "$@"; do [ "$x" = -v ] || a+=("$x"); done; exec %q "${a[@]}"\n' "$LFN_TREE/ssh" > "$T/ssh-quiet"
	chmod +x "$T/ssh-quiet"
	rm -rf "$T/back"
	# the stamper starts first (a Python's start-up under load is slow) and
	# stamps absolute times; scp's start is subtracted afterwards
	exec 3> >(/usr/bin/python3 -u -c '
import sys, time
for line in sys.stdin:
    sys.stdout.write("%.3f %s" % (time.time(), line))' > "$T/trace.abs")
	stamper=$!
	sleep 1
	s=$(date +%s.%N)
	"${c[@]}" "$LFN_TREE/scp" "${o[@]}" -P "$port" -S "$T/ssh-quiet" -vvv -q -r "lfnpeer:$src" "$T/back" 2>&3 > /dev/null
	exec 3>&-
	wait "$stamper" 2> /dev/null; sleep 0.5
	awk -v s="$s" '{ $1 = sprintf("%.3f", $1 - s); print }' "$T/trace.abs" > "$T/trace.full"
	diff -r "$src" "$T/back" > /dev/null && ok=intact || ok=CORRUPTED
	awk -v r="$rtt" '
		/Sending SSH2_FXP_READDIR/ { n++; if (!f) f = $1; l = $1 }
		/Sent queued SSH2_FXP_OPEN/ { o++; if (!fo) fo = $1 }
		{ end = $1 }
		END {
			printf "traced scp -r down: READDIR requests %d, first sent at %.2f s, last at %.2f s: listing %.2f s (%.1f RTT)\n", n, f, l, l - f, (l - f) * 1000 / r
			printf "traced scp -r down: first file opened at %.2f s, %d files opened in flight, last log line at %.2f s: copy after the listing %.2f s\n", fo, o, end, end - fo
		}' "$T/trace.full"
	echo "traced copy: $ok"
	rm -rf "$T/back"
	s=$(date +%s.%N)
	t=$( ( "${c[@]}" "$LFN_TREE/scp" "${o[@]}" -P "$port" -S "$LFN_TREE/ssh" -q -r "lfnpeer:$src" "$T/back" > /dev/null 2>&1; times ) | tail -1)
	e=$(date +%s.%N)
	diff -r "$src" "$T/back" > /dev/null && ok=intact || ok=CORRUPTED
	echo "untraced scp -r down: $(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }') s, client CPU (user sys) $t ($ok)"
	rm -rf "$T/back"; mkdir -p "$T/back"
	echo "tar over ssh down: $(secs bash -c "$(printf '%q ' "${c[@]}" "$LFN_TREE/ssh" "${o[@]}" -p "$port" lfnpeer "tar -C $src -cf - .") | tar -C $T/back -xf -") s"
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/summary.txt"
# the stamped log without the per-file lines (opens, reads, replies, closes)
grep -v 'SSH2_FXP_OPEN I\|Request range\|Received data\|SSH2_FXP_WRITE\|Sent message fd\|SSH2_FXP_STATUS 0\|SSH2_FXP_CLOSE I\|Received reply T:10[123]' "$T/trace.full" > "$OUT/trace.txt"
