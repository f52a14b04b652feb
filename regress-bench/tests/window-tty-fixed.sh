#!/usr/bin/env bash
# window-tty-fixed: a tty session keeps a fixed receive window at *both*
# ends (patch 0202): sshd learns of the tty only
# after the channel is open (pty-req), and used to grow it like a bulk
# session's; the client's tty window (1 MiB) was already fixed.  On a
# 200 ms link a tty session
# pushes bulk data upwards (text, so the line discipline passes it intact);
# sshd's log (LogLevel VERBOSE) must show no "receive window A -> B" for
# it, while a no-tty upload's window does grow (the link allows it).
# The X11 and overrun cases are in window-hostile.sh.  No timing assertions.
# Patches: 0202
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-tty-fixed
lfn_wan_link wt$$ 200 1gbit
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" "$NB"
c() { lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" "$@"; }

head -c 9000000 /dev/urandom | base64 > "$T/text"
n=$(wc -c < "$T/text")

tid "no-tty upload: sshd's window grows (the link allows it)"
m=$(mark)
c lfnpeer "cat > $T/up" < "$T/text" || fail "upload failed"
cmp -s "$T/text" "$T/up" || fail "upload corrupted"
sleep 0.5
check_grew "no-tty upload" "$(since "$m")"

tid "tty upload: sshd's window stays at upstream's 2 MiB"
m=$(mark); rm -f "$T/ttyup"
# raw mode (set before the data comes: the input waits 2 s) so that the
# pty passes bulk data as fast as a pipe would
(sleep 2; cat "$T/text") | c -tt lfnpeer "stty raw -echo; head -c $n > $T/ttyup" > /dev/null 2> "$T/tty.log" ||
	fail "tty session failed: $(tail -2 "$T/tty.log")"
sleep 0.5
since "$m" > /dev/null
cp "$T/sshd.part" "$T/sshd-tty.log"
w=$(grew "$T/sshd-tty.log")
[ "$w" -eq 0 ] || fail "sshd grew the tty session's window to $w: $(grep 'receive window' "$T/sshd-tty.log" | tail -1)"
[ "$(wc -c < "$T/ttyup")" -eq "$n" ] || fail "tty upload: $(wc -c < "$T/ttyup") of $n bytes"

tid "tty download: the client's window stays fixed"
c -v -tt lfnpeer "cat $T/text" > "$T/tty.out" 2> "$T/ttyd.log" < /dev/null || fail "tty download failed"
[ "$(grew "$T/ttyd.log")" -eq 0 ] || fail "client grew the tty window: $(grep 'receive window' "$T/ttyd.log" | tail -1)"
lfn_finish
