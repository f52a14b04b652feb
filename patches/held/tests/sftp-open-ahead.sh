#!/usr/bin/env bash
# sftp-open-ahead: scp and sftp open the remote file with its lookup
# (0265, open-copy@openssh-lfn), not a round trip after it; a session's
# first rides in the SFTP init ("init-requests@openssh-lfn", with
# limits@openssh.com), before the server's version and sftp's working
# directory are known (a put's only where the server's REALPATH "." works:
# against a server whose directory is gone sftp says "Need cwd" and
# nothing is created).  Read from the client's -vvv log (exact, no
# timing): against our sftp-server no SSH2_FXP_OPEN goes out; every copy
# is compared byte for byte.  The server chooses the file as scp would (a
# directory target gets the source's name, a device is written), creates
# it with the source's mode (000 too), reads only regular files (a FIFO is
# refused as before and never blocks the server), a longer destination is
# cut as before, and it is refused where "open" is (-R, -P open) and on
# its own (-P open-copy: scp opens the file itself).  Servers that do not
# know it (Debian's, stock 10.5p1's) ignore the init's extension data: the
# copy goes on as before and they log nothing.
# Patches: 0265
. "$(dirname "$0")/../lib/sshenv.sh"
SYS_SFTP_SERVER=/usr/lib/openssh/sftp-server

trap 'lfn_cleanup' EXIT
lfn_env_init sftp-open-ahead
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn"
head -c 1000000 /dev/urandom > "$T/f1m"
head -c 3000000 /dev/urandom > "$T/f3m"
mkdir "$T/dir"
mknod "$T/null" c 1 3 && chmod 666 "$T/null" || { echo "cannot mknod: skipped"; exit 77; }
mkfifo "$T/fifo" || { echo "cannot mkfifo: skipped"; exit 77; }

# ahead LOG: the file came with its lookup (in the session's init), no
# OPEN of its own
ahead() {
	grep -q "opened with its lookup" "$1" &&
	    ! grep -q "Sent [a-z]* message SSH2_FXP_OPEN" "$1" &&
	    grep -q "Sent message open-copy@openssh-lfn .*(with the init)" "$1" &&
	    first_before "$1" "Sent message open-copy@openssh-lfn" "Remote version"
}

tid "scp up and down: the file opened with its lookup, in the init"
lfn_scp "$LFN_TREE" "$p_lfn" -vvv "$T/f1m" "lfnpeer:$T/up" 2> "$T/up.log" || fail "scp up failed"
cmp -s "$T/f1m" "$T/up" || fail "scp up corrupted"
ahead "$T/up.log" || fail "scp up: the open waited for the lookup"
lfn_scp "$LFN_TREE" "$p_lfn" -vvv "lfnpeer:$T/f1m" "$T/down" 2> "$T/down.log" || fail "scp down failed"
cmp -s "$T/f1m" "$T/down" || fail "scp down corrupted"
ahead "$T/down.log" || fail "scp down: the open waited for the lookup"
grep -q "using 261120 / 261120" "$T/up.log" || fail "limits not applied (255 KiB blocks)"

tid "sftp get, then put: each file opened with its lookup"
rm -f "$T/get" "$T/put" "$T/dir/f1m"
printf 'get %s %s\nput %s %s\nput %s %s\n' "$T/f1m" "$T/get" "$T/f1m" "$T/put" "$T/f1m" "$T/dir" > "$T/batch"
lfn_sftp "$LFN_TREE" "$p_lfn" -vvv -b "$T/batch" lfnpeer > /dev/null 2> "$T/sftp.log" < /dev/null || fail "sftp batch failed"
for f in get put dir/f1m; do cmp -s "$T/f1m" "$T/$f" || fail "sftp: $f corrupted"; done
n=$(grep -c "opened with its lookup" "$T/sftp.log")
[ "$n" = 3 ] || fail "sftp: $n of 3 files opened with their lookup"
grep -q "Sent [a-z]* message SSH2_FXP_OPEN" "$T/sftp.log" && fail "sftp: an open of its own"
grep -q "Sent message open-copy@openssh-lfn .*(with the init)" "$T/sftp.log" &&
first_before "$T/sftp.log" "Sent message open-copy@openssh-lfn" "Remote version" ||
	fail "sftp get: the open waited for the server's version"

tid "a source of mode 000: created with mode 000, as stock does"
cp "$T/f1m" "$T/m000"; chmod 000 "$T/m000"
rm -f "$T/dir/m000" "$T/put000"
lfn_scp "$LFN_TREE" "$p_lfn" -vvv "$T/m000" "lfnpeer:$T/dir" 2> "$T/m000.log" || fail "scp up failed"
ahead "$T/m000.log" || fail "scp up: the open waited for the lookup"
[ "$(stat -c %a "$T/dir/m000")" = 0 ] || fail "scp: created with mode $(stat -c %a "$T/dir/m000")"
echo "put $T/m000 $T/put000" | lfn_sftp "$LFN_TREE" "$p_lfn" -q -b - lfnpeer > /dev/null 2>&1 || fail "sftp put failed"
[ "$(stat -c %a "$T/put000")" = 0 ] || fail "sftp put: created with mode $(stat -c %a "$T/put000")"
cmp -s "$T/f1m" "$T/put000" || fail "sftp put corrupted"

tid "sftp put, the server's working directory gone: Need cwd, nothing created"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" <<< "ForceCommand sh -c 'mkdir -p $T/gone && cd $T/gone && rmdir $T/gone && exec $LFN_TREE/sftp-server'"
rm -f "$T/cwdput"
echo "put $T/f1m $T/cwdput" | lfn_sftp "$LFN_TREE" "$port" -vvv -b - lfnpeer > "$T/cwd.out" 2> "$T/cwd.log"
rc=$?
[ $rc = 255 ] && grep -q "^Need cwd" "$T/cwd.log" || fail "rc $rc, not Need cwd: $(grep -v debug "$T/cwd.log" | tail -2)"
grep -q "Sent message open-copy@openssh-lfn .* M:0x001a (with the init)" "$T/cwd.log" || fail "the put's open did not go with its lookup"
[ -e "$T/cwdput" ] && fail "$T/cwdput created although sftp stopped for its working directory"

tid "into a directory: the source's name; over a longer file: cut"
lfn_scp "$LFN_TREE" "$p_lfn" -vvv "$T/f1m" "lfnpeer:$T/dir" 2> "$T/dir.log" || fail "scp into a directory failed"
cmp -s "$T/f1m" "$T/dir/f1m" || fail "scp into a directory: $T/dir/f1m corrupted"
ahead "$T/dir.log" || fail "scp into a directory: the open waited for the lookup"
cp "$T/f3m" "$T/long"
lfn_scp "$LFN_TREE" "$p_lfn" -vvv "$T/f1m" "lfnpeer:$T/long" 2> "$T/long.log" || fail "scp over a longer file failed"
cmp -s "$T/f1m" "$T/long" || fail "scp over a longer file: not cut to the source ($(stat -c %s "$T/long") bytes)"
ahead "$T/long.log" || fail "scp over a longer file: the open waited for the lookup"

tid "a device: written as scp would; a FIFO is not read and does not block the server"
lfn_scp "$LFN_TREE" "$p_lfn" -vvv "$T/f1m" "lfnpeer:$T/null" 2> "$T/null.log" || fail "scp onto a null device failed"
ahead "$T/null.log" || fail "scp onto a null device: the open waited for the lookup"
[ -c "$T/null" ] || fail "the null device is no longer one"
timeout 30 "$LFN_TREE/scp" -F "$T/ssh_config" -S "$LFN_TREE/ssh" -P "$p_lfn" -o HostKeyAlias=lfnpeer \
    -o HostName=127.0.0.1 "lfnpeer:$T/fifo" "$T/fifo-down" 2> "$T/fifo.err"
rc=$?
[ $rc = 124 ] && fail "scp of a FIFO hung"
[ $rc = 1 ] && grep -q "not a regular file" "$T/fifo.err" || fail "scp of a FIFO: rc $rc, $(cat "$T/fifo.err")"

for opt in "-R" "-P open"; do
	tid "sftp-server $opt: refused as an open"
	port=$(lfn_free_port)
	lfn_sshd_start "$LFN_TREE" "$port" <<< "ForceCommand $LFN_TREE/sftp-server $opt"
	rm -f "$T/refused"
	lfn_scp "$LFN_TREE" "$port" -vvv "$T/f1m" "lfnpeer:$T/refused" 2> "$T/refused.log" &&
		fail "upload succeeded"
	[ -e "$T/refused" ] && fail "$T/refused created"
	grep -q "open-copy@openssh-lfn: Permission denied" "$T/refused.log" || fail "not refused: $(grep open-copy "$T/refused.log")"
	grep -q 'dest open .*: Permission denied' "$T/refused.log" || fail "no error as stock reports it"
done

tid "sftp-server -P open-copy: scp opens the file itself"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" <<< "ForceCommand $LFN_TREE/sftp-server -P open-copy"
rm -f "$T/up"
lfn_scp "$LFN_TREE" "$port" -vvv "$T/f1m" "lfnpeer:$T/up" 2> "$T/noahead.log" || fail "scp up failed"
cmp -s "$T/f1m" "$T/up" || fail "scp up corrupted"
grep -q "Sent dest message SSH2_FXP_OPEN" "$T/noahead.log" || fail "no open of its own"

for srv in sys stock; do
	case $srv in
	sys) s=$SYS_SFTP_SERVER; [ -x "$s" ] || { verbose "no $s: that part not run"; continue; } ;;
	stock) s=$STOCK_TREE/sftp-server; [ -x "$s" ] || { verbose "no stock build: that part not run"; continue; } ;;
	esac
	tid "$srv sftp-server, which does not know it: copies as before, logs nothing"
	port=$(lfn_free_port)
	# -e: its log goes to scp's stderr
	lfn_sshd_start "$LFN_TREE" "$port" <<< "ForceCommand $s -e"
	rm -f "$T/up" "$T/down" "$T/dir/f1m"
	lfn_scp "$LFN_TREE" "$port" -vvv "$T/f1m" "lfnpeer:$T/up" 2> "$T/up-$srv.log" || fail "scp up failed"
	cmp -s "$T/f1m" "$T/up" || fail "scp up corrupted"
	grep -q "init_requests_answered: the server ignored them" "$T/up-$srv.log" || fail "scp up: not carried, or not seen ignored"
	grep -q "Sent dest message SSH2_FXP_OPEN" "$T/up-$srv.log" || fail "scp up: no open of its own"
	grep -i "unknown\|error" "$T/up-$srv.log" | grep -v "debug" && fail "the server logged an error"
	lfn_scp "$LFN_TREE" "$port" -q "$T/f1m" "lfnpeer:$T/dir" || fail "scp into a directory failed"
	cmp -s "$T/f1m" "$T/dir/f1m" || fail "scp into a directory corrupted"
	lfn_scp "$LFN_TREE" "$port" -vvv "lfnpeer:$T/f1m" "$T/down" 2> "$T/down-$srv.log" || fail "scp down failed"
	cmp -s "$T/f1m" "$T/down" || fail "scp down corrupted"
	grep -q "using 261120 / 261120" "$T/up-$srv.log" || fail "limits not applied (255 KiB blocks)"
done

lfn_finish
