#!/usr/bin/env bash
# fastpath-interop: the 03xx fast paths stay wire-identical.  For every
# cipher (and for -C, and UMAC-64 with and without EtM: its NH runs on
# AVX2 in openssh-lfn, 0307), openssh-lfn talks to stock 10.3p1 both ways
# and the system's ssh talks to openssh-lfn; uploads and downloads are
# compared with cmp.  Odd sizes exercise partial blocks/packets.
# Patches: 0307
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init fastpath-interop
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }

CIPHERS="aes128-ctr aes256-ctr aes128-gcm@openssh.com aes256-gcm@openssh.com chacha20-poly1305@openssh.com"
head -c 3000001 /dev/urandom > "$T/data"
# compressible and incompressible halves, for -C
{ head -c 1000000 /dev/zero; head -c 1000003 /dev/urandom; seq 1 200000; } > "$T/mixed"

p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn"
p_stock=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stock"

# xfer LABEL FILE CLIENT... : in one session (CLIENT is a command ending
# just before "lfnpeer CMD"), upload FILE and download it back; compare
# both.  The client's -v log is left in $T/v.log.
xfer() {
	local label=$1 file=$2; shift 2
	rm -f "$T/up" "$T/down"
	"$@" -v lfnpeer "cat > $T/up && cat $T/up" < "$file" > "$T/down" 2> "$T/v.log" ||
		{ fail "$label: transfer failed"; tail -5 "$T/v.log"; return 1; }
	cmp -s "$file" "$T/up" || fail "$label: upload corrupted"
	cmp -s "$file" "$T/down" || fail "$label: download corrupted"
}
# negotiated CIPHER: the last client log shows CIPHER in both directions.
negotiated() {
	grep -q "kex: server->client cipher: $1 " "$T/v.log" &&
	    grep -q "kex: client->server cipher: $1 " "$T/v.log" ||
	    fail "$1 not negotiated: $(grep 'cipher:' "$T/v.log" | tr '\n' ' ')"
}
SYS=/usr/bin/ssh
[ -x $SYS ] || SYS=""

for c in $CIPHERS; do
	tid "$c: lfn client -> stock sshd"
	xfer "$c lfn->stock" "$T/data" lfn_ssh "$LFN_TREE" "$p_stock" -c "$c" && negotiated "$c"
	tid "$c: stock client -> lfn sshd"
	xfer "$c stock->lfn" "$T/data" lfn_ssh "$STOCK_TREE" "$p_lfn" -c "$c" && negotiated "$c"
	if [ -n "$SYS" ]; then
		tid "$c: system ssh -> lfn sshd"
		xfer "$c system->lfn" "$T/data" $SYS -F "$T/ssh_config" \
		    -p "$p_lfn" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 -c "$c" && negotiated "$c"
	fi
done

for m in umac-64-etm@openssh.com umac-64@openssh.com; do
	tid "aes128-ctr + $m: lfn <-> stock, system -> lfn"
	for way in "lfn->stock $LFN_TREE $p_stock" "stock->lfn $STOCK_TREE $p_lfn"; do
		set -- $way
		xfer "$m $1" "$T/data" lfn_ssh "$2" "$3" -c aes128-ctr -m "$m" &&
			{ grep -q "kex: client->server cipher: aes128-ctr MAC: $m " "$T/v.log" ||
			    fail "$m $1: not negotiated: $(grep 'MAC:' "$T/v.log" | tr '\n' ' ')"; }
	done
	if [ -n "$SYS" ]; then
		xfer "$m system->lfn" "$T/data" $SYS -F "$T/ssh_config" \
		    -p "$p_lfn" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 -c aes128-ctr -m "$m"
	fi
done

for c in aes128-gcm@openssh.com; do
	tid "-C ($c): lfn <-> stock, lfn <-> lfn, system -> lfn; mixed data"
	xfer "-C lfn->stock" "$T/mixed" lfn_ssh "$LFN_TREE" "$p_stock" -C -c "$c" &&
		{ grep -q "compression: zlib@openssh.com" "$T/v.log" || fail "-C: zlib@openssh.com not negotiated"; }
	xfer "-C stock->lfn" "$T/mixed" lfn_ssh "$STOCK_TREE" "$p_lfn" -C -c "$c"
	xfer "-C lfn->lfn" "$T/mixed" lfn_ssh "$LFN_TREE" "$p_lfn" -C -c "$c"
	if [ -n "$SYS" ]; then
		xfer "-C system->lfn" "$T/mixed" $SYS -F "$T/ssh_config" \
		    -p "$p_lfn" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 -C -c "$c"
	fi
done
lfn_finish
