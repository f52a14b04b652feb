#!/usr/bin/env bash
# fastpath-umac-cpu: patch 0307 chooses the AVX2 NH only where the CPU has
# AVX2 and the OS saves the YMM registers (CPUID OSXSAVE/AVX, XGETBV XCR0
# bits 1|2, CPUID.7 AVX2), checked by umac.c itself rather than trusting
# the toolchain's __builtin_cpu_supports.  The unit
# test regress-bench/unit/umac-cpu.c builds umac.c with XGETBV simulated
# (UMAC_NH_XGETBV): without YMM state the portable NH must be chosen.
# x86-64 only (elsewhere there is no AVX2 NH to choose).
# Patches: 0307
. "$(dirname "$0")/../lib/sshenv.sh"
. "$(dirname "$0")/../lib/unit.sh"
trap lfn_cleanup EXIT
[ "$(uname -m)" = x86_64 ] || { echo "not x86-64: skipped"; exit 77; }
lfn_env_init fastpath-umac-cpu
lfn_unit_init
grep -q nh_aux_avx2 "$LFN_TREE/umac.c" || { echo "no AVX2 NH in this tree: skipped"; exit 77; }

tid "unit: umac-cpu (AVX2 NH only with YMM state)"
if ! lfn_unit_build umac-cpu; then
	head -20 "$T/umac-cpu.build.log"
	fail "umac-cpu did not build (umac.c without its own CPU check?)"
elif ! "$T/umac-cpu" > "$T/run.log" 2>&1; then
	cat "$T/run.log"; fail "umac-cpu failed"
else
	verbose "$(tr '\n' ' ' < "$T/run.log")"
fi
lfn_finish
