#!/usr/bin/env bash
# window-budget-client: ChannelWindowBudget bounds the client too (patch
# 0231; window-budget.sh checks sshd-session).  The ssh client is the
# receiver here: on an emulated 1 Gbit/s x 50 ms link, one ControlMaster
# connection (MaxChannelWindow 16M: each channel alone would grow to
# ~12.5 MB, twice its BDP; ChannelWindowBudget 8M) carries, opened one
# after the other so that each has the link to itself and its window
# would grow, NSES downloads through the mux (ssh -S ctl lfnpeer 'cat
# data' into a pipe) and NFWD -R forwarded connections (sshd's side sends,
# the client's local target reads), each local consumer stalling after
# STALL bytes with the channel still open.  Checked from the master's own
# -vv log, per channel, the largest window it granted ("window W sent
# adjust A": W + A, the most the server may have outstanding, so the most
# the client can buffer for it) and grew to ("receive window A -> B"):
# their sums stay <= budget + channels x 2 MiB (the stated per-channel
# slack: every channel opens with upstream's initial window, only growth
# comes from the budget), the log shows the budget exhausted (so the
# bound was tested, not merely unreached), and the master's VmRSS stays
# within 1.5 x that (the queue's allocation policy) + slack.  Without
# the budget (the series before 0231: ssh rejects the option, measured
# without it) each stalled window keeps its ~12.5 MB.  Then the consumers
# resume: every transfer completes byte-identical (the budget does not
# deadlock), and once all those channels closed their growth is back: a
# new download's window grows again.  No timing assertions (the sleeps
# only let each channel ramp alone and its stalled window fill).
# Patches: 0231
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/window.sh"

trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-budget-client
lfn_wan_link wbc$$ 50 1gbit

MIB=1048576
BUDGET=$((8 * MIB))
INIT=$((2 * MIB))
NSES=6
NFWD=4
NCH=$((NSES + NFWD))
SIZE=$((40 * MIB))	# per transfer; more than STALL + the largest window
STALL=$((24 * MIB))	# each consumer reads this much, then stalls
SLACK=$((16 * MIB))	# RSS beyond the windows: packet buffers, reads, malloc
dd if=/dev/urandom of="$T/data" bs=1M count=$((SIZE / MIB)) status=none
port=$(lfn_free_port)
rport=$(( port + 1 )); tport=$(( port + 2 ))

lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<EOF
MaxChannelWindow 16M
MaxSessions 40
EOF

tid "ssh accepts ChannelWindowBudget"
opts=(-o MaxChannelWindow=16M -o ChannelWindowBudget=8M)
g=$("$LFN_TREE/ssh" -G -F /dev/null "${opts[@]}" x 2>&1 | grep -i '^channelwindowbudget ' | tr A-Z a-z)
if [ "$g" != "channelwindowbudget 8388608" ]; then
	fail "ssh -G: '$g' (measuring without the budget)"
	opts=(-o MaxChannelWindow=16M)
fi

# The -R forwards' local target (client namespace): connection i (in
# accept order) is written to fwd.i; after STALL bytes it stops reading
# until the file "go" exists, then reads to EOF.  The source (sshd's
# namespace): one connection sending the data file, then EOF.
cat > "$T/fwd.py" <<'EOF'
import os, socket, sys, threading, time
mode, port, T = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "sink":
    stall = int(sys.argv[4])
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(64)
    def serve(c, i):
        n = 0
        with open("%s/fwd.%d" % (T, i), "wb", buffering=0) as f:
            while True:
                if n >= stall:
                    while not os.path.exists(T + "/go"):
                        time.sleep(0.2)
                b = c.recv(min(1 << 20, stall - n) if n < stall else 1 << 20)
                if not b:
                    break
                f.write(b); n += len(b)
        c.close()
    print("listening", flush=True)
    i = 0
    while True:
        c, _ = s.accept(); i += 1
        threading.Thread(target=serve, args=(c, i), daemon=True).start()
else:
    c = socket.create_connection(("127.0.0.1", port))
    with open(T + "/data", "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b: break
            c.sendall(b)
    c.shutdown(socket.SHUT_WR)
    while c.recv(65536): pass
EOF
ip netns exec "$NA" python3 "$T/fwd.py" sink "$tport" "$T" "$STALL" > "$T/sink.out" 2>&1 &
LFN_PIDS+=("$!")
for _ in $(seq 1 50); do grep -q listening "$T/sink.out" && break; sleep 0.1; done

ip netns exec "$NA" "$LFN_TREE/ssh" -vv -F "$T/ssh_config" -p "$port" \
    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -o ControlMaster=yes \
    -o ControlPath="$S/ctl" -o ExitOnForwardFailure=yes "${opts[@]}" -N \
    -R "127.0.0.1:$rport:127.0.0.1:$tport" lfnpeer 2> "$T/master.log" &
MPID=$!
LFN_PIDS+=("$MPID")
for _ in $(seq 1 100); do [ -S "$S/ctl" ] && break; sleep 0.1; done
[ -S "$S/ctl" ] || { tail -20 "$T/master.log"; lfn_die "master did not start"; }
sleep 1
rss() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }
base=$(rss "$MPID")
mux() {
	ip netns exec "$NA" "$LFN_TREE/ssh" -F "$T/ssh_config" -p "$port" \
	    -o HostKeyAlias=lfnpeer -o HostName="$ADDR" -o ControlPath="$S/ctl" \
	    -T lfnpeer "$@"
}
# wait_size FILE N: until FILE holds N bytes (or give up after 60 s)
wait_size() {
	for _ in $(seq 1 300); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

tid "$NSES mux downloads and $NFWD -R forwards, each consumer stalled after $((STALL / MIB)) MiB"
m0=$(wc -l < "$T/master.log")
for i in $(seq 1 $NSES); do
	mux "cat $T/data" < /dev/null 2> "$T/ses.$i.err" |
	    { head -c "$STALL" > "$T/ses.$i"
	      while [ ! -e "$T/go" ]; do sleep 0.2; done
	      cat >> "$T/ses.$i"; } &
	spids[$i]=$!
	LFN_PIDS+=("$!")
	wait_size "$T/ses.$i" "$STALL" || fail "download $i: consumer did not get $STALL bytes"
	sleep 1
done
for i in $(seq 1 $NFWD); do
	ip netns exec "$NB" python3 "$T/fwd.py" source "$rport" "$T" > "$T/src.$i.out" 2>&1 &
	fpids[$i]=$!
	LFN_PIDS+=("$!")
	wait_size "$T/fwd.$i" "$STALL" || fail "forward $i: target did not get $STALL bytes"
	sleep 1
done
sleep 2
r=$(rss "$MPID")
tail -n +"$((m0 + 1))" "$T/master.log" > "$T/stall.log"
# per channel: the largest window granted (W + A of "window W sent adjust A")
granted=$(grep -o 'channel [0-9]*: window [0-9]* sent adjust [0-9]*' "$T/stall.log" |
    awk '{ c = $2; v = $4 + $7; if (v > w[c]) w[c] = v } END { for (c in w) print c, w[c] }' | sort -n)
# per channel: the largest window it grew to (2 MiB if it never grew)
grown=$(grep -o 'channel [0-9]*: receive window [0-9]* -> [0-9]*' "$T/stall.log" |
    awk '{ c = $2; if ($7 > w[c]) w[c] = $7 } END { for (c in w) print c, w[c] }' | sort -n)
nadj=$(echo "$granted" | grep -c .)
ngrown=$(echo "$grown" | grep -c .)
gsum=$(echo "$granted" | awk '{ s += $2 } END { print s + 0 }')
growth=$(echo "$grown" | awk -v i=$INIT '{ s += $2 - i } END { print s + 0 }')
bound=$(( BUDGET + NCH * INIT ))
verbose "granted windows: $(echo "$granted" | awk '{ sub(":", "", $1); printf "ch%s=%s ", $1, $2 }')"
verbose "sum of granted windows $gsum (bound: budget $BUDGET + $NCH x $INIT = $bound)"
verbose "$ngrown of $NCH channels grew, by $growth bytes in all"
[ "$nadj" -ge "$NCH" ] || fail "only $nadj channels granted windows (want $NCH): the test did not run"
[ "$ngrown" -ge 1 ] || fail "no window grew (the test needs growth)"
[ "$gsum" -le "$bound" ] ||
	fail "client granted $gsum > budget + $NCH x 2 MiB = $bound"
[ "$growth" -le "$BUDGET" ] || fail "client windows grew by $growth > budget $BUDGET"
grep -q 'connection budget [0-9]* exhausted' "$T/stall.log" ||
	fail "the client never reported its budget exhausted (bound not reached)"
verbose "master VmRSS $((r / MIB)) MiB (idle $((base / MIB)) MiB)"
[ "$r" -le $(( base + bound * 3 / 2 + SLACK )) ] ||
	fail "master VmRSS $r beyond 1.5 x (budget + $NCH x 2 MiB) + slack"

tid "consumers resume: every transfer completes intact"
touch "$T/go"
for i in $(seq 1 $NSES); do
	wait "${spids[$i]}"
	cmp -s "$T/data" "$T/ses.$i" || fail "download $i: not identical ($(stat -c %s "$T/ses.$i") bytes; $(head -c 200 "$T/ses.$i.err"))"
done
for i in $(seq 1 $NFWD); do
	wait "${fpids[$i]}" || fail "forward source $i failed: $(head -c 200 "$T/src.$i.out")"
	for _ in $(seq 1 100); do
		[ "$(stat -c %s "$T/fwd.$i")" -ge "$SIZE" ] && break; sleep 0.1
	done
	cmp -s "$T/data" "$T/fwd.$i" || fail "forward $i: not identical ($(stat -c %s "$T/fwd.$i") bytes)"
done

tid "closed channels give their growth back"
# the downloads' channels are freed when their mux clients have exited;
# the forwards' when both ends closed: wait until the master says so
for _ in $(seq 1 100); do
	[ "$(grep -c 'channel [0-9]*: free: ' "$T/master.log")" -ge $(( 2 * NSES + NFWD )) ] && break
	sleep 0.2
done
m1=$(wc -l < "$T/master.log")
mux "cat $T/data" < /dev/null > "$T/again" 2> "$T/again.err" || fail "last download failed"
cmp -s "$T/data" "$T/again" || fail "last download corrupted"
tail -n +"$((m1 + 1))" "$T/master.log" > "$T/again.log"
w=$(grew "$T/again.log")
verbose "a new channel's window grew to $w"
[ "$w" -gt "$INIT" ] || fail "a new channel's window did not grow after the others closed"
kill -0 "$MPID" 2>/dev/null || fail "the master exited"

lfn_finish
