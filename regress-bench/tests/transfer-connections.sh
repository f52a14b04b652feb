#!/usr/bin/env bash
# transfer-connections: scp and sftp carry one transfer over several SSH
# connections (0273: `-X connections=N`, ssh_config TransferConnections).
# Patches: 0273
# A file of at least 16 MiB is split into 1 MiB chunks that the connections
# (at most one per 8 MiB) take as they go, written at their offsets; the
# chunk that ends the file goes first; smaller files use one
# connection (of -r's, one of 4 to 16 MiB goes to an idle extra
# connection, smaller ones in flight on the first: 0271).
# Checked: the copies are byte-identical to the source around the split
# boundaries (16 MiB - 1, 16 MiB, 16 MiB + 1, 24 MiB + 1, an odd 40 MB),
# empty and sparse files, many small files, -p (modes and times) and -r,
# scp and sftp, upload and download, against openssh-lfn's and stock
# 10.5p1's sshd; /dev/null as the target (not split: only a regular file
# is); the number of logins is the number of connections used
# (sshd's log); TransferConnections from ssh_config applies and -X
# connections=1 overrides it; bad values are refused with a clear error;
# extra connections that cannot log in are left out (said once) and the
# copy still completes, but one that meets another host key stops the copy
# with ssh's warning; the workers write and read the local file through the
# descriptor scp opened (strace: one open); an extra connection's close
# goes right behind its last journal byte (strace: the order of its
# messages); a server that says a file is
# 2^64 - 1 bytes long gets no split (a wrapped chunk count made a 4 PiB
# file); a connection that is much slower than the others
# (relayed at 512 KB/s by a ProxyCommand) carries far less than an equal
# share; scp returns only once its extra connections have ended; a
# file that grows during the copy is copied to its end with no journal
# byte in it (the chunk that ends the file goes first, what the
# file grew by last); the session's own connection lost mid-transfer (its
# sftp-server killed, on an emulated 100 Mbit/s link) fails the copy with
# a nonzero exit, no destination, and DEST.lfn-part, from which the
# same copy started again goes on and ends byte-identical; an extra
# connection lost does not fail the copy (stock's, over one connection,
# would have completed): the first connection copies the rest and the
# destination is whole, no part left (transfer-resume.sh kills copies at
# random points; sftp-foreign-servers.sh has servers that refuse the
# extra connections' writes).
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init transfer-connections
p=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p" < /dev/null
lfn_log=$SSHD_LOG
logins() { grep -c 'Accepted publickey' "${1:-$lfn_log}"; }
# used N LOGINS_BEFORE [LOG]: the copy used N connections
used() {
	local n; n=$(( $(logins "${3:-$lfn_log}") - $2 ))
	[ "$n" = "$1" ] || fail "expected $1 connections, sshd saw $n logins"
}
mib=1048576
mk() { head -c "$2" /dev/urandom > "$T/$1"; }

for size in $((16 * mib - 1)) $((16 * mib)) $((16 * mib + 1)) $((24 * mib + 1)) 40000003; do
	# logins: -X makes the four connections at once (split or not; the
	# ranges: size / 8 MiB of them, at most four)
	n=4
	tid "scp -X connections=4, $size bytes ($n connections)"
	mk "src.$size" "$size"
	rm -f "$T/up" "$T/down"
	l0=$(logins)
	lfn_scp "$LFN_TREE" "$p" -q -X connections=4 "$T/src.$size" "lfnpeer:$T/up" || fail "upload failed"
	cmp -s "$T/src.$size" "$T/up" || fail "upload differs"
	used "$n" "$l0"
	l0=$(logins)
	lfn_scp "$LFN_TREE" "$p" -q -X connections=4 "lfnpeer:$T/src.$size" "$T/down" || fail "download failed"
	cmp -s "$T/src.$size" "$T/down" || fail "download differs"
	used "$n" "$l0"
done

tid "without -X, TransferConnections 1 (the default): one connection, both ways"
# (ssh -G is asked when the first large file comes; it says 1)
rm -f "$T/up" "$T/down"; l0=$(logins)
lfn_scp "$LFN_TREE" "$p" -q "$T/src.40000003" "lfnpeer:$T/up" || fail "upload failed"
lfn_scp "$LFN_TREE" "$p" -q "lfnpeer:$T/src.40000003" "$T/down" || fail "download failed"
cmp -s "$T/src.40000003" "$T/up" || fail "upload differs"
cmp -s "$T/src.40000003" "$T/down" || fail "download differs"
used 2 "$l0"

tid "a target that is not a regular file (/dev/null) is not split, and not an error"
for dir in up down; do
	if [ $dir = up ]; then
		lfn_scp "$LFN_TREE" "$p" -q -X connections=4 "$T/src.40000003" "lfnpeer:/dev/null" 2> "$T/err"
	else
		lfn_scp "$LFN_TREE" "$p" -q -X connections=4 "lfnpeer:$T/src.40000003" /dev/null 2> "$T/err"
	fi || fail "$dir to /dev/null failed: $(cat "$T/err")"
	# (upstream's own "remote fsetstat"/"local ftruncate" message for a
	# device may come; no split, so none of ours)
	grep -q 'connections' "$T/err" && fail "$dir to /dev/null: $(cat "$T/err")"
done

tid "sftp put/get -X connections=3, a sparse file and an empty one"
truncate -s 0 "$T/empty"
rm -f "$T/sparse"; truncate -s $((30 * mib)) "$T/sparse"
printf 'middle' | dd of="$T/sparse" bs=1 seek=$((17 * mib)) conv=notrunc status=none
printf 'end' | dd of="$T/sparse" bs=1 seek=$((30 * mib - 3)) conv=notrunc status=none
mkdir -p "$T/sftpdst"
lfn_sftp "$LFN_TREE" "$p" -q -X connections=3 -b - lfnpeer > "$T/out" 2>&1 <<EOF || fail "sftp batch failed: $(cat "$T/out")"
put $T/sparse $T/sftpdst/sparse.up
put $T/empty $T/sftpdst/empty.up
get $T/sparse $T/sftpdst/sparse.down
get $T/empty $T/sftpdst/empty.down
EOF
for f in sparse.up sparse.down; do cmp -s "$T/sparse" "$T/sftpdst/$f" || fail "$f differs"; done
for f in empty.up empty.down; do
	[ -f "$T/sftpdst/$f" ] && [ ! -s "$T/sftpdst/$f" ] || fail "$f is not an empty file"
done

tid "scp -r -p -X connections=4: a tree of large, mid-sized and many small files (spread over the connections), modes and times"
rm -rf "$T/tree" "$T/tree.up" "$T/tree.down"
mkdir -p "$T/tree/sub/deeper"
mk tree/big1 $((20 * mib + 12345))
mk tree/sub/big2 $((33 * mib + 7))
for i in $(seq 1 60); do mk "tree/sub/deeper/s$i" $((i * 97)); done
for i in 1 2 3 4 5 6; do mk "tree/sub/mid$i" $((5 * mib + i * 4099)); done
: > "$T/tree/sub/zero"
chmod 0640 "$T/tree/big1"; chmod 0600 "$T/tree/sub/big2"; chmod 0751 "$T/tree/sub"
touch -d '2001-02-03 04:05:06' "$T/tree/big1" "$T/tree/sub/big2" "$T/tree/sub/deeper/s7"
for d in up down; do
	if [ $d = up ]; then
		lfn_scp "$LFN_TREE" "$p" -v -r -p -X connections=4 "$T/tree" "lfnpeer:$T/tree.up" 2> "$T/err" ||
			fail "scp -r upload failed: $(tail -n 3 "$T/err")"
	else
		lfn_scp "$LFN_TREE" "$p" -v -r -p -X connections=4 "lfnpeer:$T/tree" "$T/tree.down" 2> "$T/err" ||
			fail "scp -r download failed: $(tail -n 3 "$T/err")"
	fi
	# whole files of 4 to 16 MiB went over the extra connections; those
	# of up to 4 MiB stayed on the first, in flight together (0271)
	k=$(grep -o 'goes over connection [0-9]*' "$T/err" | sort -u | wc -l)
	[ "$k" -ge 2 ] || fail "scp -r $d: files of 5 MiB used $k extra connections"
	grep -q '/s[0-9]*" goes over connection' "$T/err" &&
		fail "scp -r $d: a small file went over an extra connection, not in flight on the first"
done
for d in tree.up tree.down; do
	diff -r "$T/tree" "$T/$d" > /dev/null || fail "$d: contents differ"
	(cd "$T/tree" && find . -printf '%p %m %s\n' | sort) > "$T/ls.src"
	(cd "$T/$d" && find . -printf '%p %m %s\n' | sort) > "$T/ls.dst"
	cmp -s "$T/ls.src" "$T/ls.dst" || fail "$d: modes or sizes differ: $(diff "$T/ls.src" "$T/ls.dst" | head -n 4)"
	for f in big1 sub/big2 sub/deeper/s7; do
		[ "$(stat -c %Y "$T/tree/$f")" = "$(stat -c %Y "$T/$d/$f")" ] || fail "$d/$f: mtime not kept"
	done
done

tid "TransferConnections in ssh_config (asked when a large file comes); -X connections=1 overrides it"
cp "$T/ssh_config" "$T/ssh_config.orig"
sed -i '1i TransferConnections 3' "$T/ssh_config"
mk small $((16 * mib - 1))
rm -f "$T/down"; l0=$(logins)
lfn_scp "$LFN_TREE" "$p" -q "lfnpeer:$T/small" "$T/down" || fail "download failed"
cmp -s "$T/small" "$T/down" || fail "download differs"
used 1 "$l0"
rm -f "$T/down"; l0=$(logins)
lfn_scp "$LFN_TREE" "$p" -q "lfnpeer:$T/src.40000003" "$T/down" || fail "download failed"
cmp -s "$T/src.40000003" "$T/down" || fail "download differs"
used 3 "$l0"
rm -f "$T/down"; l0=$(logins)
lfn_scp "$LFN_TREE" "$p" -q -X connections=1 "lfnpeer:$T/src.40000003" "$T/down" || fail "download failed"
cmp -s "$T/src.40000003" "$T/down" || fail "download differs"
used 1 "$l0"
"$LFN_TREE/ssh" -G -F "$T/ssh_config" lfnpeer | grep -qx 'transferconnections 3' || fail "ssh -G does not print it"
cp "$T/ssh_config.orig" "$T/ssh_config"

tid "a slow connection takes fewer chunks: the others take the rest"
# connection 2 (an extra one: TransferConnections makes them after the
# session's own) is relayed at 512 KB/s, the others at loopback speed;
# cut into four equal ranges, it would carry 10 MB of the 40 MB
for dir in down up; do
	rm -f "$T/count"* "$T/down"; l0=$(logins)
	proxy="ProxyCommand=python3 $LFN_TOP/regress-bench/lib/counting-proxy.py $T/count 4 127.0.0.1 $p 2 524288"
	if [ $dir = down ]; then
		lfn_scp "$LFN_TREE" "$p" -q -o TransferConnections=4 -o "$proxy" \
		    "lfnpeer:$T/src.40000003" "$T/down" 2> "$T/err"
	else
		lfn_scp "$LFN_TREE" "$p" -q -o TransferConnections=4 -o "$proxy" \
		    "$T/src.40000003" "lfnpeer:$T/down" 2> "$T/err"
	fi || fail "$dir with a slow connection failed: $(tail -n 3 "$T/err")"
	cmp -s "$T/src.40000003" "$T/down" || fail "$dir with a slow connection differs"
	used 4 "$l0"
	# each proxy says what it relayed when its connection ends
	for _ in $(seq 1 100); do
		[ -f "$T/count.1" ] && [ -f "$T/count.2" ] && [ -f "$T/count.3" ] && [ -f "$T/count.4" ] && break
		sleep 0.1
	done
	slow=$(cat "$T/count.2" 2> /dev/null) || fail "$dir: the slow connection's proxy said nothing"
	trace "$dir: bytes relayed per connection: $(cat "$T/count.1" "$T/count.2" "$T/count.3" "$T/count.4" | tr '\n' ' ')"
	[ "$slow" -lt $((6 * mib)) ] || fail "$dir: the slow connection carried $slow bytes (an equal share is 10 MB)"
done

tid "bad values are refused"
for v in 0 65 x 3x; do
	out=$(lfn_scp "$LFN_TREE" "$p" -q -X "connections=$v" "$T/empty" "lfnpeer:$T/x" 2>&1) &&
		fail "scp took connections=$v"
	grep -q 'Invalid number of connections' <<< "$out" || fail "scp connections=$v: unclear error: $out"
	out=$(lfn_sftp "$LFN_TREE" "$p" -q -X "connections=$v" -b /dev/null lfnpeer 2>&1) &&
		fail "sftp took connections=$v"
	grep -q 'Invalid number of connections' <<< "$out" || fail "sftp connections=$v: unclear error: $out"
done
out=$("$LFN_TREE/ssh" -G -F /dev/null -o TransferConnections=0 x 2>&1) && fail "ssh took TransferConnections 0"
grep -q 'TransferConnections must be a number from 1 to 64' <<< "$out" || fail "unclear error: $out"

tid "extra connections that cannot log in are left out, said once"
# the first two connections through the proxy get through, later ones
# are refused before they reach sshd (TransferConnections: the extra
# connections start after the session's own has logged in)
sed -i '1i TransferConnections 4' "$T/ssh_config"
rm -f "$T/count" "$T/down"; l0=$(logins)
lfn_scp "$LFN_TREE" "$p" \
    -o "ProxyCommand=python3 $LFN_TOP/regress-bench/lib/counting-proxy.py $T/count 2 127.0.0.1 $p" \
    "lfnpeer:$T/src.40000003" "$T/down" > /dev/null 2> "$T/err" || fail "download failed: $(tail -n 3 "$T/err")"
cmp -s "$T/src.40000003" "$T/down" || fail "download differs"
used 2 "$l0"
[ "$(grep -c 'extra connections could not log in' "$T/err")" = 1 ] ||
	fail "not said once: $(cat "$T/err")"
grep -q '2 of 3 extra connections could not log in.*continuing with 2' "$T/err" || fail "wrong counts: $(grep extra "$T/err")"
cp "$T/ssh_config.orig" "$T/ssh_config"

tid "the extra connections use the file scp opened, not its name"
# (reopening it by name would follow whatever replaced it meanwhile)
for dir in down up; do
	rm -f "$T/down" "$T/up"
	if [ $dir = down ]; then src="lfnpeer:$T/src.40000003" dst=$T/down; else src=$T/src.40000003 dst="lfnpeer:$T/up"; fi
	strace -f -qq -e trace=open,openat -o "$T/strace" "$LFN_TREE/scp" -F "$T/ssh_config" -S "$LFN_TREE/ssh" \
	    -P "$p" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 -q -X connections=4 "$src" "$dst" ||
		fail "$dir under strace failed"
	local_name=$T/down.lfn-part; [ $dir = up ] && local_name=$T/src.40000003
	k=$(grep -F "\"$local_name\"" "$T/strace" | grep -vc ENOENT)
	[ "$k" = 1 ] || fail "$dir: the local file was opened $k times: $(grep -F "\"$local_name\"" "$T/strace")"
	cmp -s "$T/src.40000003" "$T/$dir" || fail "$dir: the copy differs"
done

tid "an extra connection's close goes right behind its last journal byte, not a round trip after it"
# (strace of scp's own SFTP messages: each process that marked a chunk in
# the journal reads the status of that byte and of its CLOSE after sending
# the CLOSE; the session's own connection sends its close with the
# journal's removal, so it reads those two statuses and more)
rm -f "$T/up"
strace -f -qq -xx -s 8 -e trace=read,writev -o "$T/strace" "$LFN_TREE/scp" -F "$T/ssh_config" -S "$LFN_TREE/ssh" \
    -P "$p" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 -q -X connections=4 "$T/src.40000003" "lfnpeer:$T/up" ||
	fail "upload under strace failed"
cmp -s "$T/src.40000003" "$T/up" || fail "the copy differs"
python3 - "$T/strace" <<'PY' || fail "a connection waited for its journal byte before its close"
import re, sys
# per process: its SFTP messages out (writev: length, then the message)
# and the replies it read (the read of a message's body after its length)
ev = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\d+)\s+writev\(\d+, \[\{iov_base="\\x00\\x00\\x00[^"]*", iov_len=4\}, '
                 r'\{iov_base="\\x([0-9a-f]{2})[^"]*"(?:\.\.\.)?, iov_len=(\d+)\}', line)
    if m:
        ev.setdefault(m[1], []).append(("out", int(m[2], 16), int(m[3])))
        continue
    m = re.match(r'(\d+)\s+(?:read\(\d+, |<\.\.\. read resumed>)"\\x([0-9a-f]{2})[^"]*"(?:\.\.\.)?, '
                 r'\d+\)\s+= (\d+)', line)
    if m and int(m[3]) < 64:
        ev.setdefault(m[1], []).append(("in", int(m[2], 16), int(m[3])))
WRITE, CLOSE, STATUS = 6, 4, 101
marked = 0
for pid, e in ev.items():
    # a journal byte: a WRITE of one byte (its message is 22 + handle bytes)
    if not any(d == "out" and t == WRITE and n < 64 for d, t, n in e):
        continue
    marked += 1
    last = max(i for i, (d, t, n) in enumerate(e) if d == "out" and t == CLOSE)
    after = sum(1 for d, t, n in e[last + 1:] if d == "in" and t == STATUS)
    print("process %s: %d statuses read after its close" % (pid, after))
    if after < 2:
        sys.exit(1)
if marked < 2:
    print("only %d processes marked chunks" % marked)
    sys.exit(1)
PY

tid "an extra connection that meets another host key stops the transfer, with ssh's warning"
"$LFN_TREE/ssh-keygen" -q -t ed25519 -N '' -f "$T/impostor_ed25519" -C impostor
pi=$(lfn_free_port)
lfn_sshd_config "$LFN_TREE" "$pi" < /dev/null |
	sed "s|^HostKey .*|HostKey $T/impostor_ed25519|" > "$T/sshd_config.impostor"
_lfn_sshd_run "impostor sshd" "$pi" "$T/sshd.impostor.log" "" "$LFN_TREE/sshd" -D -e -f "$T/sshd_config.impostor"
# the session's own connection reaches the real server, the extra ones
# (TransferConnections: they log in after it) another with its own key
for dir in down up; do
	rm -f "$T/count"* "$T/down" "$T/up"
	proxy="ProxyCommand=python3 $LFN_TOP/regress-bench/lib/counting-proxy.py $T/count 9 127.0.0.1 $p"
	if [ $dir = down ]; then src="lfnpeer:$T/src.40000003" dst=$T/down; else src=$T/src.40000003 dst="lfnpeer:$T/up"; fi
	COUNTING_PROXY_OTHER=$pi lfn_scp "$LFN_TREE" "$p" -o TransferConnections=3 -o "$proxy" \
	    "$src" "$dst" > /dev/null 2> "$T/err" && fail "$dir: scp went on (exit 0) past a changed host key"
	grep -q "REMOTE HOST IDENTIFICATION HAS CHANGED" "$T/err" || fail "$dir: ssh's warning was not shown: $(cat "$T/err")"
	grep -q "Host key verification failed on an extra connection" "$T/err" ||
		fail "$dir: no clear error: $(tail -n 3 "$T/err")"
	grep -q "could not log in" "$T/err" && fail "$dir: said as a login that asks: $(cat "$T/err")"
	[ -e "$T/down" ] || [ -e "$T/up" ] && fail "$dir: a file was written"
done

tid "a server that says a file is 2^64 - 1 bytes long: no split, no huge file"
pl=$(lfn_free_port)
lfn_sshd_config "$LFN_TREE" "$pl" < /dev/null |
	sed "s|^Subsystem sftp .*|Subsystem sftp /usr/bin/python3 $LFN_TOP/regress-bench/lib/sftp-reply-shaper.py huge $LFN_TREE/sftp-server|" \
	> "$T/sshd_config.liar"
_lfn_sshd_run "lying sshd" "$pl" "$T/sshd.liar.log" "" "$LFN_TREE/sshd" -D -e -f "$T/sshd_config.liar"
# (into tmpfs, where a file of petabytes can be made: ext4 refuses it)
shm=$T; [ -d /dev/shm ] && shm=$(mktemp -d /dev/shm/lfn.XXXXXX)
lfn_scp "$LFN_TREE" "$pl" -q -X connections=2 "lfnpeer:$T/src.40000003" "$shm/down" 2> "$T/err"
rc=$?
got=$(stat -c %s "$shm/down" 2> /dev/null || echo 0)
# not split: one connection reads to the end of the file, as stock scp
cmp -s "$T/src.40000003" "$shm/down" || bad="exit $rc, the copy differs: $(tail -n 2 "$T/err")"
[ $rc = 0 ] || bad="exit $rc: $(tail -n 2 "$T/err")"
[ "$got" -le 40000003 ] || bad="a $got-byte file was left (exit $rc)"
[ "$shm" = "$T" ] || rm -rf "$shm"
[ -z "${bad:-}" ] || fail "$bad"
verbose "exit $rc, $got bytes"

if [ -x "$STOCK_TREE/sshd" ]; then
	tid "stock 10.5p1 sshd as the server"
	ps=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$ps" < /dev/null
	stock_log=$SSHD_LOG
	rm -f "$T/up" "$T/down"; l0=$(logins "$stock_log")
	lfn_scp "$LFN_TREE" "$ps" -q -X connections=4 "$T/src.40000003" "lfnpeer:$T/up" || fail "upload failed"
	lfn_scp "$LFN_TREE" "$ps" -q -X connections=4 "lfnpeer:$T/src.40000003" "$T/down" || fail "download failed"
	cmp -s "$T/src.40000003" "$T/up" || fail "upload differs"
	cmp -s "$T/src.40000003" "$T/down" || fail "download differs"
	used 8 "$l0" "$stock_log"
else
	fail "stock build missing"
fi

# A connection lost in the middle: slow enough to be caught there.
lfn_wan_link tc$$ 20 100mbit
pw=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$pw" "$NB" < /dev/null
wan_log=$SSHD_LOG
wan_sshd=$SSHD_PID
size=$((48 * mib))
mk big $size
# (TransferConnections rather than -X: the extra connections then log in
# after the session's own, so the oldest sftp-server is the session's)
# kill_sftp_server -n|-o N FILE: once sshd started N sftp sessions and FILE
# holds 4 MiB, kill the newest (-n: an extra connection's, they log in
# after the session's own) or oldest (-o: the session's own) sftp-server
# of that sshd
kill_sftp_server() {
	local pid
	for _ in $(seq 1 200); do
		[ "$(grep -c "subsystem 'sftp'" "$wan_log")" -ge "$2" ] &&
			[ -f "$3" ] && [ "$(du -k "$3" | cut -f1)" -ge 4096 ] && break
		sleep 0.05
	done
	pid=$(ours_sftp_servers | if [ "$1" = -n ]; then tail -n 1; else head -n 1; fi)
	[ -n "$pid" ] || { echo "no sftp-server to kill"; return 1; }
	kill "$pid"
}
# ours_sftp_servers: the sftp-servers under this sshd (listener, session,
# user session, sftp-server), oldest first: not one another test left
ours_sftp_servers() {
	local s u pids=()
	for s in $(pgrep -P "$wan_sshd"); do
		for u in $(pgrep -P "$s"); do
			pids+=($(pgrep -P "$u" -f "^$LFN_TREE/sftp-server"))
		done
	done
	[ ${#pids[@]} -gt 0 ] && ps -o pid= --sort=start_time -p "$(IFS=,; echo "${pids[*]}")"
}
tid "scp returns once its extra connections have ended"
# (each extra connection closes like the session's own: over the link,
# a round trip; before, scp left their ssh behind to finish alone)
mk mid $((24 * mib + 1))
for dir in download upload; do
	if [ $dir = download ]; then
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -q -X connections=3 "lfnpeer:$T/mid" "$T/down"
	else
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -q -X connections=3 "$T/mid" "lfnpeer:$T/up"
	fi || fail "$dir failed"
	left=$(pgrep -f -- "-p$pw -s -- lfnpeer sftp" | wc -l)
	[ "$left" = 0 ] || fail "$dir: $left extra connections' ssh still running after scp returned"
done
cmp -s "$T/mid" "$T/down" || fail "download differs"
cmp -s "$T/mid" "$T/up" || fail "upload differs"

tid "a file that grows during the copy: it is copied to its end, and the part's journal never lands in it"
# (the chunk that ends the file goes first, to the size the copy began
# with; what the file grew by goes last, over the journal, once every
# chunk is marked in it)
for dir in download upload; do
	mk grow $((24 * mib + 1))
	rm -f "$T/down" "$T/up"
	( for _ in $(seq 1 500); do head -c 65536 /dev/urandom >> "$T/grow" || exit; sleep 0.02; done ) &
	gpid=$!
	if [ $dir = download ]; then
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -q -X connections=3 "lfnpeer:$T/grow" "$T/down"
		dst="$T/down"
	else
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -q -X connections=3 "$T/grow" "lfnpeer:$T/up"
		dst="$T/up"
	fi
	rc=$?
	kill "$gpid" 2>/dev/null; wait "$gpid" 2>/dev/null
	[ $rc = 0 ] || fail "$dir of a growing file failed"
	n=$(stat -c %s "$dst")
	[ "$n" -gt $((24 * mib + 1)) ] || fail "$dir: $n bytes, not what the file grew by"
	cmp -n "$n" "$T/grow" "$dst" || fail "$dir: the copy is not the file's first $n bytes"
	[ -e "$dst.lfn-part" ] && fail "$dir: the part is left"
	verbose "$dir: $n bytes of a file that grew from $((24 * mib + 1))"
done

for c in "-n download" "-n upload" "-o download"; do
	set -- $c; which=$1 dir=$2
	whose="a connection"; [ "$which" = -o ] && whose="the session's own connection"
	if [ "$which" = -n ]; then
		tid "an extra connection lost mid-$dir: the first copies the rest, the copy completes"
	else
		tid "$whose lost mid-$dir: the copy fails, the destination is not made; the same copy again goes on"
	fi
	rm -f "$T/down"* "$T/up"*
	s0=$(grep -c "subsystem 'sftp'" "$wan_log")
	if [ $dir = download ]; then
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -q -o TransferConnections=3 "lfnpeer:$T/big" "$T/down" 2> "$T/err" &
		dst="$T/down"
	else
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -q -o TransferConnections=3 "$T/big" "lfnpeer:$T/up" 2> "$T/err" &
		dst="$T/up"
	fi
	cpid=$!
	kill_sftp_server "$which" $((s0 + 3)) "$dst.lfn-part" || fail "could not kill an sftp-server"
	if [ "$which" = -n ]; then
		wait "$cpid" || fail "scp failed after losing an extra connection: $(tail -n 3 "$T/err")"
		cmp -s "$T/big" "$dst" || fail "the copy that lost an extra connection differs"
		[ -e "$dst.lfn-part" ] && fail "the part is left after the copy completed"
		continue
	fi
	wait "$cpid" && fail "scp exited 0 after losing a connection"
	# the workers stop when the session goes (give them a moment)
	for _ in $(seq 1 50); do [ -z "$(ours_sftp_servers)" ] && break; sleep 0.1; done
	[ -e "$dst" ] && fail "the destination exists after a failed copy ($(stat -c %s "$dst") bytes)"
	[ -f "$dst.lfn-part" ] || fail "no part kept"
	# the same copy again: only what is missing, then the file is whole
	if [ $dir = download ]; then
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -v -q -o TransferConnections=3 "lfnpeer:$T/big" "$T/down" 2> "$T/err"
	else
		lfn_scp "$LFN_TREE" -n "$NA" -h "$ADDR" "$pw" -v -q -o TransferConnections=3 "$T/big" "lfnpeer:$T/up" 2> "$T/err"
	fi || fail "the same copy again failed: $(grep -v '^debug' "$T/err" | tail -n 3)"
	cmp -s "$T/big" "$dst" || fail "resumed copy differs"
	[ -e "$dst.lfn-part" ] && fail "the part is left after the copy completed"
	had=$(sed -n 's/.*: \([0-9]*\) of [0-9]* bytes are there from an earlier copy.*/\1/p' "$T/err")
	[ -n "$had" ] && [ "$had" -ge $((2 * mib)) ] || fail "the copy started again from scratch: '$had'"
	verbose "resumed with $had of $size bytes there"
done
lfn_finish
