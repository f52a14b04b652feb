#!/usr/bin/env bash
# lint-protocol-lfn: PROTOCOL.lfn (top of the tree) names everything the
# series puts on the wire.  The names come from the patched tree
# ($LFN_TREE) compared with upstream's source ($UPSTREAM_TREE, default
# build/stock, else the pinned archive, else build/series' "upstream"
# commit): every string literal ending in "@openssh-lfn"; sftp-server's
# request handlers (ext_name and -P/-p name) that upstream lacks; the
# SSH_FXP_VERSION extensions it advertises (compose_extension) and the
# extension names sftp-client.c recognises that upstream lacks; the names
# and string macros put on the wire with sshbuf/sshpkt_put_cstring that
# upstream does not send (version numbers aside); the banner token
# (version.h SSH_LFN) and the strings matched against a peer's version
# (strstr/strncmp in the transport, channel and auth code).  Each must be
# in PROTOCOL.lfn in double quotes, as PROTOCOL writes names.  Every patch
# PROTOCOL.lfn names by file stem must exist, and every patch of the
# series must be named (what it changes on the wire, or in the list of
# what does not change).  Controls: the extraction finds the series'
# names, finds upstream's own names in upstream's tree and leaves them out,
# and a PROTOCOL.lfn lacking one of the names fails.  Until
# openssh-portable carries the latest series, run it with
# LFN_TREE=build/series.
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"
doc=${PROTOCOL_LFN:-$LFN_TOP/PROTOCOL.lfn}
tmp=$(mktemp -d /tmp/lfn-protocol.XXXXXX) || lfn_die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# the source upstream shipped, to tell the series' names from upstream's:
# the stock build's, else the pinned archive's, else build/series' first
# commit
. "$LFN_TOP/upstream/pin"
tarball=${OPENSSH_TARBALL:-$LFN_TOP/build/dist/openssh-$OPENSSH_VERSION.tar.gz}
up=${UPSTREAM_TREE:-}
if [ -z "$up" ] && [ -f "$STOCK_TREE/sftp-server.c" ]; then
	up=$STOCK_TREE
elif [ -z "$up" ] && [ -f "$tarball" ]; then
	up=$tmp/upstream
	mkdir -p "$up"
	tar -xzf "$tarball" -C "$up" --strip-components=1 || lfn_die "cannot unpack $tarball"
elif [ -z "$up" ] && git -C "$LFN_TOP/build/series" rev-parse -q --verify upstream > /dev/null 2>&1; then
	up=$tmp/upstream
	mkdir -p "$up"
	git -C "$LFN_TOP/build/series" archive upstream | tar -x -C "$up" || lfn_die "git archive upstream failed"
fi
[ -n "$up" ] && [ -f "$up/sftp-server.c" ] ||
	lfn_die "no upstream source: build $STOCK_TREE, make fetch, import build/series or set UPSTREAM_TREE"
[ -f "$LFN_TREE/sftp-server.c" ] || lfn_die "$LFN_TREE has no sftp-server.c (set LFN_TREE)"
[ -f "$doc" ] || lfn_die "$doc is missing"

# flat FILE...: each file on one line, runs of blanks as one space (a call
# split over lines reads as one)
flat() {
	local f
	for f in "$@"; do [ -f "$f" ] && tr -s '\n\t ' '   ' < "$f"; echo; done
}

# literals TREE: "RULE<tab>NAME" lines, one per name TREE's code has in
# each rule (a tab: a name may begin with a space, as " lfn" does)
literals() {
	local t=$1 m v
	(
		cd "$t" || exit 1
		# every "...@openssh-lfn" string
		grep -ohE '"[^" ]*@openssh-lfn"' -- *.c *.h 2>/dev/null | tr -d '"' | sed 's/^/lfn-literal\t/'
		# sftp-server's handler rows { "name", "ext_name" or NULL, type, ...
		flat sftp-server.c sftp-server-*.c |
			grep -oE '\{ ?"[^"]+", ?(NULL|"[^"]*"), ?[A-Za-z0-9_]+, ?' |
			sed -E 's/^\{ ?"([^"]+)", ?(NULL|"([^"]*)").*/sftp-handler\t\1\nsftp-handler\t\3/' |
			grep -v $'^sftp-handler\t$'
		# the extensions SSH_FXP_VERSION advertises
		flat sftp-server.c sftp-server-*.c |
			grep -oE 'compose_extension\([^,()]+, ?"[^"]*"' | sed -E 's/.*"([^"]*)"$/version-ext\t\1/'
		# the extension names the client recognises
		flat sftp-client.c | grep -oE 'strcmp\([^,()]+, ?"[^"]*"' |
			sed -E 's/.*"([^"]*)"$/client-ext\t\1/'
		# names put on the wire: literals, and string macros resolved
		flat -- *.c | grep -oE '(sshbuf|sshpkt)_put_cstring\([^,()]+, ?"[^"]*"' |
			sed -E 's/.*"([^"]*)"$/put-cstring\t\1/'
		flat -- *.c | grep -oE '(sshbuf|sshpkt)_put_cstring\([^,()]+, ?[A-Z_][A-Z0-9_]*\)' |
			sed -E 's/.*, ?([A-Z0-9_]+)\)$/\1/' | sort -u | while read -r m; do
				v=$(grep -hE "^#define[[:space:]]+$m[[:space:]]+\"[^\"]*\"" -- *.c *.h 2>/dev/null |
					head -1 | sed -E 's/^[^"]*"([^"]*)".*/\1/')
				[ -n "$v" ] && printf 'put-cstring\t%s\n' "$v"
			done
		# the banner token, and what is matched against a peer's version
		sed -nE 's/^#define[[:space:]]+SSH_LFN[[:space:]]+"([^"]*)".*/banner-token\t\1/p' version.h
		flat channels.c channels-*.c sshconnect2.c kex.c kex-*.c compat.c \
		    clientloop.c clientloop-*.c serverloop.c session.c packet.c |
			grep -oE 'str(ncmp|str)\([^,()]+, ?"[^"]*"' | sed -E 's/.*"([^"]*)"$/peer-version\t\1/'
	) | grep -vE $'\t[0-9]*$' | LC_ALL=C sort -u
}

# names TREE: what TREE has that upstream has not (rule, name), and the
# "@openssh-lfn" literals and the banner token, which upstream never has
names() {
	LC_ALL=C comm -23 <(literals "$1") <(literals "$up" | grep -vE $'^(lfn-literal|banner-token)\t')
}

# missing DOC < names: the names DOC does not have in double quotes
missing() {
	local rule name
	while IFS=$'\t' read -r rule name; do
		grep -qF "\"$name\"" "$1" || echo "$name ($rule)"
	done
}

tid "the extraction finds the series' names in $LFN_TREE (control)"
names "$LFN_TREE" > "$tmp/names"
[ -s "$tmp/names" ] || fail "no names extracted from $LFN_TREE"
verbose "$(cut -f2 "$tmp/names" | LC_ALL=C sort -u | sed 's/.*/"&"/' | tr '\n' ' ')"
for want in check-file-handle check-file lfn1; do
	grep -q $'\t'"$want\$" "$tmp/names" || fail "the extraction misses \"$want\""
done

tid "upstream's names are found in upstream's tree and left out (control)"
literals "$up" > "$tmp/upstream-names"
for want in posix-rename@openssh.com limits@openssh.com; do
	grep -q $'^version-ext\t'"$want\$" "$tmp/upstream-names" ||
		fail "the extraction misses upstream's \"$want\" in $up"
	grep -q $'\t'"$want\$" "$tmp/names" && fail "upstream's \"$want\" is taken for the series'"
done
grep -qE $'^(lfn-literal|banner-token)\t' "$tmp/upstream-names" &&
	fail "$up has openssh-lfn's names: not upstream's source"

tid "every name is in PROTOCOL.lfn, in double quotes"
missing "$doc" < "$tmp/names" > "$tmp/missing"
while read -r m; do fail "$m is not in $doc"; done < "$tmp/missing"

tid "a PROTOCOL.lfn without \"check-file-handle\" fails (control)"
sed 's/"check-file-handle"//g' "$doc" > "$tmp/PROTOCOL.lfn"
missing "$tmp/PROTOCOL.lfn" < "$tmp/names" | grep -q '^check-file-handle (' ||
	fail "the check does not see a name missing"

tid "every patch PROTOCOL.lfn names (NNNN-slug) is in patches/"
for stem in $(grep -oE '\b0[0-9]{3}-[a-z][a-z0-9]*(-[a-z0-9]+)*' "$doc" | sort -u); do
	[ -f "$LFN_TOP/patches/$stem.patch" ] ||
		fail "PROTOCOL.lfn names $stem, which is not in patches/"
done

tid "every patch of the series is in PROTOCOL.lfn (its change, or section 7)"
for p in "$LFN_TOP"/patches/[0-9]*.patch; do
	num=$(basename "$p" | cut -c1-4)
	grep -qE "(^|[^0-9])$num([^0-9]|\$)" "$doc" ||
		fail "$(basename "$p" .patch) is not in PROTOCOL.lfn: say what it changes on the wire, or that it changes nothing"
done
lfn_finish
