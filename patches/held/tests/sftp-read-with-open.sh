#!/usr/bin/env bash
# sftp-read-with-open: a download's first reads are made by the server
# with its open (0266, open-copy@openssh-lfn's OPEN_COPY_READS), not a
# round trip later once the client has the handle.  Read from the client's
# -vvv log (exact): the first ranges are "made with the open", the server
# closes the file behind them when they reach its end (0246's early close,
# made by the server), the lookup sent with them is answered before them
# (so the client takes them before their replies come and keeps its
# reads going), and every copy is compared byte for byte: empty,
# 10 kB, exactly one block, several blocks, more than the first window
# (the client asks for the rest), a download whose local file cannot be
# written (its reads are dropped, the next gets are whole), a read-only
# server (-R).  Only for the open the SFTP init carries: a later one goes
# out apart from its lookup, which could then come after the reads.  Not asked for when the file may be split over
# several connections (-X connections=2), nor for a resumed get (reget,
# sftp -a).  A server refusing reads (-P read) fails the download with a
# non-zero exit, as before.  Counted from a capture on an emulated 200 ms
# link, with our sshd: scp down and sftp get of 10 kB at most 7 round
# trips (8 without 0266).
# Patches: 0266
. "$(dirname "$0")/../lib/sshenv.sh"
command -v tcpdump > /dev/null || { echo "FATAL: tcpdump missing (./install-deps installs it)"; exit 1; }

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init sftp-read-with-open
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn"
: > "$T/f0"
head -c 10240 /dev/urandom > "$T/f10k"
head -c 261120 /dev/urandom > "$T/fblock"
head -c 1000000 /dev/urandom > "$T/f1m"
head -c 5000000 /dev/urandom > "$T/f5m"

# made LOG N: N reads made with the open, the file's whole first window
made() {
	grep -q "open-copy@openssh-lfn: $2 reads of 261120 bytes made with it" "$1"
}
# own LOG: the reads the client sent itself
own() {
	grep "Request range" "$1" | grep -vc "made with the open"
}

tid "scp down: the first reads made with the open, the close behind the last"
for f in f0:1 f10k:2 fblock:2 f1m:5 f5m:9; do
	n=${f#*:} f=${f%%:*}
	rm -f "$T/down"
	lfn_scp "$LFN_TREE" "$p_lfn" -vvv "lfnpeer:$T/$f" "$T/down" 2> "$T/$f.log" || fail "scp $f failed"
	cmp -s "$T/$f" "$T/down" || fail "scp $f corrupted"
	made "$T/$f.log" "$n" || fail "scp $f: not $n reads made with the open: $(grep -E 'made with it|Request range' "$T/$f.log" | head -3)"
	o=$(own "$T/$f.log")
	if [ "$f" = f5m ]; then
		[ "$o" -gt 0 ] || fail "scp $f: the rest was not asked for"
		grep -q "Request range 2350080 -> " "$T/$f.log" || fail "scp $f: the client's reads do not follow the server's"
	else
		[ "$o" = 0 ] || fail "scp $f: $o reads of its own"
		grep -qw "closed by the server behind the read at $(stat -c %s "$T/$f")" "$T/$f.log" ||
			fail "scp $f: not closed by the server behind its reads"
		grep -q "Sent message fd [0-9]* T:4 " "$T/$f.log" && fail "scp $f: a close of its own"
	fi
	grep -q "opened again" "$T/$f.log" && fail "scp $f: opened again"
	# behind the lookup sent with them: its reply comes first, so the
	# client takes the reads before their replies (else its next reads
	# would wait for all of them)
	grep -q "ahead_reads_claim: 0 of their replies came before it" "$T/$f.log" ||
		fail "scp $f: $(grep -o '[0-9]* of their replies came before it' "$T/$f.log") (the lookup's reply waited behind the data)"
done

tid "sftp get: the first file's reads with its open, dropped if not written locally"
rm -f "$T/get1" "$T/get2" "$T/get3"
cat > "$T/batch" <<EOF
-get $T/f10k $T/nodir/x
get $T/f1m $T/get1
get $T/f5m $T/get2
get $T/f10k $T/get3
EOF
lfn_sftp "$LFN_TREE" "$p_lfn" -vvv -b "$T/batch" lfnpeer > /dev/null 2> "$T/sftp.log" < /dev/null || fail "sftp batch failed: $(grep -v debug "$T/sftp.log" | tail -2)"
cmp -s "$T/f1m" "$T/get1" && cmp -s "$T/f5m" "$T/get2" && cmp -s "$T/f10k" "$T/get3" || fail "sftp get corrupted"
n=$(grep -c "reads of 261120 bytes made with it" "$T/sftp.log")
[ "$n" = 1 ] || fail "sftp: $n opens made reads, not only the one in the init"
grep -q "2 reads made with the open not used" "$T/sftp.log" || fail "the failed get's reads were not dropped"
n=$(grep -c "opened with its lookup" "$T/sftp.log")
[ "$n" = 4 ] || fail "sftp: $n of 4 gets opened with their lookup"

tid "a read-only server (-R): reads made; one refusing reads (-P read): the download fails"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" <<< "ForceCommand $LFN_TREE/sftp-server -R"
rm -f "$T/down"
lfn_scp "$LFN_TREE" "$port" -vvv "lfnpeer:$T/f1m" "$T/down" 2> "$T/ro.log" || fail "scp from -R failed"
cmp -s "$T/f1m" "$T/down" || fail "scp from -R corrupted"
made "$T/ro.log" 5 || fail "scp from -R: no reads made"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" <<< "ForceCommand $LFN_TREE/sftp-server -P read"
rm -f "$T/down"
timeout 60 "$LFN_TREE/scp" -F "$T/ssh_config" -S "$LFN_TREE/ssh" -P "$port" -o HostKeyAlias=lfnpeer \
    -o HostName=127.0.0.1 "lfnpeer:$T/f1m" "$T/down" 2> "$T/noread.err"
rc=$?
[ $rc = 124 ] && fail "scp from -P read hung"
[ $rc = 0 ] && fail "scp from -P read exited 0"
grep -q "Permission denied" "$T/noread.err" || fail "no clear error: $(cat "$T/noread.err")"
cmp -s "$T/f1m" "$T/down" && fail "whole file although reads were refused"

tid "not for a file that may be split (-X connections=2), nor for reget or sftp -a"
rm -f "$T/down"
lfn_scp "$LFN_TREE" "$p_lfn" -vvv -X connections=2 "lfnpeer:$T/f5m" "$T/down" 2> "$T/x2.log" || fail "scp -X connections=2 failed"
cmp -s "$T/f5m" "$T/down" || fail "scp -X connections=2 corrupted"
grep -q "made with it" "$T/x2.log" && fail "reads made although the file may be split"
head -c 300000 "$T/f1m" > "$T/reget"
echo "reget $T/f1m $T/reget" | lfn_sftp "$LFN_TREE" "$p_lfn" -vvv -b - lfnpeer > /dev/null 2> "$T/reget.log" || fail "reget failed"
cmp -s "$T/f1m" "$T/reget" || fail "reget corrupted"
grep -q "made with it" "$T/reget.log" && fail "reads made for a resumed get"
head -c 3000 "$T/f10k" > "$T/aget"
echo "get $T/f10k $T/aget" | lfn_sftp "$LFN_TREE" "$p_lfn" -a -vvv -b - lfnpeer > /dev/null 2> "$T/aget.log" || fail "sftp -a get failed: $(grep -v debug "$T/aget.log" | tail -2)"
cmp -s "$T/f10k" "$T/aget" || fail "sftp -a get corrupted"
grep -q "made with it" "$T/aget.log" && fail "reads made for sftp -a's resumed get"

rtt=200
. "$LFN_TOP/regress-bench/lib/captures.sh"
lfn_wan_link rw$$ "$rtt" 1gbit
port=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$port" "$NB"
c=(-n "$NA" -h "$ADDR" "$port")
tid "scp down, sftp get of 10 kB at $rtt ms: at most 7 round trips"
rm -f "$T/down" "$T/get"
captured "$port" lfn_scp "$LFN_TREE" "${c[@]}" -q "lfnpeer:$T/f10k" "$T/down" < /dev/null || fail "scp down failed"
cmp -s "$T/f10k" "$T/down" || fail "scp down corrupted"
check_rt "scp down" 7
echo "get $T/f10k $T/get" > "$T/get.b"
captured "$port" lfn_sftp "$LFN_TREE" "${c[@]}" -q -b "$T/get.b" lfnpeer < /dev/null > /dev/null || fail "sftp get failed"
cmp -s "$T/f10k" "$T/get" || fail "sftp get corrupted"
check_rt "sftp get" 7

lfn_finish
