# regress-bench/lib/none.sh — helpers for the none-cipher tests (sourced
# after sshenv.sh, bash).
# shellcheck shell=bash

# none_tamper PORT FLIP_AT [ssh options...]: download $T/data from the sshd
# on PORT with -v -oNoneEnabled=yes through lib/flip-relay.py, which flips
# one byte of the server->client stream at offset FLIP_AT (after the switch
# to cipher none, in the middle of the data).  The client's log is $T/err,
# what it wrote $T/out.  Checks (fail) that the relay flipped a byte, the
# client had switched to none, the connection failed with a MAC error and
# only an intact prefix of $T/data was written; sets TAMPER_BYTES to the
# number of bytes written.
none_tamper() {
	local port=$1 flip_at=$2 rp rpid rc; shift 2
	rp=$(lfn_free_port)
	python3 "$LFN_TOP/regress-bench/lib/flip-relay.py" "$rp" "$port" "$flip_at" > "$T/relay.log" 2>&1 &
	rpid=$!; LFN_PIDS+=("$rpid")
	for _ in $(seq 50); do grep -q listening "$T/relay.log" && break; sleep 0.1; done
	rm -f "$T/out"
	lfn_ssh "$LFN_TREE" "$rp" -v -oNoneEnabled=yes "$@" lfnpeer "cat $T/data" > "$T/out" 2> "$T/err"
	rc=$?
	wait "$rpid" 2>/dev/null
	grep -q flipped "$T/relay.log" || fail "relay did not flip a byte"
	grep -q 'kex: client->server cipher: none' "$T/err" || fail "no switch to none before the flip"
	[ $rc -ne 0 ] || fail "connection succeeded despite a flipped byte"
	grep -Eiq 'corrupted MAC|message authentication code incorrect' "$T/err" ||
		fail "no MAC error: $(tail -n 3 "$T/err")"
	TAMPER_BYTES=$(stat -c %s "$T/out")
	cmp -s -n "$TAMPER_BYTES" "$T/data" "$T/out" || fail "corrupted data written before the MAC error"
}
