#!/usr/bin/env bash
# sshd-options-match: every sshd_config keyword the series adds, set in the
# main section and under Match, shows in `sshd -T` (-C for Match) and
# reaches sshd-session, the process that uses it.  Since OpenSSH 10.4 sshd
# serialises its options to sshd-auth and sshd-session from the SSHCONF_*
# tables in servconf.h (ours: SSHD_CONFIG_ENTRIES_LFN); a keyword missing
# from them is parsed but never arrives, which only the session shows:
#  - MaxChannelWindow / TcpRcvBufPoll / HPNDisabled (0202, 0205): sshd-session
#    logs "bulk receive windows may grow to N, TCP RTT read every RTT|once"
#    (debug) when the session starts; as root over an emulated 1 Gbit/s x
#    100 ms link an upload's server window also stops at a Match cap;
#  - NoneEnabled / NoneMacEnabled (0401, 0406): the client's switch to cipher
#    none (and MAC none) is taken or refused as Match says;
#  - DebianBanner (0150) is main-section only; HPNBufferSize is accepted
#    (deprecated) in both.
# Patches: 0150 0202 0205 0401 0406
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init sshd-options-match
me=$(id -un)
"$LFN_TREE/sshd" -T -f /dev/null -o HostKey="$T/host_ed25519" 2>/dev/null | grep -q '^MaxChannelWindow ' ||
	{ echo "sshd has no MaxChannelWindow (patch 0202 missing): skipped"; exit 77; }

tid "sshd -T: main section and Match values"
lfn_sshd_config "$LFN_TREE" 22 > "$T/sshd_T" <<EOF
MaxChannelWindow 64M
TcpRcvBufPoll no
HPNDisabled no
HPNBufferSize 65536
NoneEnabled yes
NoneMacEnabled no
DebianBanner no
Match User lfnmatchuser
	MaxChannelWindow 3M
	TcpRcvBufPoll yes
	HPNDisabled yes
	HPNBufferSize 16384
	NoneEnabled no
	NoneMacEnabled yes
Match Address 10.9.0.0/16
	MaxChannelWindow 5M
	NoneEnabled no
EOF
# want OUT LINE...: each LINE is a line of OUT
want() {
	local out=$1 l; shift
	for l in "$@"; do grep -qx "$l" <<<"$out" || fail "sshd -T $ctx: no '$l' ($(grep -i "^${l%% *} " <<<"$out"))"; done
}
ctx=main; t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T" 2>&1)
want "$t" 'MaxChannelWindow 67108864' 'TcpRcvBufPoll no' 'HPNDisabled no' 'NoneEnabled yes' \
	'NoneMacEnabled no' 'DebianBanner no'
ctx="Match User"; t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T" -C user=lfnmatchuser,host=x,addr=192.0.2.1,laddr=x,lport=22 2>&1)
want "$t" 'MaxChannelWindow 3145728' 'TcpRcvBufPoll yes' 'HPNDisabled yes' 'NoneEnabled no' \
	'NoneMacEnabled yes' 'DebianBanner no'
ctx="Match Address"; t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T" -C user=x,host=x,addr=10.9.1.1,laddr=x,lport=22 2>&1)
want "$t" 'MaxChannelWindow 5242880' 'TcpRcvBufPoll no' 'HPNDisabled no' 'NoneEnabled no' 'NoneMacEnabled no'
"$LFN_TREE/sshd" -t -f "$T/sshd_T" 2>&1 | grep -q 'HPNBufferSize' || fail "HPNBufferSize not reported as deprecated"
{ cat "$T/sshd_T"; printf 'Match User x\n\tDebianBanner yes\n'; } > "$T/sshd_T2"
"$LFN_TREE/sshd" -t -f "$T/sshd_T2" >/dev/null 2>&1 && fail "DebianBanner accepted inside Match"

# window_line LOG: sshd-session's "bulk receive windows may grow to ..." line
window_line() { grep -o 'bulk receive windows may grow to .*' "$1" | tr -d '\r' | tail -n1; }
# last_kex LOG: "cipher MAC" of the client's last key exchange (ssh -v)
last_kex() {
	grep 'kex: client->server cipher:' "$1" | tail -n1 |
	    sed 's/.*cipher: \([^ ]*\) MAC: \([^ ]*\) .*/\1 \2/'
}
dd if=/dev/urandom of="$T/data" bs=1M count=2 status=none

# session SSHD_LINES...: start an sshd with these lines (and LogLevel DEBUG1),
# run one non-tty download with the client asking for none + MAC none;
# leaves the client log in $T/err and the sshd log of it in $T/slog.
session() {
	local p off
	p=$(lfn_free_port)
	lfn_sshd_start "$LFN_TREE" "$p" < <(printf '%s\n' "$@" "Match all" "	LogLevel DEBUG1")
	off=$(stat -c %s "$SSHD_LOG")
	lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes -oNoneMacEnabled=yes lfnpeer "cat $T/data" \
	    > "$T/out" 2> "$T/err" || fail "connection failed: $(tail -n 3 "$T/err")"
	cmp -s "$T/data" "$T/out" || fail "download corrupted"
	sleep 0.3
	tail -c +$((off + 1)) "$SSHD_LOG" > "$T/slog"
	kill "$SSHD_PID" 2>/dev/null; wait "$SSHD_PID" 2>/dev/null
}

tid "sshd-session: main-section MaxChannelWindow / TcpRcvBufPoll"
session "MaxChannelWindow 6M" "TcpRcvBufPoll no"
w=$(window_line "$T/slog")
[ "$w" = "bulk receive windows may grow to 6291456, TCP RTT read once" ] || fail "sshd-session: '$w'"

tid "sshd-session: Match User MaxChannelWindow / TcpRcvBufPoll"
session "MaxChannelWindow 64M" "TcpRcvBufPoll no" "Match User $me" "	MaxChannelWindow 3M" "	TcpRcvBufPoll yes"
w=$(window_line "$T/slog")
[ "$w" = "bulk receive windows may grow to 3145728, TCP RTT read every RTT" ] || fail "sshd-session: '$w'"

tid "sshd-session: Match Address HPNDisabled"
session "MaxChannelWindow 64M" "Match Address 127.0.0.1" "	HPNDisabled yes" "	HPNBufferSize 16384"
w=$(window_line "$T/slog")
[ "$w" = "bulk receive windows may grow to 0, TCP RTT read every RTT" ] || fail "sshd-session: '$w'"

tid "sshd-session: Match User NoneEnabled permits the switch (NoneMacEnabled ignored: MAC kept)"
session "NoneEnabled no" "Match User $me" "	NoneEnabled yes" "	NoneMacEnabled yes"
[ "$(last_kex "$T/err")" = "none umac-64-etm@openssh.com" ] ||
	fail "client ended with '$(last_kex "$T/err")', want 'none umac-64-etm@openssh.com'"
grep -q "switched to cipher none: connection from 127.0.0.1 .*MAC umac-64-etm@openssh.com" "$T/slog" ||
	fail "sshd did not log the switch"

tid "sshd-session: Match User NoneMacEnabled only (MAC kept)"
session "NoneEnabled yes" "Match User $me" "	NoneMacEnabled no"
[ "$(last_kex "$T/err")" = "none umac-64-etm@openssh.com" ] || fail "client ended with '$(last_kex "$T/err")'"

tid "sshd-session: Match Address NoneEnabled no refuses the switch"
session "NoneEnabled yes" "NoneMacEnabled yes" "Match Address 127.0.0.1" "	NoneEnabled no"
case "$(last_kex "$T/err")" in none*|"") fail "cipher '$(last_kex "$T/err")' after a refusal" ;; esac
grep -q 'server does not permit the none cipher' "$T/err" || fail "no refusal notice"
grep -q 'switched to cipher none' "$T/slog" && fail "sshd switched although Match refused"

# As root: the cap is visible in the window itself over a long fat link.
if [ "$(id -u)" = 0 ] && [ -x "$LFN_TOP/regress-bench/wanemu/wanemu-up" ] && ip netns list >/dev/null 2>&1; then
	lfn_wan_link om$$ 100 1gbit
	dd if=/dev/urandom of="$T/big" bs=1M count=24 status=none
	for m in none user address; do
		tid "upload over 1 Gbit/s x 100 ms: server window, Match $m"
		p=$(lfn_free_port)
		case $m in
		none) match="User nobody" ;;
		user) match="User $me" ;;
		address) match="Address 198.18.0.0/16" ;;
		esac
		lfn_sshd_start "$LFN_TREE" "$p" "$NB" < <(printf 'MaxChannelWindow 64M\nMatch %s\n\tMaxChannelWindow 3M\n' "$match")
		rm -f "$T/up"
		lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p" lfnpeer "cat > $T/up" < "$T/big" ||
			fail "upload failed"
		cmp -s "$T/big" "$T/up" || fail "upload corrupted"
		sleep 0.5
		w=$(grew "$SSHD_LOG")
		verbose "Match $m: server window grew to $w"
		if [ $m = none ]; then
			[ "$w" -gt 3145728 ] || fail "without the Match cap the window stayed at $w (link too slow to tell?)"
		else
			[ "$w" -gt 2097152 ] && [ "$w" -le 3145728 ] || fail "window $w, want 2 MiB < w <= 3 MiB (Match cap)"
		fi
		kill "$SSHD_PID" 2>/dev/null; wait "$SSHD_PID" 2>/dev/null
	done
else
	verbose "not root or no WAN emulator: the window itself is not measured (sshd-session's log line is)"
fi

lfn_finish
