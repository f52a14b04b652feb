#!/usr/bin/env bash
# manyfiles.sh [RTT_MS] [N] [BYTES]: what per-file round trips cost a
# recursive copy: wall time of `scp -r` of N files of BYTES each (default
# 50 x 10 kB at 50 ms, 1 Gbit/s), upload and download, with the stock
# client and the openssh-lfn client against the same openssh-lfn sshd,
# and the same bytes through one stream (tar over ssh, B's client),
# 2 runs each, contents checked.  A=tree B=tree (environment) compare
# other builds' clients.  OVER=BYTES: each upload goes over an older tree
# of the same names, OVER random bytes each (what a copy made again
# meets: scp writes such files in place).  TOOL=sftp: sftp put -R and
# get -R instead of scp -r.  GRID=1: N files of 1 kB to 1 MiB,
# log-uniform (manyfiles-grid.sh's 10,000-file tree; BYTES unused).
# SHM=1: the trees in /dev/shm, not under build/test: on the project's
# VM the disk spread tar's download of 10,000 files over 4.2-7.4 s, on
# tmpfs its runs agree within 1 %.  Needs root (network namespaces).
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
rtt=${1:-50} n=${2:-50} bytes=${3:-10000}
A=${A:-$STOCK_TREE} B=${B:-$LFN_TREE}
W=
trap 'lfn_cleanup; lfn_wan_cleanup; [ -z "${SHM:-}" ] || rm -rf "$W"' EXIT
lfn_env_init manyfiles
W=$T
[ -z "${SHM:-}" ] || W=$(mktemp -d /dev/shm/lfn-manyfiles.XXXXXX) || lfn_die "mktemp in /dev/shm failed"
lfn_wan_link mf$$ "$rtt" 1gbit
# an empty HOME: Debian's bash sources ~/.bashrc under sshd (see bench.py)
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "PermitUserEnvironment HOME"
if [ -n "${GRID:-}" ]; then
	python3 regress-bench/bench/manyfiles-tree.py "$W/grid" 1 1 10 "$n" 1000 1048576 0 "$((n + 1))" ||
		lfn_die "tree generation failed"
	mv "$W/grid/big" "$W/src" && rm -rf "$W/grid"
	bytes="1000-1048576"
else
	mkdir -p "$W/src"
	for i in $(seq 1 "$n"); do head -c "$bytes" /dev/urandom > "$W/src/f$i"; done
fi
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'; }
c=(-n "$NA" -h "$ADDR" "$port")
tar_up() { tar -C "$W/src" -cf - . | lfn_ssh "$B" "${c[@]}" lfnpeer "mkdir -p $W/dst && tar -C $W/dst -xf -"; }
tar_down() { lfn_ssh "$B" "${c[@]}" lfnpeer "tar -C $W/src -cf - ." | tar -C "$W/back" -xf -; }
# older DIR: the older tree an upload goes over (OVER=BYTES) in DIR, or
# none; scp -r SRC into an existing $W/dst writes $W/dst/src
older() {
	rm -rf "$W/dst"
	[ -n "${OVER:-}" ] || return 0
	mkdir -p "$1"
	for i in $(seq 1 "$n"); do head -c "$OVER" /dev/urandom > "$1/f$i"; done
}
up=$W/dst${OVER:+/src}
TOOL=${TOOL:-scp} what="scp -r"
[ "$TOOL" = sftp ] && what="sftp -R"
# copy TREE SRC DST: scp -r, or sftp's put -R / get -R (TOOL=sftp)
copy() {
	local tree=$1 src=$2 dst=$3
	if [ "$TOOL" = sftp ]; then
		case $src in
		lfnpeer:*) lfn_sftp "$tree" "${c[@]}" -q -b - lfnpeer <<< "get -R ${src#lfnpeer:} $dst" ;;
		*) lfn_sftp "$tree" "${c[@]}" -q -b - lfnpeer <<< "put -R $src ${dst#lfnpeer:}" ;;
		esac
	else
		lfn_scp "$tree" "${c[@]}" -q -r "$src" "$dst"
	fi
}
for run in 1 2; do
	for tree in "$A" "$B"; do
		rm -rf "$W/back"; older "$up"
		u=$(secs copy "$tree" "$W/src" "lfnpeer:$W/dst")
		d=$(secs copy "$tree" "lfnpeer:$W/src" "$W/back")
		ok=intact
		diff -r "$W/src" "$up" > /dev/null && diff -r "$W/src" "$W/back" > /dev/null || ok=CORRUPTED
		printf 'rtt %s ms, %s x %s bytes%s, client %s: %s up %s s, down %s s (%s)\n' \
		    "$rtt" "$n" "$bytes" "${OVER:+ over $OVER}" "$tree" "$what" "$u" "$d" "$ok"
	done
	# the same bytes through one stream: tar over ssh (B's client)
	rm -rf "$W/back"; mkdir -p "$W/back"; older "$W/dst"
	u=$(secs tar_up) d=$(secs tar_down)
	ok=intact
	diff -r "$W/src" "$W/dst" > /dev/null && diff -r "$W/src" "$W/back" > /dev/null || ok=CORRUPTED
	printf 'rtt %s ms, %s x %s bytes, tar over ssh (%s): up %s s, down %s s (%s)\n' \
	    "$rtt" "$n" "$bytes" "$B" "$u" "$d" "$ok"
done
