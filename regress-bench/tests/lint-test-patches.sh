#!/usr/bin/env bash
# lint-test-patches: every test here says which patches it tests on one
# "# Patches:" line in its leading comment: the numbers of patches in
# patches/, or "none".  series-prefixes reads only that
# line to run each test at the first prefix of the series that has them
# all, so a number in prose elsewhere cannot tie a test to a patch.
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"
repo=$LFN_TOP
tid "one parsed # Patches: line per test, naming patches that exist"
n=0
for t in "$repo"/regress-bench/tests/*.sh; do
	name=$(basename "$t")
	lead=$(sed -n '2,/^[^#]/p' "$t" | grep '^#')
	c=$(grep -c '^# Patches:' <<< "$lead")
	[ "$c" = 1 ] || { fail "$name: $c '# Patches:' lines in its leading comment"; continue; }
	line=$(grep '^# Patches:' <<< "$lead")
	rest=${line#\# Patches: }
	case $rest in
	none) ;;
	*)
		for num in $rest; do
			[[ "$num" =~ ^0[0-9]{3}$ ]] || { fail "$name: '$num' on its Patches line is not a patch number"; continue; }
			[ -n "$(ls "$repo"/patches/"$num"-*.patch 2> /dev/null)" ] ||
				fail "$name: patch $num is not in patches/"
		done ;;
	esac
	n=$((n + 1))
done
verbose "$n tests checked"
lfn_finish
