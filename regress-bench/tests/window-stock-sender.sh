#!/usr/bin/env bash
# window-stock-sender: 0215 grants a sender that is not openssh-lfn at most
# a 15 MiB window (a stock sender's 16 MiB read-ahead buffer must never
# fill: each read would then memmove the whole backlog), while an
# openssh-lfn sender on the same sshd keeps growing past it.  On an emulated
# 1 Gbit/s x 200 ms link (BDP 25 MB, so both would grow beyond 15 MiB),
# read from sshd's log ("receive window A -> B"), no timing.
# Needs: 0215, 0901 (the " lfn" banner that identifies our own sender).
# Patches: 0215 0901
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/ssh" ] || { echo "stock build missing: skipped"; exit 77; }
CAP=15728640
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-stock-sender
lfn_wan_link ws$$ 200 1gbit
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
port=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "PermitUserEnvironment HOME"
head -c 268435456 /dev/zero > "$T/data"
# largest window sshd granted in the log lines after line $1
maxwin() { tail -n +"$1" "$SSHD_LOG" | sed -n 's/.*receive window [0-9]* -> \([0-9]*\) .*/\1/p' | sort -n | tail -1; }

tid "stock 10.5p1 sender: window grows, but to 15 MiB at most"
n=$(($(wc -l < "$SSHD_LOG") + 1))
lfn_ssh "$STOCK_TREE" -n "$NA" -h "$ADDR" "$port" lfnpeer "cat > /dev/null" < "$T/data" || fail "stock upload failed"
sleep 0.5; w=$(maxwin "$n"); verbose "stock sender: window up to ${w:-none}"
[ -n "$w" ] && [ "$w" -gt 2097152 ] || fail "window did not grow for the stock sender"
[ -n "$w" ] && [ "$w" -le "$CAP" ] || fail "stock sender granted $w > $CAP"

tid "openssh-lfn sender: window grows past 15 MiB"
n=$(($(wc -l < "$SSHD_LOG") + 1))
lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" lfnpeer "cat > /dev/null" < "$T/data" || fail "lfn upload failed"
sleep 0.5; w=$(maxwin "$n"); verbose "lfn sender: window up to ${w:-none}"
[ -n "$w" ] && [ "$w" -gt "$CAP" ] || fail "lfn sender's window stayed at ${w:-none}"

lfn_finish
