#!/usr/bin/env bash
# lint-bench-citations: every figure's run can be found (issue 60).  A
# path into doc/bench cited in README.md, NEWS.md, PROTOCOL.lfn,
# doc/**/*.md, regress-bench/**/*.md, packaging/ or a patch's header
# (before its first diff) must exist: "doc/bench/RUN/..." anywhere in
# those files, and in doc/**/*.md and regress-bench/**/*.md every
# relative Markdown link that resolves into doc/bench ("[table](bench/
# RUN/table.md)").  A run's own files linking inside that run are not
# citations (bench.py's tables link plots that were not always kept) and
# are not checked.  Every run directory (doc/bench/*/) must have a row in
# doc/bench/INDEX.md ("[RUN](RUN/)") and a README.md or table.md saying
# what ran; no script (*.sh, *.py) sits under doc/bench (they live in
# regress-bench/bench/).  Not checked: placeholders in capitals
# (doc/bench/NAME/) and paths in another commit ("git show
# REV:doc/bench/..." in a run's README).  Controls: the extraction finds
# citations in the README, a patch header and a link in doc/*.md, and a
# fake tree with one of each fault fails with each, while its fixed copy
# passes.
# Patches: none
. "$(dirname "$0")/../lib/sshenv.sh"
tmp=$(mktemp -d /tmp/lfn-bench-cite.XXXXXX) || lfn_die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# check TOP [--list]: one line per fault in TOP's tree (exit 1 if any);
# --list prints every citation found instead ("FILE<tab>PATH")
check() {
	python3 - "$@" <<'PY'
import os, re, sys
top = sys.argv[1]
listing = '--list' in sys.argv[2:]
os.chdir(top)
bench = os.path.join('doc', 'bench')

def files():
    out = []
    for f in ('README.md', 'NEWS.md', 'PROTOCOL.lfn'):
        if os.path.isfile(f):
            out.append(f)
    for root in ('doc', 'regress-bench', 'packaging'):
        for d, dirs, fs in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x not in ('.git', 'corpus', 'known'))
            for f in sorted(fs):
                p = os.path.join(d, f)
                if root == 'packaging' or f.endswith('.md'):
                    out.append(p)
    if os.path.isdir('patches'):
        out += sorted(os.path.join('patches', f) for f in os.listdir('patches') if f.endswith('.patch'))
    return out

def text(p):
    try:
        data = open(p, 'rb').read()
    except OSError:
        return ''
    if b'\0' in data:
        return ''                               # a binary (a .deb, an image)
    t = data.decode(errors='replace')
    if p.startswith('patches/'):                # the header only
        m = re.search(r'^(diff --git |--- a/|Index: )', t, re.M)
        t = t[:m.start()] if m else t
    return t

# a path character; a citation ends at the first other one, and trailing
# punctuation is prose
PC = r'[A-Za-z0-9_.*/+-]'
abs_re = re.compile(r'(?<![A-Za-z0-9_.:/-])doc/bench(?:/' + PC + r'*)?')
link_re = re.compile(r'\]\(\s*<?([^)>\s#]+)')

def clean(p):
    return p.rstrip('.,;:*')

def placeholder(p):
    return any(re.fullmatch(r'[A-Z][A-Z_]*', s) for s in p.split('/')) or '*' in p or '...' in p

cites = []                                      # (file, line, as written, path from top)
for f in files():
    t = text(f)
    for n, line in enumerate(t.splitlines(), 1):
        for m in abs_re.finditer(line):
            cites.append((f, n, m.group(0), clean(m.group(0))))
        if f.endswith('.md') and (f.startswith('doc/') or f.startswith('regress-bench/')):
            own = f.split(os.sep)[:3] if f.startswith(bench + os.sep) and f.count(os.sep) > 2 else None
            for r in (m.group(1) for m in link_re.finditer(line)):
                if re.match(r'^[a-z]+:', r) or r.startswith('/'):
                    continue                    # a URL, an absolute path
                p = os.path.normpath(os.path.join(os.path.dirname(f), clean(r)))
                if own and p.split(os.sep)[:3] == own:
                    continue                    # inside the run itself
                if p == bench or p.startswith(bench + os.sep):
                    cites.append((f, n, r, p))

bad = []
seen = set()
for f, n, as_written, p in cites:
    if listing:
        if (f, p) not in seen:
            print(f'{f}\t{p}')
            seen.add((f, p))
        continue
    if placeholder(p) or (f, n, p) in seen:
        continue
    seen.add((f, n, p))
    if not os.path.exists(p):
        bad.append(f'{f}:{n}: cites {clean(as_written)}, which does not exist')
if listing:
    sys.exit(0)

runs = sorted(d for d in os.listdir(bench) if os.path.isdir(os.path.join(bench, d))) if os.path.isdir(bench) else []
index = os.path.join(bench, 'INDEX.md')
idx = open(index).read() if os.path.isfile(index) else ''
if not idx:
    bad.append(f'{index} is missing')
for r in runs:
    if f'[{r}]({r}/)' not in idx:
        bad.append(f'{bench}/{r}/ has no row in {index} ("[{r}]({r}/)")')
    if not any(os.path.isfile(os.path.join(bench, r, x)) for x in ('README.md', 'table.md')):
        bad.append(f'{bench}/{r}/ has neither README.md nor table.md: say what ran, the command, when')
for d, dirs, fs in os.walk(bench):
    for x in sorted(fs):
        if x.endswith('.sh') or x.endswith('.py'):
            bad.append(f'{os.path.join(d, x)}: a script under {bench} (move it to regress-bench/bench/, or remove it and say in the run\'s README what it did)')
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

tid "the extraction finds the citations (control)"
check "$LFN_TOP" --list > "$tmp/cites" || fail "listing the citations failed"
verbose "$(wc -l < "$tmp/cites") citations of doc/bench"
[ "$(wc -l < "$tmp/cites")" -gt 50 ] || fail "only $(wc -l < "$tmp/cites") citations found"
grep -qE $'^README.md\tdoc/bench/[^/]+' "$tmp/cites" || fail "no citation found in README.md (its Numbers chart)"
grep -qE $'^patches/[0-9]{4}-[^\t]*\.patch\tdoc/bench/[^/]+' "$tmp/cites" || fail "no citation found in a patch header"
grep -qE $'^doc/[a-z-]+\.md\tdoc/bench/[^/]+/' "$tmp/cites" || fail "no relative link (bench/RUN/...) found in doc/*.md"

tid "a tree with one of each fault fails with each; fixed, it passes (control)"
f=$tmp/fake
mkdir -p "$f/doc/bench/run-a" "$f/doc/bench/run-b" "$f/doc/bench/run-c" "$f/patches" "$f/packaging"
echo "# run a" > "$f/doc/bench/run-a/README.md"
echo "| x |" > "$f/doc/bench/run-c/table.md"
echo "echo" > "$f/doc/bench/run-a/one-off.sh"
printf '| [run-a](run-a/) | | | |\n| [run-b](run-b/) | | | |\n' > "$f/doc/bench/INDEX.md"
echo "Figure: [table](doc/bench/run-a/table.md)." > "$f/README.md"
echo "See [the run](bench/run-z/README.md) and [that](../doc/bench/run-y/)." > "$f/doc/page.md"
echo "[plot](plots/a.png), [b](../run-b/)" > "$f/doc/bench/run-c/notes.md"
printf 'Subject: x\n\nGain: 1 -> 2 (doc/bench/run-x).\n---\ndiff --git a/f b/f\n+doc/bench/in-the-diff\n' > "$f/patches/0001-x.patch"
echo "doc/bench/NAME/ and git show abc:doc/bench/gone/run.sh" > "$f/packaging/notes"
check "$f" > "$tmp/faults" && fail "the fake tree passed"
for want in 'README.md:1: cites doc/bench/run-a/table.md' 'doc/page.md:1: cites bench/run-z/README.md' \
    'doc/page.md:1: cites ../doc/bench/run-y/' 'patches/0001-x.patch:3: cites doc/bench/run-x' \
    'run-c/ has no row' 'run-b/ has neither README.md nor table.md' 'run-a/one-off.sh: a script'; do
	grep -qF "$want" "$tmp/faults" || fail "not flagged: $want ($(tr '\n' ' ' < "$tmp/faults"))"
done
grep -qE 'in-the-diff|NAME|gone' "$tmp/faults" && fail "flagged what is not a citation: $(tr '\n' ' ' < "$tmp/faults")"
[ "$(wc -l < "$tmp/faults")" = 7 ] || fail "expected 7 faults: $(tr '\n' ' ' < "$tmp/faults")"
echo "| x |" > "$f/doc/bench/run-a/table.md"
echo "# run b" > "$f/doc/bench/run-b/README.md"
echo '| [run-c](run-c/) | | | |' >> "$f/doc/bench/INDEX.md"
rm "$f/doc/bench/run-a/one-off.sh"
mkdir -p "$f/doc/bench/run-x" "$f/doc/bench/run-y" "$f/doc/bench/run-z"
for r in x y z; do echo "# $r" > "$f/doc/bench/run-$r/README.md"; echo "| [run-$r](run-$r/) | | | |" >> "$f/doc/bench/INDEX.md"; done
check "$f" > "$tmp/faults" || fail "the fixed fake tree fails: $(tr '\n' ' ' < "$tmp/faults")"

tid "every doc/bench citation exists, every run is in INDEX.md and says what ran, no script in doc/bench"
[ -d "$LFN_TOP/doc/bench" ] || lfn_die "no doc/bench in $LFN_TOP"
check "$LFN_TOP" > "$tmp/faults"
while read -r m; do fail "$m"; done < "$tmp/faults"
lfn_finish
