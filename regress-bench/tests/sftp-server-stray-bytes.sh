#!/usr/bin/env bash
# sftp-server-stray-bytes: a client that sends INIT, then the start of a
# packet that never comes (0-4 bytes), then hangs up must not leave a
# spinning sftp-server behind.  A regression guard for our sftp-server's
# loop that works off every complete request: a loop that took 4 zero
# bytes (a packet length of 0) for a complete request process() would not
# take ran at 100 % CPU for ever, the process outliving its session through
# sshd (one per session: a remote CPU denial of service; 0266, now
# held (git commit 7ca8591), brought it).  The loop is 0104's again, which stops
# when process() takes nothing; this keeps any later change to it honest.
# lib/sftp-stray-bytes.py drives the binary directly: it must exit on the
# EOF within a second (a correct one takes milliseconds; one that used no
# CPU by then, starved on a busy machine, gets 5 s more) having used under
# 0.5 s of CPU (the defect: all of it).  Stock 10.5p1's sftp-server (one
# request per poll(), upstream's loop) runs it too, as the control.
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init sftp-server-stray-bytes
H="$LFN_TOP/regress-bench/lib/sftp-stray-bytes.py"

for t in "$LFN_TREE" ${STOCK_TREE:+"$STOCK_TREE"}; do
	[ -x "$t/sftp-server" ] || { [ "$t" = "$LFN_TREE" ] && lfn_die "no $t/sftp-server"; continue; }
	tid "$(basename "$t")'s sftp-server exits on EOF after INIT and 0-4 stray bytes"
	python3 "$H" "$t/sftp-server" "$T" > "$T/out" 2>&1 || fail "$(grep -v '^ok' "$T/out")"
	verbose "$(tr '\n' ';' < "$T/out")"
done
lfn_finish
