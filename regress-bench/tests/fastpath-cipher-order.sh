#!/usr/bin/env bash
# fastpath-cipher-order: patch 0302, the hardware-aware default cipher order.
# With AES-GCM acceleration (x86 aes+pclmulqdq, arm64 aes+pmull in
# /proc/cpuinfo) aes128-gcm@openssh.com is first in the default, else
# chacha20-poly1305@openssh.com; an explicit Ciphers list is used as given;
# `-v` says which and why; negotiation with stock follows the client.
# Patches: 0302
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init fastpath-cipher-order
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }

flags=$(grep -m1 -iE '^(flags|features)[[:space:]]*:' /proc/cpuinfo)
hw=0
case "$(uname -m)" in
x86_64|i?86) grep -qw aes <<<"$flags" && grep -qw pclmulqdq <<<"$flags" && hw=1 ;;
aarch64) grep -qw aes <<<"$flags" && grep -qw pmull <<<"$flags" && hw=1 ;;
esac
if [ $hw = 1 ]; then
	want="aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr"
else
	want="chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr"
fi
first=${want%%,*}
verbose "AES acceleration in /proc/cpuinfo: $hw; expecting $first first"

tid "ssh -G shows the default order"
got=$("$LFN_TREE/ssh" -F "$T/ssh_config" -G lfnpeer | sed -n 's/^ciphers //p')
[ "$got" = "$want" ] || fail "ssh -G ciphers: '$got', want '$want'"

tid "ssh -v says which order and why"
"$LFN_TREE/ssh" -F "$T/ssh_config" -v -G lfnpeer 2>&1 >/dev/null |
	grep -q "Default cipher order: $first first (" || fail "no 'Default cipher order' debug line"

tid "explicit Ciphers wins (ssh -G, command line and config)"
got=$("$LFN_TREE/ssh" -F "$T/ssh_config" -c aes256-ctr,chacha20-poly1305@openssh.com -G lfnpeer | sed -n 's/^ciphers //p')
[ "$got" = "aes256-ctr,chacha20-poly1305@openssh.com" ] || fail "ssh -c: '$got'"
got=$("$LFN_TREE/ssh" -F "$T/ssh_config" -o Ciphers=chacha20-poly1305@openssh.com,aes128-gcm@openssh.com -G lfnpeer | sed -n 's/^ciphers //p')
[ "$got" = "chacha20-poly1305@openssh.com,aes128-gcm@openssh.com" ] || fail "Ciphers=: '$got'"
"$LFN_TREE/ssh" -F "$T/ssh_config" -v -c aes256-ctr -G lfnpeer 2>&1 >/dev/null |
	grep -q "Default cipher order" && fail "debug line printed for an explicit list"
tid "Ciphers -LIST is relative to the new default"
got=$("$LFN_TREE/ssh" -F "$T/ssh_config" -o Ciphers=-aes128-ctr -G lfnpeer | sed -n 's/^ciphers //p')
[ "$got" = "${want/,aes128-ctr/}" ] || fail "Ciphers=-aes128-ctr: '$got'"

tid "sshd -T shows the default order; explicit Ciphers wins"
p=$(lfn_free_port)
lfn_sshd_config "$LFN_TREE" "$p" </dev/null > "$T/sshd_config.t"
got=$("$LFN_TREE/sshd" -T -f "$T/sshd_config.t" | sed -n 's/^Ciphers //p')
[ "$got" = "$want" ] || fail "sshd -T ciphers: '$got', want '$want'"
echo "Ciphers aes256-gcm@openssh.com,aes128-ctr" >> "$T/sshd_config.t"
got=$("$LFN_TREE/sshd" -T -f "$T/sshd_config.t" | sed -n 's/^Ciphers //p')
[ "$got" = "aes256-gcm@openssh.com,aes128-ctr" ] || fail "sshd -T explicit: '$got'"
st=$("$STOCK_TREE/ssh" -F "$T/ssh_config" -G lfnpeer | sed -n 's/^ciphers //p')
[ "${st%%,*}" = "chacha20-poly1305@openssh.com" ] || fail "stock default changed? '$st'"

p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn"
p_stock=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stock"
tid "negotiation: lfn client -> stock sshd uses the lfn default ($first)"
lfn_ssh "$LFN_TREE" "$p_stock" -v lfnpeer true 2> "$T/v.log" || fail "connect failed"
grep -q "kex: client->server cipher: $first " "$T/v.log" || fail "negotiated: $(grep 'client->server cipher' "$T/v.log")"
tid "negotiation: stock client -> lfn sshd uses the client's order"
lfn_ssh "$STOCK_TREE" "$p_lfn" -v lfnpeer true 2> "$T/v.log" || fail "connect failed"
grep -q "kex: client->server cipher: chacha20-poly1305@openssh.com " "$T/v.log" || fail "negotiated: $(grep 'client->server cipher' "$T/v.log")"
tid "negotiation: lfn client -c aes256-ctr -> stock sshd"
lfn_ssh "$LFN_TREE" "$p_stock" -v -c aes256-ctr lfnpeer true 2> "$T/v.log" || fail "connect failed"
grep -q "kex: client->server cipher: aes256-ctr " "$T/v.log" || fail "negotiated: $(grep 'client->server cipher' "$T/v.log")"
lfn_finish
