# wanemu-lib.sh - shared by wanemu-up, wanemu-down and wanemu-stats.
# Source it; it defines functions and variables prefixed wl_ / WL_.
#
# A link called TAG consists of:
#   namespaces  lfn-TAG-a (198.18.0.1) and lfn-TAG-b (198.18.0.2)
#   a wanemu process joining them, whose state lives in $WL_ROOT/TAG/:
#     pid         pidfile written by wanemu once it forwards
#     stats.json  counters (rewritten on SIGUSR1 and at exit)
#     wanemu.log  wanemu's stderr
#     link.env    shell variables describing the link (for scripts)

WL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WL_ROOT=${WANEMU_STATE_DIR:-/run/lfn-wanemu}
WL_ADDR_A=198.18.0.1
WL_ADDR_B=198.18.0.2
WL_ADDR6_A=2001:2::1
WL_ADDR6_B=2001:2::2

wl_die() {
	echo "${WL_PROG:-wanemu}: error: $*" >&2
	exit 1
}

wl_note() {
	[ -n "${WL_QUIET:-}" ] || echo "${WL_PROG:-wanemu}: $*" >&2
}

wl_need_root() {
	[ "$(id -u)" = 0 ] || wl_die "must run as root (network namespaces, TUN devices)"
	command -v ip >/dev/null || wl_die "'ip' (iproute2) not found"
}

# wl_check_tag TAG: sets WL_TAG, WL_NS_A, WL_NS_B, WL_STATE and paths.
wl_check_tag() {
	local tag=$1

	[ -n "$tag" ] || wl_die "missing -n TAG"
	[[ $tag =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$ ]] ||
		wl_die "bad TAG '$tag' (1-40 characters: letters, digits, '_', '.', '-')"
	WL_TAG=$tag
	WL_NS_A=lfn-$tag-a
	WL_NS_B=lfn-$tag-b
	WL_STATE=$WL_ROOT/$tag
	WL_PIDFILE=$WL_STATE/pid
	WL_STATS=$WL_STATE/stats.json
	WL_LOG=$WL_STATE/wanemu.log
	WL_ENV=$WL_STATE/link.env
}

# Build wanemu and wanperf if needed; several scripts may do this at once.
wl_build() {
	mkdir -p "$WL_ROOT"
	if ! flock "$WL_ROOT/.build.lock" make -s -C "$WL_DIR" >&2; then
		wl_die "building wanemu failed (make -C $WL_DIR)"
	fi
}

# Serialise operations on one TAG (file descriptor 9 holds the lock).
wl_lock() {
	mkdir -p "$WL_ROOT"
	exec 9>"$WL_ROOT/.$WL_TAG.lock"
	flock -w 60 9 || wl_die "timed out waiting for the lock on link '$WL_TAG'"
}

wl_ns_exists() {
	[ -e "/run/netns/$1" ]
}

# wl_pid_alive PID: true if the process exists and is not a zombie.
wl_pid_alive() {
	local stat

	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	case ${stat%% *} in
	Z|X|x) return 1 ;;
	esac
	return 0
}

# wl_is_our_wanemu PID: true if PID is a live wanemu for this TAG's link.
wl_is_our_wanemu() {
	local pid=$1 exe arg
	local -a args

	[[ $pid =~ ^[0-9]+$ ]] || return 1
	wl_pid_alive "$pid" || return 1
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
	exe=${exe% (deleted)}
	[ "${exe##*/}" = wanemu ] || return 1
	mapfile -d '' args 2>/dev/null <"/proc/$pid/cmdline" || return 1
	for arg in "${args[@]}"; do
		[ "$arg" = "$WL_NS_A" ] && return 0
	done
	return 1
}

# Print the PID from the pidfile if it is our wanemu.
wl_our_pid() {
	local pid=

	[ -r "$WL_PIDFILE" ] || return 1
	read -r pid 2>/dev/null <"$WL_PIDFILE" || true
	wl_is_our_wanemu "$pid" || return 1
	echo "$pid"
}

# wl_stop_pid PID: SIGTERM, wait for the exit (stats are written then),
# SIGKILL as a last resort.  Only ever called for a verified wanemu.
wl_stop_pid() {
	local pid=$1 i

	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 1 100); do
		wl_pid_alive "$pid" || return 0
		sleep 0.1
	done
	echo "${WL_PROG:-wanemu}: warning: wanemu $pid did not stop in 10 s; killing it" >&2
	kill -KILL "$pid" 2>/dev/null || true
	for i in $(seq 1 50); do
		wl_pid_alive "$pid" || return 0
		sleep 0.1
	done
	return 1
}

# Tear the link down: our wanemu, then our two namespaces.  Idempotent.
# Prints nothing; returns 0 if anything existed, 1 if nothing did.
wl_teardown() {
	local pid found=1 ns left

	if pid=$(wl_our_pid); then
		wl_stop_pid "$pid" || echo "${WL_PROG:-wanemu}: warning: wanemu $pid is still alive" >&2
		found=0
	elif [ -e "$WL_PIDFILE" ]; then
		echo "${WL_PROG:-wanemu}: note: stale pidfile $WL_PIDFILE (no wanemu for '$WL_TAG' running); not killing anything" >&2
	fi
	rm -f "$WL_PIDFILE"
	for ns in "$WL_NS_A" "$WL_NS_B"; do
		wl_ns_exists "$ns" || continue
		found=0
		left=$(ip netns pids "$ns" 2>/dev/null) || true
		left=${left//$'\n'/ }
		[ -z "$left" ] ||
			echo "${WL_PROG:-wanemu}: warning: processes still in $ns: $left (they keep it alive; stop them)" >&2
		ip netns del "$ns" 2>/dev/null ||
			echo "${WL_PROG:-wanemu}: warning: could not delete namespace $ns" >&2
	done
	return $found
}

# wl_json_get FILE PATH: print a value from a JSON file (see wanperf jget).
wl_json_get() {
	"$WL_DIR/wanperf" jget "$1" "$2"
}
