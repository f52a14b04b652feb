#!/usr/bin/env bash
# foreign-servers.sh: openssh-lfn's scp against SFTP servers nobody here
# wrote, over one emulated long fat link (default 1 Gbit/s x 100 ms), with
# stock 10.5p1's scp and tar over ssh beside it in the same run.
#
#   regress-bench/bench/foreign-servers.sh               # ~14 min on 2 cores
#   ROUNDS=1 SERVERS=ref,rclone regress-bench/bench/foreign-servers.sh
#
# Servers (SERVERS, comma list), every one in the link's server namespace
# ($NB) listening on $ADDR, the clients in the client namespace ($NA):
#   ref      openssh-lfn's sshd with its own sftp-server (the reference)
#   ges      the Green End SFTP server (gesftpserver) as the sftp Subsystem
#            of an openssh-lfn sshd
#   proftpd  ProFTPD 1.3.8's mod_sftp, AllowOverwrite on
#   rclone   rclone serve sftp / in its default VFS mode
# (lib/foreign-sftp-servers.sh starts them; their logs stay under $T).
# Workloads, each up (client -> server) and down:
#   tree   scp -r of a tree of N_FILES (200) files of FILE_BYTES (10000)
#          bytes (manyfiles-tree.py's "small" tree for SEED: the bytes of
#          manyfiles-grid.sh's), by the new client (LFN_TREE), by the stock
#          client (STOCK_TREE), and tar -cf - | ssh host tar -xf - (and the
#          reverse; openssh-lfn's ssh) through the same server where it is
#          an sshd (ref, ges).  ProFTPD and rclone run no commands: their
#          rows divide by the reference sshd's tar time on the same link in
#          the same rounds (marked in the table).
#   big    scp of one BIG_MIB (256) MiB file: the new client with
#          -X connections=CONNS (4), the stock client's plain scp.
# WORKS (tree,big) picks among them.
# Stock scp -r copies one file after another, ~0.43 s a file at 100 ms
# (86 s for the 200 files, per direction and server: 3 rounds of it would
# take 35 min).  Unless STOCK_EVERY=1 it copies two subsets of the tree
# instead, every STOCK_EVERY-th file (10: 20 files) and a tree of one file,
# and the table gives the straight line through the two at N_FILES files
# (marked "est."): t1 + (N_FILES - 1) * (tn - t1) / (n - 1), per round.
# Every copy goes to a destination that does not exist yet (the last one's
# removed and synced first); a copy is good when the client exits 0 (rclone:
# exit 1 having said nothing, as it sends no exit-status; see the library)
# and diff -r / cmp finds it identical to its source.  A failed or wrong
# copy is FAILED in the table, its time not used; its stderr is kept in
# OUT/logs/.  ROUNDS (3) rounds; within a round every server takes every
# workload with its clients back to back, the order of servers and clients
# reversed every other round, so the machine's load falls on all alike.
# The table gives medians and ratios from this run only (the machine is
# shared: read ratios, not seconds).
#
# Output in OUT (default build/bench/foreign-servers-<UTC timestamp>):
# results.tsv (one line per copy), table.md, machine.json (bench.py's
# machine_info, the link, the servers' versions, load, wall time),
# run.log, logs/.  Needs root (network namespaces), gesftpserver,
# proftpd-core + proftpd-mod-crypto, rclone (./install-deps).
set -euo pipefail
cd "$(dirname "$0")/../.."
. regress-bench/lib/sshenv.sh
. regress-bench/lib/foreign-sftp-servers.sh
RTT=${RTT:-100} RATE=${RATE:-1gbit} ROUNDS=${ROUNDS:-3}
SERVERS=${SERVERS:-ref,ges,proftpd,rclone}
N_FILES=${N_FILES:-200} FILE_BYTES=${FILE_BYTES:-10000} SEED=${SEED:-1}
WORKS=${WORKS:-tree,big} STOCK_EVERY=${STOCK_EVERY:-10} BIG_MIB=${BIG_MIB:-256} CONNS=${CONNS:-4}
TIMEOUT=${TIMEOUT:-600}
OUT=${OUT:-build/bench/foreign-servers-$(date -u +%Y%m%dT%H%M%SZ)}
SERVERS=${SERVERS//,/ }
for s in $SERVERS; do
	case $s in ref|ges|proftpd|rclone) ;; *) lfn_die "unknown server $s (ref, ges, proftpd, rclone)" ;; esac
done
[ -x "$STOCK_TREE/scp" ] || lfn_die "stock build missing ($STOCK_TREE)"
for w in ${WORKS//,/ }; do
	case $w in tree|big) ;; *) lfn_die "unknown workload $w (tree, big)" ;; esac
done
[ "$STOCK_EVERY" -ge 1 ] && [ "$N_FILES" -ge "$((2 * STOCK_EVERY))" ] ||
	lfn_die "STOCK_EVERY=$STOCK_EVERY: want 1 <= STOCK_EVERY <= N_FILES/2"
lfn_foreign_need
mkdir -p "$OUT/logs"; OUT=$(cd "$OUT" && pwd)
exec > >(tee "$OUT/run.log") 2>&1
t_start=$(date +%s.%N) load_start=$(cat /proc/loadavg)
tag=fs$$
trap 'set +e; lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init foreign-servers
lfn_wan_link "$tag" "$RTT" "$RATE"
echo "link: $RATE x $RTT ms ($NA -> $NB $ADDR); load: $load_start"

# the sources: the tree, the stock client's subsets (hard links), the file
python3 regress-bench/bench/manyfiles-tree.py "$T/gen" "$SEED" "$N_FILES" "$FILE_BYTES" 0 1000 1048576 0 1
mv "$T/gen/small" "$T/src"; rm -rf "$T/gen"
mkdir "$T/srcsub" "$T/src1"
ln "$T/src/f1" "$T/src1/f1"
for i in $(seq 1 "$STOCK_EVERY" "$N_FILES"); do ln "$T/src/f$i" "$T/srcsub/f$i"; done
n_sub=$(find "$T/srcsub" -type f | wc -l)
head -c $((BIG_MIB * 1048576)) /dev/urandom > "$T/big"

# the servers, in $NB on $ADDR
declare -A PORT
for s in $SERVERS; do
	PORT[$s]=$(lfn_free_port)
	case $s in
	ref) lfn_sshd_start "$LFN_TREE" "${PORT[$s]}" "$NB" < /dev/null ;;
	ges) LFN_SSHD_SFTP=$GESFTPSERVER lfn_sshd_start "$LFN_TREE" "${PORT[$s]}" "$NB" < /dev/null ;;
	proftpd) lfn_proftpd_start "${PORT[$s]}" proftpd "$NB" "$ADDR" <<< 'AllowOverwrite on' ;;
	rclone) lfn_rclone_sftp_start "${PORT[$s]}" "$NB" "$ADDR" ;;
	esac
	echo "server $s: port ${PORT[$s]}"
done

# cmd_for SERVER WORK DIR CLIENT: the copy's command line (CMD), its
# source (SRC) and where it lands (DST)
cmd_for() {
	local server=$1 work=$2 dir=$3 client=$4 port=${PORT[$1]} tree=$LFN_TREE ssh
	local -a x=()
	case $work.$client in
	tree.new) SRC=$T/src ;;
	tree.stock) SRC=$T/srcsub; [ "$STOCK_EVERY" = 1 ] && SRC=$T/src ;;
	tree.stock1) SRC=$T/src1 ;;
	tree.tar) SRC=$T/src ;;
	big.new) SRC=$T/big x=(-X "connections=$CONNS") ;;
	big.stock) SRC=$T/big ;;
	*) lfn_die "no $client client for $work" ;;
	esac
	case $client in stock*) tree=$STOCK_TREE ;; esac
	DST=$T/$work.$dir
	if [ "$client" = tar ]; then
		ssh=$(printf '%q ' ip netns exec "$NA" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$port" \
		    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" lfnpeer)
		if [ "$dir" = up ]; then
			CMD=(bash -c "set -o pipefail; tar -C $(printf %q "$SRC") -cf - . | $ssh $(printf %q "mkdir $DST && tar -C $DST -xf -")")
		else
			CMD=(bash -c "set -o pipefail; mkdir $(printf %q "$DST") && $ssh $(printf %q "tar -C $SRC -cf - .") | tar -C $(printf %q "$DST") -xf -")
		fi
		return 0
	fi
	CMD=(ip netns exec "$NA" "$tree/scp" -F "$T/ssh_config" -S "$tree/ssh" -P "$port"
	    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -q "${x[@]}")
	[ "$work" = tree ] && CMD+=(-r)
	if [ "$dir" = up ]; then CMD+=("$SRC" "lfnpeer:$DST"); else CMD+=("lfnpeer:$SRC" "$DST"); fi
}

clean() { rm -rf "$T"/tree.up "$T"/tree.down "$T"/big.up "$T"/big.down; sync; }
# read the source through (DAMON reclaim here pages out what is unread for 60 s)
warm() { if [ -d "$1" ]; then find "$1" -type f -exec cat {} + > /dev/null; else cat "$1" > /dev/null; fi; }

printf 'round\tserver\twork\tdir\tclient\tfiles\twall\tok\trc\tnote\n' > "$OUT/results.tsv"
# one ROUND SERVER WORK DIR CLIENT: one timed copy, checked and recorded
one() {
	local round=$1 server=$2 work=$3 dir=$4 client=$5 s e rc=0 wall ok=ok note="" files=1
	cmd_for "$server" "$work" "$dir" "$client"
	clean; warm "$SRC"
	s=$(date +%s.%N)
	timeout -k 5 "$TIMEOUT" "${CMD[@]}" < /dev/null > "$T/client.out" 2> "$T/client.err" || rc=$?
	e=$(date +%s.%N)
	wall=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }')
	if [ "$rc" != 0 ]; then
		if [ "$server" = rclone ] && [ "$rc" = 1 ] && [ "$client" != tar ] && ! [ -s "$T/client.err" ]; then
			note="exit 1 having said nothing (rclone sends no exit-status)"
		else
			ok=FAILED note="exit $rc: $(tr '\r' '\n' < "$T/client.err" | grep -v '^ *$' | tail -n 2 |
			    sed "s#$T/##g" | tr '\t\n' '  ')"
		fi
	fi
	if [ "$ok" = ok ]; then
		if [ -d "$SRC" ]; then
			diff -r "$SRC" "$DST" > "$T/diff.out" 2>&1 ||
				ok=FAILED note="exit $rc, but not the source: $(head -n 2 "$T/diff.out" | tr '\t\n' '  ')"
		else
			cmp "$SRC" "$DST" > "$T/diff.out" 2>&1 ||
				ok=FAILED note="exit $rc, but not the source: $(head -n 1 "$T/diff.out")"
		fi
	fi
	[ -d "$SRC" ] && files=$(find "$SRC" -type f | wc -l)
	if [ "$ok" != ok ]; then
		cp "$T/client.err" "$OUT/logs/r$round.$server.$work.$dir.$client.err"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$server" "$work" "$dir" "$client" "$files" \
	    "$wall" "$ok" "$rc" "$note" >> "$OUT/results.tsv"
	printf 'round %s %-8s %-4s %-4s %-6s %4s files %8s s %-6s [load %s]%s\n' "$round" "$server" "$work" "$dir" \
	    "$client" "$files" "$wall" "$ok" "$(cut -d' ' -f1 /proc/loadavg)" "${note:+  $note}"
}

for round in $(seq 1 "$ROUNDS"); do
	srvs=($SERVERS)
	[ $((round % 2)) = 0 ] && srvs=($(printf '%s\n' "${srvs[@]}" | tac))
	for server in "${srvs[@]}"; do
		for work in ${WORKS//,/ }; do
			for dir in up down; do
				clients=(new stock)
				if [ "$work" = tree ]; then
					[ "$STOCK_EVERY" = 1 ] || clients+=(stock1)
					case $server in ref|ges) clients+=(tar) ;; esac
				fi
				[ $((round % 2)) = 0 ] && clients=($(printf '%s\n' "${clients[@]}" | tac))
				for client in "${clients[@]}"; do
					one "$round" "$server" "$work" "$dir" "$client"
				done
			done
		done
	done
done
clean; rm -f "$T/big"
load_end=$(cat /proc/loadavg)
wall_all=$(awk -v s="$t_start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
echo "load after: $load_end; $wall_all s in all"

# machine.json: bench.py's machine_info, the link, the servers, the settings
stats=$(regress-bench/wanemu/wanemu-stats -n "$tag" 2> /dev/null || echo null)
python3 - "$OUT" "$tag" "$NA" "$load_start" "$load_end" "$wall_all" "$stats" <<PY
import json, subprocess, sys, types
sys.path.insert(0, "regress-bench/bench")
import bench
out, tag, na, l0, l1, wall, stats = sys.argv[1:8]
env = types.SimpleNamespace(trees={"lfn": "$LFN_TREE", "stock": "$STOCK_TREE"}, none_ok={})
m = bench.machine_info(env, [])
m["loadavg_start"], m["loadavg_end"], m["wall_seconds"] = l0, l1, float(wall)
link = types.SimpleNamespace(loopback=False, ns_a=na, tag=tag)
li = bench.link_info(link, "raised (wanemu default)")
try:
    li["wanemu_stats"] = json.loads(stats)
except ValueError:
    pass
m["links"] = {"$RATE/$RTT": li}
def ver(cmd):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    return ((r.stdout + r.stderr).strip().splitlines() or ["?"])[0]
m["servers"] = {
    "ref": "openssh-lfn sshd + sftp-server ($LFN_TREE)",
    "ges": ver("dpkg-query -W -f='gesftpserver \${Version}' gesftpserver") + " ($GESFTPSERVER) as the Subsystem of openssh-lfn's sshd",
    "proftpd": ver("$PROFTPD -v") + ", " + ver("dpkg-query -W -f='proftpd-core \${Version}' proftpd-core") + ", mod_sftp, AllowOverwrite on",
    "rclone": ver("rclone version") + " serve sftp (default VFS mode)",
}
m["tar"] = ver("tar --version")
m["settings"] = {"SERVERS": "$SERVERS", "ROUNDS": $ROUNDS, "RTT": $RTT, "RATE": "$RATE",
                 "N_FILES": $N_FILES, "FILE_BYTES": $FILE_BYTES, "SEED": $SEED,
                 "STOCK_EVERY": $STOCK_EVERY, "WORKS": "$WORKS", "stock subset files": $n_sub,
                 "BIG_MIB": $BIG_MIB, "CONNS": $CONNS, "TIMEOUT": $TIMEOUT}
m["argv"] = "regress-bench/bench/foreign-servers.sh"
json.dump(m, open(out + "/machine.json", "w"), indent=1, sort_keys=True)
PY

# table.md
python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import json, statistics, sys
out = sys.argv[1]
m = json.load(open(out + "/machine.json"))
st = m["settings"]
N, every, nsub, rounds = st["N_FILES"], st["STOCK_EVERY"], st["stock subset files"], st["ROUNDS"]
rows = [l.rstrip("\n").split("\t") for l in open(out + "/results.tsv", newline="\n")][1:]
R = {}
for rnd, srv, work, d, cl, files, wall, ok, rc, note in rows:
    R.setdefault((srv, work, d, cl), {})[int(rnd)] = (float(wall), ok == "ok")
NAMES = {"ref": "openssh-lfn sshd + its sftp-server (reference)",
         "ges": "gesftpserver (Subsystem of openssh-lfn sshd)",
         "proftpd": "ProFTPD mod_sftp (AllowOverwrite on)",
         "rclone": "rclone serve sftp (default mode)"}
servers = [s for s in ("ref", "ges", "proftpd", "rclone") if s in st["SERVERS"].split()]

def walls(key):
    """{round: seconds} of the good copies, and how many failed"""
    d = R.get(key, {})
    return {r: w for r, (w, ok) in d.items() if ok}, sum(1 for w, ok in d.values() if not ok), len(d)

def stock_tree(srv, d):
    if every == 1:
        return walls((srv, "tree", d, "stock"))
    sub, fs, ns = walls((srv, "tree", d, "stock"))
    one, f1, n1 = walls((srv, "tree", d, "stock1"))
    est = {r: one[r] + (N - 1) * (sub[r] - one[r]) / (nsub - 1) for r in sub if r in one}
    return est, len(set(R.get((srv, "tree", d, "stock"), {})) | set(R.get((srv, "tree", d, "stock1"), {}))) - len(est), ns

def med(w):
    return statistics.median(w.values()) if w else None

def cell(w, failed, n, suffix=""):
    if not w:
        return "FAILED" if n else "-"
    s = "%.2f%s" % (med(w), suffix)
    return s + (" (%d/%d FAILED)" % (failed, n) if failed else "")

def ratio(a, b, fmt="%.2f"):
    return fmt % (a / b) if a is not None and b is not None else "-"

print("# scp against foreign SFTP servers, %s x %s ms\n" % (m["links"] and list(m["links"])[0].split("/")[0], st["RTT"]))
print("Median wall seconds of %d rounds, every copy compared with its source (diff -r, cmp); "
      "FAILED: the copy failed or was not the source (not timed).  new = openssh-lfn's scp, "
      "stock = stock 10.5p1's scp, tar = `tar -cf - | ssh host tar -xf -` (and the reverse) with "
      "openssh-lfn's ssh through the same server.  Ratios are from the same run.\n" % rounds)
works = st["WORKS"].replace(",", " ").split()
tar = {}
for srv in servers:
    for d in ("up", "down"):
        t = walls((srv, "tree", d, "tar"))[0]
        if t:
            tar[srv, d] = med(t)
dag = False
if "tree" in works:
    print("## scp -r of %d files of %d bytes\n" % (N, st["FILE_BYTES"]))
    print("| server | dir | stock s | new s | new/stock speed-up | new / tar |")
    print("|---|---|---|---|---|---|")
for srv in servers if "tree" in works else []:
    for d in ("up", "down"):
        nw, nf, nn = walls((srv, "tree", d, "new"))
        sw, sf, sn = stock_tree(srv, d)
        tr, mark = tar.get((srv, d)), ""
        if srv in ("proftpd", "rclone"):
            tr, mark, dag = tar.get(("ref", d)), " †", True
        print("| %s | %s | %s | %s | %s | %s |" % (
            NAMES[srv], d, cell(sw, sf, sn, " est." if every > 1 else ""), cell(nw, nf, nn),
            ratio(med(sw), med(nw), "%.1f×") if nw and sw else "-",
            (ratio(med(nw), tr) + mark) if nw and tr else "-"))
print()
if every > 1 and "tree" in works:
    print("est.: stock scp copies one file after another; it copied every %dth file (%d files) and a "
          "tree of one file, and its time for %d files is the line through the two, per round "
          "(STOCK_EVERY=1 copies the whole tree).  " % (every, nsub, N), end="")
if dag:
    print("†: ProFTPD and rclone run no commands: new / tar divides by tar over ssh through the "
          "reference sshd, on the same link in the same rounds.", end="")
print("\n")
if tar:
    print("tar over ssh, median s: " + "; ".join("%s %s %.2f" % (s, d, tar[s, d]) for s in servers
                                                  for d in ("up", "down") if (s, d) in tar) + "\n")
if "big" in works:
    print("## one file of %d MiB: new scp -X connections=%d against stock's plain scp\n" % (st["BIG_MIB"], st["CONNS"]))
    print("| server | dir | stock s | new -X connections=%d s | new/stock speed-up |" % st["CONNS"])
    print("|---|---|---|---|---|")
for srv in servers if "big" in works else []:
    for d in ("up", "down"):
        nw, nf, nn = walls((srv, "big", d, "new"))
        sw, sf, sn = walls((srv, "big", d, "stock"))
        print("| %s | %s | %s | %s | %s |" % (NAMES[srv], d, cell(sw, sf, sn), cell(nw, nf, nn),
              ratio(med(sw), med(nw), "%.1f×") if nw and sw else "-"))
if "big" in works:
    print()
fails = [r for r in rows if r[7] != "ok"]
notes = sorted({(r[1], r[2], r[3], r[4], r[9]) for r in rows if r[7] == "ok" and r[9]})
if fails:
    print("## Failed copies\n")
    for rnd, srv, work, d, cl, files, wall, ok, rc, note in fails:
        print("- round %s, %s, %s %s, %s client: %s" % (rnd, srv, work, d, cl, note))
    print()
if notes:
    print("Copies counted good despite a non-zero exit: " +
          "; ".join(sorted({"%s %s client: %s" % (s, c, n) for s, w, d, c, n in notes})) + "\n")
print("## Machine\n")
print("- %s, %s cores, %s, kernel %s" % (m.get("Model name", "?"), m["nproc"], m["os"], m["kernel"]))
print("- new: %s; stock: %s" % (m["ssh -V lfn"], m["ssh -V stock"]))
for k in servers:
    v = m["servers"][k]
    print("- %s: %s" % (k, v))
print("- load average at start %s, at end %s; %.0f s in all" % (m["loadavg_start"], m["loadavg_end"], m["wall_seconds"]))
PY
