#!/usr/bin/env bash
# auth-matrix: a user who logs in with a password, keyboard-interactive, an
# agent key, an encrypted key file, a PKCS#11 token, a FIDO key, a
# certificate, hostbased or publickey+password still gets in exactly as
# with stock's ssh: same exit status and output, same askpass prompts, the
# same server-side log of failed attempts (count of "Failed <method>" lines
# and the "Accepted"/"Partial" method), and a wrong password or key fails
# the same way.  0213/0214/0216 changed which userauth request goes first;
# this holds them to upstream's outcomes.
#
# Servers: openssh-lfn's sshd, stock 10.5p1's, Debian's 9.2p1 (UsePAM yes:
# the only one of the three with keyboard-interactive, as the trees here are
# configured without PAM).  Clients: openssh-lfn's ssh and stock's against
# each server (compared with each other); Debian's /usr/bin/ssh against
# openssh-lfn's sshd and stock's (compared with each other).  Each outcome
# must also be the expected one (ok/fail).
#
# Everything runs in a private mount namespace (unshare -m): copies of
# /etc/passwd, /etc/shadow and /etc/group with a user "lfnauth" and a
# password are bind-mounted, /usr/local (the trees' sysconfdir and
# libexecdir) is an overlay with client host keys, EnableSSHKeysign and
# ssh-keysign, and /etc/ssh (Debian's ssh-keysign) a scratch copy; nothing
# on the machine changes.  PKCS#11: a softhsm2 token (ECDSA key, PIN via
# askpass).  FIDO: ecdsa-sk through upstream's sk-dummy provider, built
# from 10.5p1 (openssh-portable/regress/misc/sk-dummy); Debian 9.2p1's
# ssh-sk-helper takes it too: its provider API is the same version
# (SSH_SK_VERSION_MAJOR 0x000a0000).
# Patches: 0213 0214 0216
. "$(dirname "$0")/../lib/sshenv.sh"

[ "$(id -u)" = 0 ] || lfn_die "needs root (a private mount namespace with a test user)"
if [ -z "${LFN_AUTH_NS:-}" ]; then
	command -v unshare > /dev/null || lfn_die "unshare missing (util-linux)"
	LFN_AUTH_NS=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
fi

# the copies of /etc/shadow and the overlay's setuid ssh-keysign go at exit
trap 'umount -l /etc/ssh "${prefix:-/nonexistent}" 2> /dev/null; rm -rf "$T/etc" "$T/pup" "$T/pwork" "$T/etcssh"; lfn_cleanup' EXIT
lfn_env_init auth-matrix
chmod 711 "$T"
U=lfnauth
STOCK_TREE=$(cd "$STOCK_TREE" && pwd) LFN_TREE=$(cd "$LFN_TREE" && pwd)
DEBIAN_SSH=${DEBIAN_SSH:-/usr/bin/ssh}
P11LIB=""
for l in /usr/lib/softhsm/libsofthsm2.so /usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so; do
	[ -f "$l" ] && { P11LIB=$l; break; }
done
[ -n "$P11LIB" ] || lfn_die "no softhsm2 (libsofthsm2.so): run ./install-deps"
for c in softhsm2-util openssl setsid; do
	command -v "$c" > /dev/null || lfn_die "$c missing: run ./install-deps"
done
# each client loads the provider built in its own tree; Debian's the stock
# tree's (under make check-sanitize openssh-lfn's is built with ASan, which
# a program built without it cannot load).  sk-dummy keeps the private key
# in the key handle: every build of it signs with the same key file.
skdummy() {
	local so=$1/regress/misc/sk-dummy/sk-dummy.so
	[ -f "$so" ] || make -C "$1" regress/misc/sk-dummy/sk-dummy.so > /dev/null 2>&1
	[ -f "$so" ] || lfn_die "no sk-dummy provider ($so): make -C $1 regress-binaries"
	echo "$so"
}
SKDUMMY=${LFN_SK_PROVIDER:-$(skdummy "$LFN_TREE")} || exit 1
SKDUMMY_STOCK=$(skdummy "$STOCK_TREE") || exit 1
[ -x "$DEBIAN_SSH" ] || lfn_die "no Debian ssh ($DEBIAN_SSH): apt-get install openssh-client"
[ -x /usr/lib/openssh/ssh-keysign ] || lfn_die "no /usr/lib/openssh/ssh-keysign (openssh-client)"
"$LFN_TOP/regress-bench/lib/debian-sshd" fetch || lfn_die "cannot get Debian's sshd"
DEBIAN_SSHD=$("$LFN_TOP/regress-bench/lib/debian-sshd" path) || lfn_die "no Debian sshd"
kg=$LFN_TREE/ssh-keygen

# --- the test user, with a password, in this namespace only ---
getent passwd "$U" > /dev/null && lfn_die "user $U exists on this machine"
uid=2950
while getent passwd "$uid" > /dev/null || getent group "$uid" > /dev/null; do uid=$((uid+1)); done
PW="lfn-$RANDOM-pw-$RANDOM"
H=$T/home
mkdir -p "$T/etc" "$H/.ssh"
for f in passwd shadow group; do cp -p "/etc/$f" "$T/etc/$f" || lfn_die "copy /etc/$f"; done
echo "$U:x:$uid:$uid:auth-matrix:$H:/bin/sh" >> "$T/etc/passwd"
echo "$U:$(openssl passwd -6 "$PW"):20000:0:99999:7:::" >> "$T/etc/shadow"
echo "$U:x:$uid:" >> "$T/etc/group"
for f in passwd shadow group; do mount --bind "$T/etc/$f" "/etc/$f" || lfn_die "bind-mount /etc/$f"; done
[ "$(getent passwd "$U" | cut -d: -f3)" = "$uid" ] || lfn_die "the test user is not visible"

# --- keys ---
"$kg" -q -t ed25519 -N '' -f "$T/id_wrong" -C wrong || lfn_die keygen
"$kg" -q -t ed25519 -N 'lfn-passphrase' -f "$T/id_enc" -C enc || lfn_die keygen
"$kg" -q -t ecdsa -N '' -f "$T/id_agent" -C agent || lfn_die keygen
"$kg" -q -t ecdsa -N '' -f "$T/id_agent_wrong" -C agentwrong || lfn_die keygen
"$kg" -q -t ed25519 -N '' -f "$T/ca" -C ca || lfn_die keygen
"$kg" -q -t ed25519 -N '' -f "$T/id_cert" -C cert || lfn_die keygen
"$kg" -q -s "$T/ca" -I lfn-cert -n "$U" -V -5m:+1h "$T/id_cert.pub" || lfn_die "sign cert"
"$kg" -q -t ed25519 -N '' -f "$T/id_certbad" -C certbad || lfn_die keygen
"$kg" -q -s "$T/ca" -I lfn-certbad -n someone-else -V -5m:+1h "$T/id_certbad.pub" || lfn_die "sign cert"
SSH_SK_HELPER=$LFN_TREE/ssh-sk-helper "$kg" -q -t ecdsa-sk -N '' -w "$SKDUMMY" -f "$T/id_sk" -C sk || lfn_die "ecdsa-sk key through sk-dummy"
# PKCS#11: a softhsm2 token with an ECDSA key
export SOFTHSM2_CONF=$T/softhsm2.conf
mkdir -p "$T/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$T/tokens" > "$SOFTHSM2_CONF"
PIN=1234
softhsm2-util --init-token --free --label lfn-token --pin "$PIN" --so-pin 12345678 > /dev/null ||
	lfn_die "softhsm2-util --init-token"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/p11.pem" 2> /dev/null &&
	openssl pkcs8 -topk8 -nocrypt -in "$T/p11.pem" -out "$T/p11.p8" || lfn_die "openssl EC key"
softhsm2-util --token lfn-token --label p11 --id 01 --pin "$PIN" --import "$T/p11.p8" > /dev/null ||
	lfn_die "softhsm2-util --import"
chmod 600 "$T/p11.pem"; "$kg" -y -f "$T/p11.pem" > "$T/p11.pub" || lfn_die "p11 public key"
cat "$T/id_ed25519.pub" "$T/id_enc.pub" "$T/id_agent.pub" "$T/id_sk.pub" "$T/p11.pub" > "$T/authorized_keys"
chmod 644 "$T/authorized_keys"
# the agent
eval "$("$LFN_TREE/ssh-agent" -s -a "$S/agent")" > /dev/null || lfn_die "ssh-agent"
LFN_PIDS+=("$SSH_AGENT_PID")
"$LFN_TREE/ssh-add" -q "$T/id_agent" "$T/id_agent_wrong" 2> /dev/null || lfn_die "ssh-add"

# --- hostbased: client host keys, ssh-keysign, the user's .shosts ---
mkv() { sed -n "s/^$1=[[:space:]]*//p" "$LFN_TREE/Makefile" | head -n1; }
prefix=$(mkv prefix); exec_prefix=$(mkv exec_prefix); exec_prefix=${exec_prefix//\$\{prefix\}/$prefix}
libexecdir=$(mkv libexecdir); libexecdir=${libexecdir//\$\{exec_prefix\}/$exec_prefix}
sysconfdir=$(mkv sysconfdir); sysconfdir=${sysconfdir//\$\{prefix\}/$prefix}
[ -d "$prefix" ] || lfn_die "the trees' prefix $prefix is missing"
mkdir -p "$T/pup" "$T/pwork" "$T/etcssh"
mount -t overlay overlay -o "lowerdir=$prefix,upperdir=$T/pup,workdir=$T/pwork" "$prefix" ||
	lfn_die "overlay on $prefix"
mount --bind "$T/etcssh" /etc/ssh || lfn_die "bind-mount /etc/ssh"
mkdir -p "$libexecdir" "$sysconfdir"
install -m 4711 "$LFN_TREE/ssh-keysign" "$libexecdir/ssh-keysign" || lfn_die "install ssh-keysign"
rm -f "$sysconfdir"/ssh_host_* "$sysconfdir/ssh_config"
"$kg" -q -t ed25519 -N '' -f "$sysconfdir/ssh_host_ed25519_key" -C clienthost || lfn_die keygen
cp -p "$sysconfdir"/ssh_host_ed25519_key* /etc/ssh/
echo "EnableSSHKeysign yes" | tee "$sysconfdir/ssh_config" > /etc/ssh/ssh_config
for n in localhost "$(hostname)" 127.0.0.1; do
	echo "$n $(cat "$sysconfdir/ssh_host_ed25519_key.pub")"
done > "$H/.ssh/known_hosts"
printf '%s root\n' localhost "$(hostname)" 127.0.0.1 > "$H/.shosts"
chown -R "$uid:$uid" "$H"; chmod 700 "$H"

# --- servers ---
SKL="$T/srvlog"; mkdir -p "$SKL"
# server_config TREE|debian PORT PORT2
server_config() {
	cat <<CFG
Port $2
Port $3
ListenAddress 127.0.0.1
HostKey $T/host_ed25519
AuthorizedKeysFile $T/authorized_keys
TrustedUserCAKeys $T/ca.pub
StrictModes no
PidFile none
LogLevel VERBOSE
PermitRootLogin no
CFG
	if [ "$1" = debian ]; then
		echo "UsePAM yes"
	else
		echo "SshdSessionPath $1/sshd-session"
		echo "SshdAuthPath $1/sshd-auth"
		# 10.x refuses a source after failed logins for a while
		echo "PerSourcePenalties no"
	fi
	cat <<CFG
Match LocalPort $3
	AuthenticationMethods publickey,password
Match all
	PasswordAuthentication yes
	KbdInteractiveAuthentication yes
	HostbasedAuthentication yes
	HostbasedUsesNameFromPacketOnly yes
	IgnoreRhosts no
CFG
}
declare -A PORT PORT2 LOG
for srv in lfn stock debian lfn2 stock2; do
	p=$(lfn_free_port) || lfn_die "no free port"; p2=$((p + 1))
	ss -Hatn "sport = :$p2" | grep -q . && lfn_die "port $p2 in use"
	PORT[$srv]=$p PORT2[$srv]=$p2 LOG[$srv]=$SKL/$srv.log
	case ${srv%2} in
	lfn) bin=$LFN_TREE/sshd; server_config "$LFN_TREE" "$p" "$p2" > "$T/sshd_config.$srv"
		"$LFN_TOP/regress-bench/lib/privsep-ensure" "$LFN_TREE" || lfn_die privsep ;;
	stock) bin=$STOCK_TREE/sshd; server_config "$STOCK_TREE" "$p" "$p2" > "$T/sshd_config.$srv"
		"$LFN_TOP/regress-bench/lib/privsep-ensure" "$STOCK_TREE" || lfn_die privsep ;;
	debian) bin=$DEBIAN_SSHD; server_config debian "$p" "$p2" > "$T/sshd_config.$srv"
		mkdir -p /run/sshd && chmod 755 /run/sshd ;;
	esac
	"$bin" -t -f "$T/sshd_config.$srv" || lfn_die "$srv sshd rejects its config"
	: > "${LOG[$srv]}"
	_lfn_sshd_run "$srv sshd" "$p" "${LOG[$srv]}" "" "$bin" -D -e -f "$T/sshd_config.$srv"
done

# --- clients ---
cat > "$T/askpass" <<'SH'
#!/bin/sh
# log the prompt, answer with the next line of $ASK_REPLY
if [ "${SSH_ASKPASS_PROMPT:-}" = none ]; then
	printf 'notify: %s\n' "$1" >> "$ASK_LOG.notify"; exit 0
fi
printf '%s\n' "$1" >> "$ASK_LOG"
n=$(cat "$ASK_N"); echo $((n + 1)) > "$ASK_N"
sed -n "${n}p" "$ASK_REPLY"
SH
chmod 755 "$T/askpass"
cat > "$T/cli_config" <<CFG
Host *
	User $U
	HostKeyAlias lfnpeer
	UserKnownHostsFile $T/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode no
	ConnectTimeout 20
	LogLevel ERROR
	IdentitiesOnly yes
	IdentityAgent none
	PubkeyAuthentication no
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	HostbasedAuthentication no
CFG
declare -A CLI=([lfn]=$LFN_TREE/ssh [stock]=$STOCK_TREE/ssh [debian]=$DEBIAN_SSH)
# each client's own helpers (the compiled-in paths are an installation's)
declare -A HELPERS=([lfn]=$LFN_TREE [stock]=$STOCK_TREE [debian]=/usr/lib/openssh)
declare -A SKP=([lfn]=$SKDUMMY [stock]=$SKDUMMY_STOCK [debian]=$SKDUMMY_STOCK)

# scenario NAME -> the client options and askpass answers
pk() { echo "-o PubkeyAuthentication=yes -o PreferredAuthentications=publickey"; }
scenario() {
	REPLY_LINES=() OPTS=() PORTSEL=1
	case $1 in
	password) OPTS=(-o PasswordAuthentication=yes -o PreferredAuthentications=password); REPLY_LINES=("$PW") ;;
	password-wrong) OPTS=(-o PasswordAuthentication=yes -o PreferredAuthentications=password); REPLY_LINES=(bad1 bad2 bad3 bad4) ;;
	kbdint) OPTS=(-o KbdInteractiveAuthentication=yes -o PreferredAuthentications=keyboard-interactive); REPLY_LINES=("$PW") ;;
	kbdint-wrong) OPTS=(-o KbdInteractiveAuthentication=yes -o PreferredAuthentications=keyboard-interactive); REPLY_LINES=(bad1 bad2 bad3 bad4) ;;
	key) OPTS=($(pk) -o IdentityFile="$T/id_ed25519") ;;
	key-wrong) OPTS=($(pk) -o IdentityFile="$T/id_wrong") ;;
	key-wrong-then-right) OPTS=($(pk) -o IdentityFile="$T/id_wrong" -o IdentityFile="$T/id_ed25519") ;;
	agent) OPTS=($(pk) -o IdentityAgent="$S/agent" -o IdentityFile="$T/id_agent.pub") ;;
	agent-wrong) OPTS=($(pk) -o IdentityAgent="$S/agent" -o IdentityFile="$T/id_agent_wrong.pub") ;;
	encrypted) OPTS=($(pk) -o IdentityFile="$T/id_enc"); REPLY_LINES=(lfn-passphrase) ;;
	encrypted-wrong) OPTS=($(pk) -o IdentityFile="$T/id_enc"); REPLY_LINES=(nope nope nope nope) ;;
	pkcs11) OPTS=($(pk) -o PKCS11Provider="$P11LIB" -o IdentityFile="$T/p11.pub"); REPLY_LINES=("$PIN") ;;
	sk) OPTS=($(pk) -o SecurityKeyProvider="${SKP[$CUR_CLI]}" -o IdentityFile="$T/id_sk") ;;
	cert) OPTS=($(pk) -o IdentityFile="$T/id_cert") ;;
	cert-wrong) OPTS=($(pk) -o IdentityFile="$T/id_certbad") ;;
	hostbased) OPTS=(-o HostbasedAuthentication=yes -o PreferredAuthentications=hostbased) ;;
	pk+password) OPTS=(-o PubkeyAuthentication=yes -o PasswordAuthentication=yes -o IdentityFile="$T/id_ed25519"); REPLY_LINES=("$PW"); PORTSEL=2 ;;
	pk+password-wrong) OPTS=(-o PubkeyAuthentication=yes -o PasswordAuthentication=yes -o IdentityFile="$T/id_ed25519"); REPLY_LINES=(bad1 bad2 bad3 bad4); PORTSEL=2 ;;
	*) lfn_die "no scenario $1" ;;
	esac
}

# attempt CLIENT SERVER SCENARIO: one login; REC is the directory of its
# record (one line per item): exit status, output, stderr, askpass
# prompts, the server's log.
N=0
attempt() {
	local cli=$1 srv=$2 sc=$3 port before out rc d
	CUR_CLI=$cli
	scenario "$sc"
	port=${PORT[$srv]}; [ "$PORTSEL" = 2 ] && port=${PORT2[$srv]}
	N=$((N + 1)); d=$T/a/$srv.$cli.$N; mkdir -p "$d"
	printf '%s\n' "${REPLY_LINES[@]}" > "$d/reply"; echo 1 > "$d/n"; : > "$d/prompts"
	before=$(wc -l < "${LOG[$srv]}")
	ASK_REPLY=$d/reply ASK_N=$d/n ASK_LOG=$d/prompts SSH_ASKPASS=$T/askpass \
	    SSH_ASKPASS_REQUIRE=force DISPLAY= SSH_AUTH_SOCK= \
	    SSH_SK_HELPER=${HELPERS[$cli]}/ssh-sk-helper SSH_PKCS11_HELPER=${HELPERS[$cli]}/ssh-pkcs11-helper \
	    setsid -w "${CLI[$cli]}" -F "$T/cli_config" -p "$port" "${OPTS[@]}" 127.0.0.1 'id -un' \
	    < /dev/null > "$d/out" 2> "$d/err"
	rc=$?
	# the connection's last line: the log comes from sshd-auth through
	# sshd-session, and may lag the client's exit
	for _ in $(seq 1 100); do
		tail -n +"$((before + 1))" "${LOG[$srv]}" |
			grep -qE 'Disconnected from|Connection closed by|Disconnecting|Received disconnect' && break
		sleep 0.02
	done
	tail -n +"$((before + 1))" "${LOG[$srv]}" > "$d/srvlog"
	{
		echo "exit $rc"
		echo "out $(tr '\n' ' ' < "$d/out")"
		echo "err $(grep -v '^Warning: Permanently' "$d/err" | tr '\n' ' ')"
		echo "prompts $(tr '\n' '|' < "$d/prompts")"
		for m in password publickey keyboard-interactive hostbased; do
			echo "failed-$m $(grep -cE "Failed $m(/| )" "$d/srvlog")"
		done
		echo "accepted $(grep -oE '(Accepted|Partial) [a-z-]+ for' "$d/srvlog" | tr '\n' ' ')"
	} > "$d/record"
	REC=$d
}

# scenario name, then the expected outcome for the servers without PAM
# (lfn, stock) and with (debian): ok or fail.  The "-wrong" ones must fail
# the same way: e.g. encrypted-wrong (passphrase refused after the server's
# PK_OK) must still name the server's methods in "Permission denied (...)",
# which a client that skipped the "none" probe (0216) has not heard yet.
SCENARIOS="password:ok:ok password-wrong:fail:fail kbdint:fail:ok kbdint-wrong:fail:fail
	key:ok:ok key-wrong:fail:fail key-wrong-then-right:ok:ok agent:ok:ok agent-wrong:fail:fail
	encrypted:ok:ok encrypted-wrong:fail:fail pkcs11:ok:ok sk:ok:ok cert:ok:ok cert-wrong:fail:fail
	hostbased:ok:ok pk+password:ok:ok pk+password-wrong:fail:fail"

# check WHAT EXPECT DIR_A DIR_B: both expected, and both records equal
check() {
	local what=$1 exp=$2 a=$3 b=$4 r
	for r in "$a" "$b"; do
		local rc; rc=$(sed -n 's/^exit //p' "$r/record")
		if [ "$exp" = ok ]; then
			[ "$rc" = 0 ] && grep -qx "out $U " "$r/record" ||
				fail "$what: expected a login as $U: $(tr '\n' ';' < "$r/record")"
		else
			[ "$rc" != 0 ] || fail "$what: expected a refusal, got in: $(tr '\n' ';' < "$r/record")"
		fi
	done
	if ! cmp -s "$a/record" "$b/record"; then
		fail "$what: different outcomes: $(diff "$a/record" "$b/record" | grep '^[<>]' | tr '\n' ';')"
	fi
	verbose "$what: $(sed -n 's/^exit //p' "$a/record"), $(grep -E '^(prompts|accepted)' "$a/record" | tr '\n' ' ')$(grep -E '^failed-.* [1-9]' "$a/record" | tr '\n' ' ')"
}

# group_clients SERVER: openssh-lfn's and stock's ssh against SERVER
group_clients() {
	local sv=$1 s sc e1 e2 exp a b
	for s in $SCENARIOS; do
		IFS=: read -r sc e1 e2 <<< "$s"
		exp=$e1; [ "$sv" = debian ] && exp=$e2
		attempt lfn "$sv" "$sc"; a=$REC; attempt stock "$sv" "$sc"; b=$REC
		check "$sc ($sv sshd)" "$exp" "$a" "$b"
	done
}
# group_debian: Debian's ssh against openssh-lfn's sshd and stock's (their
# second instances, lfn2 and stock2: each group reads its servers' logs alone)
group_debian() {
	local s sc e1 e2 a b
	for s in $SCENARIOS; do
		IFS=: read -r sc e1 e2 <<< "$s"
		attempt debian lfn2 "$sc"; a=$REC; attempt debian stock2 "$sc"; b=$REC
		check "$sc (Debian's ssh)" "$e1" "$a" "$b"
	done
}
# the four groups at once (each one connection at a time: the count of a
# server's log lines is per connection)
declare -A GP
for g in lfn stock debian debian-client; do
	( LFN_FAILS=0 LFN_TID=$g
	  if [ $g = debian-client ]; then group_debian; else group_clients $g; fi
	  [ "$LFN_FAILS" -eq 0 ] ) > "$T/group.$g" 2>&1 &
	GP[$g]=$!
done
for g in lfn stock debian debian-client; do
	if [ $g = debian-client ]; then
		tid "Debian's ssh against openssh-lfn's sshd and stock's: same outcome, prompts and failed attempts"
	else
		tid "openssh-lfn's ssh and stock's against $g's sshd: same outcome, prompts and failed attempts"
	fi
	wait "${GP[$g]}"; rc=$?
	cat "$T/group.$g"
	[ $rc -eq 0 ] || fail "failed attempts above"
done
lfn_finish
