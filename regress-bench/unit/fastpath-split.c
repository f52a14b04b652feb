/*
 * fastpath-split: unit test for openssh-lfn held patch 0310 (channel data
 * encrypted from the channel buffer: cipher_crypt_split()).
 *
 * Built by regress-bench/tests/fastpath-unit.sh against a built tree.
 *
 * For every cipher the tree offers, two encrypting contexts are set up
 * with the same key and IV; one encrypts packets whole with cipher_crypt(),
 * the other the same packets as head || body || tail with
 * cipher_crypt_split(), split at random points (including empty body and
 * tail, head == the additional data only).  Output, tag included, must be
 * byte-identical packet after packet (so per-packet IV/counter state stays
 * in step), for lengths 8 .. 256 KiB and sequence numbers including 0 and
 * 2^32-1.  Ciphers that cannot run in pieces (CBC) must say so through
 * cipher_can_split() and refuse cipher_crypt_split(); decrypting contexts
 * refuse too.
 */
#include "includes.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sshbuf.h"
#include "ssherr.h"
#include "cipher.h"

#include "unit-check.h"

static u_int32_t
rnd(void)
{
	return arc4random();
}

static void
one_cipher(const char *name)
{
	const struct sshcipher *c = cipher_by_name(name);
	struct sshcipher_ctx *whole = NULL, *split = NULL, *dec = NULL;
	u_char key[64], iv[32], *src, *d1, *d2;
	u_int keylen, ivlen, bs, authlen, aadlen, n, len, hl, bl, tl;
	u_int seqnr;
	int r, expect_split;
	size_t maxlen = 256 * 1024 + 64;
	static const u_int lens[] = { 8, 16, 32, 48, 64, 256, 1024, 4096,
	    16384, 32768, 32768 + 16, 65536, 131072, 262144 };

	if (c == NULL) {
		printf("%s: not in this build, skipped\n", name);
		return;
	}
	keylen = cipher_keylen(c);
	ivlen = cipher_ivlen(c);
	bs = cipher_blocksize(c);
	authlen = cipher_authlen(c);
	arc4random_buf(key, sizeof(key));
	arc4random_buf(iv, sizeof(iv));
	if ((r = cipher_init(&whole, c, key, keylen, iv, ivlen,
	    CIPHER_ENCRYPT)) != 0 ||
	    (r = cipher_init(&split, c, key, keylen, iv, ivlen,
	    CIPHER_ENCRYPT)) != 0 ||
	    (r = cipher_init(&dec, c, key, keylen, iv, ivlen,
	    CIPHER_DECRYPT)) != 0) {
		CHECK(0, "%s: cipher_init: %s", name, ssh_err(r));
		return;
	}
	expect_split = strstr(name, "-cbc") == NULL;
	CHECK(cipher_can_split(split) == expect_split,
	    "%s: cipher_can_split() = %d", name, cipher_can_split(split));
	CHECK(!cipher_can_split(dec), "%s: decrypting context can split", name);
	src = malloc(maxlen);
	d1 = malloc(maxlen + 64);
	d2 = malloc(maxlen + 64);
	if (src == NULL || d1 == NULL || d2 == NULL)
		abort();
	if (!expect_split) {
		arc4random_buf(src, 64);
		r = cipher_crypt_split(split, 0, d2, src, 4, src + 4, 28,
		    src + 32, 32, 0, authlen);
		CHECK(r != 0, "%s: cipher_crypt_split() accepted", name);
		goto done;
	}
	seqnr = 0;
	for (n = 0; n < 400; n++) {
		/* AEAD and EtM packets carry 4 bytes of additional data */
		aadlen = (authlen || (n & 1)) ? 4 : 0;
		len = lens[n % (sizeof(lens) / sizeof(lens[0]))];
		if (n >= 200)
			len = bs * (1 + rnd() % (32768 / bs));
		/* the encrypted part is a multiple of the block size */
		len -= len % bs;
		arc4random_buf(src, aadlen + len);
		/* split: head >= aadlen; body and tail may be empty */
		hl = aadlen + (n % 3 == 0 ? 0 : rnd() % (len + 1));
		if (hl > aadlen + len)
			hl = aadlen + len;
		bl = rnd() % (aadlen + len - hl + 1);
		tl = aadlen + len - hl - bl;
		if (n == 7) {		/* header, 32 KiB body, padding */
			hl = aadlen + (len > 14 ? 14 - aadlen : 0);
			tl = len > 64 ? 9 : 0;
			bl = aadlen + len - hl - tl;
		}
		memset(d1, 0xa5, aadlen + len + authlen);
		memset(d2, 0x5a, aadlen + len + authlen);
		r = cipher_crypt(whole, seqnr, d1, src, len, aadlen, authlen);
		CHECK(r == 0, "%s: cipher_crypt: %s", name, ssh_err(r));
		r = cipher_crypt_split(split, seqnr, d2, src, hl, src + hl, bl,
		    src + hl + bl, tl, aadlen, authlen);
		CHECK(r == 0, "%s: cipher_crypt_split: %s", name, ssh_err(r));
		CHECK(memcmp(d1, d2, aadlen + len + authlen) == 0,
		    "%s: packet %u (len %u aad %u split %u/%u/%u seqnr %u) "
		    "differs", name, n, len, aadlen, hl, bl, tl, seqnr);
		/* and what was sent decrypts (AEAD: the tag verifies) */
		if (authlen) {
			r = cipher_crypt(dec, seqnr, d1, d2, len, aadlen,
			    authlen);
			CHECK(r == 0 && memcmp(d1 + aadlen, src + aadlen,
			    len) == 0, "%s: packet %u does not decrypt: %s",
			    name, n, ssh_err(r));
		}
		/* chacha20-poly1305 keys by seqnr: cover its extremes */
		seqnr = n == 10 ? 0xffffffffU : seqnr + 1 + rnd() % 3;
	}
 done:
	free(src);
	free(d1);
	free(d2);
	cipher_free(whole);
	cipher_free(split);
	cipher_free(dec);
	printf("%s: ok\n", name);
}

int
main(void)
{
	char *list, *cp, *name;

	list = cipher_alg_list(',', 0);
	if (list == NULL)
		abort();
	for (cp = list; (name = strsep(&cp, ",")) != NULL;) {
		if (*name != '\0')
			one_cipher(name);
	}
	/* not in the list (internal), but openssh-lfn sends data with it */
	one_cipher("none");
	free(list);
	printf("fastpath-split: %d checks, %d failures\n", checks, failures);
	return failures != 0;
}
