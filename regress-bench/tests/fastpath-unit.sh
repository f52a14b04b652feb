#!/usr/bin/env bash
# fastpath-unit: unit tests for the 03xx fast paths, built against the
# tree's objects (regress-bench/unit/fastpath-*.c).
#  - fastpath-chachapoly: chacha20-poly1305@openssh.com on libcrypto's
#    Poly1305 (patch 0301) vs RFC 8439 vectors and upstream's chacha.c +
#    poly1305.c on random packets.
#  - fastpath-split: cipher_crypt_split() (held patch 0310: channel data
#    encrypted from where it lies) byte-identical to cipher_crypt() for
#    every cipher, CBC refused; only where the tree has that patch.
#  - fastpath-umac: UMAC-64 with the AVX2 NH (patch 0307) against the
#    portable NH and RFC 4418's test vectors.
#  - window-queue: sshbuf_allocate_queue() (patch 0203: a channel's output
#    buffer under a grown window) appends in amortised O(1) copies with a
#    lagging consumer, stays within the window when the consumer stops,
#    keeps every byte in order and still enforces max_size.
# Patches: 0203 0301 0307
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/unit.sh"
trap lfn_cleanup EXIT
lfn_env_init fastpath-unit
lfn_unit_init

units=fastpath-chachapoly
grep -q cipher_crypt_split "$LFN_TREE/cipher.h" && units="$units fastpath-split"
grep -q nh_aux_avx2 "$LFN_TREE/umac.c" && units="$units fastpath-umac"
grep -q sshbuf_allocate_queue "$LFN_TREE/sshbuf.h" && units="$units window-queue"
for t in $units; do
	tid "unit: $t"
	if ! lfn_unit_build "$t"; then
		cat "$T/$t.build.log"
		fail "$t did not build"
		continue
	fi
	"$T/$t" > "$T/$t.log" 2>&1 || { cat "$T/$t.log"; fail "$t failed"; continue; }
	verbose "$(tail -2 "$T/$t.log" | tr '\n' ' ')"
done
lfn_finish
