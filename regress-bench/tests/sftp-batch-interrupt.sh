#!/usr/bin/env bash
# sftp-batch-interrupt: Ctrl-C during a command of sftp -b (or of commands
# on a pipe) ends the session with exit 1 (0107).  What a user would see
# go wrong: a batch whose upload was interrupted going on with its next
# commands and exiting 0, a partial file on the server taken for a whole
# one by the script that ran it.
# sftp -D (the client talks to sftp-server directly) with -l 8000 (1 MB/s)
# puts a 32 MiB file, then a small one; SIGINT once the big one has
# started: exit 1, the small file not copied.  The same with the commands
# on stdin instead of -b.  Upstream exits 0 and copies the small file.
# Patches: 0107
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-batch-interrupt
head -c 32M /dev/urandom > "$T/big"
echo small > "$T/small"
printf 'put %s %s\nput %s %s\n' "$T/big" "$T/dst/big" "$T/small" "$T/dst/small" > "$T/batch"

for how in batch pipe; do
	tid "SIGINT during a put of sftp's $how: exit 1, the next command not run"
	rm -rf "$T/dst"; mkdir "$T/dst"
	if [ $how = batch ]; then
		"$LFN_TREE/sftp" -l 8000 -D "$LFN_TREE/sftp-server" -b "$T/batch" > "$T/out" 2> "$T/err" &
	else
		"$LFN_TREE/sftp" -l 8000 -D "$LFN_TREE/sftp-server" < "$T/batch" > "$T/out" 2> "$T/err" &
	fi
	pid=$!
	for i in $(seq 1 100); do
		[ -s "$T/dst/big" ] && break
		sleep 0.1
	done
	[ -s "$T/dst/big" ] || fail "$how: the upload did not start in 10 s"
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc -eq 1 ] || fail "$how: exit $rc after the interrupt (want 1): $(tail -n 3 "$T/err")"
	[ -e "$T/dst/small" ] && fail "$how: the command after the interrupted one ran"
	grep -q Interrupt "$T/err" || fail "$how: no 'Interrupt' on stderr: $(tail -n 3 "$T/err")"
done
lfn_finish
