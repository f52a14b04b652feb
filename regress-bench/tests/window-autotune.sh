#!/usr/bin/env bash
# window-autotune: bulk channels grow their receive window beyond upstream's
# 2 MiB on a long fat link (patch 0202), in both directions, for a session,
# a -L forward and a ControlMaster (mux) session; a tty session's window
# stays fixed; HPNDisabled (0205) turns growth off; every transfer is intact.
# Growth is read from the receiver's log (ssh -v, or sshd at LogLevel
# VERBOSE): "channel N: receive window A -> B".  No timing assertions.
# Patches: 0202 0205
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-autotune
lfn_wan_link wa$$ 100 1gbit

dd if=/dev/urandom of="$T/data" bs=1M count=24 status=none
port=$(lfn_free_port)
# Inner connections through the -L forward come from 127.0.0.1: their own
# session windows stay fixed, so growth in sshd's log is the forward's.
lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<EOF
Match Address 127.0.0.1
	HPNDisabled yes
EOF
# bg_ssh ARGS...: an ssh in the client namespace, started directly so that
# $! is ssh itself (killing a function's subshell would orphan it).
bg_ssh() {
	ip netns exec "$NA" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$port" \
	    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" "$@" &
}

c() { lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" "$@"; }

tid "session download: client window grows"
rm -f "$T/down"
c -v lfnpeer "cat $T/data" > "$T/down" 2> "$T/dl.log" || fail "download failed"
cmp -s "$T/data" "$T/down" || fail "download corrupted"
check_grew "session download" "$T/dl.log"
grep -q 'final receive window' "$T/dl.log" || fail "no final window logged"

tid "session upload: server window grows"
m=$(mark); rm -f "$T/up"
c lfnpeer "cat > $T/up" < "$T/data" || fail "upload failed"
cmp -s "$T/data" "$T/up" || fail "upload corrupted"
sleep 0.5
check_grew "session upload" "$(since "$m")"

tid "-L forward: both directions grow"
lport=$(( port + 1 ))
bg_ssh -v -E "$T/fwd.log" -N -o ExitOnForwardFailure=yes \
    -L "127.0.0.1:$lport:127.0.0.1:$port" lfnpeer
fpid=$!; LFN_PIDS+=("$fpid")
for _ in $(seq 1 100); do grep -q 'Local forwarding listening' "$T/fwd.log" 2>/dev/null && break; sleep 0.1; done
# An inner ssh through the forward: its bytes ride the -L channel.
inner() { lfn_ssh "$LFN_TREE" -n "$NA" -h 127.0.0.1 "$lport" "$@"; }
rm -f "$T/down"
inner lfnpeer "cat $T/data" > "$T/down" || fail "download through -L failed"
cmp -s "$T/data" "$T/down" || fail "download through -L corrupted"
check_grew "-L download (client side of the forward)" "$T/fwd.log"
m=$(mark); rm -f "$T/up"
inner lfnpeer "cat > $T/up" < "$T/data" || fail "upload through -L failed"
cmp -s "$T/data" "$T/up" || fail "upload through -L corrupted"
sleep 0.5
grep 'direct-tcpip\|receive window' "$(since "$m")" > "$T/fwd-srv.log"
check_grew "-L upload (server side of the forward)" "$T/fwd-srv.log"
kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null

tid "mux session: master's window grows; upload grows the server's"
ctl="$S/ctl.%C"
bg_ssh -v -E "$T/master.log" -N -o ControlMaster=yes -o ControlPath="$ctl" lfnpeer
mpid=$!; LFN_PIDS+=("$mpid")
for _ in $(seq 1 100); do
	c -o ControlPath="$ctl" -O check lfnpeer >/dev/null 2>&1 && break; sleep 0.1
done
rm -f "$T/down"
c -o ControlPath="$ctl" -o ControlMaster=no lfnpeer "cat $T/data" > "$T/down" || fail "mux download failed"
cmp -s "$T/data" "$T/down" || fail "mux download corrupted"
check_grew "mux download (master)" "$T/master.log"
m=$(mark); rm -f "$T/up"
c -o ControlPath="$ctl" -o ControlMaster=no lfnpeer "cat > $T/up" < "$T/data" || fail "mux upload failed"
cmp -s "$T/data" "$T/up" || fail "mux upload corrupted"
sleep 0.5
check_grew "mux upload (server)" "$(since "$m")"
c -o ControlPath="$ctl" -O exit lfnpeer >/dev/null 2>&1
wait "$mpid" 2>/dev/null

tid "tty session: window stays fixed"
base64 "$T/data" | head -c 6000000 > "$T/text"
c -v -tt lfnpeer "cat $T/text" > "$T/tty.out" 2> "$T/tty.log" < /dev/null || fail "tty session failed"
[ "$(grew "$T/tty.log")" -eq 0 ] || fail "tty session window grew: $(grep 'receive window' "$T/tty.log" | tail -1)"
n=$(tr -d '\r' < "$T/tty.out" | wc -c)
[ "$n" -eq "$(wc -c < "$T/text")" ] || fail "tty session output: $n bytes"

tid "HPNDisabled=yes / MaxChannelWindow=2M: window stays fixed"
for o in HPNDisabled=yes MaxChannelWindow=2M; do
	rm -f "$T/down"
	c -v -o "$o" lfnpeer "head -c 12582912 $T/data" > "$T/down" 2> "$T/off.log" || fail "$o: download failed"
	cmp -s "$T/down" <(head -c 12582912 "$T/data") || fail "$o: download corrupted"
	[ "$(grew "$T/off.log")" -eq 0 ] || fail "$o: window grew"
done

tid "options: ssh -G and sshd -T"
g=$("$LFN_TREE/ssh" -F /dev/null -G -o MaxChannelWindow=64M -o TcpRcvBufPoll=no -o HPNDisabled=yes x 2>&1)
grep -qx 'maxchannelwindow 67108864' <<<"$g" || fail "ssh -G maxchannelwindow"
grep -qx 'tcprcvbufpoll no' <<<"$g" || fail "ssh -G tcprcvbufpoll"
grep -qx 'hpndisabled yes' <<<"$g" || fail "ssh -G hpndisabled"
# 112M: the window plus the 10 % overrun grace stay below the 128 MiB
# buffer limit (an overrun of a full 128M window used to end in fatal());
# 128M (accepted before) means 112M
"$LFN_TREE/ssh" -F /dev/null -G x 2>&1 | grep -qx 'maxchannelwindow 117440512' || fail "ssh -G default"
"$LFN_TREE/ssh" -F /dev/null -G -o MaxChannelWindow=128M x 2>&1 | grep -qx 'maxchannelwindow 117440512' || fail "ssh -G 128M"
printf 'Host x\n\tHPNBufferSize 16384\n' > "$T/hpn_config"
"$LFN_TREE/ssh" -F "$T/hpn_config" -G x 2>&1 | grep -qi 'HPNBufferSize is deprecated' || fail "no HPNBufferSize warning"
"$LFN_TREE/ssh" -F /dev/null -G -o MaxChannelWindow=1G x >/dev/null 2>&1 && fail "MaxChannelWindow=1G accepted"
lfn_sshd_config "$LFN_TREE" "$port" > "$T/sshd_T" <<EOF
MaxChannelWindow 16M
Match User nobody
	MaxChannelWindow 4M
	HPNDisabled yes
EOF
t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T" 2>&1)
grep -qx 'MaxChannelWindow 16777216' <<<"$t" || fail "sshd -T maxchannelwindow: $(grep -i window <<<"$t")"
grep -qx 'TcpRcvBufPoll yes' <<<"$t" || fail "sshd -T tcprcvbufpoll"
t=$("$LFN_TREE/sshd" -T -f "$T/sshd_T" -C user=nobody,host=x,addr=1.2.3.4 2>&1)
grep -qx 'MaxChannelWindow 4194304' <<<"$t" || fail "sshd -T Match maxchannelwindow"
grep -qx 'HPNDisabled yes' <<<"$t" || fail "sshd -T Match hpndisabled"

lfn_finish
