#!/usr/bin/env bash
# sftp-small-roundtrips: the round trips 0240, 0241, 0242 and 0243 take
# out of scp and sftp of a small file, counted from a packet capture on an emulated 200 ms
# link (regress-bench/lib/roundtrips.py: the times the client sent data at
# least 100 ms after its previous data; the capture runs until the client's
# FIN, so the channel's close is counted too):
#  - 0240: the first stat, lstat or realpath goes out with the SFTP init
#    instead of after the server's version, and a download waits for the
#    limits reply only after its open;
#  - 0241: an upload into a truncated file (sftp put) sends its -p fsetstat
#    and close right behind its last write, not a round trip later;
#  - 0242 (sshd opens a session with a one-packet window, so the SFTP
#    init and first lookup go out with the subsystem request): one more
#    against our sshd, with our client and with stock clients;
#  - 0243: sftp does not wait for its working directory (REALPATH ".")
#    before a command whose remote paths are absolute: the put's stat or
#    the get's lstat goes out with the init too, one fewer for each.
# Data a command gets at once (with its exec request) reaches it intact,
# and our sshd logs no window problem.
# openssh-lfn client against stock 10.5p1 servers: scp up, scp down at
# most 12 round trips, sftp put 11, sftp get 12 (the series before 0240:
# 13, 13, 14, 14; before 0243: 12, 12, 12, 13; 0216 takes one more off
# each, checked by auth-roundtrips.sh); against our sshd (0242)
# 11, 11, 10, 11; against Debian 9.2p1's sshd and sftp-server
# (regress-bench/lib/debian-sshd, unpacked by run-tests; DEB92_SSHD=PATH
# for another) one more each than against stock (its login takes one
# more: 14, 14, 15, 15 before 0240).  A stock client
# against our sshd: scp up at most 19
# (18 with 0242).  Nothing weakened: a failed write fails the
# put exactly as with the stock client, -p still sets times and modes, a
# directory target, a multi-block upload and -l work, and a server that
# answers version 2 after requests went out early is refused (not misread).
# (Old numbers: 0240 and 0243 are now in 0208, 0209, 0241 and 0245 in
# 0210, as are 0211 and 0246; folded 2026-11-28, renumbered 2026-12-07:
# doc/patches.md#old-numbers.)
# Patches: 0208 0210 0242
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }
command -v tcpdump > /dev/null || { echo "FATAL: tcpdump missing (./install-deps installs it)"; exit 1; }
DEB92_SSHD=${DEB92_SSHD:-$("$LFN_TOP/regress-bench/lib/debian-sshd" path || true)}
SYS_SFTP_SERVER=/usr/lib/openssh/sftp-server
rtt=200
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init sftp-small-roundtrips
lfn_wan_link ss$$ "$rtt" 1gbit
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" "$NB" <<< "PermitUserEnvironment HOME"
lfn_log_sshd=$SSHD_LOG
p_stk=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stk" "$NB" <<< "PermitUserEnvironment HOME"
servers="lfn:$p_lfn stock:$p_stk"
if [ -x "$DEB92_SSHD" ] && [ -x "$SYS_SFTP_SERVER" ]; then
	p_deb=$(lfn_free_port)
	DEBIAN_SSHD=$DEB92_SSHD lfn_debian_sshd_start "$p_deb" "$NB" <<CFG
PermitUserEnvironment HOME
Subsystem sftp $SYS_SFTP_SERVER
CFG
	servers="$servers deb92:$p_deb"
else
	echo "no Debian sshd (regress-bench/lib/debian-sshd fetch) or sftp-server: that row is not checked"
fi
head -c 10240 /dev/urandom > "$T/small"
# 0242, the session window (SESSION_WINDOW=1 or 0 says whether LFN_TREE
# has it; by default: whether the series has it)
sw=${SESSION_WINDOW:-0}
[ -z "${SESSION_WINDOW:-}" ] && ls "$LFN_TOP"/patches/*-session-window-before-exec.patch > /dev/null 2>&1 && sw=1

. "$LFN_TOP/regress-bench/lib/captures.sh"

for srv in $servers; do
	name=${srv%%:*} port=${srv#*:}
	x=0; [ "$name" = lfn ] && x=$((-sw)); [ "$name" = deb92 ] && x=1
	c=(-n "$NA" -h "$ADDR" "$port")
	tid "scp up/down, sftp put/get of 10 kB against $name sshd"
	rm -f "$T/home/up" "$T/down" "$T/home/put" "$T/get"
	captured "$port" lfn_scp "$LFN_TREE" "${c[@]}" -vvv "$T/small" "lfnpeer:$T/home/up" \
	    < /dev/null 2> "$T/scpup-$name.log" || fail "scp upload failed"
	cmp -s "$T/small" "$T/home/up" || fail "scp upload corrupted"
	check_rt "scp up ($name)" $((12 + x))
	grep -q "request type 17 sent before the server's version" "$T/scpup-$name.log" ||
	    fail "scp up: the target's stat waited for the server's version"

	captured "$port" lfn_scp "$LFN_TREE" "${c[@]}" -vvv "lfnpeer:$T/small" "$T/down" \
	    < /dev/null 2> "$T/scpdown-$name.log" || fail "scp download failed"
	cmp -s "$T/small" "$T/down" || fail "scp download corrupted"
	check_rt "scp down ($name)" $((12 + x))
	grep -q "request type 7 sent before the server's version" "$T/scpdown-$name.log" ||
	    fail "scp down: the lookup waited for the server's version"

	echo "put $T/small $T/home/put" > "$T/put.b"
	captured "$port" lfn_sftp "$LFN_TREE" "${c[@]}" -vvv -b "$T/put.b" lfnpeer \
	    < /dev/null > /dev/null 2> "$T/put-$name.log" || fail "sftp put failed"
	cmp -s "$T/small" "$T/home/put" || fail "sftp put corrupted"
	check_rt "sftp put ($name)" $((11 + x))
	grep -q "request type 16 sent before the server's version" "$T/put-$name.log" ||
	    fail "sftp put: the realpath waited for the server's version"
	grep -q "request type 17 sent before the server's version" "$T/put-$name.log" ||
	    fail "sftp put: the target's stat waited for the working directory"
	grep -q "last block sent, ending" "$T/put-$name.log" ||
	    fail "sftp put: the close waited for the write's status"

	echo "get $T/small $T/get" > "$T/get.b"
	captured "$port" lfn_sftp "$LFN_TREE" "${c[@]}" -vvv -b "$T/get.b" lfnpeer \
	    < /dev/null > /dev/null 2> "$T/get-$name.log" || fail "sftp get failed"
	cmp -s "$T/small" "$T/get" || fail "sftp get corrupted"
	check_rt "sftp get ($name)" $((12 + x))
	grep -q "request type 7 sent before the server's version" "$T/get-$name.log" ||
	    fail "sftp get: the lookup waited for the working directory"
done

tid "a stock client against our sshd"
rm -f "$T/home/up"
captured "$p_lfn" lfn_scp "$STOCK_TREE" -n "$NA" -h "$ADDR" "$p_lfn" -q "$T/small" "lfnpeer:$T/home/up" \
    < /dev/null || fail "stock scp upload failed"
cmp -s "$T/small" "$T/home/up" || fail "stock scp upload corrupted"
check_rt "stock scp up (lfn)" $((19 - sw)) any
tid "data sent with the exec request reaches the command"
head -c 300000 /dev/urandom > "$T/300k"
for i in 1 2 3; do
	lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$p_lfn" lfnpeer "cat > $T/home/cat$i; exit 7" < "$T/300k"
	[ $? = 7 ] || fail "exit status of a command fed at once"
	cmp -s "$T/300k" "$T/home/cat$i" || fail "stdin sent with the exec request corrupted"
done
out=$(printf 'x\n' | lfn_ssh "$STOCK_TREE" -n "$NA" -h "$ADDR" "$p_lfn" lfnpeer "head -c 1") || fail "stock client exec failed"
[ "$out" = x ] || fail "stock client: stdin lost ($out)"
grep -E "too much data|ignored channel window|overran" "$lfn_log_sshd" && fail "our sshd logged a window problem"

# The rest on loopback: behaviour, compared with the stock client.
p_lo=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lo" <<< "PermitUserEnvironment HOME"
p_nw=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_nw" <<EOF
PermitUserEnvironment HOME
ForceCommand $LFN_TREE/sftp-server -P write
EOF

tid "a failed write fails the put as with the stock client"
for t in lfn stock; do
	tr=$LFN_TREE; [ $t = stock ] && tr=$STOCK_TREE
	rm -f "$T/home/nw"
	echo "put $T/small $T/home/nw" > "$T/nw.b"
	lfn_sftp "$tr" "$p_nw" -b "$T/nw.b" lfnpeer < /dev/null > "$T/nw-$t.out" 2> "$T/nw-$t.err"
	echo "exit $?" >> "$T/nw-$t.err"
	echo "size $(stat -c %s "$T/home/nw" 2>/dev/null)" >> "$T/nw-$t.err"
done
grep -q "^exit 0" "$T/nw-lfn.err" && fail "put with refused writes exited 0"
diff "$T/nw-stock.err" "$T/nw-lfn.err" > "$T/nw.diff" || fail "differs from stock: $(cat "$T/nw.diff")"

tid "put -p, a directory target, a multi-block file, -l"
head -c 3000000 /dev/urandom > "$T/big"
chmod 640 "$T/small"; touch -d '2001-02-03 04:05:06' "$T/small"
mkdir -p "$T/home/dir"; rm -f "$T/home/dir/small" "$T/home/p" "$T/home/big" "$T/home/lim"
lfn_sftp "$LFN_TREE" "$p_lo" -b - lfnpeer > /dev/null 2> "$T/misc.err" <<EOF || fail "sftp batch failed: $(cat "$T/misc.err")"
put -p $T/small $T/home/p
put $T/small $T/home/dir
put $T/big $T/home/big
EOF
[ "$(stat -c '%a %Y' "$T/home/p")" = "$(stat -c '%a %Y' "$T/small")" ] || fail "put -p: mode/times not set"
cmp -s "$T/small" "$T/home/dir/small" || fail "put into a directory"
cmp -s "$T/big" "$T/home/big" || fail "multi-block put corrupted"
lfn_sftp "$LFN_TREE" "$p_lo" -l 100000 -b - lfnpeer > /dev/null 2> "$T/lim.err" <<EOF || fail "sftp -l failed: $(cat "$T/lim.err")"
put $T/small $T/home/lim
EOF
cmp -s "$T/small" "$T/home/lim" || fail "sftp -l put corrupted"
for t in lfn stock; do
	tr=$LFN_TREE; [ $t = stock ] && tr=$STOCK_TREE
	lfn_scp "$tr" "$p_lo" -q "lfnpeer:$T/nonexistent" "$T/ne" 2>&1 | sed 's#^[^ ]*/scp: #scp: #' > "$T/ne-$t.err"
	echo "exit ${PIPESTATUS[0]}" >> "$T/ne-$t.err"
done
grep -q "^exit 0" "$T/ne-lfn.err" && fail "scp of a missing source exited 0"
diff "$T/ne-stock.err" "$T/ne-lfn.err" > /dev/null || fail "missing source: differs from stock: $(cat "$T/ne-lfn.err")"

tid "a server that answers SFTP version 2 is refused once requests went early"
cat > "$T/fakev2.py" <<'PY'
#!/usr/bin/env python3
import struct, sys
i, o = sys.stdin.buffer, sys.stdout.buffer
def msg():
    h = i.read(4)
    if len(h) < 4:
        sys.exit(0)
    return i.read(struct.unpack('>I', h)[0])
m = msg()
assert m[0] == 1                               # SSH2_FXP_INIT
o.write(struct.pack('>IBI', 5, 2, 2)); o.flush()   # SSH2_FXP_VERSION 2
while True:                                    # answer nothing else
    msg()
PY
chmod +x "$T/fakev2.py"
timeout 20 "$LFN_TREE/sftp" -D "$T/fakev2.py" -b - > /dev/null 2> "$T/v2.err" <<< "pwd"
rc=$?
[ $rc = 0 ] && fail "sftp against a version 2 server exited 0"
[ $rc = 124 ] && fail "sftp against a version 2 server hung"
grep -q "Server speaks SFTP version 2, not 3" "$T/v2.err" || fail "no clear error: $(cat "$T/v2.err")"

lfn_finish
