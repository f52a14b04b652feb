#!/usr/bin/env bash
# packet-memory: the kept packet buffers and the padding pool (patches
# 0303/0306; issue 20, findings 6, 7 and 12), by a unit test built
# against the tree's objects (regress-bench/unit/packet-buffers.c, which
# compiles the tree's packet.c into itself):
#  - a received packet's plaintext (a USERAUTH_REQUEST) is cleared once
#    its parser consumed it, when the next packet is read;
#  - channel data left in the kept buffers (received and sent) is cleared
#    by ssh_packet_clear_kept() (called when idle and at channel free);
#  - a 200 KiB packet's allocation is released, not kept;
#  - a forked child does not send the parent's padding bytes.
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init packet-memory
UNIT="$LFN_TOP/regress-bench/unit"
[ -f "$LFN_TREE/libssh.a" ] && [ -f "$LFN_TREE/openbsd-compat/libopenbsd-compat.a" ] ||
	{ echo "tree not built (no libssh.a): skipped"; exit 77; }
mkv() { sed -n "s/^$1=//p" "$LFN_TREE/Makefile" | head -1 | sed "s/\$([A-Za-z_]*)//g"; }
CC_T=$(mkv CC); CFLAGS_T=$(mkv CFLAGS); CPPFLAGS_T=$(mkv CPPFLAGS)
LDFLAGS_T=$(mkv LDFLAGS); LIBS_T="$(mkv LIBS) $(mkv CHANNELLIBS)"
CC_T=${CC_T:-cc}

t=packet-buffers
tid "unit: $t"
# shellcheck disable=SC2086
if ! $CC_T $CFLAGS_T -I"$UNIT" -I"$LFN_TREE" -I"$LFN_TREE/openbsd-compat" -I"$LFN_TREE/openbsd-compat/include" $CPPFLAGS_T \
    -o "$T/$t" "$UNIT/$t.c" "$LFN_TREE/ssh-pkcs11-client.o" \
    "$LFN_TREE/ssh-sk-client.o" $LDFLAGS_T "$LFN_TREE/libssh.a" \
    "$LFN_TREE/openbsd-compat/libopenbsd-compat.a" $LIBS_T -lcrypto -lz \
    > "$T/$t.build.log" 2>&1; then
	cat "$T/$t.build.log"
	fail "$t did not build"
else
	"$T/$t" > "$T/$t.log" 2>&1 || { cat "$T/$t.log"; fail "$t failed"; }
	verbose "$(tail -1 "$T/$t.log")"
fi
lfn_finish
