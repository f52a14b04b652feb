#!/usr/bin/env bash
# lint-fuzz-outputs: no libFuzzer output is committed.  A fuzzer writes its
# findings as crash-*, leak-*, timeout-*, oom-* and slow-unit-* (named by
# the input's SHA-1) and the inputs it keeps under bare SHA-1 names; they
# belong in build/fuzz/ (regress-bench/fuzz/run), and a reproducer worth
# keeping goes into regress-bench/fuzz/known/ or corpus/ under a name that
# says what it shows.  One was committed at the top of the tree once and
# went unnoticed; .gitignore now ignores those names and this fails when
# one is tracked anyway (git add -f).
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"
repo=$LFN_TOP
re='(^|/)((crash|leak|timeout|oom|slow-unit)-[^/]*|[0-9a-f]{40})$'
tid "no fuzzer output (crash-*, leak-*, timeout-*, oom-*, slow-unit-*, SHA-1 names) is in the tree"
if git -C "$repo" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	found=$(git -C "$repo" ls-files | grep -E "$re")
else
	# not a checkout (an unpacked tarball): the files outside what builds make
	found=$(cd "$repo" && find . -path ./build -prune -o -path ./openssh-portable -prune -o \
		-type f -print | sed 's|^\./||' | grep -E "$re")
fi
[ -z "$found" ] || fail "fuzzer outputs are tracked: $(tr '\n' ' ' <<< "$found")"
tid "the check sees one (control: a name like the committed one matches)"
grep -qE "$re" <<< "leak-3efc7c37ed3284e8775aaa4c46952b9fcb13483a" || fail "the pattern misses a leak-* artifact"
grep -qE "$re" <<< "regress-bench/fuzz/corpus/x/overrun-small" && fail "the pattern matches a named seed"
lfn_finish
