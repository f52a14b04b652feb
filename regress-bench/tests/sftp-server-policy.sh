#!/usr/bin/env bash
# sftp-server-policy: an admin's -P/-p deny and allow what the man page says,
# under the names it says, for every request the series added:
# check-file-handle and its alias check-file (paramiko's name: answered
# with hashes under -P check-file-handle before), open-copy (and open),
# init-requests (what an INIT carries), the reads and close an open-copy
# makes (read, close); check-file answers only handles opened for reading;
# -Q requests lists each name once (lib/sftp-server-policy.py drives the
# binary directly).  Then, through sshd: sftp against a server that refuses
# init-requests falls back to asking after the version and copies whole.
# Patches: 0262 0265 0266
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init sftp-server-policy

tid "-P/-p for check-file(-handle), open-copy, init-requests and the made reads"
python3 "$LFN_TOP/regress-bench/lib/sftp-server-policy.py" "$LFN_TREE/sftp-server" "$T" > "$T/out" 2>&1 ||
	fail "$(grep -v '^ok' "$T/out")"
verbose "$(grep -c '^ok' "$T/out") checks passed"

port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port"
head -c 3000000 /dev/urandom > "$T/src"
tid "sftp against sftp-server -P init-requests: copies up and down, the refusal logged"
srv="$LFN_TREE/sftp-server -e -l VERBOSE -P init-requests"
printf 'put %s %s\nget %s %s\n' "$T/src" "$T/up" "$T/up" "$T/down" |
	lfn_sftp "$LFN_TREE" "$port" -q -b - -s "$srv" lfnpeer > "$T/sftp.out" 2>&1 ||
	fail "sftp failed: $(tail -n 3 "$T/sftp.out")"
cmp -s "$T/src" "$T/up" && cmp -s "$T/src" "$T/down" || fail "the copies differ from the source"
grep -q "Refusing denylisted init-requests request" "$T/sftp.out" ||
	fail "no refusal of init-requests in the server's log: $(head -n 5 "$T/sftp.out")"
lfn_finish
