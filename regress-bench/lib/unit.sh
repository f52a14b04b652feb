# regress-bench/lib/unit.sh — build regress-bench/unit/*.c against the
# tree's objects (sourced after sshenv.sh and lfn_env_init, bash).
#
#   lfn_unit_init                  # skip (77) unless $LFN_TREE is built
#   lfn_unit_build NAME [OBJ...] && "$T/NAME"
# shellcheck shell=bash

# lfn_unit_init: skip the test (exit 77) unless $LFN_TREE is built (no
# libssh.a); set UNIT and the tree's CC_T CFLAGS_T CPPFLAGS_T LDFLAGS_T
# LIBS_T, read from its Makefile.
lfn_unit_init() {
	UNIT="$LFN_TOP/regress-bench/unit"
	[ -f "$LFN_TREE/libssh.a" ] && [ -f "$LFN_TREE/openbsd-compat/libopenbsd-compat.a" ] ||
		{ echo "tree not built (no libssh.a): skipped"; exit 77; }
	CC_T=$(_lfn_mkv CC); CFLAGS_T=$(_lfn_mkv CFLAGS); CPPFLAGS_T=$(_lfn_mkv CPPFLAGS)
	LDFLAGS_T=$(_lfn_mkv LDFLAGS); LIBS_T="$(_lfn_mkv LIBS) $(_lfn_mkv CHANNELLIBS)"
	CC_T=${CC_T:-cc}
}
_lfn_mkv() { sed -n "s/^$1=//p" "$LFN_TREE/Makefile" | head -1 | sed "s/\$([A-Za-z_]*)//g"; }

# lfn_unit_build NAME [OBJ...]: compile $UNIT/NAME.c with the tree's flags
# and link it with OBJ (objects of the tree, e.g. $LFN_TREE/ssh-sk-client.o),
# libssh.a and libopenbsd-compat.a into $T/NAME.  The compiler's output is
# in $T/NAME.build.log; non-zero when it did not build.
lfn_unit_build() {
	local t=$1; shift
	# shellcheck disable=SC2086
	$CC_T $CFLAGS_T -I"$UNIT" -I"$LFN_TREE" -I"$LFN_TREE/openbsd-compat" \
	    -I"$LFN_TREE/openbsd-compat/include" $CPPFLAGS_T \
	    -o "$T/$t" "$UNIT/$t.c" "$@" $LDFLAGS_T "$LFN_TREE/libssh.a" \
	    "$LFN_TREE/openbsd-compat/libopenbsd-compat.a" $LIBS_T -lcrypto -lz \
	    > "$T/$t.build.log" 2>&1
}
