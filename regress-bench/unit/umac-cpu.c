/*
 * umac-cpu: unit test for openssh-lfn patch 0307's run-time choice of the
 * AVX2 NH: AVX2 is used only if the CPU has it
 * *and* the OS saves the YMM registers (CPUID.1 OSXSAVE and AVX, XCR0
 * bits 1 and 2, CPUID.(7,0) AVX2).  umac.c is built here with XGETBV
 * replaced (UMAC_NH_XGETBV) by a function returning a chosen XCR0, so an
 * OS without YMM state can be simulated on any CPU: the portable NH must
 * be chosen, and the MAC must still be right.
 *
 * Built by regress-bench/tests/fastpath-umac-cpu.sh against a built tree.
 */
#include "includes.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umac.h"

static unsigned long long fake_xcr0;
static unsigned long long fake_xgetbv(void) { return fake_xcr0; }

#define UMAC_NH_XGETBV	fake_xgetbv
#define umac_new	t_umac_new
#define umac_update	t_umac_update
#define umac_final	t_umac_final
#define umac_delete	t_umac_delete
#define umac_ctx	t_umac_ctx
#include "umac.c"

#include "unit-check.h"

static void
mac(const u_char *m, size_t len, u_char tag[8])
{
	static const u_char key[16] = "abcdefghijklmnop";
	u_char nonce[8] = "bcdefghi";
	struct umac_ctx *c = umac_new(key);

	umac_update(c, m, len);
	umac_final(c, tag, nonce);
	umac_delete(c);
}

static unsigned long long
real_xgetbv(void)
{
	unsigned int a, b, c, d, lo, hi;

	__cpuid(1, a, b, c, d);
	if ((c & (1U << 27)) == 0)
		return 0;
	__asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long long)hi << 32) | lo;
}

int
main(void)
{
	static u_char m[70000];
	u_char ref[8], tag[8];
	unsigned long long xcr0 = real_xgetbv();
	int cpu_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
	size_t i;

	for (i = 0; i < sizeof(m); i++)
		m[i] = (u_char)(i * 7 + (i >> 8));
	printf("real XCR0 %#llx, CPU+OS AVX2 %d\n", xcr0, cpu_avx2);

	/* An OS that saves x87/SSE state only: no AVX2, whatever the CPU */
	fake_xcr0 = 0x3;
	nh_avx2 = -1;
	mac(m, sizeof(m), ref);
	CHECK(nh_avx2 == 0, "XCR0 0x3 (no YMM state): AVX2 NH chosen");
	fake_xcr0 = 0x5;	/* AVX without SSE state: not usable either */
	CHECK(nh_avx2_usable() == 0, "XCR0 0x5: AVX2 NH usable");
	fake_xcr0 = 0x1;
	CHECK(nh_avx2_usable() == 0, "XCR0 0x1: AVX2 NH usable");

	/* The real XCR0: AVX2 exactly where the CPU and the OS have it */
	fake_xcr0 = xcr0;
	nh_avx2 = -1;
	mac(m, sizeof(m), tag);
	CHECK(nh_avx2 == cpu_avx2, "real XCR0: AVX2 NH %d, CPU+OS %d",
	    nh_avx2, cpu_avx2);
	CHECK(memcmp(ref, tag, 8) == 0, "portable and chosen NH differ");
	/* YMM state on: the choice follows the CPU's AVX2 bit alone */
	fake_xcr0 = 0x7;
	CHECK(nh_avx2_usable() == cpu_avx2 || (xcr0 & 6) != 6,
	    "XCR0 0x7: usable %d, CPU %d", nh_avx2_usable(), cpu_avx2);

	printf("%d checks, %d failures (AVX2 NH on this machine: %s)\n",
	    checks, failures, cpu_avx2 ? "yes" : "no");
	return failures != 0;
}
