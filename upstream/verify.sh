# upstream/verify.sh — how upstream/fetch and upstream/prepare prove that a
# source archive is the pinned release (sourced after upstream/pin, bash).
#
#   src_tree_id DIR          git tree id of DIR's files (as `git add -A -f &&
#                            git write-tree` in a fresh repo would print)
#   src_unpack ARCHIVE DIR   unpack into the empty DIR; prints the one top
#                            directory (openssh-X/, openssh-portable-V_X/, ...)
#   src_verify ARCHIVE [DIR] 0 if ARCHIVE is the pinned release; sets
#                            SRC_KIND (release | git-tree) and SRC_HOW (what
#                            proved it; SRC_ASC: the .asc, if that proved
#                            it).  With DIR (empty), the unpacked tree
#                            is left in DIR/$SRC_TOP.  Else prints why not.
# Release tarballs are proved by OPENSSH_SHA256, or while that is unknown by
# ARCHIVE.asc with the committed release key; git archives by tree id.

# upstream/: the committed release key is there
OPENSSH_PIN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# git with the user's configuration ignored, so nothing (autocrlf, filters,
# filemode) changes what a tree id means.
src_git() {
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
	git -c core.autocrlf=false -c core.filemode=true -c core.symlinks=true \
	    -c core.safecrlf=false "$@"
}

src_tree_id() {
	local g
	g=$(mktemp -d "${TMPDIR:-/tmp}/openssh-lfn-tree.XXXXXX")
	src_git init -q --bare "$g" &&
	src_git --git-dir="$g" --work-tree="$1" add -A -f . &&
	src_git --git-dir="$g" --work-tree="$1" write-tree
	local rc=$?
	rm -rf "$g"
	return $rc
}

src_unpack() {
	local n
	tar --no-same-owner -xf "$1" -C "$2" 2>/dev/null || { echo "not a tar archive"; return 1; }
	n=$(find "$2" -mindepth 1 -maxdepth 1 | wc -l)
	if [ "$n" != 1 ] || [ ! -d "$(find "$2" -mindepth 1 -maxdepth 1)" ]; then
		echo "does not unpack to one top directory"; return 1
	fi
	basename "$(find "$2" -mindepth 1 -maxdepth 1)"
}

# gpgv needs a binary keyring: de-armor the committed key with base64(1).
src_gpgv() {	# FILE SIG
	local k rc
	command -v gpgv >/dev/null || { echo "gpgv not installed"; return 1; }
	k=$(mktemp "${TMPDIR:-/tmp}/openssh-lfn-key.XXXXXX")
	sed -e '1,/^$/d' -e '/^=/,$d' "$OPENSSH_PIN_DIR/openssh-release-key.asc" | base64 -d > "$k"
	gpgv --keyring "$k" "$2" "$1" > "$k.log" 2>&1; rc=$?
	[ $rc = 0 ] || sed 's/^/    gpgv: /' "$k.log"
	rm -f "$k" "$k.log"
	return $rc
}

src_verify() {
	local f=$1 keep=${2:-} sum tmp top tid
	SRC_KIND="" SRC_HOW="" SRC_TOP="" SRC_ASC=""
	[ -f "$f" ] || { echo "no such file"; return 1; }
	sum=$(sha256sum "$f" | cut -d' ' -f1)
	if [ -n "$OPENSSH_SHA256" ] && [ "$sum" = "$OPENSSH_SHA256" ]; then
		SRC_KIND=release SRC_HOW="release tarball, SHA-256 $sum (upstream/pin)"
	elif [ -z "$OPENSSH_SHA256" ] && [ -f "$f.asc" ] && src_gpgv "$f" "$f.asc" >/dev/null 2>&1; then
		SRC_KIND=release SRC_ASC=$f.asc
		SRC_HOW="release tarball, signature $(basename "$f").asc (release key 736060BA; SHA-256 not pinned)"
	fi
	if [ -n "$SRC_KIND" ] && [ -z "$keep" ]; then return 0; fi
	tmp=${keep:-$(mktemp -d "${TMPDIR:-/tmp}/openssh-lfn-unpack.XXXXXX")}
	if ! top=$(src_unpack "$f" "$tmp"); then
		[ -n "$keep" ] || rm -rf "$tmp"
		echo "$top"; return 1
	fi
	SRC_TOP=$top
	[ -n "$SRC_KIND" ] && return 0
	tid=$(src_tree_id "$tmp/$top") || tid="(git failed)"
	[ -n "$keep" ] || rm -rf "$tmp"
	if [ -n "$OPENSSH_GIT_TREE" ] && [ "$tid" = "$OPENSSH_GIT_TREE" ]; then
		SRC_KIND=git-tree SRC_HOW="git archive of $OPENSSH_GIT_TAG, tree id $tid (upstream/pin)"
		return 0
	fi
	echo "SHA-256 $sum is not the pinned release tarball's (${OPENSSH_SHA256:-none pinned})"
	if [ -z "$OPENSSH_SHA256" ]; then
		if [ -f "$f.asc" ]; then echo "  and $f.asc does not verify with the release key"
		else echo "  and there is no signature $f.asc beside it"; fi
	fi
	echo "  and its tree id $tid is not $OPENSSH_GIT_TAG's (${OPENSSH_GIT_TREE:-none pinned})"
	return 1
}
