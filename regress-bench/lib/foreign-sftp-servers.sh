# regress-bench/lib/foreign-sftp-servers.sh — SFTP servers nobody here
# wrote, each started by the test itself on 127.0.0.1 (its own config under
# $T, in the foreground, stopped by PID through lfn_cleanup), for our
# client to be tried against (tests/sftp-foreign-servers.sh).  Sourced after
# sshenv.sh and lfn_env_init (bash).  A bench puts them on the server side
# of an emulated link instead (bench/foreign-servers.sh): NETNS (e.g. $NB)
# and ADDRESS ($ADDR) after the other arguments.
#
#   lfn_foreign_need                  the servers are installed (or lfn_die)
#   lfn_proftpd_start PORT [NAME [NETNS [ADDRESS]]] < EXTRA-CONFIG
#                                     ProFTPD 1.3.8's mod_sftp    PROFTPD_PID
#   lfn_rclone_sftp_start PORT [NETNS [ADDRESS]]
#                                     rclone serve sftp /         RCLONE_PID
#   LFN_SSHD_SFTP=$GESFTPSERVER lfn_sshd_start TREE PORT [NETNS]
#                                     the Green End SFTP server as the sftp
#                                     Subsystem of a test sshd
#   lfn_quirky_server FILE VAR=VALUE...
#                                     FILE runs lib/sftp-quirky-server.py
#                                     (scp -D, sftp -D, or a Subsystem)
#
# Every server takes the test's user key ($T/id_ed25519: User root, as the
# tests run) and is reached as host "lfnpeer" through $T/ssh_config, with
# the host key checked: rclone uses the test's own host key, ProFTPD one of
# its own in the PEM format it reads (added to $T/known_hosts).

GESFTPSERVER=${GESFTPSERVER:-/usr/libexec/gesftpserver}
PROFTPD=${PROFTPD:-/usr/sbin/proftpd}
PROFTPD_MODULES=${PROFTPD_MODULES:-/usr/lib/proftpd}

lfn_foreign_need() {
	[ -x "$GESFTPSERVER" ] || lfn_die "$GESFTPSERVER missing: run ./install-deps (gesftpserver)"
	[ -x "$PROFTPD" ] || lfn_die "$PROFTPD missing: run ./install-deps (proftpd-core)"
	[ -f "$PROFTPD_MODULES/mod_sftp.so" ] ||
		lfn_die "$PROFTPD_MODULES/mod_sftp.so missing: run ./install-deps (proftpd-mod-crypto)"
	command -v rclone > /dev/null || lfn_die "rclone missing: run ./install-deps (rclone)"
}

# lfn_wait_listen WHAT PORT PID LOG [NETNS]: wait up to 15 s for a socket
# listening on PORT (in NETNS when given); lfn_die with LOG when PID exits
# or nothing listens
lfn_wait_listen() {
	local what=$1 port=$2 pid=$3 log=$4 ns=${5:-}
	local -a pre=()
	[ -n "$ns" ] && pre=(ip netns exec "$ns")
	for _ in $(seq 1 150); do
		"${pre[@]}" ss -Hltn "sport = :$port" 2> /dev/null | grep -q . && return 0
		kill -0 "$pid" 2> /dev/null || { tail -n 20 "$log" >&2; lfn_die "$what exited"; }
		sleep 0.1
	done
	tail -n 20 "$log" >&2; lfn_die "$what did not listen on $port within 15 s"
}

# lfn_proftpd_start PORT [NAME [NETNS [ADDRESS]]]: ProFTPD with mod_sftp on
# ADDRESS:PORT (127.0.0.1) in network namespace NETNS (none: this one),
# in the foreground (-n: it forks a child per connection, not itself),
# every file of its own under $T (NAME.conf, NAME.log, ...; NAME:
# proftpd).  Extra configuration lines are read from stdin (e.g.
# AllowOverwrite on: ProFTPD refuses to open an existing file for writing
# by default; AllowStoreRestart on: it refuses an OPEN that appends or
# writes into an existing file without truncating it, as sftp reput does,
# "Permission denied").  As root: ProFTPD refuses root unless RootLogin on,
# and /etc/ftpusers (which names root) unless UseFtpUsers off; it runs as
# root (User/Group), so a session can read and write what the test made.
# Public key authentication only, from an RFC 4716 copy of the test's user
# key (ssh-keygen -e); its host key is ECDSA in PEM (ssh-keygen -m PEM).
# No DNS, no IPv6, no PAM, no chroot (DefaultRoot unset), no mod_delay.
# Logs: $T/NAME.log (its stderr), NAME-system.log, NAME-sftp.log.  Sets
# PROFTPD_PID.
lfn_proftpd_start() {
	local port=$1 n=${2:-proftpd} ns=${3:-} addr=${4:-127.0.0.1} conf log
	local -a pre=()
	[ -n "$ns" ] && pre=(ip netns exec "$ns")
	conf=$T/$n.conf log=$T/$n.log
	if [ ! -f "$T/proftpd_host_ecdsa" ]; then
		ssh-keygen -q -t ecdsa -b 256 -m PEM -N '' -C proftpd-host -f "$T/proftpd_host_ecdsa" ||
			lfn_die "ssh-keygen (ProFTPD's host key) failed"
		printf '* %s\n' "$(cat "$T/proftpd_host_ecdsa.pub")" >> "$T/known_hosts"
		ssh-keygen -e -f "$T/id_ed25519.pub" > "$T/authorized_keys.rfc4716" ||
			lfn_die "ssh-keygen -e (the user key in RFC 4716) failed"
	fi
	{ cat <<CFG
ServerType standalone
ServerName "openssh-lfn test"
Port $port
DefaultAddress $addr
SocketBindTight on
UseIPv6 off
UseReverseDNS off
User root
Group root
RootLogin on
UseFtpUsers off
RequireValidShell off
AuthOrder mod_auth_unix.c
AuthPAM off
WtmpLog off
DelayEngine off
Umask 022 022
MaxInstances 64
PidFile $T/$n.pid
ScoreboardFile $T/$n.scoreboard
SystemLog $T/$n-system.log
TransferLog $T/$n-xfer.log
ModulePath $PROFTPD_MODULES
LoadModule mod_sftp.c
<IfModule mod_sftp.c>
SFTPEngine on
SFTPLog $T/$n-sftp.log
SFTPHostKey $T/proftpd_host_ecdsa
SFTPAuthMethods publickey
SFTPAuthorizedUserKeys file:$T/authorized_keys.rfc4716
</IfModule>
CFG
	  [ -t 0 ] || cat; } > "$conf"
	: > "$log"
	"$PROFTPD" -t -c "$conf" >> "$log" 2>&1 || { cat "$log" >&2; lfn_die "proftpd -t rejects $conf"; }
	"${pre[@]}" "$PROFTPD" -n -c "$conf" >> "$log" 2>&1 &
	PROFTPD_PID=$!		# ip netns exec execs it: the same PID
	LFN_PIDS+=("$PROFTPD_PID")
	lfn_wait_listen "ProFTPD ($PROFTPD -n -c $conf)" "$port" "$PROFTPD_PID" "$log" "$ns"
}

# lfn_rclone_sftp_start PORT [NETNS [ADDRESS]]: rclone serve sftp of / on
# ADDRESS:PORT (127.0.0.1) in network namespace NETNS (none: this one), in
# its default VFS mode (--vfs-cache-mode off: a file is written only from
# start to end), the test's host key and authorized_keys, no rclone config.
# Its directory cache is off (--dir-cache-time 0; 5 min by default): the
# test makes files in the served tree behind rclone's back.  rclone sends
# no exit-status when an SFTP session ends, so ssh exits 255 ("Exit status
# -1") and scp 1 after a copy that worked (stock's and ours alike); sftp
# does not look at it.  Log: $T/rclone.log.  Sets RCLONE_PID.
lfn_rclone_sftp_start() {
	local port=$1 ns=${2:-} addr=${3:-127.0.0.1} log=$T/rclone.log
	local -a pre=()
	[ -n "$ns" ] && pre=(ip netns exec "$ns")
	: > "$log"
	RCLONE_CACHE_DIR=$T/rclone-cache "${pre[@]}" rclone serve sftp / --addr "$addr:$port" \
	    --authorized-keys "$T/authorized_keys" --key "$T/host_ed25519" \
	    --config /dev/null --dir-cache-time 0 --poll-interval 0 >> "$log" 2>&1 &
	RCLONE_PID=$!
	LFN_PIDS+=("$RCLONE_PID")
	lfn_wait_listen "rclone serve sftp" "$port" "$RCLONE_PID" "$log" "$ns"
}

# lfn_quirky_server FILE [VAR=VALUE...]: FILE becomes a program without
# arguments (scp -D, sftp -D, an sshd Subsystem) that runs
# lib/sftp-quirky-server.py with the VAR=VALUEs (SFTP_QUIRK_MODE, ...)
lfn_quirky_server() {
	local f=$1; shift
	printf '#!/bin/sh\nexec env %s /usr/bin/python3 %s\n' "$*" \
		"$LFN_TOP/regress-bench/lib/sftp-quirky-server.py" > "$f" && chmod +x "$f"
}
