#!/usr/bin/env bash
# none-cleartext: with NoneEnabled the client switches
# to cipher none only after the session's requests were sent and answered,
# so nothing the user typed goes out unencrypted: a loopback relay
# (regress-bench/lib/record-relay.py) records the raw bytes in both
# directions and must not contain a marker from the command line, a SetEnv
# value, a SendEnv value or the subsystem name; it must contain the bulk
# data in clear (proof that the switch happened).  Also for a multiplexed
# session started after the master switched (the master re-keys to
# encryption for its requests, then switches again).
# Needs: 0401, 0404 (the multiplexed session).
# Patches: 0401 0404
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init none-cleartext
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }

# bulk data: a recognisable clear text, 1 MiB
yes 'BULK-PLAINTEXT-lfn-0123456789' | head -c 1048576 > "$T/bulk"
p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<-EOF
NoneEnabled yes
Subsystem subsysMARK-lfn-q7 cat $T/bulk
EOF

# relay TAG: start a recording relay to sshd; sets RP, REC ($T/rec.TAG)
relay() {
	RP=$(lfn_free_port); REC="$T/rec.$1"
	python3 "$LFN_TOP/regress-bench/lib/record-relay.py" "$RP" "$p" "$REC" > "$T/relay.$1.log" 2>&1 &
	LFN_PIDS+=("$!")
	for _ in $(seq 50); do grep -q listening "$T/relay.$1.log" && return 0; sleep 0.1; done
	lfn_die "relay did not start"
}
# check_wire WHAT MARKERS...: the recorded wire has the bulk data in clear
# and none of the markers (either direction).
check_wire() {
	local what=$1 m; shift
	grep -aq 'BULK-PLAINTEXT-lfn' "$REC.s2c" "$REC.c2s" ||
		fail "$what: bulk data not in clear on the wire (no switch?)"
	for m in "$@"; do
		if grep -aq "$m" "$REC.c2s" "$REC.s2c"; then
			fail "$what: '$m' went over the wire unencrypted"
		else
			verbose "$what: '$m' not in clear on the wire"
		fi
	done
}
last_kex() {
	grep 'kex: client->server cipher:' "$1" | tail -n1 |
	    sed 's/.*cipher: \([^ ]*\) MAC: \([^ ]*\) .*/\1 \2/'
}

tid "exec: command line, SetEnv and SendEnv values stay encrypted"
relay exec
LFN_SENDENV=sendenvMARK-lfn-q7 lfn_ssh "$LFN_TREE" "$RP" -v -oNoneEnabled=yes \
    -oSetEnv=LFN_SETENV=setenvMARK-lfn-q7 -oSendEnv=LFN_SENDENV lfnpeer \
    "cat $T/bulk; : cmdMARK-lfn-q7" > "$T/out" 2> "$T/err" || fail "connection failed: $(tail -n 3 "$T/err")"
cmp -s "$T/bulk" "$T/out" || fail "download corrupted"
case "$(last_kex "$T/err")" in none*) ;; *) fail "no switch to cipher none: $(last_kex "$T/err")" ;; esac
check_wire exec cmdMARK-lfn-q7 setenvMARK-lfn-q7 sendenvMARK-lfn-q7

tid "exec with stdin: upload, the command line stays encrypted"
relay up
rm -f "$T/up"
lfn_ssh "$LFN_TREE" "$RP" -v -oNoneEnabled=yes lfnpeer "cat > $T/up; : upMARK-lfn-q7" \
    < "$T/bulk" 2> "$T/err" || fail "connection failed: $(tail -n 3 "$T/err")"
cmp -s "$T/bulk" "$T/up" || fail "upload corrupted"
check_wire upload upMARK-lfn-q7

tid "subsystem: the subsystem name stays encrypted"
relay subsys
lfn_ssh "$LFN_TREE" "$RP" -v -oNoneEnabled=yes -oSetEnv=LFN_SETENV=subsetenvMARK-lfn-q7 \
    -s lfnpeer subsysMARK-lfn-q7 < /dev/null > "$T/out" 2> "$T/err" || fail "connection failed: $(tail -n 3 "$T/err")"
cmp -s "$T/bulk" "$T/out" || fail "subsystem output corrupted"
case "$(last_kex "$T/err")" in none*) ;; *) fail "no switch to cipher none: $(last_kex "$T/err")" ;; esac
check_wire subsystem subsysMARK-lfn-q7 subsetenvMARK-lfn-q7

tid "multiplexed session after the master switched: its requests stay encrypted"
relay mux
ctl="$S/ctl"
lfn_ssh "$LFN_TREE" "$RP" -v -E "$T/master.log" -oNoneEnabled=yes -M -S "$ctl" \
    -oControlPersist=no -fN lfnpeer || fail "mux master failed"
mpid=$("$LFN_TREE/ssh" -S "$ctl" -O check x 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
[ -n "$mpid" ] && LFN_PIDS+=("$mpid")
for _ in $(seq 50); do grep -q 'NOT ENCRYPTED' "$T/master.log" && break; sleep 0.1; done
grep -q 'NOT ENCRYPTED' "$T/master.log" || fail "mux master did not switch before the session"
for i in 1 2; do
	LFN_SENDENV=muxsendenv$i-MARK-lfn-q7 lfn_ssh "$LFN_TREE" "$RP" -S "$ctl" -oSendEnv=LFN_SENDENV \
	    lfnpeer "cat $T/bulk; : muxcmd$i-MARK-lfn-q7" > "$T/out" 2> "$T/err" || fail "mux session $i failed"
	cmp -s "$T/bulk" "$T/out" || fail "mux session $i download corrupted"
done
sleep 0.3
[ "$(last_kex "$T/master.log")" = "none umac-64-etm@openssh.com" ] ||
	fail "mux master not back on cipher none: $(last_kex "$T/master.log")"
check_wire mux muxcmd1-MARK-lfn-q7 muxcmd2-MARK-lfn-q7 muxsendenv1-MARK-lfn-q7 muxsendenv2-MARK-lfn-q7
"$LFN_TREE/ssh" -S "$ctl" -O exit x 2>/dev/null
lfn_finish
