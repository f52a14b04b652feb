#!/usr/bin/env bash
# auth-roundtrips: the round trips 0103/0213/0214 take out of a connection's
# set-up, counted from a packet capture on an emulated 200 ms link (not from
# timings: regress-bench/lib/roundtrips.py counts the times the client sent
# data at least 100 ms after its previous data, and which of those had no
# server data in between, i.e. data held back):
#  - 0103: no stall in the key exchange (Nagle held the KEX init and the
#    service request back for an ACK);
#  - 0213: the "none" request rides with SERVICE_REQUEST (OpenSSH servers);
#  - 0214: an unencrypted key file signs at once (no PK_OK round trip),
#    while agent keys and encrypted keys keep the query, and a key the
#    server refuses just fails over to the next one;
#  - 0216: that signature (or the query) is the first userauth request,
#    with the service request, instead of "none"; an RSA key (its
#    signature algorithm needs the server's EXT_INFO) keeps "none" first.
# `ssh true` must take at most 6 round trips (the old series: 11) and `scp`
# of a small file 11 (old: 16), against openssh-lfn and stock 10.5p1 servers;
# scp's 11 needs 0240 too (the first lookup with the SFTP init).
# (Old numbers: 0240 and 0243 are now in 0208, 0209, 0241 and 0245 in
# 0210, as are 0211 and 0246; folded 2026-11-28, renumbered 2026-12-07:
# doc/patches.md#old-numbers.)
# Patches: 0103 0208 0213 0214 0216
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }
command -v tcpdump > /dev/null || { echo "FATAL: tcpdump missing (./install-deps installs it)"; exit 1; }
rtt=200
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init auth-roundtrips
lfn_wan_link ar$$ "$rtt" 1gbit
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" "$NB" <<< "PermitUserEnvironment HOME"
lfn_log_sshd=$SSHD_LOG
p_stk=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stk" "$NB" <<< "PermitUserEnvironment HOME"
head -c 10240 /dev/urandom > "$T/small"

. "$LFN_TOP/regress-bench/lib/captures.sh"

for srv in lfn:$p_lfn stock:$p_stk; do
	name=${srv%%:*} port=${srv#*:}
	tid "ssh true against $name sshd: at most 6 round trips"
	captured "$port" lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" -vvv lfnpeer true \
	    < /dev/null 2> "$T/true-$name.log" || fail "ssh true failed"
	check_rt "ssh true ($name)" 6
	grep -q "sending initial userauth request with service request" "$T/true-$name.log" ||
	    fail "first userauth request not sent with the service request"
	grep -q 'First userauth request: publickey, no "none" probe' "$T/true-$name.log" ||
	    fail "the first userauth request was not the key's signature"
	grep -q "Signing with unencrypted key at once: .*id_ed25519" "$T/true-$name.log" ||
	    fail "unencrypted key not signed at once"
	grep -q "Server accepts key" "$T/true-$name.log" && fail "client waited for PK_OK"

	tid "scp up and down of 10 kB against $name sshd: at most 11 round trips"
	rm -f "$T/home/up" "$T/down"
	captured "$port" lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" -q "$T/small" "lfnpeer:$T/home/up" \
	    < /dev/null || fail "scp upload failed"
	cmp -s "$T/small" "$T/home/up" || fail "upload corrupted"
	check_rt "scp up ($name)" 11
	captured "$port" lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" -q "lfnpeer:$T/small" "$T/down" \
	    < /dev/null || fail "scp download failed"
	cmp -s "$T/small" "$T/down" || fail "download corrupted"
	check_rt "scp down ($name)" 11
done

tid "keys that may ask the user something keep the query"
kg=$LFN_TREE/ssh-keygen
"$kg" -q -t ed25519 -N 'secret phrase' -f "$T/id_enc" -C enc || fail "keygen"
cat "$T/id_enc.pub" >> "$T/authorized_keys"
# BatchMode: the passphrase cannot be asked, so the encrypted key is only
# offered (PK_OK), then the client goes on to the unencrypted one
lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p_lfn" -vvv -i "$T/id_enc" lfnpeer true \
    < /dev/null 2> "$T/enc.log" || fail "login with an encrypted key first failed"
grep -q "Offering public key: .*id_enc" "$T/enc.log" || fail "encrypted key not offered"
grep -q "Signing with unencrypted key at once: .*id_enc" "$T/enc.log" && fail "encrypted key signed blind"
grep -q "Signing with unencrypted key at once: .*id_ed25519" "$T/enc.log" || fail "fallback key not used"
tid "a refused key fails over to the next (server logs one failure)"
"$kg" -q -t ed25519 -N '' -f "$T/id_other" -C other || fail "keygen"
lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p_lfn" -vvv -i "$T/id_other" lfnpeer true \
    < /dev/null 2> "$T/other.log" || fail "login after a refused key failed"
grep -q "Signing with unencrypted key at once: .*id_other" "$T/other.log" || fail "refused key not signed at once"
grep -q "Authenticated to .* using \"publickey\"" "$T/other.log" || fail "not authenticated"
other_fp=$("$kg" -lf "$T/id_other.pub" | awk '{print $2}')
n=$(grep -c "Failed publickey for .*$other_fp" "$lfn_log_sshd")
[ "$n" = 1 ] || fail "server logged $n failures for the refused key (expected 1)"

tid "an RSA key keeps \"none\" first (its signature algorithm comes with EXT_INFO)"
"$kg" -q -t rsa -b 2048 -N '' -f "$T/id_rsa" -C rsa || fail "keygen"
cat "$T/id_rsa.pub" >> "$T/authorized_keys"
lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p_lfn" -vvv -i "$T/id_rsa" lfnpeer true \
    < /dev/null 2> "$T/rsa.log" || fail "login with an RSA key failed"
grep -q 'First userauth request: publickey' "$T/rsa.log" && fail "RSA key sent before EXT_INFO"
grep -q "Signing with unencrypted key at once: .*id_rsa" "$T/rsa.log" || fail "RSA key not signed at once after none"
grep -q "Authenticated to .* using \"publickey\"" "$T/rsa.log" || fail "not authenticated with the RSA key"

tid "an agent key keeps the query (the agent may ask for confirmation)"
# an agent key: the agent may ask for confirmation, so the query stays
agent_pid=$("$LFN_TREE/ssh-agent" -a "$S/agent.sock" -s | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
[ -n "$agent_pid" ] && LFN_PIDS+=("$agent_pid") || fail "ssh-agent did not start"
SSH_AUTH_SOCK=$S/agent.sock "$LFN_TREE/ssh-add" -q "$T/id_ed25519" 2>/dev/null || fail "ssh-add"
ip netns exec "$NA" env SSH_AUTH_SOCK="$S/agent.sock" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$p_lfn" \
    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -o IdentityAgent="$S/agent.sock" -vvv lfnpeer true \
    < /dev/null 2> "$T/agent.log" || fail "login with an agent key failed"
grep -q "Offering public key: .*agent" "$T/agent.log" || fail "agent key not offered first"
grep -q "Server accepts key" "$T/agent.log" || fail "no PK_OK for the agent key"
grep -q "Signing with unencrypted key at once" "$T/agent.log" && fail "agent key signed blind"

lfn_finish
