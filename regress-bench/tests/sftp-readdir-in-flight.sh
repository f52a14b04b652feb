#!/usr/bin/env bash
# sftp-readdir-in-flight: a listing of a large remote directory keeps
# several READDIRs in flight (0270), and lists exactly what is there.
# What a user would see go wrong: a listing, scp -r or sftp get -R of a
# big directory waiting a round trip per 100 names, a name missing or
# doubled, an error not reported, or a protocol error from the requests
# in flight past the end of the listing.
# Read from sftp -vvv (exact, no timing): with 1,000 names (OpenSSH's
# sftp-server answers at most 100 per READDIR), more than one READDIR goes
# out before the first reply; the names listed are the directory's, each
# once, against openssh-lfn's sftp-server and stock 10.5p1's (sftp -D:
# the client talks to the server binary directly); an unreadable
# directory fails with upstream's message; an empty directory lists
# nothing.  Before 0270: one READDIR per reply.
# Patches: 0270
. "$(dirname "$0")/../lib/sshenv.sh"
trap 'lfn_cleanup' EXIT
lfn_env_init sftp-readdir-in-flight
[ -x "$STOCK_TREE/sftp-server" ] || lfn_die "stock build missing"
mkdir -p "$T/big" "$T/empty" "$T/shut"
for i in $(seq 1 1000); do : > "$T/big/n$i"; done
(cd "$T/big" && ls -1 | sort) > "$T/want"

for srv in "$LFN_TREE" "$STOCK_TREE"; do
	tid "1,000 names from $(basename "$srv")'s sftp-server: in flight, each once"
	"$LFN_TREE/sftp" -vvv -D "$srv/sftp-server" -b - > "$T/out" 2> "$T/err" <<< "ls -1 $T/big" ||
		fail "ls failed: $(tail -n 3 "$T/err")"
	sed -n "s#^$T/big/##p" "$T/out" | sort > "$T/got"
	cmp -s "$T/want" "$T/got" || fail "the names differ: $(diff "$T/want" "$T/got" | head -n 5)"
	# READDIRs sent before the first reply to one
	ahead=$(awk '/Sending SSH2_FXP_READDIR/ { n++ } /Received reply T:104/ { print n; exit }' "$T/err")
	verbose "READDIRs out before the first NAME reply: ${ahead:-?}"
	[ "${ahead:-0}" -ge 2 ] || fail "one READDIR per round trip (${ahead:-?} before the first reply)"
	grep -q "ID mismatch\|Expected SSH2_FXP" "$T/err" && fail "protocol error: $(grep -m1 'ID mismatch\|Expected' "$T/err")"
done

tid "an empty directory lists nothing, an unreadable one fails as upstream's"
"$LFN_TREE/sftp" -D "$LFN_TREE/sftp-server" -b - > "$T/out" 2> "$T/err" <<< "ls -1 $T/empty" ||
	fail "ls of an empty directory failed: $(tail -n 3 "$T/err")"
[ -z "$(sed -n "s#^$T/empty/##p" "$T/out")" ] || fail "an empty directory listed: $(cat "$T/out")"
chmod 000 "$T/shut"
for tree in "$LFN_TREE" "$STOCK_TREE"; do
	capsh --drop=cap_dac_override,cap_dac_read_search -- -c \
	    "'$tree/sftp' -D '$tree/sftp-server' -b - <<< 'ls $T/shut'" > /dev/null 2> "$T/err.$(basename "$tree")"
	echo "$?" >> "$T/err.$(basename "$tree")"
done
chmod 755 "$T/shut"
diff <(sed "s#$LFN_TREE#TREE#g" "$T/err.$(basename "$LFN_TREE")") \
    <(sed "s#$STOCK_TREE#TREE#g" "$T/err.$(basename "$STOCK_TREE")") > /dev/null ||
	fail "an unreadable directory: not as stock: $(cat "$T/err.$(basename "$LFN_TREE")")"
lfn_finish
