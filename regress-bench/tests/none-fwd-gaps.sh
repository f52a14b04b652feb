#!/usr/bin/env bash
# none-fwd-gaps: "A tty or forwarding is never
# switched" also covers stdio forwarding and multiplexing proxy clients:
#  - ssh -W (as a ProxyCommand) and the ssh that ProxyJump starts (both with
#    NoneEnabled) never switch; the connection they carry may;
#  - a ControlMaster that switched re-keys back to encryption for good when
#    a mux client asks for stdio forwarding (ssh -S ctl -W), or when an
#    `ssh -O proxy` client connects (its tty/forwarding requests pass the
#    master unseen), here one asking for a tty.
# (~C added forwards need a tty session, which is never switched; the
# client refuses none there as well.)
# Needs: 0404 (the proxy client), 0405 (-W, ProxyJump).
# Patches: 0404 0405
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init none-fwd-gaps
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }
dd if=/dev/urandom of="$T/data" bs=1M count=2 status=none
p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" <<< "NoneEnabled yes"
slog=$SSHD_LOG
switched() { sleep 0.3; grep -c 'switched to cipher none' "$slog"; }
last_kex() {
	grep 'kex: client->server cipher:' "$1" | tail -n1 |
	    sed 's/.*cipher: \([^ ]*\) MAC: \([^ ]*\) .*/\1 \2/'
}
cat > "$T/ssh_config.jump" <<EOF
Host jump target
	HostName 127.0.0.1
	Port $p
	HostKeyAlias lfnpeer
Host target
	ProxyJump jump
Host *
	NoneEnabled yes
Include $T/ssh_config
EOF

tid "ssh -W as ProxyCommand (NoneEnabled) is not switched"
n0=$(switched)
lfn_ssh "$LFN_TREE" "$p" -v -oProxyCommand="$LFN_TREE/ssh -F $T/ssh_config -oLogLevel=VERBOSE -oNoneEnabled=yes -oHostKeyAlias=lfnpeer -p $p -W %h:%p 127.0.0.1" \
    lfnpeer "cat $T/data" > "$T/out" 2> "$T/err" || fail "connection failed: $(tail -n 3 "$T/err")"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
n=$(( $(switched) - n0 ))
[ "$n" = 0 ] || fail "$n connection(s) switched to cipher none (the -W one must not; the inner one has NoneEnabled off)"
grep -q 'not switching to cipher none: forwarding requested' "$T/err" || fail "-W ssh printed no notice"

tid "ProxyJump with NoneEnabled: the jump (-W) connection is not switched, the target may be"
n0=$(switched)
PATH="$LFN_TREE:$PATH" "$LFN_TREE/ssh" -F "$T/ssh_config.jump" -v target "cat $T/data" \
    > "$T/out" 2> "$T/err" || fail "connection failed: $(tail -n 3 "$T/err")"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
n=$(( $(switched) - n0 ))
[ "$n" = 1 ] || fail "$n connections switched, want 1 (the target session, not the jump)"
grep -q 'not switching to cipher none: forwarding requested' "$T/err" || fail "jump ssh printed no notice"

# mux_master: start a switched ControlMaster; sets CTL, MLOG
mux_master() {
	CTL="$S/ctl.$1"; MLOG="$T/master.$1.log"
	lfn_ssh "$LFN_TREE" "$p" -v -E "$MLOG" -oNoneEnabled=yes -M -S "$CTL" -oControlPersist=no -fN lfnpeer ||
		fail "mux master failed"
	mpid=$("$LFN_TREE/ssh" -S "$CTL" -O check x 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
	[ -n "$mpid" ] && LFN_PIDS+=("$mpid")
	for _ in $(seq 50); do grep -q 'NOT ENCRYPTED' "$MLOG" && break; sleep 0.1; done
	grep -q 'NOT ENCRYPTED' "$MLOG" || fail "mux master did not switch"
}
# master_encrypted WHAT: the master re-keyed to encryption for good
master_encrypted() {
	sleep 0.3
	grep -q "re-keying to encrypt the session again" "$MLOG" || fail "$1: master did not re-encrypt"
	case "$(last_kex "$MLOG")" in none*|"") fail "$1: master still on cipher none: $(last_kex "$MLOG")" ;; esac
	# and it stays encrypted for a later plain session
	lfn_ssh "$LFN_TREE" "$p" -S "$CTL" lfnpeer "cat $T/data" > "$T/out" 2>/dev/null || fail "$1: later mux session failed"
	cmp -s "$T/data" "$T/out" || fail "$1: later mux download corrupted"
	sleep 0.3
	case "$(last_kex "$MLOG")" in none*|"") fail "$1: master switched again after stdio forwarding/proxy" ;; esac
	"$LFN_TREE/ssh" -S "$CTL" -O exit x 2>/dev/null
}

tid "mux stdio forwarding (ssh -S ctl -W) re-encrypts the master for good"
mux_master stdio
lfn_ssh "$LFN_TREE" "$p" -oProxyCommand="$LFN_TREE/ssh -S $CTL -W %h:%p x" lfnpeer "cat $T/data" \
    > "$T/out" 2> "$T/err" || fail "connection over mux stdio forwarding failed: $(tail -n 3 "$T/err")"
cmp -s "$T/data" "$T/out" || fail "download corrupted"
master_encrypted "mux -W"

tid "ssh -O proxy client asking for a tty re-encrypts the master for good"
mux_master proxy
"$LFN_TREE/ssh" -F "$T/ssh_config" -O proxy -S "$CTL" -tt lfnpeer "echo proxy-tty-ok" < /dev/null > "$T/out" 2> "$T/err" ||
	fail "proxy tty session failed: $(tail -n 3 "$T/err")"
grep -q proxy-tty-ok "$T/out" || fail "proxy tty session output missing"
master_encrypted "-O proxy"
lfn_finish
