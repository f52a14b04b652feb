#!/usr/bin/env bash
# bench-smoke: the benchmark harness itself works (regress-bench/bench/run):
# a tiny loopback run (2 tools x stock/lfn, 4 MiB, one run, no warm-up)
# writes results.jsonl, table.md, machine.json (and plots if matplotlib is
# there) in the documented format; bad arguments are refused.  No speed is
# asserted: the numbers are only checked for being present and positive.
. "$(dirname "$0")/../lib/sshenv.sh"
trap lfn_cleanup EXIT
lfn_env_init bench-smoke
[ -x "$STOCK_TREE/sshd" ] || { echo "stock build missing: skipped"; exit 77; }
command -v iperf3 >/dev/null || { echo "iperf3 missing: skipped"; exit 77; }
run="$LFN_TOP/regress-bench/bench/run"
scratch_before=$(ls -d "$LFN_TOP"/build/test/bench-[0-9]* 2>/dev/null | wc -l)
out="$T/out"

tid "bench: bad arguments are refused"
"$run" --tools bogus --dry-run > "$T/bad.out" 2>&1 && fail "--tools bogus accepted"
grep -q "unknown bogus" "$T/bad.out" || fail "no clear error for --tools bogus: $(cat "$T/bad.out")"
"$run" --links 1gbit --dry-run > "$T/bad.out" 2>&1 && fail "--links 1gbit accepted"
"$run" --no-warmup --dry-run > "$T/bad.out" 2>&1 && fail "--no-warmup without --size accepted"

tid "bench: --dry-run lists the quick profile"
"$run" --dry-run > "$T/dry.out" 2>&1 || fail "--dry-run failed: $(tail -3 "$T/dry.out")"
for l in loopback 1gbit/50 1gbit/100; do
	grep -q "^$l " "$T/dry.out" || fail "quick profile lacks link $l"
done
grep -q "points x 2 trees" "$T/dry.out" || fail "--dry-run prints no estimate"

tid "bench: tiny loopback run"
"$run" --links loopback --tools ssh-up,scp-down --ciphers default --no-compression \
	--size 4M --runs 1 --no-warmup --tcp-seconds 1 --out "$out" --data-dir "$T/data" \
	> "$T/run.out" 2>&1 || fail "bench run failed: $(tail -5 "$T/run.out")"
grep -q '\] loopback ssh-up default lfn: run 1/1' "$T/run.out" || fail "no progress line"
grep -q 'ETA' "$T/run.out" || fail "progress line without ETA"

tid "bench: results.jsonl has one row per run"
/usr/bin/env python3 - "$out" <<'EOF' || fail "results.jsonl check failed"
import json, sys, os
d = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(d, "results.jsonl"))]
runs = [r for r in rows if r["kind"] == "ssh" and r["run"] >= 0]
tcp = [r for r in rows if r["kind"] == "tcp"]
setup = [r for r in rows if r["kind"] == "setup"]
ok = True
def bad(msg):
    global ok
    ok = False
    print("results.jsonl:", msg)
got = sorted((r["tree"], r["tool"]) for r in runs)
want = sorted((t, x) for t in ("stock", "lfn") for x in ("ssh-up", "scp-down"))
if got != want:
    bad("runs %s, expected %s" % (got, want))
for r in runs:
    for k in ("link", "tool", "dir", "cipher", "compression", "size", "wall", "setup_s",
              "cpu_client", "cpu_server", "rc", "valid", "time"):
        if k not in r:
            bad("row lacks %s: %s" % (k, r))
    if r.get("rc") != 0 or not r.get("valid"):
        bad("run failed: %s" % r)
    if r.get("size") != 4 << 20:
        bad("size %s is not 4 MiB" % r.get("size"))
    if not r.get("wall", 0) > 0 or not r.get("cpu_client", 0) > 0:
        bad("no wall time or client CPU: %s" % r)
    if r.get("cpu_server", -1) < 0:
        bad("negative server CPU: %s" % r)
if sorted(r["dir"] for r in tcp) != ["down", "up"] or not all(r["mbs"] > 0 for r in tcp):
    bad("raw TCP rows: %s" % tcp)
if len(setup) != 2 or not all(s["seconds"] > 0 for s in setup):
    bad("setup rows: %s" % setup)
m = json.load(open(os.path.join(d, "machine.json")))
for k in ("Model name", "cpu_flags", "nproc", "kernel", "openssl_cli", "ssh -V stock", "ssh -V lfn",
          "tarball", "git describe", "patches", "sysctl", "links", "wall_seconds"):
    if k not in m:
        bad("machine.json lacks %s" % k)
if "lfn" not in m.get("ssh -V lfn", "") or "lfn" in m.get("ssh -V stock", "lfn"):
    bad("ssh -V of the builds: %s / %s" % (m.get("ssh -V stock"), m.get("ssh -V lfn")))
sys.exit(0 if ok else 1)
EOF

tid "bench: table.md"
tbl="$out/table.md"
[ -s "$tbl" ] || fail "no table.md"
grep -q '^| link | tool | cipher | stock MB/s .* | lfn MB/s .* | lfn/stock | raw TCP MB/s | lfn/TCP | stock window ceiling (2 MiB/RTT) |' "$tbl" ||
	fail "table header: $(grep '^| link' "$tbl")"
n=$(grep -c '^| loopback | \(ssh-up\|scp-down\) | default | [0-9.]* ([0-9.]*–[0-9.]*) | [0-9.]* (' "$tbl")
[ "$n" = 2 ] || fail "expected 2 data rows, got $n: $(grep '^| loopback' "$tbl")"
grep -q '^## machine' "$tbl" || fail "no machine section"

tid "bench: plots (if matplotlib is installed)"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	[ "$(head -c 4 "$out/plots/loopback.png" | tail -c 3)" = PNG ] || fail "no plots/loopback.png"
	grep -q 'plots/loopback.png' "$tbl" || fail "table.md does not show the plot"
else
	verbose "python3-matplotlib missing: plots not checked"
fi

tid "bench: report.py re-renders a results directory"
rm -f "$tbl"
/usr/bin/env python3 "$LFN_TOP/regress-bench/bench/report.py" "$out" --no-plots > /dev/null ||
	fail "report.py failed"
[ -s "$tbl" ] || fail "report.py wrote no table.md"
[ "$(ls -d "$LFN_TOP"/build/test/bench-[0-9]* 2>/dev/null | wc -l)" -gt "$scratch_before" ] &&
	fail "the harness left its scratch dir in build/test"
lfn_finish
