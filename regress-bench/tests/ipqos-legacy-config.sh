#!/usr/bin/env bash
# ipqos-legacy-config: IPQoS spellings that older releases accepted
# (hexadecimal numbers, the ToS keywords lowdelay/throughput/
# reliability) still work in ssh_config and sshd_config: `sshd -t`,
# `sshd -T`, `ssh -G` and a real connection succeed, with a one-line
# deprecation warning and the documented mapping (patch 0102).  Values
# that never were valid are still rejected.  The stock tree's behaviour
# is printed for comparison (informational only).
# Patches: 0102
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init ipqos-legacy-config

# spelling|expected "ipqos" line in ssh -G / sshd -T|expect a warning
cases=(
	"0x00|cs0 cs0|yes"
	"0x10|0x10 0x10|yes"
	"0xb8|ef ef|yes"
	"0X2e|0x2e 0x2e|yes"
	"0|cs0 cs0|no"
	"8|0x08 0x08|no"
	"lowdelay|ef ef|yes"
	"throughput|cs0 cs0|yes"
	"reliability|cs0 cs0|yes"
	"lowdelay throughput|ef cs0|yes"
	"0x10 0x08|0x10 0x08|yes"
	"af21 cs1|af21 cs1|no"
	"ef cs0|ef cs0|no"
	"none|none none|no"
)
bad=("foo" "0x100" "256" "-1" "0x" "lowdelay bogus")

# sshd_cfg VALUE: a minimal sshd_config using IPQoS VALUE
sshd_cfg() {
	lfn_sshd_config "$1" 22 </dev/null > "$T/sshd_config.legacy"
	printf 'IPQoS %s\n' "$2" >> "$T/sshd_config.legacy"
}

for tree in "$LFN_TREE" "$STOCK_TREE"; do
	[ -x "$tree/ssh" ] && [ -x "$tree/sshd" ] || continue
	[ "$tree" = "$LFN_TREE" ] && who=ours || who=stock
	for c in "${cases[@]}"; do
		IFS='|' read -r val want warn <<< "$c"
		tid "$who: IPQoS '$val'"
		# ssh -G, value on the command line and in a config file
		out=$("$tree/ssh" -F /dev/null -G -o "IPQoS=$val" lfnpeer 2>"$T/err"); rc=$?
		got=$(printf '%s\n' "$out" | sed -n 's/^ipqos //p')
		printf 'IPQoS %s\n' "$val" > "$T/ssh_config.legacy"
		"$tree/ssh" -F "$T/ssh_config.legacy" -G lfnpeer >/dev/null 2>"$T/err2"; rc2=$?
		sshd_cfg "$tree" "$val"
		"$tree/sshd" -t -f "$T/sshd_config.legacy" 2>"$T/err3"; rc3=$?
		sgot=$("$tree/sshd" -T -f "$T/sshd_config.legacy" 2>/dev/null | sed -n 's/^IPQoS //p')
		verbose "$who '$val': ssh -G rc=$rc ipqos='$got' [$(tr '\n' ' ' < "$T/err")]; ssh -F rc=$rc2; sshd -t rc=$rc3 [$(tr '\n' ' ' < "$T/err3")]; sshd -T ipqos='$sgot'"
		[ "$who" = ours ] || continue
		[ $rc -eq 0 ] || fail "ssh -G -o IPQoS='$val' failed: $(cat "$T/err")"
		[ "$got" = "$want" ] || fail "ssh -G: ipqos '$got', want '$want'"
		[ $rc2 -eq 0 ] || fail "ssh -G with 'IPQoS $val' in a config file failed: $(cat "$T/err2")"
		[ $rc3 -eq 0 ] || fail "sshd -t with 'IPQoS $val' failed: $(cat "$T/err3")"
		[ "$sgot" = "$want" ] || fail "sshd -T: ipqos '$sgot', want '$want'"
		nw=$(grep -ci 'deprecated IPQoS' "$T/err")
		nw3=$(grep -ci 'deprecated IPQoS' "$T/err3")
		if [ "$warn" = yes ]; then
			# one line per legacy word
			words=0
			for w in $val; do
				case $w in [0-9]*) [[ $w =~ ^[0-9]+$ ]] || words=$((words+1)) ;;
				none|af*|cs*|ef|le|va) ;; *) words=$((words+1)) ;; esac
			done
			[ "$nw" -eq "$words" ] || fail "ssh -G: $nw deprecation warnings, want $words: $(cat "$T/err")"
			[ "$nw3" -eq "$words" ] || fail "sshd -t: $nw3 deprecation warnings, want $words: $(cat "$T/err3")"
		else
			[ "$nw" -eq 0 ] || fail "ssh -G warned about '$val': $(cat "$T/err")"
			[ "$nw3" -eq 0 ] || fail "sshd -t warned about '$val': $(cat "$T/err3")"
		fi
	done
	for val in "${bad[@]}"; do
		tid "$who: invalid IPQoS '$val' is rejected"
		"$tree/ssh" -F /dev/null -G -o "IPQoS=$val" lfnpeer >/dev/null 2>"$T/err"; rc=$?
		sshd_cfg "$tree" "$val"
		"$tree/sshd" -t -f "$T/sshd_config.legacy" 2>"$T/err3"; rc3=$?
		verbose "$who '$val': ssh -G rc=$rc [$(tr '\n' ' ' < "$T/err")]; sshd -t rc=$rc3 [$(tr '\n' ' ' < "$T/err3")]"
		[ "$who" = ours ] || continue
		[ $rc -ne 0 ] || fail "ssh -G accepted IPQoS '$val'"
		grep -q 'Bad IPQoS value' "$T/err" || fail "ssh -G: no clear error for '$val': $(cat "$T/err")"
		[ $rc3 -ne 0 ] || fail "sshd -t accepted IPQoS '$val'"
		grep -q 'Bad IPQoS value' "$T/err3" || fail "sshd -t: no clear error for '$val': $(cat "$T/err3")"
	done
done

tid "ours: connect with legacy IPQoS on both sides (loopback)"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" <<< "IPQoS lowdelay throughput"
out=$(lfn_ssh "$LFN_TREE" "$port" -o "IPQoS=0x10 0x08" -o LogLevel=INFO lfnpeer echo connected 2>"$T/err") ||
	fail "ssh -o 'IPQoS=0x10 0x08' failed: $(cat "$T/err")"
[ "$out" = connected ] || fail "unexpected output '$out'"
grep -q 'deprecated IPQoS value "0x10", using 0x10' "$T/err" || fail "no deprecation warning from ssh: $(cat "$T/err")"
grep -q 'deprecated IPQoS value "lowdelay", using ef' "$SSHD_LOG" || fail "no deprecation warning from sshd in $SSHD_LOG"

lfn_finish
