#!/usr/bin/env bash
# sftp-reply-engine: the SFTP client's reply engine (sftp-client.c:
# sftp_send_req(), sftp_pump(), the request table, the held queue), by a
# unit test built against the tree's objects (regress-bench/unit/
# sftp-engine.c, which compiles the tree's sftp-client.c into itself and
# talks to a scripted server over a socketpair):
#  - inert: synchronous calls alone never poll and leave no entry behind;
#  - out-of-order replies run each completion once, with its reply;
#  - a synchronous call amid completions gets its own reply, the
#    completions whose replies come first running meanwhile;
#  - the held bound (replies, bytes) and a reply to nothing sent are
#    fatal, with upstream's texts, after one LOST each;
#  - sftp_free() and a closed connection: LOST exactly once, in send order;
#  - a server that stops reading while its replies wait: no deadlock.
# Skipped on a tree without the engine (before 0207-sftp-reply-engine;
# doc/sftp-client-engine.md).
# Patches: 0207
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/unit.sh"
trap lfn_cleanup EXIT
lfn_env_init sftp-reply-engine
lfn_unit_init

grep -q sftp_send_req "$LFN_TREE/sftp-client.h" ||
	{ echo "tree has no reply engine (sftp_send_req): skipped"; exit 77; }
t=sftp-engine
tid "unit: $t"
objs=""
# the objects sftp-client.c calls, as the tree has them (sftp-hash from
# 0262, sftp-pipeline from 0271, sftp-split and sftp-part from 0273);
# an object whose source is gone is a stale one and left out
for o in sftp-common sftp-hash progressmeter sftp-pipeline sftp-split \
    sftp-part; do
	[ -f "$LFN_TREE/$o.o" ] && [ -f "$LFN_TREE/$o.c" ] &&
		objs="$objs $LFN_TREE/$o.o"
done
# shellcheck disable=SC2086
if ! lfn_unit_build "$t" $objs; then
	cat "$T/$t.build.log"
	fail "$t did not build"
else
	"$T/$t" > "$T/$t.log" 2>&1 || { cat "$T/$t.log"; fail "$t failed"; }
	verbose "$(tail -2 "$T/$t.log" | tr '\n' ' ')"
fi
lfn_finish
