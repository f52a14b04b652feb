# packaging/test/lib-nspawn.sh — sourced by systemd-test and apt-repo-test:
# boot a root with systemd-nspawn --boot --private-network (systemd as PID 1,
# only its own loopback) and run commands in it.
#   nspawn_boot ROOT MACHINE LOG [NSPAWN_ARGS...]
#        boot; sets nspawn_pid (systemd-nspawn), leader (the container's
#        PID 1 on the host) and nspawn_state (running|degraded); returns 77
#        with the reason in nspawn_why when nspawn cannot boot here, 1 when
#        systemd does not reach running
#   inct CMD...   run CMD in the booted container (all its namespaces),
#                 clean environment, stdin /dev/null
#   nspawn_stop   power the container off (systemd), wait, kill nspawn if
#                 it is still there (only the nspawn_pid we started)
nspawn_pid="" leader="" nspawn_state="" nspawn_why=""

inct() {
	nsenter -t "$leader" -a /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" </dev/null
}

nspawn_find_leader() {	# the container's PID 1 (systemd): a child or grandchild of nspawn
	local p c
	for p in $(pgrep -P "$nspawn_pid" || true); do
		for c in "$p" $(pgrep -P "$p" || true); do
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" != systemd ] || { echo "$c"; return; }
		done
	done
}

nspawn_boot() {
	local root=$1 machine=$2 nlog=$3
	shift 3
	systemd-nspawn --quiet --boot --private-network --register=no --keep-unit \
		--machine="$machine" -D "$root" "$@" > "$nlog" 2>&1 </dev/null &
	nspawn_pid=$!
	leader="" nspawn_state=""
	for _ in $(seq 1 300); do
		kill -0 "$nspawn_pid" 2>/dev/null || { leader=""; break; }
		[ -n "$leader" ] || leader=$(nspawn_find_leader)
		if [ -n "$leader" ]; then
			nspawn_state=$(inct systemctl is-system-running 2>/dev/null || true)
			case $nspawn_state in running|degraded) break ;; esac
		fi
		sleep 0.2
	done
	if ! kill -0 "$nspawn_pid" 2>/dev/null || [ -z "$leader" ]; then
		nspawn_why=$(grep -v '^$' "$nlog" | tail -5 | tr '\n' ' ')
		nspawn_pid=""
		return 77
	fi
	case $nspawn_state in running|degraded) ;; *) return 1 ;; esac
}

nspawn_stop() {
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		[ -z "$leader" ] || kill -RTMIN+4 "$leader" 2>/dev/null || true	# systemd: poweroff
		for _ in $(seq 1 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
		kill "$nspawn_pid" 2>/dev/null || true
		wait "$nspawn_pid" 2>/dev/null || true
	fi
	nspawn_pid=""
}
