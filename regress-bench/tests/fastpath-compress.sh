#!/usr/bin/env bash
# fastpath-compress: -C (zlib@openssh.com) with openssh-lfn's adaptive
# deflate (patch 0304): data round-trips unchanged (cmp) on mixed
# compressible/incompressible data, with stock 10.3p1 and the system ssh
# on the other end; compressible data is still compressed; a stream that
# does not compress is sent stored and compression resumes when it does.
# Patches: 0304
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init fastpath-compress
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }

# zeros, 9 MiB random (> the 8 MiB probe interval), then 21 MB of text (a
# failed probe doubles the interval, so text must last > 16 MiB more)
{ head -c 1048576 /dev/zero; head -c 9437187 /dev/urandom; seq 1 3000000; } > "$T/mixed"
head -c 8388608 /dev/zero > "$T/zero"
head -c 4194301 /dev/urandom > "$T/rand"

p_lfn=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$p_lfn"
p_stock=$(lfn_free_port); lfn_sshd_start "$STOCK_TREE" "$p_stock"

# roundtrip LABEL FILE CLIENT... : upload and download FILE in one session.
roundtrip() {
	local label=$1 file=$2; shift 2
	rm -f "$T/up" "$T/down"
	"$@" -C -vv lfnpeer "cat > $T/up && cat $T/up" < "$file" > "$T/down" 2> "$T/v.log" ||
		{ fail "$label: transfer failed"; tail -5 "$T/v.log"; return 1; }
	cmp -s "$file" "$T/up" || fail "$label: upload corrupted"
	cmp -s "$file" "$T/down" || fail "$label: download corrupted"
	grep -q "compression: zlib@openssh.com" "$T/v.log" || fail "$label: zlib@openssh.com not negotiated"
}
# factor: the client's outgoing compression factor (compressed/raw).
factor() { sed -n 's/.*compress outgoing: raw data [0-9]*, compressed [0-9]*, factor \([0-9.]*\).*/\1/p' "$T/v.log" | tail -1; }

tid "mixed data: lfn client -> stock sshd (lfn compresses, stock inflates)"
roundtrip "lfn->stock" "$T/mixed" lfn_ssh "$LFN_TREE" "$p_stock"
grep -q "stream does not compress" "$T/v.log" || fail "random part was not sent stored"
grep -q "stream compresses again" "$T/v.log" || fail "compression did not resume on text"
tid "mixed data: stock client -> lfn sshd (stock compresses, lfn inflates)"
roundtrip "stock->lfn" "$T/mixed" lfn_ssh "$STOCK_TREE" "$p_lfn"
tid "mixed data: lfn client -> lfn sshd"
roundtrip "lfn->lfn" "$T/mixed" lfn_ssh "$LFN_TREE" "$p_lfn"
if [ -x /usr/bin/ssh ]; then
	tid "mixed data: system ssh -> lfn sshd"
	roundtrip "system->lfn" "$T/mixed" /usr/bin/ssh -F "$T/ssh_config" \
	    -p "$p_lfn" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1
fi

tid "all-zero data is still compressed"
roundtrip "zero" "$T/zero" lfn_ssh "$LFN_TREE" "$p_stock"
f=$(factor); [ -n "$f" ] || fail "no compression statistics in the log"
awk -v f="${f:-1}" 'BEGIN{exit !(f < 0.05)}' || fail "zeros compressed with factor $f"
verbose "zeros: factor $f"
tid "random data does not grow much (stored blocks)"
roundtrip "rand" "$T/rand" lfn_ssh "$LFN_TREE" "$p_stock"
f=$(factor); [ -n "$f" ] || fail "no compression statistics in the log"
awk -v f="${f:-2}" 'BEGIN{exit !(f < 1.01)}' || fail "random data factor $f"
verbose "random: factor $f"
lfn_finish
