#!/usr/bin/env bash
# none-security: NoneEnabled (patches 0401, 0406) security properties.
#  - "none" is never offered or accepted before authentication (our sshd with
#    NoneEnabled, and stock): a raw client proposing only "none" gets "no
#    matching cipher", one proposing "none,aes128-ctr" gets aes128-ctr, and
#    the server's own KEXINIT never lists "none"; ssh/sshd refuse
#    "Ciphers none" in their configuration.
#  - Tamper: a relay flips one byte of the bulk data on the wire after the
#    switch: with the MAC the connection fails with a MAC error and only an
#    intact prefix of the data is written; NoneMacEnabled yes on both ends
#    changes nothing (it is ignored: the MAC always stays).
# Patches: 0401 0406
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/none.sh"
trap lfn_cleanup EXIT
lfn_env_init none-security
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
"$LFN_TREE/ssh" -G -oNoneEnabled=yes x 2>/dev/null | grep -qi '^noneenabled yes' ||
	{ echo "ssh has no NoneEnabled (patch 0401 missing): skipped"; exit 77; }

# A minimal SSH client: banner, then one KEXINIT with the given cipher list;
# prints the server's cipher lists and any DISCONNECT reason.
cat > "$T/kexinit.py" <<'PY'
import os, socket, struct, sys
host, port, ciphers = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port), timeout=10)
s.sendall(b"SSH-2.0-none_probe\r\n")
buf = b""
def need(n):
    global buf
    while len(buf) < n:
        d = s.recv(65536)
        if not d:
            raise EOFError
        buf += d
    r, buf = buf[:n], buf[n:]
    return r
while True:   # server banner
    line = b""
    while not line.endswith(b"\n"):
        line += need(1)
    if line.startswith(b"SSH-"):
        break
def nl(x):
    x = x.encode()
    return struct.pack(">I", len(x)) + x
payload = bytes([20]) + os.urandom(16) + b"".join(nl(x) for x in [
    "curve25519-sha256,mlkem768x25519-sha256", "ssh-ed25519", ciphers,
    ciphers, "hmac-sha2-256", "hmac-sha2-256", "none", "none", "", ""]) \
    + b"\0\0\0\0\0"
pad = 8 - (5 + len(payload)) % 8
if pad < 4:
    pad += 8
s.sendall(struct.pack(">IB", 1 + len(payload) + pad, pad) + payload + bytes(pad))
try:
    while True:
        ln, pad = struct.unpack(">IB", need(5))
        p = need(ln - 1)[:ln - 1 - pad]
        if p[0] == 20:
            off, lists = 17, []
            for i in range(10):
                (n,) = struct.unpack(">I", p[off:off + 4])
                lists.append(p[off + 4:off + 4 + n].decode())
                off += 4 + n
            print("server-ciphers:", lists[2], lists[3])
            print("server-macs:", lists[4], lists[5])
            sys.stdout.flush()
        elif p[0] == 1:
            (n,) = struct.unpack(">I", p[5:9])
            print("disconnect:", p[9:9 + n].decode())
            break
except (EOFError, socket.timeout, ConnectionError):
    print("eof")
PY

# sshd_debug TREE PORT: like lfn_sshd_start, with -o LogLevel=DEBUG1 (the
# base config's LogLevel VERBOSE comes first and would win otherwise).
sshd_debug() {
	local tree=$1 port=$2 cfg="$T/sshd_config.$(basename "$1")-$2"
	lfn_sshd_config "$tree" "$port" > "$cfg"
	SSHD_LOG="$T/sshd.$(basename "$tree")-$port.log"; : > "$SSHD_LOG"
	"$tree/sshd" -D -e -f "$cfg" -o LogLevel=DEBUG1 >> "$SSHD_LOG" 2>&1 &
	LFN_PIDS+=("$!")
	for _ in $(seq 100); do grep -q "Server listening" "$SSHD_LOG" && return 0; sleep 0.1; done
	lfn_die "sshd $tree did not start: $(tail -3 "$SSHD_LOG")"
}
p_on=$(lfn_free_port)
sshd_debug "$LFN_TREE" "$p_on" <<EOF
NoneEnabled yes
NoneMacEnabled yes
EOF
log_on=$SSHD_LOG
p_stock=$(lfn_free_port)
[ -x "$STOCK_TREE/sshd" ] && { sshd_debug "$STOCK_TREE" "$p_stock" < /dev/null; log_stock=$SSHD_LOG; }

probe() {	# probe PORT CIPHERS
	timeout 20 python3 "$T/kexinit.py" 127.0.0.1 "$1" "$2" > "$T/probe" 2>&1
	sleep 0.3
}
for srv in on stock; do
	[ $srv = stock ] && [ ! -x "$STOCK_TREE/sshd" ] && continue
	eval p=\$p_$srv slog=\$log_$srv
	tid "pre-auth: client proposing only none ($srv sshd)"
	probe "$p" none
	grep -q '^server-ciphers:' "$T/probe" || fail "no server KEXINIT: $(cat "$T/probe")"
	grep '^server-' "$T/probe" | grep -qw none && grep '^server-ciphers' "$T/probe" | grep -q '[ ,]none\(,\|$\| \)' &&
		fail "server offers cipher none before authentication"
	grep '^server-macs' "$T/probe" | grep -q '[ ,]none\(,\|$\| \)' && fail "server offers MAC none before authentication"
	grep -q 'no matching cipher found' "$slog" || fail "sshd did not refuse: $(tail -5 "$slog")"
	tid "pre-auth: client proposing none,aes128-ctr gets aes128-ctr ($srv sshd)"
	: > "$slog"
	probe "$p" none,aes128-ctr
	grep -q 'kex: client->server cipher: aes128-ctr' "$slog" || fail "sshd did not choose aes128-ctr: $(grep 'kex:' "$slog")"
	grep -q 'cipher: none' "$slog" && fail "sshd chose none before authentication"
done

tid "Ciphers none is not a valid configuration"
"$LFN_TREE/ssh" -F "$T/ssh_config" -c none -p "$p_on" 127.0.0.1 true 2>/dev/null && fail "ssh -c none connected"
"$LFN_TREE/ssh" -F "$T/ssh_config" -G -oCiphers=none x >/dev/null 2>&1 && fail "ssh accepted Ciphers none"
"$LFN_TREE/ssh" -F "$T/ssh_config" -G -oMACs=none x >/dev/null 2>&1 && fail "ssh accepted MACs none"
lfn_sshd_config "$LFN_TREE" 1 > "$T/bad_config" <<< "Ciphers none"
"$LFN_TREE/sshd" -t -f "$T/bad_config" 2>/dev/null && fail "sshd accepted Ciphers none"

dd if=/dev/urandom of="$T/data" bs=1M count=16 status=none
# download 16 MiB through the relay, flip at 8 MiB (none_tamper, lib/none.sh)
tid "tamper after the switch, MAC kept: MAC error, no corrupted data written"
none_tamper "$p_on" $((8 * 1024 * 1024))
[ "$TAMPER_BYTES" -lt $((16 * 1024 * 1024)) ] || fail "all data delivered despite tampering"
verbose "MAC error after $TAMPER_BYTES intact bytes"

tid "tamper after the switch, NoneMacEnabled yes on both ends: still a MAC error"
none_tamper "$p_on" $((8 * 1024 * 1024)) -oNoneMacEnabled=yes
grep -q 'kex: client->server cipher: none MAC: none' "$T/err" && fail "MAC none negotiated"
lfn_finish
