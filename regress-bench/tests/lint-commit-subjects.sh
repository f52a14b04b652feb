#!/usr/bin/env bash
# lint-commit-subjects: every commit since the rule was made (2026-12-06,
# after 2b939e0) has a subject of at most 72 characters, its details in
# the body, as git log --oneline, shortlog and mail readers show them.
# .githooks/commit-msg checks a commit as it is made (git config
# core.hooksPath .githooks).  Outside a git checkout (a release tarball)
# there is no history to check.
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init lint-commit-subjects
cd "$LFN_TOP"
git rev-parse --git-dir > /dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
cutoff=2b939e0
tid "commit subjects since $cutoff are at most 72 characters"
git cat-file -e "$cutoff^{commit}" 2> /dev/null || lfn_die "commit $cutoff not in this clone's history"
long=$(git log --format='%h %s' "$cutoff..HEAD" | awk '{ s = substr($0, index($0, " ") + 1); if (length(s) > 72) print $1 " (" length(s) ")" }')
[ -z "$long" ] || fail "subjects over 72 characters: $(echo $long)"
tid "the lint finds a long subject (self-check)"
echo "$(printf 'x%.0s' $(seq 1 73))" > "$T/msg"
sh .githooks/commit-msg "$T/msg" 2> /dev/null && fail "the commit-msg hook took a 73-character subject"
echo "short subject" > "$T/msg"
sh .githooks/commit-msg "$T/msg" || fail "the commit-msg hook refused a short subject"
lfn_finish
