/*
 * fastpath-umac: unit test for openssh-lfn patch 0307 (UMAC-64's
 * NH hash with AVX2).
 *
 * Built by regress-bench/tests/fastpath-unit.sh against a built tree.  The
 * tree's umac_*() (libssh.a: AVX2 NH where the CPU has it) is compared with
 * a reference built here from the same umac.c with UMAC_NH_GENERIC (the
 * portable NH only), under other names: same key and nonce, messages of
 * every length 0..2100 and a few large ones (256 KiB, 1 MiB + 3) fed in one
 * piece and in random pieces, 64-bit tags must be identical.  Also the
 * RFC 4418 appendix test vectors for UMAC-64 ("abcdefghijklmnop" key,
 * "bcdefghi" nonce) on both.
 */
#include "includes.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umac.h"

/* the reference: the portable NH, every external symbol renamed */
#define UMAC_NH_GENERIC
#define umac_new	ref_umac_new
#define umac_update	ref_umac_update
#define umac_final	ref_umac_final
#define umac_delete	ref_umac_delete
#define umac_ctx	ref_umac_ctx
#include "umac.c"
#undef umac_new
#undef umac_update
#undef umac_final
#undef umac_delete
#undef umac_ctx

#include "unit-check.h"

static void
tag_pair(const u_char key[16], const u_char nonce[8], const u_char *m,
    size_t len, int pieces, u_char tag[8], u_char ref[8])
{
	struct umac_ctx *a = umac_new(key);
	struct ref_umac_ctx *b = ref_umac_new(key);
	size_t off = 0, n;

	if (a == NULL || b == NULL)
		abort();
	while (off < len) {
		n = pieces ? 1 + arc4random_uniform(len - off < 5000 ?
		    (u_int32_t)(len - off) : 5000) : len - off;
		umac_update(a, m + off, n);
		off += n;
	}
	ref_umac_update(b, m, len);
	umac_final(a, tag, nonce);
	ref_umac_final(b, ref, nonce);
	umac_delete(a);
	ref_umac_delete(b);
}

int
main(void)
{
	static const u_char rkey[16] = "abcdefghijklmnop";
	static const u_char rnonce[8] = "bcdefghi";
	/* RFC 4418 appendix: UMAC-64 of "", 'a' x 3, 'a' x 2^10 */
	static const struct { size_t len; const char *hex; } rfc[] = {
		{ 0, "6e155fad26900be1" },
		{ 3, "44b5cb542f220104" },
		{ 1024, "26bf2f5d60118bd9" },
	};
	u_char key[16], nonce[8], tag[8], ref[8], *m, want[8];
	size_t len, i, j, maxlen = (1 << 20) + 3;
	static const size_t big[] = { 32768, 32768 + 13, 262144, (1 << 20) + 3 };

	if ((m = malloc(maxlen)) == NULL)
		abort();
	for (i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		memset(m, 'a', rfc[i].len);
		for (j = 0; j < 8; j++)
			sscanf(rfc[i].hex + 2 * j, "%2hhx", &want[j]);
		tag_pair(rkey, rnonce, m, rfc[i].len, 0, tag, ref);
		CHECK(memcmp(tag, want, 8) == 0,
		    "RFC 4418 vector %zu (len %zu): tree's UMAC-64 wrong", i,
		    rfc[i].len);
		CHECK(memcmp(ref, want, 8) == 0,
		    "RFC 4418 vector %zu (len %zu): reference UMAC-64 wrong", i,
		    rfc[i].len);
	}
	for (len = 0; len <= 2100; len++) {
		arc4random_buf(key, sizeof(key));
		arc4random_buf(nonce, sizeof(nonce));
		arc4random_buf(m, len);
		tag_pair(key, nonce, m, len, len & 1, tag, ref);
		CHECK(memcmp(tag, ref, 8) == 0, "len %zu: tags differ", len);
	}
	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		arc4random_buf(key, sizeof(key));
		arc4random_buf(nonce, sizeof(nonce));
		arc4random_buf(m, big[i]);
		for (j = 0; j < 2; j++) {
			tag_pair(key, nonce, m, big[i], (int)j, tag, ref);
			CHECK(memcmp(tag, ref, 8) == 0,
			    "len %zu pieces %zu: tags differ", big[i], j);
		}
	}
	free(m);
	printf("AVX2 %s; fastpath-umac: %d checks, %d failures\n",
	    __builtin_cpu_supports("avx2") ? "present" : "absent",
	    checks, failures);
	return failures != 0;
}
