#!/usr/bin/env bash
# sftp-server-policy: an admin's -P/-p deny and allow check-file-handle
# (0262, the one request the series adds to sftp-server) under the name the
# man page says, and its alias check-file (paramiko's name: answered with
# hashes under -P check-file-handle before) with it; check-file answers
# only handles opened for reading; -Q requests lists check-file-handle once
# and not the alias (lib/sftp-server-policy.py drives the binary directly).
# Patches: 0262
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init sftp-server-policy

tid "-P/-p for check-file-handle and its alias check-file"
python3 "$LFN_TOP/regress-bench/lib/sftp-server-policy.py" "$LFN_TREE/sftp-server" "$T" > "$T/out" 2>&1 ||
	fail "$(grep -v '^ok' "$T/out")"
verbose "$(grep -c '^ok' "$T/out") checks passed"
lfn_finish
