#!/usr/bin/env bash
# transfer-split-start: a split copy (-X connections=N) waits for the
# network as little before its data as the protocol allows.
# Patches: 0273
# Read from strace of scp's own SFTP messages (exact, no timing): the
# session's connection, before its first data, turns from sending to
# reading replies at most 5 times, not 9 (its version; the
# destination's stat, read after the limits request went out; the
# destination's and the part's lstat together; the part's open; the
# journal's two requests together).  The copies are byte-identical,
# against openssh-lfn's sshd and stock 10.5p1's (each extra connection
# asks for limits@openssh.com after its version, as stock's client does;
# a held patch sent it with the init); a destination that is not a
# regular file (a symlink) is still not split; when no extra connection
# can log in, the upload is written in place over the session's own
# connection, as before (no part).
# (Resumed and failing split copies: transfer-resume.sh,
# transfer-connections.sh.)
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init transfer-split-start
[ -x "$STOCK_TREE/sshd" ] || lfn_die "stock build missing"
command -v strace > /dev/null || lfn_die "strace missing (./install-deps)"
p=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p" < /dev/null
ps=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$ps" < /dev/null
head -c 40000003 /dev/urandom > "$T/src"

# split_upload PORT: scp -X connections=4 of $T/src under strace
split_upload() {
	rm -f "$T/up"
	strace -f -qq -xx -s 8 -e trace=read,writev -o "$T/strace" "$LFN_TREE/scp" -F "$T/ssh_config" \
	    -S "$LFN_TREE/ssh" -P "$1" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 -q \
	    -X connections=4 "$T/src" "lfnpeer:$T/up" || fail "upload under strace failed"
	cmp -s "$T/src" "$T/up" || fail "the copy differs"
}

# waits.py STRACE MODE: MODE main prints the session's waits before its
# first data; MODE limits, per extra connection, whether its limits reply
# came right behind its version (1) or not (0)
cat > "$T/waits.py" <<'PY'
import re, sys
# per process: the SFTP messages it sent (writev: the length, then the
# message; the init alone: one buffer) and the replies it read, on the
# descriptor its first message went out on
ev, fd, pend = {}, {}, {}
W = re.compile(r'(\d+)\s+writev\((\d+), \[\{iov_base="(?:\\x[0-9a-f]{2}){4}(?:\\x([0-9a-f]{2}))?'
               r'[^"]*"(?:\.\.\.)?, iov_len=\d+\}(?:, \{iov_base="\\x([0-9a-f]{2}))?'
               r'.*?(?:\) += (\d+)|<unfinished)')
R = re.compile(r'(\d+)\s+read\((\d+), (?:"\\x([0-9a-f]{2})[^"]*"(?:\.\.\.)?, \d+\)\s+= (\d+)|<unfinished)')
RR = re.compile(r'(\d+)\s+<\.\.\. read resumed>"\\x([0-9a-f]{2})[^"]*"(?:\.\.\.)?, \d+\)\s+= (\d+)')
WR = re.compile(r'(\d+)\s+<\.\.\. writev resumed>\) += (\d+)')
first = None
for line in open(sys.argv[1]):
    pid = re.match(r'(\d+)', line)[1]
    first = first or pid
    m = W.match(line)
    if m:
        fd.setdefault(pid, m[2])
        if m[2] != fd[pid]:
            continue
        # the body's first byte: in the first buffer (the init) or the second
        t = int(m[3] or m[4] or "ff", 16)
        e = ["out", t, int(m[5]) if m[5] else 0]
        ev.setdefault(pid, []).append(e)
        if not m[5]:
            pend[pid] = e
        continue
    m = WR.match(line)
    if m and pid in pend:
        pend.pop(pid)[2] = int(m[2])
        continue
    m = R.match(line)
    if m:
        if m[3] is None:
            pend[pid] = m[2]
        elif m[2] == fd.get(pid) and int(m[3], 16) != 0:
            ev.setdefault(pid, []).append(["in", int(m[3], 16), int(m[4])])
        continue
    m = RR.match(line)
    if m and pid in fd and pend.pop(pid, None) == fd[pid] and int(m[2], 16) != 0:
        ev.setdefault(pid, []).append(["in", int(m[2], 16), int(m[3])])
WRITE, VERSION, EXT_REPLY = 6, 2, 201
if sys.argv[2] == "main":
    # the waits before the first data (a WRITE of more than 4 KiB: the
    # journal's is 64 bytes and one per chunk)
    waits, seq, last = 0, [], None
    for d, t, n in ev.get(first, []):
        if d == "out" and t == WRITE and n > 4096:
            break
        seq.append("%s%d" % ("<" if d == "in" else ">", t))
        if d == "in" and last == "out":
            waits += 1
        last = d
    print(waits, " ".join(seq))
else:
    for pid, e in ev.items():
        v = [i for i, x in enumerate(e) if x[0] == "in" and x[1] == VERSION]
        if pid == first or not v:
            continue
        # the next thing after the version: its limits reply, nothing sent
        nxt = e[v[0] + 1] if v[0] + 1 < len(e) else None
        print(1 if nxt and nxt[0] == "in" and nxt[1] == EXT_REPLY else 0)
PY

tid "the session's connection waits 5 times before its data, not 9"
split_upload "$p"
read -r waits seq < <(python3 "$T/waits.py" "$T/strace" main)
verbose "waits $waits: $seq"
[ -n "$waits" ] && [ "$waits" -le 5 ] || fail "the session waited ${waits:-?} times before its data: $seq"

tid "stock 10.5p1 sshd: the same copy"
split_upload "$ps"
read -r waits seq < <(python3 "$T/waits.py" "$T/strace" main)
verbose "waits $waits: $seq"
[ -n "$waits" ] && [ "$waits" -le 5 ] || fail "the session waited ${waits:-?} times before its data: $seq"
grep -q 'Accepted publickey' "$SSHD_LOG" || fail "stock sshd saw no login"

tid "a destination that is not a regular file (a symlink) is not split"
: > "$T/target"; ln -s target "$T/link"
lfn_scp "$LFN_TREE" "$p" -v -X connections=4 "$T/src" "lfnpeer:$T/link" > /dev/null 2> "$T/err" ||
	fail "upload to a symlink failed: $(tail -n 3 "$T/err")"
[ -L "$T/link" ] || fail "the symlink was replaced"
cmp -s "$T/src" "$T/target" || fail "the symlink's target differs"
if grep -q "split_deal" "$T/err"; then fail "it was split: $(grep split_deal "$T/err")"; fi

tid "no extra connection can log in: the upload is written in place over one connection"
# (TransferConnections: the extra connections log in after the session's
# own; the proxy lets only the first through)
rm -f "$T/up" "$T/count"
lfn_scp "$LFN_TREE" "$p" -v -o TransferConnections=4 \
    -o "ProxyCommand=python3 $LFN_TOP/regress-bench/lib/counting-proxy.py $T/count 1 127.0.0.1 $p" \
    "$T/src" "lfnpeer:$T/up" > /dev/null 2> "$T/err" || fail "upload failed: $(tail -n 3 "$T/err")"
cmp -s "$T/src" "$T/up" || fail "the copy differs"
grep -q '3 of 3 extra connections could not log in.*continuing with 1' "$T/err" ||
	fail "not said: $(grep -i extra "$T/err")"
if grep -q 'split_deal' "$T/err"; then fail "it was split: $(grep split_deal "$T/err")"; fi
if [ -e "$T/up.lfn-part" ]; then fail "a part was made"; fi

lfn_finish
