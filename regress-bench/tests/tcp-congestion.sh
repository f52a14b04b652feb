#!/usr/bin/env bash
# tcp-congestion: TCPCongestionControl (patch 0250) in ssh_config and
# sshd_config.  ssh -G / sshd -T show it (main section and Match), bad
# names are refused when the configuration is read, and the algorithm is
# really set on the connection's socket -- read back with `ss -ti` from
# inside the session, for the client's and sshd's end, in sshd's main
# section and under Match (sshd sets it after authentication, when Match
# is known).  An algorithm the kernel does not have gives one warning and
# the connection works; so does one an unprivileged client may not use
# (net.ipv4.tcp_allowed_congestion_control; the client runs without
# CAP_NET_ADMIN).  The kernel's default is left alone without the option.
# Stock has no such keyword: the test fails there.
# Patches: 0250
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init tcp-congestion
avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null) ||
	{ echo "no /proc/sys/net/ipv4/tcp_available_congestion_control: skipped"; exit 77; }
kdef=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
# two available algorithms other than the kernel's default, to switch to
alts=()
for a in cubic reno bbr; do
	[ "$a" != "$kdef" ] && grep -qw "$a" <<<"$avail" && alts+=("$a")
done
[ ${#alts[@]} -ge 2 ] || { echo "need two algorithms besides $kdef (have: $avail): skipped"; exit 77; }
A=${alts[0]} B=${alts[1]}
verbose "kernel default $kdef; switching to $A and $B"

tid "ssh -G / sshd -T"
out=$("$LFN_TREE/ssh" -G -F /dev/null x 2>&1)
grep -qx 'tcpcongestioncontrol default' <<<"$out" || fail "ssh -G default: $(grep -i congestion <<<"$out")"
out=$("$LFN_TREE/ssh" -G -F /dev/null -o TCPCongestionControl=$A x 2>&1)
grep -qx "tcpcongestioncontrol $A" <<<"$out" || fail "ssh -G -o TCPCongestionControl=$A: $(grep -i congestion <<<"$out")"
for bad in 'BBR' 'bbr!' 'averyveryverylongname' ''; do
	"$LFN_TREE/ssh" -G -F /dev/null -o "TCPCongestionControl=$bad" x >/dev/null 2>"$T/err" &&
		fail "ssh accepted TCPCongestionControl '$bad'"
done
lfn_sshd_config "$LFN_TREE" 22 > "$T/sshd_T" <<EOF
TCPCongestionControl $A
Match Address 10.9.0.0/16
	TCPCongestionControl $B
EOF
t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T" 2>&1)
grep -qx "TCPCongestionControl $A" <<<"$t" || fail "sshd -T main: $(grep -i congestion <<<"$t")"
t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T" -C user=x,host=x,addr=10.9.1.1,laddr=x,lport=22 2>&1)
grep -qx "TCPCongestionControl $B" <<<"$t" || fail "sshd -T Match: $(grep -i congestion <<<"$t")"
lfn_sshd_config "$LFN_TREE" 22 </dev/null > "$T/sshd_T0"
t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T0" 2>&1)
grep -qx "TCPCongestionControl default" <<<"$t" || fail "sshd -T default: $(grep -i congestion <<<"$t")"
printf 'TCPCongestionControl Bbr;\n' | cat "$T/sshd_T" - > "$T/sshd_bad"
"$LFN_TREE/sshd" -t -f "$T/sshd_bad" 2>"$T/err" && fail "sshd accepted TCPCongestionControl 'Bbr;'"
grep -q "Bad TCPCongestionControl" "$T/err" || fail "no clear error for a bad name: $(cat "$T/err")"

[ "$(id -u)" = 0 ] || { lfn_finish; }	# the rest reads sockets of sshd as root

# cc_of ss-output: the congestion control names in `ss -Htin` output
cc_of() { grep -owE "$(tr ' ' '|' <<<"$avail")|nosuchcc[0-9]*" <<<"$1" | sort -u | tr '\n' ' ' | sed 's/ $//'; }
# session PORT [ssh args]: from inside a session, the server's and the
# client's socket of this connection: sets SRV_CC and CLI_CC
session() {
	local p=$1; shift
	lfn_ssh "$LFN_TREE" "$p" "$@" lfnpeer \
		"ss -Htin state established '( sport = :$p )'; echo ==; ss -Htin state established '( dport = :$p )'" \
		> "$T/ss.out" 2>"$T/ssh.err" || { fail "session failed: $(tail -3 "$T/ssh.err")"; SRV_CC= CLI_CC=; return 1; }
	SRV_CC=$(cc_of "$(sed '/^==$/,$d' "$T/ss.out")")
	CLI_CC=$(cc_of "$(sed '1,/^==$/d' "$T/ss.out")")
	trace "server $SRV_CC client $CLI_CC"
}

p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<EOF
TCPCongestionControl $A
Match Address 127.0.0.2
	TCPCongestionControl $B
EOF

tid "default: the kernel's ($kdef) at the client"
session "$p"
[ "$CLI_CC" = "$kdef" ] || fail "client socket uses '$CLI_CC', want the kernel's $kdef"

tid "sshd main section: $A on sshd's socket"
[ "$SRV_CC" = "$A" ] || fail "sshd socket uses '$SRV_CC', want $A"
grep -q "TCP congestion control: $A" "$SSHD_LOG" || fail "sshd did not log '$A' at LogLevel VERBOSE"

tid "sshd under Match Address: $B on sshd's socket"
session "$p" -b 127.0.0.2
[ "$SRV_CC" = "$B" ] || fail "sshd socket uses '$SRV_CC' under Match, want $B"

tid "ssh -o TCPCongestionControl=$B: the client's socket"
session "$p" -o TCPCongestionControl=$B -v
[ "$CLI_CC" = "$B" ] || fail "client socket uses '$CLI_CC', want $B"
grep -q "TCP congestion control: $B" "$T/ssh.err" || fail "ssh -v does not report $B"

tid "ssh: an algorithm the kernel does not have: one warning, connection works"
out=$(lfn_ssh "$LFN_TREE" "$p" -o LogLevel=INFO -o TCPCongestionControl=nosuchcc lfnpeer echo ok 2>"$T/ssh.err")
[ "$out" = ok ] || fail "connection failed: $(tail -3 "$T/ssh.err")"
n=$(grep -c 'TCPCongestionControl nosuchcc' "$T/ssh.err")
[ "$n" = 1 ] || fail "$n warnings, want 1: $(cat "$T/ssh.err")"
grep -q 'not available.*tcp_available_congestion_control.*modprobe tcp_nosuchcc' "$T/ssh.err" ||
	fail "warning does not say what would allow it: $(cat "$T/ssh.err")"

tid "sshd: an algorithm the kernel does not have: one warning, login works"
lfn_cleanup
p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<< "TCPCongestionControl nosuchcc2"
session "$p" || true
[ "$SRV_CC" = "$kdef" ] || fail "sshd socket uses '$SRV_CC', want the kernel's $kdef"
n=$(grep -c 'TCPCongestionControl nosuchcc2' "$SSHD_LOG")
[ "$n" = 1 ] || fail "$n warnings in sshd's log, want 1"

# Unprivileged: an available algorithm missing from the allowed list.
allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
na=
for a in $avail; do grep -qw "$a" <<<"$allowed" || { na=$a; break; }; done
if [ -n "$na" ] && command -v setpriv >/dev/null; then
	tid "ssh without CAP_NET_ADMIN: $na not allowed: one warning naming the sysctl"
	out=$(setpriv --bounding-set -net_admin --inh-caps -net_admin -- \
		"$LFN_TREE/ssh" -F "$T/ssh_config" -p "$p" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 \
		-o LogLevel=INFO -o TCPCongestionControl=$na lfnpeer echo ok 2>"$T/ssh.err")
	[ "$out" = ok ] || fail "connection failed: $(tail -3 "$T/ssh.err")"
	n=$(grep -c "TCPCongestionControl $na" "$T/ssh.err")
	[ "$n" = 1 ] || fail "$n warnings, want 1: $(cat "$T/ssh.err")"
	grep -q "not permitted.*net.ipv4.tcp_allowed_congestion_control" "$T/ssh.err" ||
		fail "warning does not name tcp_allowed_congestion_control: $(cat "$T/ssh.err")"
else
	verbose "every available algorithm is allowed ($allowed): unprivileged refusal not tested"
fi
lfn_finish
