#!/usr/bin/env bash
# packaging-debian-keywords: Debian's own sshd_config/ssh_config keywords
# (patch 0150-debian-config-compat) are accepted by the patched tree, so
# the drop-in packages never refuse a Debian configuration; stock rejects
# them (the test can fail).  The package-level swap is `make check-packaging`.
# Patches: 0150
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init packaging-debian-keywords

# sshd: a minimal config plus every Debian-only server keyword
{ lfn_sshd_config "$LFN_TREE" 22 </dev/null
  printf '%s\n' 'DebianBanner no' 'GSSAPIKeyExchange yes' 'GSSAPIStoreCredentialsOnRekey yes' \
	'GSSAPIKexAlgorithms gss-curve25519-sha256-' 'GSSAPICleanupCreds yes' \
	'GSSAPIUseSessionCredCache yes' 'GSSUseSessionCCache yes' 'PermitBlacklistedKeys no'
} > "$T/sshd_config.debian"

tid "sshd accepts Debian's server keywords"
out=$("$LFN_TREE/sshd" -T -f "$T/sshd_config.debian" 2>&1) || fail "sshd -T: $out"
printf '%s\n' "$out" | grep -qx 'DebianBanner no' || fail "DebianBanner no not applied"
"$LFN_TREE/sshd" -T -f "$T/sshd_config.debian" -o LogLevel=SILENT 2>&1 | grep -qx 'LogLevel QUIET' ||
	fail "LogLevel SILENT is not QUIET"
if [ -x "$STOCK_TREE/sshd" ]; then
	"$STOCK_TREE/sshd" -T -f "$T/sshd_config.debian" >/dev/null 2>&1 &&
		fail "stock sshd accepted DebianBanner (test cannot detect a regression)"
fi

tid "sshd with Debian keywords starts and serves a login"
port=$(lfn_free_port)
lfn_sshd_start "$LFN_TREE" "$port" <<< "$(tail -n 8 "$T/sshd_config.debian")"
lfn_ssh "$LFN_TREE" "$port" lfnpeer true || fail "login failed"

tid "ssh: ProtocolKeepAlives/SetupTimeOut aliases, GSSAPI kex keywords accepted"
printf '%s\n' 'Host *' '	ProtocolKeepAlives 42' '	SetupTimeOut 17' '	GSSAPIKeyExchange yes' \
	'	GSSAPIClientIdentity x' '	GSSAPIServerIdentity y' '	GSSAPIRenewalForcesRekey yes' \
	'	GSSAPITrustDNS yes' '	GSSAPIKexAlgorithms gss-curve25519-sha256-' \
	'	UseBlacklistedKeys no' > "$T/ssh_config.debian"
out=$("$LFN_TREE/ssh" -G -F "$T/ssh_config.debian" example.org 2>&1) || fail "ssh -G: $out"
printf '%s\n' "$out" | grep -qx 'serveraliveinterval 42' || fail "ProtocolKeepAlives"
printf '%s\n' "$out" | grep -qx 'connecttimeout 17' || fail "SetupTimeOut"

tid "this machine's Debian ssh_config and sshd_config parse"
[ ! -r /etc/ssh/ssh_config ] || "$LFN_TREE/ssh" -G -F /etc/ssh/ssh_config example.org >/dev/null ||
	fail "/etc/ssh/ssh_config"
if [ -r /etc/ssh/sshd_config ]; then
	"$LFN_TREE/sshd" -T -f /etc/ssh/sshd_config -o HostKey="$T/host_ed25519" \
		-o SshdSessionPath="$LFN_TREE/sshd-session" -o SshdAuthPath="$LFN_TREE/sshd-auth" \
		-o PidFile=none >/dev/null || fail "/etc/ssh/sshd_config"
fi
lfn_finish
