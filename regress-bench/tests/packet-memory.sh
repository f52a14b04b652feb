#!/usr/bin/env bash
# packet-memory: the kept packet buffers (patch 0303), by a unit test
# built against the tree's objects (regress-bench/unit/packet-buffers.c,
# which compiles the tree's packet.c into itself):
#  - a received packet's plaintext (a USERAUTH_REQUEST) is cleared once
#    its parser consumed it, when the next packet is read, and the
#    incoming packet keeps its allocation;
#  - channel data, received and sent, is cleared as any other packet;
#  - a 200 KiB packet's allocation is released, not kept.
# Patches: 0303
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/unit.sh"
trap lfn_cleanup EXIT
lfn_env_init packet-memory
lfn_unit_init

t=packet-buffers
tid "unit: $t"
if ! lfn_unit_build "$t" "$LFN_TREE/ssh-pkcs11-client.o" "$LFN_TREE/ssh-sk-client.o"; then
	cat "$T/$t.build.log"
	fail "$t did not build"
else
	"$T/$t" > "$T/$t.log" 2>&1 || { cat "$T/$t.log"; fail "$t failed"; }
	verbose "$(tail -1 "$T/$t.log")"
fi
lfn_finish
