# regress-bench/lib/sshenv.sh — a private ssh/sshd test environment for
# openssh-lfn's own tests and benchmarks (sourced, bash).
#
#   . regress-bench/lib/sshenv.sh
#   lfn_env_init mytest            # $T = build/test/mytest: keys, configs;
#                                  # $S = a short private dir for sockets
#   lfn_sshd_start "$LFN_TREE" 22022 [NETNS] <<< "extra sshd_config lines"
#   lfn_ssh "$LFN_TREE" [-n NETNS] 22022 [ssh args...] -- command
#   lfn_scp/lfn_sftp TREE [-n NETNS] PORT args...
#   lfn_cleanup                     # stops only what lfn_* started (trap it)
#
# Trees: LFN_TREE (openssh-portable, patched), STOCK_TREE (build/stock).  Each
# tree's sshd runs its own sshd-session/sshd-auth/sftp-server, and sessions
# get PATH=<tree>:... so remote `scp -t` and friends are that tree's too.
# Host "lfnpeer" in $T/ssh_config has everything the client needs; the
# address is given per call (127.0.0.1, or 198.18.0.x inside a wanemu link).

LFN_TOP=${LFN_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
LFN_TREE=${LFN_TREE:-$LFN_TOP/openssh-portable}
STOCK_TREE=${STOCK_TREE:-$LFN_TOP/build/stock}
LFN_PIDS=()

lfn_log() { printf '%s\n' "$*" >&2; }
lfn_die() { printf 'FATAL: %s\n' "$*" >&2; exit 1; }

# lfn_env_init NAME: fresh scratch dir $T with user and host keys, and $S,
# a short private directory (/tmp/lfn.XXXXXX, removed by lfn_cleanup) for
# every Unix socket the test makes: ControlPath, agent, streamlocal
# forwards.  A socket path must fit in 107 bytes, and $T is as long as the
# checkout's path (ssh's ControlPath adds %C's 40 characters and a 17-byte
# temporary suffix); the lint-socket-paths test keeps sockets out of $T.
lfn_env_init() {
	T="$LFN_TOP/build/test/$1"
	rm -rf "$T"; mkdir -p "$T"; chmod 700 "$T"
	[ -n "${S:-}" ] && [ -d "$S" ] && rm -rf "$S"
	S=$(mktemp -d /tmp/lfn.XXXXXX) || lfn_die "mktemp -d /tmp/lfn.XXXXXX failed"
	export S
	local kg="$LFN_TREE/ssh-keygen"
	[ -x "$kg" ] || kg=$(command -v ssh-keygen)
	"$kg" -q -t ed25519 -N '' -f "$T/id_ed25519" -C lfn-test || lfn_die "ssh-keygen failed"
	"$kg" -q -t ed25519 -N '' -f "$T/host_ed25519" -C lfn-host || lfn_die "ssh-keygen failed"
	cp "$T/id_ed25519.pub" "$T/authorized_keys"
	printf '* %s\n' "$(cat "$T/host_ed25519.pub")" > "$T/known_hosts"
	cat > "$T/ssh_config" <<CFG
Host *
	User $(id -un)
	IdentityFile $T/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $T/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	BatchMode yes
	ConnectTimeout 20
	LogLevel ERROR
CFG
	export T
}

# lfn_sshd_config TREE PORT: print an sshd_config for TREE (stdin appended).
# LFN_SSHD_SFTP: the sftp Subsystem's command line instead of TREE's
# sftp-server (e.g. a foreign server: LFN_SSHD_SFTP=/usr/libexec/gesftpserver
# lfn_sshd_start ...); a Subsystem line on stdin cannot do it, as sshd keeps
# the first one it reads.
lfn_sshd_config() {
	local tree=$1 port=$2
	cat <<CFG
Port $port
ListenAddress 0.0.0.0
HostKey $T/host_ed25519
AuthorizedKeysFile $T/authorized_keys
StrictModes no
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
LogLevel VERBOSE
SshdSessionPath $tree/sshd-session
SshdAuthPath $tree/sshd-auth
Subsystem sftp ${LFN_SSHD_SFTP:-$tree/sftp-server}
SetEnv PATH=$tree:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
CFG
	[ -t 0 ] || cat
}

# lfn_sshd_start TREE PORT [NETNS]: start TREE's sshd, wait until it listens.
# Extra sshd_config lines are read from stdin.  Sets SSHD_PID, SSHD_LOG.
lfn_sshd_start() {
	local tree=$1 port=$2 ns=${3:-} tag cfg
	tag=$(basename "$tree")-$port
	cfg="$T/sshd_config.$tag"
	lfn_sshd_config "$tree" "$port" > "$cfg"
	SSHD_LOG="$T/sshd.$tag.log"
	: > "$SSHD_LOG"
	"$LFN_TOP/regress-bench/lib/privsep-ensure" "$tree" || lfn_die "no privsep user for $tree/sshd"
	"$tree/sshd" -t -f "$cfg" || lfn_die "sshd -t rejected $cfg"
	_lfn_sshd_run "sshd ($tree)" "$port" "$SSHD_LOG" "$ns" "$tree/sshd" -D -e -f "$cfg"
	SSHD_PID=$SSHD_RUN_PID
}

# _lfn_sshd_run WHAT PORT LOG NETNS SSHD ARGS...: start SSHD ARGS (in
# NETNS unless empty), its output appended to LOG, and wait up to 15 s
# until it listens on PORT.  Sets SSHD_RUN_PID.  Fails the test with
# sshd's own words when it exits or does not listen.
_lfn_sshd_run() {
	local what=$1 port=$2 log=$3 ns=$4 i; shift 4
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@" >> "$log" 2>&1 &
	else
		"$@" >> "$log" 2>&1 &
	fi
	SSHD_RUN_PID=$!
	LFN_PIDS+=("$SSHD_RUN_PID")
	for i in $(seq 1 150); do
		grep -q "Server listening" "$log" && return 0
		kill -0 "$SSHD_RUN_PID" 2>/dev/null ||
			{ cat "$log" >&2; lfn_die "$what exited"; }
		sleep 0.1
	done
	cat "$log" >&2; lfn_die "$what did not start listening on $port"
}

# _lfn_client PROG TREE [-n NETNS] [-h ADDR] PORT args...
_lfn_client() {
	local prog=$1 tree=$2; shift 2
	local ns="" addr=127.0.0.1
	while :; do
		case "$1" in
		-n) ns=$2; shift 2 ;;
		-h) addr=$2; shift 2 ;;
		*) break ;;
		esac
	done
	local port=$1; shift
	local -a pre=()
	[ -n "$ns" ] && pre=(ip netns exec "$ns")
	case "$prog" in
	ssh) "${pre[@]}" "$tree/ssh" -F "$T/ssh_config" -p "$port" -o HostKeyAlias=lfnpeer -o HostName="$addr" "$@" ;;
	scp) "${pre[@]}" "$tree/scp" -F "$T/ssh_config" -S "$tree/ssh" -P "$port" -o HostKeyAlias=lfnpeer -o HostName="$addr" "$@" ;;
	sftp) "${pre[@]}" "$tree/sftp" -F "$T/ssh_config" -S "$tree/ssh" -P "$port" -o HostKeyAlias=lfnpeer -o HostName="$addr" "$@" ;;
	esac
}
# lfn_ssh TREE [-n NETNS] [-h ADDR] PORT [ssh args] lfnpeer CMD — "lfnpeer"
# is mapped to ADDR (-h, default 127.0.0.1) and its host key alias.
lfn_ssh()  { _lfn_client ssh "$@"; }
lfn_scp()  { _lfn_client scp "$@"; }
lfn_sftp() { _lfn_client sftp "$@"; }

# first_before LOG A B: the first line matching A comes before the first
# line matching B (both present).
first_before() {
	local a b
	a=$(grep -n -m1 -e "$2" "$1" | cut -d: -f1)
	b=$(grep -n -m1 -e "$3" "$1" | cut -d: -f1)
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]
}

# lfn_sequential_server FILE [VAR=VALUE...]: FILE becomes a program without
# arguments (as scp -D and an sshd Subsystem take) that runs
# lib/sftp-sequential-server.py with the VAR=VALUEs in its environment.
lfn_sequential_server() {
	local f=$1; shift
	printf '#!/bin/sh\nexec env %s /usr/bin/python3 %s\n' "$*" \
		"$LFN_TOP/regress-bench/lib/sftp-sequential-server.py" > "$f" && chmod +x "$f"
}

# lfn_free_port: a TCP port no socket uses (root namespace), below the
# kernel's ephemeral range (ip_local_port_range, 32768-60999 by default):
# a port in that range can be taken by any client connection's local end
# between this check and the server's bind (sshd then cannot listen).
lfn_free_port() {
	local p lo
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "$lo" -gt 21000 ] 2>/dev/null || lo=32768
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % (lo - 20000)))
		ss -Hatn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# lfn_debian_sshd_start PORT [NETNS]: start Debian's sshd (DEBIAN_SSHD, from
# regress-bench/lib/debian-sshd path) on PORT with the test's host key and
# authorized_keys, wait until it listens.  Extra sshd_config lines are read
# from stdin (no Subsystem by default).  Sets DEBIAN_SSHD_LOG; fails the test
# with sshd's own words when it exits or does not listen.
lfn_debian_sshd_start() {
	local port=$1 ns=${2:-} cfg
	cfg="$T/sshd_config.debian-$port"
	DEBIAN_SSHD_LOG="$T/sshd.debian-$port.log"
	mkdir -p /run/sshd && chmod 755 /run/sshd	# its privsep chroot (Debian)
	{ cat <<CFG
Port $port
ListenAddress 0.0.0.0
HostKey $T/host_ed25519
AuthorizedKeysFile $T/authorized_keys
StrictModes no
PidFile none
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
LogLevel VERBOSE
CFG
	  [ -t 0 ] || cat; } > "$cfg"
	"$DEBIAN_SSHD" -t -f "$cfg" || lfn_die "Debian's sshd ($DEBIAN_SSHD) rejects $cfg"
	: > "$DEBIAN_SSHD_LOG"
	_lfn_sshd_run "Debian's sshd ($DEBIAN_SSHD)" "$port" "$DEBIAN_SSHD_LOG" \
	    "$ns" "$DEBIAN_SSHD" -D -e -f "$cfg"
}

# lfn_paramiko_python: set PY to a python3 that has paramiko, for the
# hostile peers.  Debian's python3-paramiko (install-deps) is in
# /usr/bin/python3's path; a pyenv or venv python3 first in PATH may lack
# it.  Fails the test (exit 1) when neither has it: a hostile-peer test
# must not pass by skipping.
lfn_paramiko_python() {
	local p
	for p in /usr/bin/python3 python3; do
		"$p" -c 'import paramiko' 2>/dev/null && { PY=$p; return 0; }
	done
	lfn_die "no python3 with paramiko (tried /usr/bin/python3, python3): run ./install-deps (apt-get install python3-paramiko)"
}

# lfn_cleanup: stop every process lfn_* started (by PID only).
# Their descendants go too: a sshd listener leaves its sessions running
# when it ends, and a session whose client went away with the link
# (lfn_wan_cleanup deletes the namespaces) would wait on its socket forever.
lfn_cleanup() {
	local p below
	below=$(lfn_descendants "${LFN_PIDS[@]}")
	for p in "${LFN_PIDS[@]}" $below; do kill "$p" 2>/dev/null; done
	for p in "${LFN_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	LFN_PIDS=()
	case "${S:-}" in /tmp/lfn.??????) rm -rf "$S" ;; esac
}

# lfn_descendants PID...: the PIDs of all processes below PID... (/proc)
lfn_descendants() {
	local f line pid rest
	local -A kids=()
	local -a todo=("$@")
	[ $# -gt 0 ] || return 0
	for f in /proc/[0-9]*/stat; do
		{ read -r line < "$f"; } 2>/dev/null || continue	# gone since the glob
		pid=${line%% *}
		rest=${line##*) }		# after "pid (comm) ": state ppid ...
		set -- $rest
		kids[$2]+=" $pid"
	done
	while [ ${#todo[@]} -gt 0 ]; do
		pid=${todo[0]}; todo=("${todo[@]:1}")
		for f in ${kids[$pid]:-}; do echo "$f"; todo+=("$f"); done
	done
}

# Test reporting in upstream regress style: tid / trace / fail / verbose.
LFN_FAILS=0
LFN_FAIL_MSGS=()
tid()     { LFN_TID="$*"; printf 'run test %s ...\n' "$*"; }
trace()   { [ -n "${LFN_VERBOSE:-}" ] && printf 'trace: %s\n' "$*"; return 0; }
verbose() { printf '  %s\n' "$*"; }
fail()    { LFN_FAILS=$((LFN_FAILS+1)); LFN_FAIL_MSGS+=("$*"); printf 'FAIL: %s: %s\n' "${LFN_TID:-}" "$*"; }
# lfn_finish: exit status of the test script.
lfn_finish() {
	if [ "$LFN_FAILS" -ne 0 ]; then echo "failed ${LFN_TID:-}"; exit 1; fi
	echo "ok ${LFN_TID:-}"; exit 0
}

# lfn_wan_link TAG RTT_MS RATE: an emulated link (regress-bench/wanemu) for
# this test, torn down by lfn_cleanup.  Skips the test (exit 77) when root,
# network namespaces or the emulator are missing.  Sets NA (client side
# namespace), NB (server side) and ADDR (the server's address, seen from NA).
# Further arguments go to wanemu-up (e.g. --tcp-buffers debian).
LFN_WAN_TAGS=()
lfn_wan_link() {
	local wanemu=${WANEMU:-$LFN_TOP/regress-bench/wanemu}
	local -a more=("${@:4}")
	[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces): skipped"; exit 77; }
	[ -x "$wanemu/wanemu-up" ] || { echo "no WAN emulator ($wanemu/wanemu-up): skipped"; exit 77; }
	ip netns list >/dev/null 2>&1 || { echo "no network namespaces: skipped"; exit 77; }
	"$wanemu/wanemu-up" -n "$1" --rtt "$2" --rate "$3" --quiet "${more[@]}" >/dev/null 2>&1 ||
		{ echo "wanemu-up failed: skipped"; exit 77; }
	LFN_WAN_TAGS+=("$1")
	NA=lfn-$1-a NB=lfn-$1-b ADDR=198.18.0.2
}
# lfn_wan_cleanup: take down the links lfn_wan_link made.
lfn_wan_cleanup() {
	local t
	for t in "${LFN_WAN_TAGS[@]}"; do
		"${WANEMU:-$LFN_TOP/regress-bench/wanemu}/wanemu-down" -n "$t" --quiet 2>/dev/null
	done
	LFN_WAN_TAGS=()
}
