#!/usr/bin/env bash
# none-mac-kept: NoneMacEnabled (HPN-SSH's keyword) is
# still accepted by ssh and sshd, so existing configurations load, but it
# has no effect beyond one clear warning: with NoneEnabled and
# NoneMacEnabled yes on both ends the switch to cipher none keeps a real
# MAC (client -vvv log, sshd log), and a byte flipped on the wire after
# the switch is caught by the MAC (nothing corrupted is written).
# Needs: 0401, 0406.
# Patches: 0401 0406
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/none.sh"
trap lfn_cleanup EXIT
lfn_env_init none-mac-kept
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }

# last_kex FILE: "cipher MAC" of the last key exchange in a -v log.
last_kex() {
	grep 'kex: client->server cipher:' "$1" | tail -n1 |
	    sed 's/.*cipher: \([^ ]*\) MAC: \([^ ]*\) .*/\1 \2/'
}

tid "the keyword still parses (ssh -G, sshd -t)"
"$LFN_TREE/ssh" -F "$T/ssh_config" -G -oNoneMacEnabled=yes x > /dev/null 2> "$T/g.err" ||
	fail "ssh -G rejects NoneMacEnabled yes: $(cat "$T/g.err")"
grep -q 'NoneMacEnabled is ignored' "$T/g.err" || fail "ssh -G: no warning: $(cat "$T/g.err")"
lfn_sshd_config "$LFN_TREE" 1 > "$T/t_config" <<< "NoneMacEnabled yes"
"$LFN_TREE/sshd" -t -f "$T/t_config" 2> "$T/t.err" || fail "sshd -t rejects NoneMacEnabled yes: $(cat "$T/t.err")"
grep -q 'NoneMacEnabled is ignored' "$T/t.err" || fail "sshd -t: no warning: $(cat "$T/t.err")"

p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<-EOF
NoneEnabled yes
NoneMacEnabled yes
EOF
slog=$SSHD_LOG
grep -q 'NoneMacEnabled is ignored' "$slog" || fail "sshd printed no warning at startup"
dd if=/dev/urandom of="$T/data" bs=1M count=4 status=none

tid "NoneMacEnabled yes on both ends: cipher none, MAC kept, one warning"
lfn_ssh "$LFN_TREE" "$p" -vvv -oNoneEnabled=yes -oNoneMacEnabled=yes lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" ||
	fail "connection failed: $(tail -n 3 "$T/err")"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
got=$(last_kex "$T/err")
verbose "negotiated after the switch: $got"
case "$got" in
"none none"|"none ") fail "MAC none negotiated after the switch: '$got'" ;;
none\ *) ;;
*) fail "no switch to cipher none: '$got'" ;;
esac
grep 'kex: .* MAC: none ' "$T/err" && fail "a key exchange chose MAC none"
grep -q 'NOT INTEGRITY PROTECTED' "$T/err" && fail "client says the session is not integrity protected"
n=$(grep -c 'NoneMacEnabled is ignored' "$T/err")
[ "$n" = 1 ] || fail "client warning printed $n times, want once"
sleep 0.3
grep 'switched to cipher none' "$slog" | grep -q 'MAC none\|no integrity' && fail "sshd switched with MAC none"
grep 'switched to cipher none' "$slog" | grep -q 'MAC [a-z]' || fail "sshd did not log the switch with its MAC"

tid "NoneMacEnabled yes on both ends: a flipped byte after the switch is detected"
none_tamper "$p" $((2 * 1024 * 1024)) -oNoneMacEnabled=yes
lfn_finish
