#!/usr/bin/env bash
# window-hostile: a hostile server (python3-paramiko, regress-bench/lib/
# hostile-window.py) abuses the client's receive windows (patches 0201 and
# 0202, with 0203 so that it takes seconds rather than minutes):
#  - overrun: every round it sends the whole window plus 9 % (upstream's
#    grace is 10 %) while the consumer keeps up.  The client must never
#    grant back what was sent beyond the window: the window it grants stays
#    within MaxChannelWindow (2M here: no growth), and within the fixed
#    1 MiB of a tty session.  (Before: +9 % per round, without bound.)
#    The window granted is read from the client's own -vv log ("window W
#    sent adjust A"): the server's running count drifts when grants cross
#    its bursts.
#  - x11: an X11 channel the server opens keeps its fixed window under
#    bulk data the consumer keeps up with (the client's RTT is 1 s: the
#    session's open is confirmed late), and under overruns.
#  - full: the session window grows to the client's cap (default), the
#    consumer stops, the window is filled and overrun by its 10 % grace:
#    the client must disconnect with a protocol error ("peer ignored
#    channel window"), not die in fatal() at the 128 MiB buffer limit.
# The sshd side of the fixed tty window is window-tty-fixed.sh.
# Patches: 0201 0202 0203
. "$(dirname "$0")/../lib/sshenv.sh"
lfn_paramiko_python
trap 'lfn_cleanup' EXIT
lfn_env_init window-hostile
H="$LFN_TOP/regress-bench/lib/hostile-window.py"
# hostile MODE LABEL SSH-ARGS...: run the hostile server against our ssh
hostile() {
	local mode=$1 label=$2 rc; shift 2
	"$PY" "$H" "$mode" "$T/host_ed25519" "$T/$label.log" -- \
	    "$LFN_TREE/ssh" -F "$T/ssh_config" -o HostKeyAlias=lfnpeer \
	    -o BatchMode=yes -vv "$@" -p '{PORT}' 127.0.0.1 cat > "$T/$label.out" 2>&1
	rc=$?
	sed 's/^/    /' "$T/$label.out"
	[ "$rc" -eq 0 ] || fail "$label (client log: $T/$label.log)"
}

tid "overrun rounds, bulk session (MaxChannelWindow 2M): never granted back"
hostile overrun:2097152:4 session -o MaxChannelWindow=2M
tid "overrun rounds, tty session (fixed 1 MiB): never granted back"
hostile overrun:1048576:4 tty -tt
tid "X11 channel: fixed 2 MiB window under bulk data and overruns"
hostile x11:2097152:3 x11 -X -o ForwardX11Trusted=yes
tid "full window (default cap) overrun by its grace: protocol error, no fatal()"
hostile full full
lfn_finish
