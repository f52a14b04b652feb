#!/usr/bin/env bash
# soak.sh: a storage-server soak.  One sshd (openssh-lfn's, then stock
# 10.5p1's: SERVERS) serves CLIENTS concurrent clients on loopback for
# DURATION seconds; every client copies files of mixed sizes up and down
# with the tools users bring, a KILL_FRACTION of the copies is killed at a
# random moment, every completed copy is compared with its source, the
# sshd's memory is sampled, and what is left below the sshd after the last
# client is counted.  The same workload (same SEED) runs against each server,
# one after the other, and the summary puts them side by side.
#
#   regress-bench/bench/soak.sh                          # 50 clients x 600 s, lfn then stock
#   CLIENTS=8 DURATION=60 regress-bench/bench/soak.sh    # a short try (~2.5 min)
#   SERVERS=lfn TOOLS=scp-up,sftp-get regress-bench/bench/soak.sh
#
# Environment (defaults):
#   CLIENTS (50)          concurrent client slots, started STAGGER (0.1) s apart
#   DURATION (600)        seconds per server during which copies start; one
#                         running then finishes (bounded by COPY_TIMEOUT, 300 s)
#   KILL_FRACTION (0.1)   share of copies killed at a random moment: SIGKILL or
#                         SIGINT (Ctrl-C) to the client's process group, between
#                         5 and 95 % of the time that copy is expected to take
#                         (the last completed copy of that file with that tool,
#                         else the tool's rate so far)
#   SERVERS ("lfn stock") the sshds, one after the other: lfn = LFN_TREE
#                         (openssh-portable/), stock = STOCK_TREE (build/stock/)
#   SEED (1)              the data set and every slot's sequence of files, kills
#                         and kill moments: the same for every server
#   TOOLS                 the rotation (slot i starts at tool i): scp-up,
#                         scp-down, sftp-put, sftp-get (CLIENT_TREE's scp/sftp,
#                         default openssh-portable/: the clients the project
#                         ships), rclone-up, rclone-down (rclone copyto over its
#                         sftp backend), psftp-put, psftp-get (PuTTY), sshfs-up,
#                         sshfs-down (cp into or out of a fresh sshfs mount,
#                         CLIENT_TREE's ssh as ssh_command, in a private mount
#                         namespace per copy).  rclone and psftp run through
#                         regress-bench/lib/foreign-client as clients.py does.
#                         A tool whose package is missing (rclone, putty-tools,
#                         sshfs or /dev/fuse; sshfs also needs root) is skipped
#                         with a note
#   SIZES (4K,16K,64K,256K,1M,4M,16M,64M)  the data set: one file per size,
#                         each but the first and last moved off its size by up
#                         to 1/8; random bytes from SEED (soak.py gen)
#   RSS_INTERVAL (10)     seconds between memory samples
#   GRACE (5)             seconds the sessions get to go after the last client
# Every slot copies into its own directories: uploads to srv/slotNNN/up.dat,
# downloads to cli/slotNNN/down.dat, whatever the tool, so each copy
# overwrites the last one's file (a killed copy's partial file too) and must
# truncate it.  A copy that exits 0 is verified byte for byte against its
# source and must have rewritten the file (inode or ctime changed); a killed
# copy is recorded as killed whatever it left (its partial size in the note),
# and after a killed or failed upload the slot waits (up to 10 s) until no
# process below the sshd holds that file open, so that the server finishing
# what a dead client sent never lands in the next copy.  The sshd is started
# below a child subreaper (soak.py reaper), so a session process orphaned by
# its sshd-session still counts as left behind.  Both sshds get the same
# config: lfn_sshd_config (regress-bench/lib/sshenv.sh: its own host key,
# authorized_keys and LogLevel VERBOSE), PermitUserEnvironment HOME (the
# key's HOME is an empty directory), MaxStartups 2*CLIENTS+10, and
# PerSourcePenalties no (every client comes from 127.0.0.1: one killed
# before authenticating would otherwise count against all of them).
# Clients run with HOME set to an empty directory too.
#
# Output in OUT (default build/bench/soak-<UTC timestamp>):
#   results.tsv   one line per copy: server, slot, tool, direction, bytes,
#                 seconds (client start to exit, setup included), outcome
#                 (ok, mismatch, failed, timeout, killed, error), then seq,
#                 start_s, file, rc, note
#   rss.tsv       per sample (start, every RSS_INTERVAL s, last-client, end)
#                 and process kind below the sshd (the listener, sshd-session,
#                 sshd-auth, sftp-server, anything else by name): count, sum,
#                 max and median RSS in kB (/proc/PID/statm)
#   run-SERVER.json  per server: times, load, listener RSS at start and end,
#                 the processes left behind (PID, name, parent, command,
#                 SSH_CONNECTION)
#   summary.md    per server: copies done / failed / killed, every completed
#                 file verified, MB/s per copy, per client and aggregate,
#                 listener RSS start/end, sshd-session and sftp-server max
#                 RSS in the first vs the last max(20 s, DURATION/10), the
#                 processes left, a per-tool table; lfn against stock side by
#                 side with ratios; the goals (nothing lost, nothing left
#                 behind, memory flat, per-client throughput >= stock's)
#   machine.txt   versions, parameters, load before and after
#   logs/         each sshd's log
# Exit status: 1 when a completed copy mismatched or a process was left
# behind, else 0 (failed copies are reported, not fatal).  The scratch
# directory (build/test/soak-PID: keys, data, copies) is removed at the end;
# every process the soak started is stopped by PID (trap).
set -u
cd "$(dirname "$0")/../.." || exit 1
. regress-bench/lib/sshenv.sh
CLIENTS=${CLIENTS:-50} DURATION=${DURATION:-600} KILL_FRACTION=${KILL_FRACTION:-0.1}
SERVERS=${SERVERS:-lfn stock} SEED=${SEED:-1}
TOOLS=${TOOLS:-scp-up,scp-down,sftp-put,sftp-get,rclone-up,rclone-down,psftp-put,psftp-get,sshfs-up,sshfs-down}
SIZES=${SIZES:-4K,16K,64K,256K,1M,4M,16M,64M}
CLIENT_TREE=${CLIENT_TREE:-$LFN_TREE}
RSS_INTERVAL=${RSS_INTERVAL:-10} GRACE=${GRACE:-5} COPY_TIMEOUT=${COPY_TIMEOUT:-300} STAGGER=${STAGGER:-0.1}
OUT=${OUT:-build/bench/soak-$(date -u +%Y%m%dT%H%M%SZ)}
SERVERS=${SERVERS//,/ }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
SOAKPY=$LFN_TOP/regress-bench/bench/soak.py
CLIENT_TREE=$(cd "$CLIENT_TREE" && pwd) || lfn_die "CLIENT_TREE: no such tree"
for x in scp sftp ssh; do [ -x "$CLIENT_TREE/$x" ] || lfn_die "no $CLIENT_TREE/$x (build first: make)"; done
mkdir -p "$OUT/logs"; OUT=$(cd "$OUT" && pwd)

DRIVER=""
soak_cleanup() {
	local below p
	if [ -n "$DRIVER" ]; then	# the driver kills its clients; any it missed go too
		below=$(lfn_descendants "$DRIVER")
		kill "$DRIVER" 2>/dev/null; wait "$DRIVER" 2>/dev/null
		for p in $below; do kill -KILL "$p" 2>/dev/null; done
	fi
	lfn_cleanup
	[ -n "${T:-}" ] && [ -d "$T" ] && {
		cp "$T"/sshd.*.log "$OUT/logs/" 2>/dev/null
		# an sshfs mount is private to its copy's namespace; never follow one
		find "$T/mnt" -mindepth 1 -maxdepth 1 -exec mountpoint -q {} \; -print 2>/dev/null |
			while read -r m; do umount -l "$m"; done
		rm -rf "$T"
	}
}
trap soak_cleanup EXIT
trap 'exit 130' INT TERM
lfn_env_init soak-$$
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"

# which tools can run here
have() { command -v "$1" > /dev/null; }
tools=() skipped=()
for t in ${TOOLS//,/ }; do
	why=""
	case $t in
	scp-*|sftp-*) ;;
	rclone-*) have rclone || why="rclone not installed (apt-get install rclone)" ;;
	psftp-*) { have psftp && have puttygen; } || why="psftp/puttygen not installed (apt-get install putty-tools)" ;;
	sshfs-*)
		if ! have sshfs; then why="sshfs not installed (apt-get install sshfs)"
		elif [ ! -c /dev/fuse ]; then why="no /dev/fuse"
		elif [ "$(id -u)" != 0 ] || ! have unshare; then why="needs root and unshare (a private mount namespace per copy)"
		fi ;;
	*) lfn_die "unknown tool $t" ;;
	esac
	if [ -n "$why" ]; then skipped+=("$t: $why"); echo "soak: skipping $t: $why" >&2
	else tools+=("$t"); fi
done
[ ${#tools[@]} -gt 0 ] || lfn_die "no tool to run"
TOOLS_RUN=$(IFS=,; echo "${tools[*]}")
SKIPPED=$(printf '%s; ' "${skipped[@]}"); SKIPPED=${SKIPPED%; }

# keys for PuTTY and rclone (foreign-client's layout); without Dropbear's
# converter foreign-client keys stops early: what psftp and rclone need
FC_DIR=$T/fc
if ! regress-bench/lib/foreign-client keys "$FC_DIR" "$T/id_ed25519" "$T/host_ed25519.pub" 2>/dev/null; then
	mkdir -p "$FC_DIR"
	cp "$T/id_ed25519" "$FC_DIR/id_ed25519"
	ssh-keygen -lf "$T/host_ed25519.pub" | awk '{print $2}' > "$FC_DIR/hostkey.fp"
	awk '{print $1, $2}' "$T/host_ed25519.pub" > "$FC_DIR/hostkey.pub"
	have puttygen && puttygen "$T/id_ed25519" -O private -o "$FC_DIR/id.ppk" 2>/dev/null
fi

echo "soak: generating the data set (SEED $SEED, $SIZES)"
"$PY" "$SOAKPY" gen "$T/data" "$SEED" "$SIZES" > /dev/null || lfn_die "data generation failed"
ver() { "$@" 2>&1 | head -1; }
{
	echo "date: $(date -u +%FT%TZ)"
	echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
	echo "load before: $(cat /proc/loadavg)"
	echo "clients $CLIENTS, duration $DURATION s, kill fraction $KILL_FRACTION, seed $SEED, servers $SERVERS"
	echo "tools: $TOOLS_RUN${SKIPPED:+ (skipped: $SKIPPED)}"
	echo "data: $(tr '\n' ' ' < "$T/data/manifest.tsv")"
	echo "client OpenSSH ($CLIENT_TREE): $(ver "$CLIENT_TREE/ssh" -V)"
	echo "lfn sshd ($LFN_TREE): $(ver "$LFN_TREE/ssh" -V)"
	echo "stock sshd ($STOCK_TREE): $(ver "$STOCK_TREE/ssh" -V)"
	echo "checkout: $(git describe --always --dirty 2>/dev/null || echo '?')"
	# which build ran (a tree may be rebuilt between two soaks)
	for b in "$LFN_TREE"/{sshd,sshd-session,sftp-server} "$STOCK_TREE"/{sshd,sshd-session,sftp-server} \
	    "$CLIENT_TREE"/{ssh,scp,sftp}; do
		[ -f "$b" ] && echo "  $b $(date -u -r "$b" +%FT%TZ) sha256 $(sha256sum < "$b" | cut -c1-16)"
	done
	have rclone && echo "rclone: $(ver rclone version)"
	have psftp && echo "psftp: $(ver psftp -V)"
	have sshfs && echo "sshfs: $(sshfs --version 2>&1 | tr '\n' ' ')"
} | tee "$OUT/machine.txt"
printf 'server\tslot\ttool\tdirection\tbytes\tseconds\toutcome\tseq\tstart_s\tfile\trc\tnote\n' > "$OUT/results.tsv"
printf 'server\tphase\tt_s\trole\tcount\tsum_kb\tmax_kb\tmedian_kb\n' > "$OUT/rss.tsv"

# stop_pids PID...: those and everything below them, then forget them
stop_pids() {
	local p below keep=()
	below=$(lfn_descendants "$@")
	for p in "$@" $below; do kill "$p" 2>/dev/null; done
	for p in "$@"; do wait "$p" 2>/dev/null; done
	for p in "${LFN_PIDS[@]}"; do [[ " $* " == *" $p "* ]] || keep+=("$p"); done
	LFN_PIDS=("${keep[@]}")
}

for server in $SERVERS; do
	case $server in lfn) tree=$LFN_TREE ;; stock) tree=$STOCK_TREE ;; *) lfn_die "unknown server $server" ;; esac
	tree=$(cd "$tree" && pwd) || lfn_die "no tree for $server"
	[ -x "$tree/sshd" ] || lfn_die "no $tree/sshd (build first: make)"
	rm -rf "$T/srv" "$T/cli" "$T/err" "$T/batch" "$T/mnt"	# every server starts from nothing
	port=$(lfn_free_port) || lfn_die "no free port"
	cfg="$T/sshd_config.$server" log="$T/sshd.$server.log"
	lfn_sshd_config "$tree" "$port" > "$cfg" <<-CFG
	PermitUserEnvironment HOME
	MaxStartups $((2 * CLIENTS + 10))
	PerSourcePenalties no
	CFG
	"$LFN_TOP/regress-bench/lib/privsep-ensure" "$tree" || lfn_die "no privsep user for $tree/sshd"
	"$tree/sshd" -t -f "$cfg" || lfn_die "sshd -t rejected $cfg"
	: > "$log"; rm -f "$T/sshd.$server.pid"
	# lfn_sshd_start's runner, with the sshd below soak.py's subreaper
	_lfn_sshd_run "sshd ($tree)" "$port" "$log" "" "$PY" "$SOAKPY" reaper "$T/sshd.$server.pid" \
	    "$tree/sshd" -D -e -f "$cfg"
	wrapper=$SSHD_RUN_PID
	listener=$(cat "$T/sshd.$server.pid") || lfn_die "no sshd PID"
	# rclone's known_hosts for this port, before 50 clients race to write it
	echo "[127.0.0.1]:$port $(cat "$FC_DIR/hostkey.pub")" > "$FC_DIR/known_hosts.127.0.0.1.$port"
	echo "soak: $server sshd (pid $listener, port $port): $CLIENTS clients for $DURATION s  [load $(cut -d' ' -f1-3 /proc/loadavg)]"
	"$PY" "$SOAKPY" run --server "$server" --tree "$tree" --client-tree "$CLIENT_TREE" --port "$port" \
	    --listener "$listener" --wrapper "$wrapper" --T "$T" --out "$OUT" --clients "$CLIENTS" \
	    --duration "$DURATION" --kill-fraction "$KILL_FRACTION" --seed "$SEED" --tools "$TOOLS_RUN" \
	    --skipped "$SKIPPED" --rss-interval "$RSS_INTERVAL" --grace "$GRACE" \
	    --copy-timeout "$COPY_TIMEOUT" --stagger "$STAGGER" &
	DRIVER=$!
	wait "$DRIVER"; rc=$?; DRIVER=""
	[ "$rc" = 0 ] || lfn_die "the soak driver failed ($rc) against $server"
	stop_pids "$wrapper"
	cp "$log" "$OUT/logs/"
	awk -F'\t' -v s="$server" '$1 == s { n[$7]++ } END { for (o in n) printf " %s %d", o, n[o]; print "" }' \
	    "$OUT/results.tsv" | sed "s/^/soak: $server copies:/"
done
echo "load after: $(cat /proc/loadavg)" | tee -a "$OUT/machine.txt"
"$PY" "$SOAKPY" report "$OUT"; exit $?
