#!/usr/bin/env bash
# fastpath-copy-phase: bulk reads and writes keep their buffers away from
# the page offset that makes the kernel's copy slow (0313, 0316).
# Patches: 0313 0316
# On AMD Zen 3/4 the kernel's copy for read() and write() runs 4-5x slower
# when its destination is 1-63 bytes past its source modulo the page size,
# and a large malloc'd buffer starts 16 bytes past a page: every read of a
# file from its start landed there.  Checked:
#  - unit copy-phase: sshbuf_allocate_stream() keeps a buffer's end >= 256
#    bytes, modulo the page, from the stream offset, keeps every byte in
#    order, and moves no more than sshbuf's own packing does;
#  - ssh up (stdin from a 32 MiB file) and down (`cat FILE`), under
#    strace: no bulk read or write (>= 4 KiB) in the slow band for the
#    stream offset it reads or writes (copy-phase-check.py): the client's
#    file, socket and stdout, and the server's pipes to and from cat (its
#    connection is inherited after the login, its offset unknown to a
#    per-process trace); the data arrives intact;
#  - scp up and down (SFTP): the file's bulk reads, by scp on upload and by
#    sftp-server on download, are out of the slow band (sftp-server's
#    buffer is a large malloc'd one, 16 bytes past a page, and its reads of
#    255 KiB move the file's offset by 3 KiB a time); the copy is intact;
#  - scp down: sftp-server's bulk writes to its output pipe are whole pages
#    of the stream (0316: a pipe fills each write into fresh pages, so sshd
#    then finds the bytes at their stream offset), and sshd's reads of that
#    pipe are out of the slow band;
#  - scp up over two connections (0260's split transfer): its workers'
#    preads of the file are out of the slow band; the copy is intact.
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/unit.sh"
trap lfn_cleanup EXIT
lfn_env_init fastpath-copy-phase
lfn_unit_init

tid "unit: copy-phase"
if ! lfn_unit_build copy-phase; then
	cat "$T/copy-phase.build.log"
	fail "copy-phase did not build"
else
	"$T/copy-phase" > "$T/copy-phase.log" 2>&1 ||
		{ cat "$T/copy-phase.log"; fail "copy-phase failed"; }
	verbose "$(tail -2 "$T/copy-phase.log" | tr '\n' ' ')"
fi

command -v strace >/dev/null || fail "strace is not installed (install-deps)"
check="$LFN_TOP/regress-bench/lib/copy-phase-check.py"
st="-e trace=read,write,pread64,close,execve -e raw=read,write,pread64,close"
head -c $((32 * 1024 * 1024 + 1000)) /dev/urandom > "$T/src"
sum=$(sha256sum < "$T/src")
port=$(lfn_free_port) || fail "no free port"
cfg="$T/sshd_config.st"
lfn_sshd_config "$LFN_TREE" "$port" < /dev/null > "$cfg"
"$LFN_TOP/regress-bench/lib/privsep-ensure" "$LFN_TREE" || fail "no privsep user"
mkdir -p "$T/st"
# shellcheck disable=SC2086
_lfn_sshd_run "sshd under strace" "$port" "$T/sshd.log" "" \
	strace -ff -qq $st -o "$T/st/sshd" "$LFN_TREE/sshd" -D -e -f "$cfg"

for dir in up down; do
	tid "ssh $dir: bulk copies out of the slow band"
	rm -f "$T"/st/sshd.* "$T/client.st"
	if [ $dir = up ]; then
		# shellcheck disable=SC2086
		got=$(strace -qq $st -o "$T/client.st" "$LFN_TREE/ssh" -F "$T/ssh_config" \
			-p "$port" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 lfnpeer \
			sha256sum < "$T/src")
	else
		# shellcheck disable=SC2086
		got=$(strace -qq $st -o "$T/client.st" "$LFN_TREE/ssh" -F "$T/ssh_config" \
			-p "$port" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 lfnpeer \
			cat "$T/src" | sha256sum)
	fi
	[ "$got" = "$sum" ] || fail "data differs ($dir)"
	sleep 1	# the server's processes finish writing their traces
	python3 "$check" "$T/client.st" > "$T/check.client.$dir" ||
		{ cat "$T/check.client.$dir"; fail "client: a bulk copy in the slow band"; }
	python3 "$check" --no-sockets "$T"/st/sshd.* > "$T/check.server.$dir" ||
		{ cat "$T/check.server.$dir"; fail "server: a bulk copy in the slow band"; }
	verbose "$(cat "$T/check.client.$dir" "$T/check.server.$dir" | sed 's/: in the slow band//' | tr '\n' ';')"
done

size=$(stat -c %s "$T/src")
for dir in up down up-x2; do
	tid "scp $dir: the file's reads out of the slow band"
	rm -rf "$T"/st/sshd.* "$T/cst" "$T/dst"; mkdir -p "$T/cst"
	x=()
	case $dir in
	up) from="$T/src" to="lfnpeer:$T/dst" ;;
	down) from="lfnpeer:$T/src" to="$T/dst" ;;
	up-x2) from="$T/src" to="lfnpeer:$T/dst" x=(-X connections=2) ;;
	esac
	# shellcheck disable=SC2086
	strace -ff -qq $st -o "$T/cst/scp" "$LFN_TREE/scp" -q "${x[@]}" -F "$T/ssh_config" -S "$LFN_TREE/ssh" \
		-P "$port" -o HostKeyAlias=lfnpeer -o HostName=127.0.0.1 "$from" "$to" ||
		fail "scp $dir failed"
	cmp -s "$T/src" "$T/dst" || fail "scp $dir: the copy differs"
	sleep 1
	if [ $dir = down ]; then logs=("$T"/st/sshd.*); else logs=("$T"/cst/scp.*); fi
	python3 "$check" --file-size "$size" "${logs[@]}" > "$T/check.scp.$dir" ||
		{ cat "$T/check.scp.$dir"; fail "scp $dir: a read of the file in the slow band"; }
	if [ $dir = down ]; then
		python3 "$check" --whole-pages sftp-server "${logs[@]}" >> "$T/check.scp.$dir" ||
			{ cat "$T/check.scp.$dir"; fail "scp down: sftp-server's bulk writes are not whole pages of its output"; }
		# sshd's reads of the pipe (sftp-server's own writes into it
		# meet the band by chance: its queue is placed for its file reads)
		mapfile -t sshd_logs < <(grep -L 'execve("[^"]*/sftp-server"' "${logs[@]}")
		python3 "$check" --no-sockets "${sshd_logs[@]}" >> "$T/check.scp.$dir" ||
			{ cat "$T/check.scp.$dir"; fail "scp down: sshd's bulk copies in the slow band"; }
	fi
	verbose "$(sed 's/: in the slow band//' "$T/check.scp.$dir" | tr '\n' ';')"
done
lfn_finish
