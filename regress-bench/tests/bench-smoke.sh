#!/usr/bin/env bash
# bench-smoke: the benchmark harness itself works (regress-bench/bench/run):
# a tiny loopback run (2 tools x stock/lfn, 4 MiB, one run, no warm-up)
# writes results.jsonl, table.md, machine.json (and plots if matplotlib is
# there) in the documented format; bad arguments are refused.  No speed is
# asserted: the numbers are only checked for being present and positive.
# The lossy-link dimensions: loss in the link (RATE/RTT/LOSS, --losses), TCP
# congestion control (--cc, checked against what iperf3 and lfn's sshd say
# the connections used), N-stream raw TCP (--tcp-streams) and one transfer
# over N connections (TOOL-xN, --connections: lfn only; the -X connections=N
# path runs through a wrapper that drops the option, so it works before and
# after patch 0273; the real tree fails such a point with a clear message
# until 0273 is there).  machine.json must tell the builds apart by ssh -V
# (0901).  clients.py (foreign clients) runs two clients both ways.  The emulated-link part needs root and a TUN.
# Patches: 0273 0901
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
for bad in "--links 1gbit/100/1.5:bad loss" "--links 1gbit/100/x:bad loss" "--losses 1e-4,abc:bad loss" \
	"--cc BBR!:--cc: bad" "--tcp-streams 0:--tcp-streams: bad" "--connections 1,x:--connections: bad" \
	"--tools ssh-up-x4:unknown ssh-up-x4" "--tools scp-up-xfoo:unknown scp-up-xfoo" \
	"--cpu-load -1:--cpu-load: a number"; do
	"$run" ${bad%%:*} --dry-run > "$T/bad.out" 2>&1 && fail "${bad%%:*} accepted"
	grep -q -- "${bad#*:}" "$T/bad.out" || fail "no clear error for ${bad%%:*}: $(cat "$T/bad.out")"
done

tid "bench: --dry-run lists the quick profile"
"$run" --dry-run > "$T/dry.out" 2>&1 || fail "--dry-run failed: $(tail -3 "$T/dry.out")"
for l in loopback 1gbit/50 1gbit/100; do
	grep -q "^$l " "$T/dry.out" || fail "quick profile lacks link $l"
done
grep -q "points x 2 trees" "$T/dry.out" || fail "--dry-run prints no estimate"

tid "bench: --dry-run with loss, cc, TCP streams and connections"
"$run" --links 1gbit/100 --losses 0,0.0001 --cc cubic,bbr --tools ssh-up,scp-up --connections 1,4 \
	--tcp-streams 1,4 --ciphers default --no-compression --dry-run > "$T/dry.out" 2>&1 ||
	fail "--dry-run failed: $(tail -3 "$T/dry.out")"
for l in 1gbit/100 1gbit/100/1e-4; do
	for cc in cubic bbr; do
		for t in ssh-up scp-up; do
			grep -q "^$l  *$cc  *$t  *default" "$T/dry.out" || fail "no point $l $cc $t"
		done
		grep -q "^$l  *$cc  *scp-up-x4  *default  *(lfn only)" "$T/dry.out" ||
			fail "no lfn-only point $l $cc scp-up-x4"
	done
done
[ "$(grep -c 'ssh-up-x4\|scp-up-x1' "$T/dry.out")" = 0 ] || fail "bad tool expansion: $(cat "$T/dry.out")"
grep -q "^raw TCP per link and cc: up and down, 1,4 stream" "$T/dry.out" || fail "no raw TCP line"
grep -q "^12 points x 2 trees" "$T/dry.out" || fail "not 12 points: $(tail -1 "$T/dry.out")"
"$run" --links loopback --tools sftp-get-xN --ciphers default --no-compression --dry-run > "$T/dry.out" 2>&1
grep -q "^loopback  *sftp-get-x4 " "$T/dry.out" || fail "sftp-get-xN is not -x4 by default: $(cat "$T/dry.out")"

tid "bench: tcpbytes.py (--tcp-bytes) moves the whole file over 1 and 3 streams"
head -c 5000001 /dev/urandom > "$T/tb.data"
tb="$LFN_TOP/regress-bench/bench/tcpbytes.py"
for d in up down; do
	for n in 1 3; do
		p=$(lfn_free_port)
		python3 "$tb" serve "$p" "$d" "$T/tb.data" "$n" > "$T/tb.srv" &
		sp=$!
		for i in $(seq 50); do grep -q ready "$T/tb.srv" && break; sleep 0.1; done
		python3 "$tb" client 127.0.0.1 "$p" "$d" "$T/tb.data" "$n" > "$T/tb.out" ||
			fail "tcpbytes $d $n streams failed: $(cat "$T/tb.out")"
		wait "$sp"
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r["bytes"] == 5000001 and r["streams"] == int(sys.argv[2]) and r["mbs"] > 0))' \
			"$T/tb.out" "$n" || fail "tcpbytes $d $n streams: $(cat "$T/tb.out")"
	done
done

tid "bench: tiny loopback run, with a competing CPU load (--cpu-load 1)"
"$run" --links loopback --tools ssh-up,scp-down,scp-up-x2 --ciphers default --no-compression \
	--size 4M --runs 1 --no-warmup --tcp-seconds 1 --out "$out" --data-dir "$T/data" --cpu-load 1 \
	> "$T/run.out" 2>&1 || fail "bench run failed: $(tail -5 "$T/run.out")"
grep -q "1 busy loop(s) compete for the CPU" "$T/run.out" || fail "no note of the CPU load"
pgrep -f -P "$$" "while True: pass" > /dev/null && fail "a busy loop outlived the bench"
grep -q '\] loopback ssh-up default lfn: run 1/1' "$T/run.out" || fail "no progress line"
grep -q 'ETA' "$T/run.out" || fail "progress line without ETA"
grep -q "stock's scp/sftp have no -X connections=N: its scp-up-x2 points are skipped" "$T/run.out" ||
	fail "no note that stock skips scp-up-x2"
# the lfn tree's scp before patch 0273: the point fails, saying why
if grep -q 'loopback scp-up-x2 default lfn: failed' "$T/run.out"; then
	grep -q 'missing: loopback scp-up-x2 default lfn: failed: .*Invalid -X option.*no -X connections=N (patch 0273)' \
		"$T/run.out" || fail "scp-up-x2 failed without a clear message: $(grep x2 "$T/run.out")"
fi

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
x2 = [r for r in rows if r["kind"] == "ssh" and r["tool"] == "scp-up-x2"]
if {r["tree"] for r in x2} != {"lfn"} or {r["connections"] for r in x2} != {2}:
    bad("scp-up-x2: lfn runs with connections 2 expected: %s" % x2)
runs = [r for r in runs if r["tool"] != "scp-up-x2"]
got = sorted((r["tree"], r["tool"]) for r in runs)
want = sorted((t, x) for t in ("stock", "lfn") for x in ("ssh-up", "scp-down"))
cc = open("/proc/sys/net/ipv4/tcp_congestion_control").read().strip()
for r in rows:
    if r.get("cc") != cc:
        bad("row without the host's congestion control %s: %s" % (cc, r))
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
fixed = sorted((r["tree"], r["tool"]) for r in rows if r["kind"] == "fixed" and r.get("seconds", 0) > 0)
if fixed != want:
    bad("fixed-cost rows (a 10 kB transfer per tool and tree): %s, expected %s" % (fixed, want))
m = json.load(open(os.path.join(d, "machine.json")))
for k in ("Model name", "cpu_flags", "nproc", "kernel", "openssl_cli", "ssh -V stock", "ssh -V lfn",
          "tarball", "git describe", "patches", "sysctl", "links", "wall_seconds", "cpu load"):
    if k not in m:
        bad("machine.json lacks %s" % k)
if "lfn" not in m.get("ssh -V lfn", "") or "lfn" in m.get("ssh -V stock", "lfn"):
    bad("ssh -V of the builds: %s / %s" % (m.get("ssh -V stock"), m.get("ssh -V lfn")))
sys.exit(0 if ok else 1)
EOF

tid "bench: table.md"
tbl="$out/table.md"
[ -s "$tbl" ] || fail "no table.md"
grep -q '^| link | cc | tool | cipher | stock MB/s .* | lfn MB/s .* | lfn/stock | raw TCP MB/s | lfn/TCP | stock window ceiling (2 MiB/RTT) |' "$tbl" ||
	fail "table header: $(grep '^| link' "$tbl")"
n=$(grep -c "^| loopback | $(cat /proc/sys/net/ipv4/tcp_congestion_control) | \(ssh-up\|scp-down\) | default | [0-9.]* ([0-9.]*–[0-9.]*) | [0-9.]* (" "$tbl")
[ "$n" = 2 ] || fail "expected 2 data rows, got $n: $(grep '^| loopback' "$tbl")"
grep -q '^## machine' "$tbl" || fail "no machine section"
grep -q '^- competing CPU load: 1 busy loop' "$tbl" || fail "table.md does not say there was a CPU load"

tid "bench: plots (if matplotlib is installed)"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	[ "$(head -c 4 "$out/plots/loopback.png" | tail -c 3)" = PNG ] || fail "no plots/loopback.png"
	grep -q 'plots/loopback.png' "$tbl" || fail "table.md does not show the plot"
else
	verbose "python3-matplotlib missing: plots not checked"
fi

tid "bench: one transfer over N connections (scp/sftp -X connections=N), N TCP streams"
# a copy of the lfn tree whose scp and sftp drop "-X connections=N" (and
# note it): the bench's side works whether or not patch 0273 is there
fake="$T/fake-lfn"
mkdir -p "$fake"
for f in "$LFN_TREE"/* "$LFN_TREE"/.openssh-lfn-series; do
	[ -f "$f" ] && ln -s "$f" "$fake/"
done
for p in scp sftp; do
	rm -f "$fake/$p"
	printf '%s\n' '#!/bin/bash' 'a=()' 'while [ $# -gt 0 ]; do' \
		'	if [ "$1" = -X ] && [[ ${2:-} == connections=* ]]; then' \
		"		echo \"$p \$2\" >> $T/xconn.log; shift 2; continue" \
		'	fi' '	a+=("$1"); shift' 'done' "exec $LFN_TREE/$p \"\${a[@]}\"" > "$fake/$p"
	chmod +x "$fake/$p"
done
"$run" --links loopback --trees lfn --lfn-tree "$fake" --tools scp-up,sftp-get-xN --connections 1,2 \
	--tcp-streams 1,2 --ciphers default --no-compression --size 4M --runs 1 --no-warmup --tcp-seconds 1 \
	--out "$T/xout" --data-dir "$T/data" --no-plots > "$T/xrun.out" 2>&1 ||
	fail "bench run failed: $(tail -5 "$T/xrun.out")"
grep -q 'missing' "$T/xrun.out" && fail "points missing: $(grep missing "$T/xrun.out")"
[ "$(sort -u "$T/xconn.log" 2>/dev/null | tr '\n' ' ')" = "scp connections=2 sftp connections=2 " ] ||
	fail "-X connections=2 not given to scp and sftp: $(cat "$T/xconn.log" 2>/dev/null)"
/usr/bin/env python3 - "$T/xout" <<'EOF' || fail "results.jsonl check failed"
import json, sys, os
rows = [json.loads(l) for l in open(os.path.join(sys.argv[1], "results.jsonl"))]
got = sorted((r["tool"], r["connections"]) for r in rows if r["kind"] == "ssh" and r["run"] >= 0 and r["valid"])
want = [("scp-up", 1), ("scp-up-x2", 2), ("sftp-get", 1), ("sftp-get-x2", 2)]
tcp = sorted((r["dir"], r["streams"]) for r in rows if r["kind"] == "tcp")
ok = got == want and tcp == [("down", 1), ("down", 2), ("up", 1), ("up", 2)]
if not ok:
    print("runs", got, "tcp", tcp)
sys.exit(0 if ok else 1)
EOF
xtbl="$T/xout/table.md"
grep -q '^## one vs N connections, one vs N TCP streams' "$xtbl" || fail "no connections section"
grep -q '^| link | cc | tool | N | lfn x1 MB/s | lfn xN MB/s | xN/x1 | TCP×1 MB/s | TCP×N MB/s | x1/TCP×1 | xN/TCP×N |' \
	"$xtbl" || fail "connections table header: $(grep '^| link | cc | tool | N' "$xtbl")"
for t in scp-up sftp-get; do
	grep -q "^| loopback | [a-z0-9_]* | $t | 2 | [0-9.]* (.*) | [0-9.]* (.*) | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |" \
		"$xtbl" || fail "no complete $t row: $(grep "| $t |" "$xtbl")"
done
grep -q '^| loopback | [a-z0-9_]* | scp-up-x2 | default | – | [0-9.]* (.*) | – | [0-9.]* ×2 |' "$xtbl" ||
	fail "scp-up-x2 is not compared with 2 TCP streams: $(grep 'scp-up-x2' "$xtbl")"
grep -q '^| loopback | [a-z0-9_]* | up | [0-9.]* | [0-9.]* | [0-9.]* |' "$xtbl" || fail "no raw TCP up row"

tid "bench: emulated link with loss, two congestion controls"
avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null)
ccs=$(for a in cubic bbr reno; do grep -qw "$a" <<<"$avail" && echo "$a"; done | head -2 | paste -sd,)
if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ]; then
	verbose "not root or no /dev/net/tun: emulated link not checked"
elif [ "${ccs#*,}" = "$ccs" ]; then
	verbose "fewer than two congestion controls available ($avail): not checked"
else
	"$run" --links 1gbit/10/1e-3 --cc "$ccs" --trees lfn --tools ssh-up --ciphers default --no-compression \
		--size 4M --runs 1 --no-warmup --tcp-seconds 1 --tcp-streams 1,2 \
		--out "$T/wout" --data-dir "$T/data" --no-plots > "$T/wrun.out" 2>&1 ||
		fail "bench run failed: $(tail -5 "$T/wrun.out")"
	grep -q 'missing' "$T/wrun.out" && fail "points missing: $(grep missing "$T/wrun.out")"
	/usr/bin/env python3 - "$T/wout" "$ccs" <<'EOF' || fail "results check failed"
import json, sys, os
d, ccs = sys.argv[1], sys.argv[2].split(",")
rows = [json.loads(l) for l in open(os.path.join(d, "results.jsonl"))]
ok = True
def bad(msg):
    global ok
    ok = False
    print(msg)
for cc in ccs:
    tcp = sorted((r["dir"], r["streams"]) for r in rows if r["kind"] == "tcp" and r["cc"] == cc)
    if tcp != [("down", 1), ("down", 2), ("up", 1), ("up", 2)]:
        bad("%s: raw TCP rows %s" % (cc, tcp))
    ssh = [r for r in rows if r["kind"] == "ssh" and r["cc"] == cc and r["run"] >= 0 and r["valid"]]
    if len(ssh) != 1:
        bad("%s: ssh-up runs %s" % (cc, ssh))
for r in rows:
    if r["link"] != "1gbit/10/1e-3" or r["loss"] != 0.001:
        bad("row's link/loss: %s" % r)
    # what the connections used: iperf3's JSON, lfn sshd's log
    if r["kind"] in ("tcp", "ssh") and r["cc_seen"] != [r["cc"]]:
        bad("asked for %s, the connections used %s: %s" % (r["cc"], r["cc_seen"], r))
m = json.load(open(os.path.join(d, "machine.json")))
li = m["links"]["1gbit/10/1e-3"]
if sorted(li.get("congestion control", {})) != sorted(ccs):
    bad("machine.json congestion controls: %s" % li.get("congestion control"))
st = li.get("wanemu_stats", {})
if st.get("ab", {}).get("loss") != 0.001 or st.get("ba", {}).get("loss") != 0.001:
    bad("wanemu did not run with loss 1e-3 both ways: %s" % {k: st.get(k, {}).get("loss") for k in ("ab", "ba")})
sys.exit(0 if ok else 1)
EOF
	for cc in ${ccs//,/ }; do
		grep -q "^| 1gbit/10/1e-3 | $cc | ssh-up | default | – | [0-9.]* (" "$T/wout/table.md" ||
			fail "no table row for $cc: $(grep '^| 1gbit' "$T/wout/table.md")"
	done
fi

tid "clients.py: foreign clients against both sshds on a link, bytes verified"
if [ "$(id -u)" = 0 ] && [ -c /dev/net/tun ]; then
	"$LFN_TOP/regress-bench/bench/clients.py" --links 1gbit/10 --size 2M --runs 1 --setup-runs 1 \
	    --clients pscp,paramiko --out "$T/cout" > "$T/clients.log" 2>&1 ||
		fail "clients.py failed: $(tail -5 "$T/clients.log")"
	n=$(grep -cE '^\| 1gbit/10 \| (PuTTY pscp|paramiko)[^|]* \| (up|down) \| [0-9.]+ \([0-9.]+\) \| [0-9.]+ \([0-9.]+\) \| .* \| verified \|$' \
	    "$T/cout/table.md" 2>/dev/null)
	[ "$n" = 4 ] || fail "clients.py's table has $n verified rows of 4: $(cat "$T/cout/table.md" 2>/dev/null)"
	[ -s "$T/cout/results.jsonl" ] && [ -s "$T/cout/machine.json" ] || fail "clients.py: no results.jsonl/machine.json"
	"$LFN_TOP/regress-bench/bench/clients.py" --clients bogus --dry-run > "$T/bad.out" 2>&1 &&
		fail "clients.py --clients bogus accepted"
fi

tid "bench: report.py re-renders a results directory"
rm -f "$tbl"
/usr/bin/env python3 "$LFN_TOP/regress-bench/bench/report.py" "$out" --no-plots > /dev/null ||
	fail "report.py failed"
[ -s "$tbl" ] || fail "report.py wrote no table.md"
[ "$(ls -d "$LFN_TOP"/build/test/bench-[0-9]* 2>/dev/null | wc -l)" -gt "$scratch_before" ] &&
	fail "the harness left its scratch dir in build/test"
lfn_finish
