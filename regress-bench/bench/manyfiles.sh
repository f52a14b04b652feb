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
# get -R instead of scp -r.  Needs root (network namespaces).
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
rtt=${1:-50} n=${2:-50} bytes=${3:-10000}
A=${A:-$STOCK_TREE} B=${B:-$LFN_TREE}
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init manyfiles
lfn_wan_link mf$$ "$rtt" 1gbit
# an empty HOME: Debian's bash sources ~/.bashrc under sshd (see bench.py)
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "PermitUserEnvironment HOME"
mkdir -p "$T/src"
for i in $(seq 1 "$n"); do head -c "$bytes" /dev/urandom > "$T/src/f$i"; done
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'; }
c=(-n "$NA" -h "$ADDR" "$port")
tar_up() { tar -C "$T/src" -cf - . | lfn_ssh "$B" "${c[@]}" lfnpeer "mkdir -p $T/dst && tar -C $T/dst -xf -"; }
tar_down() { lfn_ssh "$B" "${c[@]}" lfnpeer "tar -C $T/src -cf - ." | tar -C "$T/back" -xf -; }
# older DIR: the older tree an upload goes over (OVER=BYTES) in DIR, or
# none; scp -r SRC into an existing $T/dst writes $T/dst/src
older() {
	rm -rf "$T/dst"
	[ -n "${OVER:-}" ] || return 0
	mkdir -p "$1"
	for i in $(seq 1 "$n"); do head -c "$OVER" /dev/urandom > "$1/f$i"; done
}
up=$T/dst${OVER:+/src}
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
		rm -rf "$T/back"; older "$up"
		u=$(secs copy "$tree" "$T/src" "lfnpeer:$T/dst")
		d=$(secs copy "$tree" "lfnpeer:$T/src" "$T/back")
		ok=intact
		diff -r "$T/src" "$up" > /dev/null && diff -r "$T/src" "$T/back" > /dev/null || ok=CORRUPTED
		printf 'rtt %s ms, %s x %s bytes%s, client %s: %s up %s s, down %s s (%s)\n' \
		    "$rtt" "$n" "$bytes" "${OVER:+ over $OVER}" "$tree" "$what" "$u" "$d" "$ok"
	done
	# the same bytes through one stream: tar over ssh (B's client)
	rm -rf "$T/back"; mkdir -p "$T/back"; older "$T/dst"
	u=$(secs tar_up) d=$(secs tar_down)
	ok=intact
	diff -r "$T/src" "$T/dst" > /dev/null && diff -r "$T/src" "$T/back" > /dev/null || ok=CORRUPTED
	printf 'rtt %s ms, %s x %s bytes, tar over ssh (%s): up %s s, down %s s (%s)\n' \
	    "$rtt" "$n" "$bytes" "$B" "$u" "$d" "$ok"
done
