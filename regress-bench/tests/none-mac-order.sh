#!/usr/bin/env bash
# none-mac-order: NoneEnabled must not change the
# user's MAC order: against a server that refuses cipher none (our sshd
# with NoneEnabled no, and stock), the key exchange that proposed none and
# every later one (RekeyLimit) use the first of the user's MACs, not
# umac-64-etm moved to the front (a non-AEAD cipher, aes128-ctr, so the MAC
# is negotiated).
# Needs: 0401.
# Patches: 0401
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init none-mac-order
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }
dd if=/dev/urandom of="$T/data" bs=1M count=3 status=none
want=hmac-sha2-512-etm@openssh.com

servers=(lfn)
p_lfn=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p_lfn" <<< "NoneEnabled no"
if [ -x "$STOCK_TREE/sshd" ]; then
	p_stock=$(lfn_free_port)
	lfn_sshd_start "$STOCK_TREE" "$p_stock" < /dev/null
	servers+=(stock)
fi
for srv in "${servers[@]}"; do
	eval p=\$p_$srv
	for macs in "$want" "$want,umac-64-etm@openssh.com" "$want,hmac-sha2-256-etm@openssh.com,umac-64-etm@openssh.com,umac-128-etm@openssh.com"; do
		tid "MACs $macs, $srv sshd refuses none"
		lfn_ssh "$LFN_TREE" "$p" -vvv -oNoneEnabled=yes -oRekeyLimit=1M -oCiphers=aes128-ctr -oMACs="$macs" lfnpeer \
		    "cat $T/data" > "$T/out" 2> "$T/err" || fail "connection failed: $(tail -n 3 "$T/err")"
		cmp -s "$T/data" "$T/out" || fail "download corrupted"
		grep -q 'server does not permit the none cipher' "$T/err" || fail "no refusal notice"
		grep 'kex: client->server cipher:' "$T/err" | sed 's/.*\(cipher: .*\) compression.*/\1/' > "$T/kex"
		n=$(wc -l < "$T/kex")
		[ "$n" -ge 3 ] || fail "expected the initial, the refused and later key exchanges, got $n"
		verbose "$(sort "$T/kex" | uniq -c | tr -s ' ' | tr '\n' ';')"
		grep -v "MAC: $want" "$T/kex" && fail "a key exchange did not use $want"
		grep -q 'cipher: none' "$T/kex" && fail "switched to none"
	done
done
lfn_finish
