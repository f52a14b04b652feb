#!/usr/bin/env bash
# transfer-resume-verify: with an openssh-lfn server, a resumed split copy
# checks what the part holds by hashes (the SFTP check-file extension),
# not by the journal alone: a chunk the journal marks but whose bytes are
# wrong is copied again, a chunk written but not yet in the journal is
# kept.  A stock server offers no hashes: the journal stands, as before.
# The server's check-file (asked by paramiko, a foreign client) is bounded:
# blocks of at least 256 bytes, at most 1024 of them and 1 GiB a request,
# sha256 only, a readable handle only.
# Patches: 0262 0274
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init transfer-resume-verify
[ -x "$STOCK_TREE/sshd" ] || fail "stock build missing"
/usr/bin/python3 -c 'import paramiko' 2> /dev/null || lfn_die "python3-paramiko missing: run ./install-deps"
mib=1048576
nmib=24
size=$((nmib * mib))
head -c "$size" /dev/urandom > "$T/src"
pl=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$pl"
ps=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$ps"

# part DEST MTIME: DEST.lfn-part as a stopped 1 MiB-chunk copy leaves it:
# chunks 0-9 written and in the journal, but chunk 3's bytes wrong;
# chunks 10-15 written, not yet in the journal; the rest not written
part() {
	/usr/bin/python3 - "$T/src" "$1.lfn-part" "$2" "$nmib" <<'EOF'
import struct, sys
src, dst, mtime, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
mib = 1 << 20
data = bytearray(open(src, "rb").read())
data[3 * mib + 100] ^= 0xff
data[16 * mib:] = bytes(len(data) - 16 * mib)
head = b"openssh-lfn part" + struct.pack(">QQQI", len(data), mtime, mib, n)
head += bytes(64 - len(head))
journal = bytes([1] * 10 + [0] * (n - 10))
open(dst, "wb").write(bytes(data) + head + journal)
EOF
}

for dir in down up; do
	for server in lfn stock; do
		port=$pl; [ $server = stock ] && port=$ps
		tid "$dir, $server sshd: a part with a wrong chunk in the journal and chunks written after it"
		rm -f "$T/$dir" "$T/$dir.lfn-part"
		if [ $dir = down ]; then
			from="lfnpeer:$T/src" to=$T/down
		else
			from=$T/src to="lfnpeer:$T/up"
		fi
		part "$T/$dir" "$(stat -c %Y "$T/src")"
		lfn_scp "$LFN_TREE" "$port" -v -q -X connections=4 "$from" "$to" 2> "$T/err" ||
			fail "the copy failed: $(grep -v '^debug' "$T/err" | tail -n 3)"
		[ -e "$T/$dir.lfn-part" ] && fail "a part is left after the copy completed"
		had=$(sed -n 's/.*: \([0-9]*\) of [0-9]* bytes are there from an earlier copy.*/\1/p' "$T/err")
		if [ $server = lfn ]; then
			grep -q "from an earlier copy (checked by hash)" "$T/err" || fail "no hashes asked for"
			# 0-2, 4-15: 15 chunks; 3 is copied again
			[ "$had" = $((15 * mib)) ] || fail "the hashes found $had bytes, not 15 MiB"
			grep -q "1 chunk(s) the journal marks differ from the source" "$T/err" ||
				fail "the wrong chunk was not reported"
			cmp -s "$T/src" "$T/$dir" || fail "the result differs from the source"
		else
			# no hashes from a stock server: the journal is trusted
			# (its wrong chunk stays wrong: doc/transfer-resume.md)
			grep -q "checked by hash" "$T/err" && fail "hashes from a stock server?"
			[ "$had" = $((10 * mib)) ] || fail "the journal marks 10 MiB, the copy took up $had bytes"
			cmp -s -n $((3 * mib)) "$T/src" "$T/$dir" && cmp -s -i $((4 * mib)) "$T/src" "$T/$dir" ||
				fail "chunks other than the one the part held wrong differ"
		fi
		verbose "$had bytes taken up"
	done
done

# Two check-file requests (a request hashes at most 1024 chunks) whose
# replies come the second first: the verify takes each as it comes
tid "a server whose check-file replies come out of order (over 1024 chunks, sparse)"
big=$((1040 * mib))
truncate -s "$big" "$T/srcbig"
for at in 3 1030 1039; do
	head -c "$mib" /dev/urandom | dd of="$T/srcbig" bs="$mib" seek="$at" conv=notrunc status=none
done
ps2=$(lfn_free_port)
lfn_sshd_config "$LFN_TREE" "$ps2" < /dev/null |
	sed "s|^Subsystem sftp .*|Subsystem sftp /usr/bin/python3 $LFN_TOP/regress-bench/lib/sftp-reply-shaper.py swap $LFN_TREE/sftp-server|" \
	> "$T/sshd_config.swap"
_lfn_sshd_run "swapping sshd" "$ps2" "$T/sshd.swap.log" "" "$LFN_TREE/sshd" -D -e -f "$T/sshd_config.swap"
# every chunk there and in the journal, but chunk 3's bytes wrong, and
# chunk 1030 written but not in the journal (in the second request's range)
bigpart() {
	cp --sparse=always "$T/srcbig" "$1.lfn-part"
	/usr/bin/python3 - "$1.lfn-part" "$2" "$big" <<'EOF2'
import struct, sys
dst, mtime, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mib = 1 << 20
n = size // mib
f = open(dst, "r+b")
f.seek(3 * mib + 100)
b = f.read(1)
f.seek(3 * mib + 100)
f.write(bytes([b[0] ^ 0xff]))
head = b"openssh-lfn part" + struct.pack(">QQQI", size, mtime, mib, n)
head += bytes(64 - len(head))
f.seek(size)
f.write(head + bytes([0 if i == 1030 else 1 for i in range(n)]))
EOF2
}
for dir in down up; do
	tid "$dir: check-file replies out of order"
	rm -f "$T/$dir" "$T/$dir.lfn-part"
	if [ $dir = down ]; then
		from="lfnpeer:$T/srcbig" to=$T/$dir
	else
		from=$T/srcbig to="lfnpeer:$T/$dir"
	fi
	bigpart "$T/$dir" "$(stat -c %Y "$T/srcbig")"
	lfn_scp "$LFN_TREE" "$ps2" -v -q -X connections=4 "$from" "$to" 2> "$T/err" ||
		fail "the copy failed: $(grep -v '^debug' "$T/err" | tail -n 3)"
	had=$(sed -n 's/.*: \([0-9]*\) of [0-9]* bytes are there from an earlier copy.*/\1/p' "$T/err")
	grep -q "from an earlier copy (checked by hash)" "$T/err" || fail "no hashes asked for"
	# 1039 chunks in the journal's range; 3 is copied again
	[ "$had" = $((1038 * mib)) ] || fail "the hashes found $had bytes, not 1038 MiB"
	cmp -s "$T/srcbig" "$T/$dir" || fail "the result differs from the source"
	verbose "$had bytes taken up"
	rm -f "$T/$dir" "$T/$dir.lfn-part"
done

tid "check-file from a foreign client (paramiko): answers within bounds, refuses the rest"
truncate -s $((1024 * mib + mib)) "$T/big"
head -c $((8 * mib)) "$T/src" | dd of="$T/big" conv=notrunc status=none
/usr/bin/python3 "$(dirname "$0")/../lib/check-file-client.py" 127.0.0.1 "$pl" "$T/id_ed25519" "$T/big" > "$T/cf" 2> "$T/cf.err" ||
	fail "the session broke: $(tail -n 3 "$T/cf.err")"
want=$(for i in 0 1 2 3 4 5 6 7; do head -c $(((i + 1) * mib)) "$T/src" | tail -c $mib | sha256sum | cut -c1-64; done | tr -d '\n')
[ "$(sed -n 1p "$T/cf")" = "ok $want" ] || fail "8 blocks: not the sha256 of each MiB: $(sed -n 1p "$T/cf" | cut -c1-80)"
[ "$(sed -n 2,6p "$T/cf" | tr '\n' ' ')" = "refused refused refused refused refused " ] ||
	fail "out of bounds requests answered: $(sed -n 2,6p "$T/cf" | cut -c1-20 | tr '\n' ' ')"
lfn_finish
