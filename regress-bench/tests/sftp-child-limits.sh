#!/usr/bin/env bash
# sftp-child-limits: the programs scp and sftp start get the user's
# descriptor limit.  Files in flight (0271) raise scp's and sftp's soft
# RLIMIT_NOFILE toward the hard one; what a user would see go wrong is
# that limit leaking into what they start next: the ssh that scp starts
# for its next source, sftp's !command (before the fix both ran with the
# raised limit, e.g. 3048 instead of the user's 1024).
# With a soft limit of 256 (below the 4 descriptors a file the files in
# flight ask for): scp -r of two remote trees, each source a connection
# of its own, through an -S wrapper that records the limit each ssh gets;
# sftp -b with get -R and then !ulimit -Sn.  Both must see 256, and the
# raise must have happened (else the test proves nothing): the copies'
# own limit, read from /proc while the first copy of a slow tree runs,
# is above 256.
# Patches: 0271
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-child-limits
port=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$port" < /dev/null
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -gt 1024 ] || lfn_die "hard descriptor limit $hard: cannot test a raise"
soft=256
mkdir -p "$T/a" "$T/b"
for i in $(seq 1 40); do
	head -c 2000 /dev/urandom > "$T/a/f$i"
	head -c 2000 /dev/urandom > "$T/b/f$i"
done
cat > "$T/ssh-wrap" << EOF
#!/bin/sh
ulimit -Sn >> "$T/limits"
exec "$LFN_TREE/ssh" "\$@"
EOF
chmod +x "$T/ssh-wrap"

tid "scp -r of two remote sources: each ssh scp starts gets the user's limit"
rm -f "$T/limits"; rm -rf "$T/dst"; mkdir "$T/dst"
# (scp itself, not lfn_scp: a second -S leaks the first, upstream's scp)
( ulimit -Sn $soft && "$LFN_TREE/scp" -F "$T/ssh_config" -S "$T/ssh-wrap" -P "$port" \
	-o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 -q -r \
	"lfnpeer:$T/a" "lfnpeer:$T/b" "$T/dst/" ) || fail "scp -r of two sources failed"
diff -r "$T/a" "$T/dst/a" > /dev/null && diff -r "$T/b" "$T/dst/b" > /dev/null || fail "the copies differ"
[ "$(wc -l < "$T/limits" 2> /dev/null)" = 2 ] || fail "expected two ssh started, got: $(cat "$T/limits" 2> /dev/null)"
while read -r l; do
	[ "$l" = $soft ] || fail "an ssh scp started had a soft limit of $l, the user's is $soft"
done < "$T/limits"

tid "sftp -b: get -R, then !ulimit -Sn: the user's limit"
rm -rf "$T/dst"; mkdir "$T/dst"
printf 'get -R %s %s\n!ulimit -Sn > %s\n' "$T/a" "$T/dst/a" "$T/bang" > "$T/batch"
( ulimit -Sn $soft && lfn_sftp "$LFN_TREE" "$port" -q -b "$T/batch" lfnpeer ) > /dev/null ||
	fail "sftp -b failed"
diff -r "$T/a" "$T/dst/a" > /dev/null || fail "get -R: the copy differs"
[ "$(cat "$T/bang" 2> /dev/null)" = $soft ] ||
	fail "sftp's !command had a soft limit of '$(cat "$T/bang" 2> /dev/null)', the user's is $soft"

tid "the files in flight did raise the copy's own limit (else the above proves nothing)"
# sftp -D to an sftp-server slowed by a 1 s sleep before it starts: the
# client's limit is read once its first listing has come (a get -R holds
# the session open for the sleep in the second command)
printf 'get -R %s %s\n!sleep 2\n' "$T/a" "$T/dst/r" > "$T/batch2"
( ulimit -Sn $soft && exec "$LFN_TREE/sftp" -q -D "$LFN_TREE/sftp-server" -b "$T/batch2" ) > /dev/null 2>&1 &
spid=$!
raised=""
for _ in $(seq 1 100); do
	[ -d "$T/dst/r" ] && [ "$(ls "$T/dst/r" | wc -l)" -ge 40 ] &&
		raised=$(awk '/^Max open files/ {print $4}' "/proc/$spid/limits" 2> /dev/null) && break
	sleep 0.05
done
wait "$spid" || fail "sftp -D failed"
[ -n "$raised" ] && [ "$raised" -gt $soft ] ||
	fail "the copy's soft limit stayed '$raised': no raise to restore"
verbose "the copy ran with a soft limit of $raised; its children with $soft"
lfn_finish
