#!/usr/bin/env bash
# lint-socket-paths: no test, bench or helper script builds a Unix socket
# path (ControlPath, ssh -S, ssh-agent -a, SSH_AUTH_SOCK, IdentityAgent, a
# streamlocal forward, a *.sock/ctl file) from the checkout's path ($T,
# $LFN_TOP, $top, $here, $OBJ, build/...).  A socket path must fit in 107
# bytes; under a checkout at a long path those do not (`make
# check` once failed from ~/src/github/openssh-lfn).  Sockets go in $S, the short
# private directory lfn_env_init makes (/tmp/lfn.XXXXXX).
# The lint first checks itself on lines that must and must not be flagged.
# (It checks the test tree, no patch.)
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"

lint() {
	python3 - "$@" <<'PY'
import re, sys
# a path expression rooted in the checkout
ROOT = r'(?:"?\$\{?(?:T|LFN_TOP|top|here|OBJ|tree|TOP|work)\b\}?/|"?build/)'
# options whose value is a socket path
OPT = (r'(?:ControlPath[= ]|IdentityAgent[= ]|SSH_AUTH_SOCK=|'
       r'StreamLocalBindUnlink|\bssh-agent"?\s+(?:\S+\s+)*-a\s+)')
# a file name that is a socket whatever option carries it
SOCKNAME = r'(?:ctl\b|ctl[.-]|\.sock\b|agent\.s|\.fwd\b|%C)'
opt_re = re.compile(OPT + r'\s*' + ROOT)
# a streamlocal forward, -L/-R [PATH]:... (not a linker's -L"$tree/lib")
fwd_re = re.compile(r'\s-[LR]\s*"?\[?' + ROOT + r'[^\s"]*[:\]]')
name_re = re.compile('(?:' + ROOT + r')[^\s"\']*' + SOCKNAME)
# ssh -S CTL (scp/sftp -S PROGRAM is a program, not a socket)
dash_s = re.compile(r'\s-S\s+' + ROOT + r'(?!(?:[^\s"]*/)?(?:fake-)?ssh\b)')
bad = 0
for path in sys.argv[1:]:
    try:
        data = open(path, 'rb').read()
    except OSError:
        continue
    if b'\0' in data:
        continue                        # a binary (the emulator, ...)
    lines = data.decode(errors='replace').splitlines()
    for n, line in enumerate(lines, 1):
        code = line.split('#', 1)[0] if not line.lstrip().startswith('#') else ''
        if not code.strip():
            continue
        if any(r.search(code) for r in (opt_re, fwd_re, name_re, dash_s)):
            print(f'{path}:{n}: socket path under the checkout: {line.strip()}')
            bad += 1
sys.exit(1 if bad else 0)
PY
}

tid "the lint flags socket paths under the checkout and nothing else"
lfn_env_init lint-socket-paths
cat > "$T/bad.sh" <<'EOF'
ctl="$T/ctl"
ssh -o ControlPath="$T/c.%C" host
ssh -S "$LFN_TOP/build/m" host
ssh-agent -a "$T/agent.sock" -s
env SSH_AUTH_SOCK=$T/a ssh host
ssh -R "$T/$MARKER.sock:127.0.0.1:22" host
ssh -L "$OBJ/unix-1.fwd:127.0.0.1:22" host
EOF
cat > "$T/good.sh" <<'EOF'
ctl="$S/ctl"
ssh -o ControlPath="$S/c.%C" host
scp -S "$tree/ssh" -P 22 a b
sftp -S "$T/fake-ssh" host
ssh -L "$lp:127.0.0.1:$PORT" host
cat "$T/data" > "$T/out"	# ctl in a comment: "$T/ctl"
EOF
out=$(lint "$T/bad.sh")
nbad=$(printf '%s\n' "$out" | grep -c 'socket path under the checkout')
[ "$nbad" = 7 ] || fail "flagged $nbad of 7 bad lines: $out"
lint "$T/good.sh" > "$T/good.out" || fail "flagged good lines: $(cat "$T/good.out")"

tid "no socket path under the checkout in regress-bench/, packaging/test/"
mapfile -t files < <(cd "$LFN_TOP" && find regress-bench packaging/test -type f \
	! -path 'regress-bench/fuzz/corpus/*' ! -path 'regress-bench/fuzz/known/*' \
	! -name lint-socket-paths.sh ! -name '*.[cho]' ! -name '*.md' ! -name '*.pyc' |
	LC_ALL=C sort)
[ ${#files[@]} -gt 20 ] || fail "found only ${#files[@]} files to lint"
(cd "$LFN_TOP" && lint "${files[@]}") || fail "socket paths under the checkout (use \$S)"

lfn_cleanup
lfn_finish
