#!/usr/bin/env bash
# sftp-roundtrips: the round trips 0206 (ramp), 0208 (limits), 0210 (upload
# end, download end, lookup stat, scp's cut), 0212 (target stat) and 0244
# (first write) take out of an SFTP session
# (limits@openssh.com answered with the next request, an upload's fsetstat
# and close sent back to back, a download starting with enough requests for
# its first 2 MiB, its last block asked for exactly and a small file's EOF
# read with its data, a download's stat when the name's lookup just
# answered it, the target directory's stat for each further file of an
# upload) are gone, and nothing else changed: every transfer is
# intact, every error is reported as the stock client reports it (same
# messages, same exit status), against our sftp-server and Debian's.
# Read from the client's -vvv log, so it is exact (no timing): the stock
# client fails the structure checks (STRUCT_TREE=build/stock to see it).
# (Old numbers: 0240 and 0243 are now in 0208, 0209, 0241 and 0245 in
# 0210, as are 0211 and 0246; folded 2026-11-28, renumbered 2026-12-07:
# doc/patches.md#old-numbers.)
# Patches: 0206 0208 0210 0212 0244
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/scp" ] || { echo "stock build missing: skipped"; exit 77; }
ST=${STRUCT_TREE:-$LFN_TREE}
SYS_SFTP_SERVER=/usr/lib/openssh/sftp-server

trap 'lfn_cleanup' EXIT
lfn_env_init sftp-roundtrips
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn" <<< "PermitUserEnvironment HOME"
p_sys=""
if [ -x "$SYS_SFTP_SERVER" ]; then
	p_sys=$(lfn_free_port)
	# ForceCommand also replaces the sftp subsystem
	lfn_sshd_start "$LFN_TREE" "$p_sys" <<EOF
PermitUserEnvironment HOME
ForceCommand $SYS_SFTP_SERVER
EOF
fi
head -c 1000000 /dev/urandom > "$T/f1m"	# 4 blocks of 255 KiB
head -c 5000000 /dev/urandom > "$T/f5m"	# 20 blocks
# a private null device: truncating it fails (an fsetstat error), and -p
# may chmod it without touching the system's /dev/null
mknod "$T/null" c 1 3 && chmod 666 "$T/null" || { echo "cannot mknod: skipped"; exit 77; }
mkfifo "$T/fifo" && ln -s fifo "$T/fifolink" || { echo "cannot mkfifo: skipped"; exit 77; }

tid "limits@openssh.com: the next request goes out before its reply"
lfn_scp "$ST" "$p_lfn" -vvv "$T/f1m" "lfnpeer:$T/up" 2> "$T/up.log" || fail "scp upload failed"
cmp -s "$T/f1m" "$T/up" || fail "scp upload corrupted"
# (with 0240 the stat goes out first, with the init: I:1, limits I:2)
grep -q "Sent message limits@openssh.com I:[1-3]\b" "$T/up.log" || fail "no limits request"
first_before "$T/up.log" "Sent message fd [0-9]* T:17 I:[1-3]\b" "Received limits reply" ||
    fail "scp waited for the limits reply before its stat"
grep -q "using 261120 / 261120" "$T/up.log" || fail "limits not applied (255 KiB blocks)"
grep -q "Sent message SSH2_FXP_WRITE I:[0-9]* O:0 S:261120" "$T/up.log" ||
    fail "first write not 255 KiB"
lfn_sftp "$ST" "$p_lfn" -vvv -b - lfnpeer > /dev/null 2> "$T/sftp.log" <<EOF || fail "sftp batch failed"
get $T/f1m $T/down
EOF
cmp -s "$T/f1m" "$T/down" || fail "sftp get corrupted"
first_before "$T/sftp.log" "Sent message fd [0-9]* T:16 I:[1-3]\b" "Received limits reply" ||
    fail "sftp waited for the limits reply before its realpath"

tid "upload: the writes go out back to back from the first one (0244)"
first_before "$T/up.log" "Sent message SSH2_FXP_WRITE I:[0-9]* O:261120 " "In write loop, ack for" ||
    fail "the second write waited for the first one's status"

tid "scp over a new or no longer file: no cut, the close behind the last write (0245)"
# (the destination's STAT goes with the OPEN; $T/up was new above)
grep -q "Sent message fd [0-9]* T:10 " "$T/up.log" && fail "a new file was cut (fsetstat sent)"
first_before "$T/up.log" "Sent message fd [0-9]* T:4 " "In write loop, ack for" ||
    fail "the close waited for the writes' statuses"
lfn_scp "$ST" "$p_lfn" -vvv -p "$T/f1m" "lfnpeer:$T/up" 2> "$T/upp.log" || fail "scp -p upload failed"
cmp -s "$T/f1m" "$T/up" || fail "scp -p upload corrupted"
[ "$(stat -c %Y "$T/f1m")" = "$(stat -c %Y "$T/up")" ] || fail "scp -p lost the mtime"
[ "$(grep -c "Sent message fd [0-9]* T:10 " "$T/upp.log")" = 1 ] || fail "scp -p over a same-size file: not one fsetstat (-p)"
first_before "$T/upp.log" "Sent message fd [0-9]* T:4 " "In write loop, ack for" ||
    fail "scp -p: the close waited for the writes' statuses"

tid "scp over a longer file: cut, the cut and the close go out together (0210)"
head -c 3000000 /dev/zero > "$T/up"
lfn_scp "$ST" "$p_lfn" -vvv -p "$T/f1m" "lfnpeer:$T/up" 2> "$T/upl.log" || fail "scp -p over a longer file failed"
cmp -s "$T/f1m" "$T/up" || fail "scp -p over a longer file: not cut to the source"
[ "$(grep -c "Sent message fd [0-9]* T:10 " "$T/upl.log")" = 2 ] || fail "scp -p: not two fsetstats (cut, -p)"
first_before "$T/upl.log" "Sent message fd [0-9]* T:4 " "SSH2_FXP_STATUS 0 I:" ||
    fail "scp -p: close waited for the fsetstat statuses"
head -c 3000000 /dev/zero > "$T/up"
lfn_scp "$ST" "$p_lfn" -q "$T/f5m" "lfnpeer:$T/up" || fail "scp over a shorter file failed"
cmp -s "$T/f5m" "$T/up" || fail "scp over a shorter file corrupted"

tid "upload of several files: the target directory is stat'ed once"
rm -rf "$T/updir" "$T/newdir"; mkdir "$T/updir"
lfn_scp "$ST" "$p_lfn" -vvv "$T/f1m" "$T/f5m" "$T/f1m" "lfnpeer:$T/updir/" 2> "$T/multi.log" ||
    fail "scp of three files failed"
cmp -s "$T/f1m" "$T/updir/f1m" && cmp -s "$T/f5m" "$T/updir/f5m" || fail "scp of three files corrupted"
# (not counting the STAT that goes with each file's OPEN, 0245)
n=$(awk '/T:17 / && prev !~ /SSH2_FXP_OPEN/ { n++ } { prev = $0 } END { print n + 0 }' "$T/multi.log")
[ "$n" = 1 ] || fail "the target was stat'ed $n times, want 1"
lfn_scp "$ST" "$p_lfn" -q "$T/f1m" "$T/f5m" "lfnpeer:$T/newdir" || fail "scp into a new directory failed"
cmp -s "$T/f1m" "$T/newdir/f1m" && cmp -s "$T/f5m" "$T/newdir/f5m" || fail "scp into a new directory corrupted"

tid "download: the first round trip carries the first 2 MiB"
lfn_scp "$ST" "$p_lfn" -vvv "lfnpeer:$T/f5m" "$T/down" 2> "$T/down.log" || fail "scp download failed"
cmp -s "$T/f5m" "$T/down" || fail "scp download corrupted"
n=$(awk '/Received reply/ { exit } /Request range/ { n++ } END { print n + 0 }' "$T/down.log")
[ "$n" = 9 ] || fail "download started with $n requests, want 9 (2 MiB / 255 KiB)"
lfn_scp "$ST" "$p_lfn" -vvv "lfnpeer:$T/f1m" "$T/down" 2> "$T/down1.log" || fail "scp download failed"
cmp -s "$T/f1m" "$T/down" || fail "scp download corrupted"
n=$(awk '/Received reply/ { exit } /Request range/ { n++ } END { print n + 0 }' "$T/down1.log")
[ "$n" = 5 ] || fail "1 MB download started with $n requests, want 5 (4 blocks and the EOF)"
grep -q "Request range 783360 -> 999999 " "$T/down1.log" || fail "last block not asked for exactly"
tid "download: the name's lstat (a link's stat) is the download's stat"
# scp and sftp look a name up (sftp_glob: lstat, and stat for a symbolic
# link) and then stat'ed it again to download it: one round trip.
nstat() { grep -c "Sent message fd [0-9]* T:17 " "$1"; }
grep -q "Sent message fd [0-9]* T:7 " "$T/down.log" || fail "scp download: no lstat"
[ "$(nstat "$T/down.log")" = 0 ] || fail "scp download stat'ed a regular file after its lstat"
[ "$(nstat "$T/sftp.log")" = 0 ] || fail "sftp get stat'ed a regular file after its lstat"
touch -d '2001-02-03 04:05:06' "$T/f1m"
lfn_scp "$ST" "$p_lfn" -vvv -p "lfnpeer:$T/f1m" "$T/downp" 2> "$T/downp.log" || fail "scp -p download failed"
cmp -s "$T/f1m" "$T/downp" || fail "scp -p download corrupted"
[ "$(stat -c %Y "$T/f1m")" = "$(stat -c %Y "$T/downp")" ] || fail "scp -p download lost the mtime"
[ "$(nstat "$T/downp.log")" = 0 ] || fail "scp -p download stat'ed a regular file after its lstat"
ln -s f1m "$T/link"
lfn_scp "$ST" "$p_lfn" -vvv "lfnpeer:$T/link" "$T/downl" 2> "$T/downl.log" || fail "scp of a link failed"
cmp -s "$T/f1m" "$T/downl" || fail "scp of a link corrupted"
[ "$(nstat "$T/downl.log")" = 1 ] || fail "scp of a link: $(nstat "$T/downl.log") stats, want 1 (the glob's)"

tid "download: a small file's data and EOF in one round trip, no short reads"
head -c 10000 /dev/urandom > "$T/f10k"
lfn_scp "$ST" "$p_lfn" -vvv "lfnpeer:$T/f10k" "$T/down" 2> "$T/down10k.log" || fail "scp download failed"
cmp -s "$T/f10k" "$T/down" || fail "small download corrupted"
n=$(awk '/Received reply/ { exit } /Request range/ { n++ } END { print n + 0 }' "$T/down10k.log")
[ "$n" = 2 ] || fail "10 kB download started with $n requests, want 2 (data and EOF)"
grep -q "Short data block" "$T/down.log" "$T/down1.log" "$T/down10k.log" &&
    fail "a download re-requested a short last block"
: > "$T/empty"
lfn_scp "$ST" "$p_lfn" -q "lfnpeer:$T/empty" "$T/down" || fail "empty download failed"
[ -f "$T/down" ] && [ ! -s "$T/down" ] || fail "empty download not empty"

# Errors: the lfn and the stock client against the same server say the
# same and exit alike.  "scp: " / "sftp: " prefixes and paths are equal.
same_as_stock() {	# LABEL PROG ARGS... (PROG: scp or sftp; stdin: batch)
	local label=$1 prog=$2 rc_l rc_s; shift 2
	"lfn_$prog" "$LFN_TREE" "$@" < "${BATCH:-/dev/null}" > "$T/o.lfn" 2>&1; rc_l=$?
	"lfn_$prog" "$STOCK_TREE" "$@" < "${BATCH:-/dev/null}" > "$T/o.stock" 2>&1; rc_s=$?
	sed -i "s#$LFN_TREE/##; s#$STOCK_TREE/##" "$T/o.lfn" "$T/o.stock"
	# (expected: the failure is also reported as a failed upload)
	if [ -n "${RC_LFN:-}" ] && [ "$rc_l" = "$RC_LFN" ]; then
		rc_l=$rc_s; sed -i '/^scp: failed to upload file /d' "$T/o.lfn"
	fi
	if [ "$rc_l" != "$rc_s" ] || ! cmp -s "$T/o.lfn" "$T/o.stock"; then
		fail "$label: lfn (rc $rc_l) and stock (rc $rc_s) differ"
		diff "$T/o.stock" "$T/o.lfn" | sed 's/^/    /' | head -10
	else
		verbose "$label: rc $rc_l, $(head -c 200 "$T/o.lfn" | tr '\n' ' ')"
	fi
}

for port in $p_lfn $p_sys; do
	srv=lfn; [ "$port" = "$p_sys" ] && srv="system sftp-server"
	tid "errors as stock reports them ($srv)"
	# a character device has no length to cut: stock tries (fsetstat's
	# error, exit 0), we do not (0245: its STAT says so), quietly
	for p in "" -p; do
		lfn_scp "$LFN_TREE" "$port" $p "$T/f1m" "lfnpeer:$T/null" > "$T/o.lfn" 2>&1 ||
			fail "scp $p to a null device failed: $(head -c 200 "$T/o.lfn")"
		[ -s "$T/o.lfn" ] && fail "scp $p to a null device said: $(head -c 200 "$T/o.lfn")"
		lfn_scp "$STOCK_TREE" "$port" $p "$T/f1m" "lfnpeer:$T/null" > "$T/o.stock" 2>&1
		grep -q "fsetstat" "$T/o.stock" || verbose "stock scp $p to a null device: no fsetstat error?"
	done
	same_as_stock "scp into a missing directory" scp "$port" "$T/f1m" "lfnpeer:$T/nodir/x"
	same_as_stock "scp of a missing file" scp "$port" "lfnpeer:$T/nofile" "$T/down"
	same_as_stock "scp of a directory without -r" scp "$port" "lfnpeer:$T/home" "$T/down"
	same_as_stock "scp of a FIFO" scp "$port" "lfnpeer:$T/fifo" "$T/down"
	same_as_stock "scp of two files to a file" scp "$port" "$T/f1m" "$T/f1m" "lfnpeer:$T/f5m"
	same_as_stock "scp of a link to a FIFO" scp "$port" "lfnpeer:$T/fifolink" "$T/down"
	printf 'put %s %s\nget %s %s\n' "$T/f1m" "$T/null" "$T/nofile" "$T/down" > "$T/batch"
	BATCH=$T/batch same_as_stock "sftp put to a null device, get of a missing file" \
	    sftp "$port" -b - lfnpeer
	printf -- '-put -p %s %s\nput %s %s\n' "$T/f1m" "$T/null" "$T/f1m" "$T/up2" > "$T/batch"
	rm -f "$T/up2"
	BATCH=$T/batch same_as_stock "sftp put -p to a null device, then a put" \
	    sftp "$port" -b - lfnpeer
	cmp -s "$T/f1m" "$T/up2" || fail "put after a failed put corrupted"

	tid "transfers intact ($srv): scp, -p, -l, -B, -R 1, reput/reget"
	rm -f "$T/up" "$T/down"
	lfn_scp "$LFN_TREE" "$port" -q -p "$T/f5m" "lfnpeer:$T/up" || fail "scp -p upload failed"
	cmp -s "$T/f5m" "$T/up" || fail "scp -p upload corrupted"
	lfn_scp "$LFN_TREE" "$port" -q -l 400000 "lfnpeer:$T/f5m" "$T/down" || fail "scp -l download failed"
	cmp -s "$T/f5m" "$T/down" || fail "scp -l download corrupted"
	rm -f "$T/up" "$T/down" "$T/up3" "$T/down3"
	head -c 1234567 "$T/f5m" > "$T/up3"; head -c 2345678 "$T/f5m" > "$T/down3"
	lfn_sftp "$LFN_TREE" "$port" -q -B 32768 -R 1 -b - lfnpeer > /dev/null <<EOF || fail "sftp batch failed"
put $T/f5m $T/up
get $T/f5m $T/down
reput $T/f5m $T/up3
reget $T/f5m $T/down3
EOF
	for f in up down up3 down3; do cmp -s "$T/f5m" "$T/$f" || fail "sftp -B 32768 -R 1: $f corrupted"; done
done
[ -n "$p_sys" ] || verbose "no $SYS_SFTP_SERVER: system sftp-server part not run"

lfn_finish
