#!/usr/bin/env bash
# none-matrix: NoneEnabled (patch 0401), client {off,on} x server {off,on} x
# {no tty, tty} x {NoneMacEnabled no, yes}: which cipher and MAC end up in
# use (client -v log, sshd log; NoneMacEnabled is ignored: the MAC always
# stays), data identical, and a refusal never fails the connection.
# Needs: 0401, 0406 (NoneMacEnabled).
# Patches: 0401 0406
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init none-matrix
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }

dd if=/dev/urandom of="$T/data" bs=1M count=2 status=none
sum=$(sha256sum < "$T/data" | cut -d' ' -f1)

# One sshd per server column: NoneEnabled {no,yes} x NoneMacEnabled {no,yes}.
declare -A port log
for srv in off on; do
	for mac in mac nomac; do
		p=$(lfn_free_port)
		se=no; [ $srv = on ] && se=yes
		sm=no; [ $mac = nomac ] && sm=yes
		lfn_sshd_start "$LFN_TREE" "$p" <<-EOF
		NoneEnabled $se
		NoneMacEnabled $sm
		EOF
		port[$srv-$mac]=$p; log[$srv-$mac]=$SSHD_LOG
	done
done

# last_kex FILE: "cipher MAC" of the last key exchange in a -v log.
last_kex() {
	grep 'kex: client->server cipher:' "$1" | tail -n1 |
	    sed 's/.*cipher: \([^ ]*\) MAC: \([^ ]*\) .*/\1 \2/'
}

for cli in off on; do for srv in off on; do for tty in notty tty; do for mac in mac nomac; do
	label="client $cli, server $srv, $tty, $mac"
	tid "$label"
	p=${port[$srv-$mac]}; slog=${log[$srv-$mac]}
	off=$(stat -c %s "$slog")
	opts=(-v -oLogLevel=VERBOSE)
	[ $cli = on ] && opts+=(-oNoneEnabled=yes)
	[ $cli = on ] && [ $mac = nomac ] && opts+=(-oNoneMacEnabled=yes)
	rm -f "$T/up" "$T/out" "$T/err"
	if [ $tty = notty ]; then
		lfn_ssh "$LFN_TREE" "$p" "${opts[@]}" lfnpeer \
		    "cat > $T/up && cat $T/up" < "$T/data" > "$T/out" 2> "$T/err" ||
		    { fail "connection failed ($label)"; cat "$T/err"; continue; }
		cmp -s "$T/data" "$T/up" || fail "upload corrupted"
		cmp -s "$T/data" "$T/out" || fail "download corrupted"
	else
		# the remote side hashes the file; output comes through the pty
		lfn_ssh "$LFN_TREE" "$p" "${opts[@]}" -tt lfnpeer \
		    "sha256sum < $T/data" < /dev/null > "$T/out" 2> "$T/err" ||
		    { fail "connection failed ($label)"; cat "$T/err"; continue; }
		grep -q "$sum" "$T/out" || fail "tty session output wrong"
	fi
	sleep 0.2
	tail -c +$((off + 1)) "$slog" > "$T/slog"
	got=$(last_kex "$T/err")
	trace "$label: $got"
	if [ $cli = on ] && [ $srv = on ] && [ $tty = notty ]; then
		want="none umac-64-etm@openssh.com"
		[ "$got" = "$want" ] || fail "cipher/MAC '$got', expected '$want'"
		grep -q 'WARNING: this session is NOT ENCRYPTED' "$T/err" ||
			fail "no unencrypted warning on stderr"
		[ "$(grep -c 'NOT ENCRYPTED' "$T/err")" = 1 ] ||
			fail "warning not printed exactly once"
		grep -q "user $(id -un): switched to cipher none: connection from 127.0.0.1 port [0-9]* is NOT ENCRYPTED" "$T/slog" ||
			fail "sshd did not log the switch with user and address"
	else
		case "$got" in
		none*|"") fail "cipher '$got' should be a real cipher" ;;
		esac
		grep -q 'NOT ENCRYPTED' "$T/err" "$T/slog" && fail "unencrypted warning without a switch"
		if [ $cli = on ]; then
			if [ $tty = tty ]; then
				n=$(grep -c 'not switching to cipher none: interactive session' "$T/err")
				[ "$n" = 1 ] || fail "tty refusal notice printed $n times"
			else
				n=$(grep -c 'server does not permit the none cipher' "$T/err")
				[ "$n" = 1 ] || fail "server refusal notice printed $n times"
			fi
		else
			grep -q 'NoneEnabled' "$T/err" && fail "NoneEnabled noise with the option off"
		fi
	fi
done; done; done; done

tid "LogLevel QUIET suppresses the warning"
p=${port[on-mac]}
lfn_ssh "$LFN_TREE" "$p" -oLogLevel=QUIET -oNoneEnabled=yes lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" ||
	fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
[ -s "$T/err" ] && fail "stderr not empty at LogLevel QUIET: $(cat "$T/err")"

tid "Match: NoneEnabled only for a non-matching address is not applied"
p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<-EOF
NoneEnabled no
Match Address 10.0.0.0/8
	NoneEnabled yes
Match Address 127.0.0.1
	NoneMacEnabled yes
EOF
"$LFN_TREE/sshd" -T -f "$T/sshd_config.$(basename "$LFN_TREE")-$p" -C addr=10.1.2.3,user=x,host=x,laddr=x,lport=1 |
	grep -q '^NoneEnabled yes' || fail "sshd -T (Match Address 10/8) does not show noneenabled yes"
"$LFN_TREE/sshd" -T -f "$T/sshd_config.$(basename "$LFN_TREE")-$p" | grep -q '^NoneEnabled no' ||
	fail "sshd -T does not show noneenabled no"
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" ||
	fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
case "$(last_kex "$T/err")" in none*) fail "switched although Match did not permit it" ;; esac

tid "Match: NoneEnabled for 127.0.0.1 is applied"
p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<-EOF
Match Address 127.0.0.1
	NoneEnabled yes
EOF
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" ||
	fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
[ "$(last_kex "$T/err")" = "none umac-64-etm@openssh.com" ] || fail "no switch with Match: $(last_kex "$T/err")"

tid "ssh_config Host block, ssh -G, HPN NoneSwitch"
cat > "$T/ssh_config.none" <<EOF
Host nonehost
	NoneEnabled yes
	NoneMacEnabled yes
Include $T/ssh_config
EOF
"$LFN_TREE/ssh" -F "$T/ssh_config.none" -G nonehost | grep -qi '^noneenabled yes' || fail "Host block NoneEnabled not applied"
"$LFN_TREE/ssh" -F "$T/ssh_config.none" -G otherhost | grep -qi '^noneenabled no' || fail "NoneEnabled should default to no"
"$LFN_TREE/ssh" -F "$T/ssh_config" -G -oNoneSwitch=no x | grep -qi '^noneswitch no' || fail "NoneSwitch not accepted"
p=${port[on-mac]}
lfn_ssh "$LFN_TREE" "$p" -v -oNoneSwitch=yes lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" || fail "connection failed"
case "$(last_kex "$T/err")" in none*) fail "NoneSwitch alone switched" ;; esac
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes -oNoneSwitch=yes lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" || fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
[ "$(last_kex "$T/err")" = "none umac-64-etm@openssh.com" ] || fail "HPN-style NoneEnabled+NoneSwitch did not switch"
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes -oNoneSwitch=no lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" || fail "connection failed"
case "$(last_kex "$T/err")" in none*) fail "NoneSwitch=no switched" ;; esac
"$LFN_TREE/ssh" -F "$T/ssh_config" -G -oNoneEnabled=maybe x >/dev/null 2>&1 && fail "bad NoneEnabled value accepted"

tid "-t without a local terminal still counts as interactive"
lfn_ssh "$LFN_TREE" "$p" -v -oLogLevel=VERBOSE -oNoneEnabled=yes -t lfnpeer "cat $T/data" < /dev/null > "$T/out" 2> "$T/err" ||
	fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
case "$(last_kex "$T/err")" in none*) fail "switched with -t" ;; esac
grep -q 'not switching to cipher none: interactive session' "$T/err" || fail "no notice for -t"

tid "single-entry Ciphers/MACs lists; the user's MAC list is respected"
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes -oCiphers=aes128-ctr -oMACs=umac-64-etm@openssh.com lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" ||
	fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
[ "$(last_kex "$T/err")" = "none umac-64-etm@openssh.com" ] || fail "single umac-64-etm: $(last_kex "$T/err")"
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes -oMACs=hmac-sha2-256-etm@openssh.com lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" ||
	fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
[ "$(last_kex "$T/err")" = "none hmac-sha2-256-etm@openssh.com" ] || fail "MACs hmac-sha2-256-etm: $(last_kex "$T/err")"

tid "forwarding is refused the switch unless NoneForwarding"
lfn_ssh "$LFN_TREE" "$p" -v -oLogLevel=VERBOSE -oNoneEnabled=yes -oForwardAgent=yes lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" || fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
case "$(last_kex "$T/err")" in none*) fail "switched with agent forwarding" ;; esac
grep -q 'not switching to cipher none: forwarding requested' "$T/err" || fail "no forwarding notice"
fp=$(lfn_free_port)
lfn_ssh "$LFN_TREE" "$p" -v -oNoneEnabled=yes -oNoneForwarding=yes -L "127.0.0.1:$fp:127.0.0.1:$p" lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" || fail "connection failed"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
[ "$(last_kex "$T/err")" = "none umac-64-etm@openssh.com" ] || fail "NoneForwarding=yes did not switch"
lfn_finish
