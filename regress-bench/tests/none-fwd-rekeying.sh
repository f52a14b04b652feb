#!/usr/bin/env bash
# none-fwd-rekeying: a forwarding request never goes out unencrypted, also
# on a switched connection that keeps re-keying.  A ControlMaster that
# switched to cipher none (NoneEnabled) carries a mux session's download
# with RekeyLimit 1M on an emulated 800 ms link, so that it re-keys (to
# none) over and over, each key exchange taking two round trips; a mux
# client then asks for `-O forward -R SOCKET:...`.  The socket path is
# what the user typed: it must appear nowhere in a capture of the
# connection, sshd must grant the forward, and the master must say it
# encrypted the session again (0404).  The request cannot be caught inside
# a key exchange: the client handles mux control channels only between
# key exchanges (channel_handler() skips non-open channels while
# re-keying), and 0404 re-keys without none before it sends the request.
# Control: with NoneForwarding yes the same request goes out with cipher
# none, and the capture does show the path (so the check can see a leak).
# Needs: 0401, 0404.
# Patches: 0401 0404
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init none-fwd-rekeying
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }
command -v tcpdump > /dev/null || { echo "FATAL: tcpdump missing (./install-deps installs it)"; exit 1; }
lfn_wan_link nr$$ 800 100mbit
p=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$p" "$NB" <<< "NoneEnabled yes"
slog=$SSHD_LOG
kexinits() { grep -c 'SSH2_MSG_KEXINIT sent' "$1"; }

# forward_while_rekeying TAG [ssh options]: master + download, then the
# forward right after a KEXINIT; sets FRC (-O forward's exit), CAP, MLOG,
# MARKER
forward_while_rekeying() {
	local tag=$1 ctl="$S/ctl.$1" tp n; shift
	MLOG="$T/master.$tag.log" CAP="$T/cap.$tag.pcap" MARKER="lfnmark$$$tag"
	: > "$MLOG"
	ip netns exec "$NA" tcpdump -i any -n -U -s 0 -w "$CAP" "tcp port $p" 2> "$T/tcpdump.err" & tp=$!
	LFN_PIDS+=("$tp")
	for _ in $(seq 50); do [ -s "$CAP" ] && break; sleep 0.1; done
	lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p" -v -E "$MLOG" -oNoneEnabled=yes \
	    -oRekeyLimit=1M "$@" -M -S "$ctl" -oControlPersist=no -N lfnpeer < /dev/null &
	LFN_PIDS+=("$!")
	for _ in $(seq 150); do grep -q 'NOT ENCRYPTED' "$MLOG" && break; sleep 0.1; done
	grep -q 'NOT ENCRYPTED' "$MLOG" || { fail "$tag: the master did not switch to none"; return; }
	"$LFN_TREE/ssh" -S "$ctl" lfnpeer "head -c 100000000 /dev/zero" > /dev/null 2>&1 &
	LFN_PIDS+=("$!")
	for _ in $(seq 300); do grep -q 'rekeyed: cipher none' "$MLOG" && break; sleep 0.05; done
	grep -q 'rekeyed: cipher none' "$MLOG" || { fail "$tag: no re-key to none under the download"; return; }
	n=$(kexinits "$MLOG")
	for _ in $(seq 1000); do [ "$(kexinits "$MLOG")" -gt "$n" ] && break; sleep 0.01; done
	"$LFN_TREE/ssh" -S "$ctl" -O forward -R "$S/$MARKER.sock:127.0.0.1:$p" x > "$T/fwd.$tag.out" 2>&1
	FRC=$?
	sleep 1
	"$LFN_TREE/ssh" -S "$ctl" -O exit x > /dev/null 2>&1
	sleep 1; kill "$tp" 2>/dev/null; wait "$tp" 2>/dev/null
}

tid "a forward requested while the switched master keeps re-keying goes out encrypted"
forward_while_rekeying enc
[ $FRC = 0 ] || fail "-O forward failed: $(cat "$T/fwd.enc.out")"
grep 'NoneEnabled: refused' "$slog" && fail "sshd refused the forward: it came unencrypted"
[ -S "$S/$MARKER.sock" ] || fail "the forwarded socket was not created"
grep -aq "$MARKER" "$CAP" && fail "the forward's socket path is in the capture in clear"
grep -q 'session encrypted again' "$MLOG" || fail "the master did not re-key to encryption"

tid "control: with NoneForwarding the path does go out in clear (and sshd refuses)"
forward_while_rekeying clear -oNoneForwarding=yes
grep -aq "$MARKER" "$CAP" || fail "control: the socket path is not in the capture: the check cannot see a leak"
[ $FRC = 0 ] && fail "control: sshd granted a forward requested without encryption"
lfn_finish
