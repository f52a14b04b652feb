#!/usr/bin/env bash
# window-stock-sender: a sender that is not openssh-lfn gets the same
# window growth as openssh-lfn's own (0202, 0230): on an emulated
# 1 Gbit/s x 200 ms link (BDP 25 MB) sshd grants a stock 10.5p1 sender a
# window past 16 MiB, its channel buffer's limit.  0215 capped such
# senders at 15 MiB, for a memmove of the sender's backlog that 0230's
# BDP bound no longer lets happen; the cap cost them 92 -> 64 MB/s
# (doc/bench/window-cap-stock-senders-ab-2026-12-06) and was withdrawn.
# Read from sshd's log ("receive window A -> B"), no timing.
# Patches: 0202 0230
. "$(dirname "$0")/../lib/sshenv.sh"
[ -x "$STOCK_TREE/ssh" ] || lfn_die "stock build missing ($STOCK_TREE): run make"
CAP=15728640
trap 'lfn_cleanup; lfn_wan_cleanup' EXIT
lfn_env_init window-stock-sender
lfn_wan_link ws$$ 200 1gbit
mkdir -p "$T/home"; sed -i "s#^#environment=\"HOME=$T/home\" #" "$T/authorized_keys"
port=$(lfn_free_port); lfn_sshd_start "$LFN_TREE" "$port" "$NB" <<< "PermitUserEnvironment HOME"
head -c 268435456 /dev/zero > "$T/data"
# largest window sshd granted in the log lines after line $1
maxwin() { tail -n +"$1" "$SSHD_LOG" | sed -n 's/.*receive window [0-9]* -> \([0-9]*\) .*/\1/p' | sort -n | tail -1; }

tid "stock 10.5p1 sender: window grows past 15 MiB"
n=$(($(wc -l < "$SSHD_LOG") + 1))
lfn_ssh "$STOCK_TREE" -n "$NA" -h "$ADDR" "$port" lfnpeer "cat > /dev/null" < "$T/data" || fail "stock upload failed"
sleep 0.5; w=$(maxwin "$n"); verbose "stock sender: window up to ${w:-none}"
[ -n "$w" ] && [ "$w" -gt "$CAP" ] || fail "stock sender's window stayed at ${w:-none}"

tid "openssh-lfn sender: window grows past 15 MiB"
n=$(($(wc -l < "$SSHD_LOG") + 1))
lfn_ssh "$LFN_TREE" -n "$NA" -h "$ADDR" "$port" lfnpeer "cat > /dev/null" < "$T/data" || fail "lfn upload failed"
sleep 0.5; w=$(maxwin "$n"); verbose "lfn sender: window up to ${w:-none}"
[ -n "$w" ] && [ "$w" -gt "$CAP" ] || fail "lfn sender's window stayed at ${w:-none}"

lfn_finish
