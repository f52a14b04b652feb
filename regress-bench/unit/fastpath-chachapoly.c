/*
 * fastpath-chachapoly: unit test for openssh-lfn patch 0301
 * (chacha20-poly1305@openssh.com with libcrypto's Poly1305).
 *
 * Built by regress-bench/tests/fastpath-unit.sh against a built tree:
 *   cc -I$TREE -I$TREE/openbsd-compat fastpath-chachapoly.c \
 *      $TREE/libssh.a $TREE/openbsd-compat/libopenbsd-compat.a $LIBS
 *
 * Checks
 *  - poly1305_auth() (the portable fallback) and, where libcrypto has it,
 *    EVP_MAC "POLY1305" against RFC 8439 section 2.5.2 and appendix A.3;
 *  - chachapoly_crypt() against RFC 8439 appendix A.1/A.4 keystream (an
 *    all-zero key and sequence number 0 make block 0 the Poly1305 key and
 *    block 1 the payload keystream);
 *  - chachapoly_crypt()/chachapoly_get_length() against a reference built
 *    from upstream's chacha.c + poly1305.c (the construction of upstream's
 *    cipher-chachapoly.c) on random packets: lengths 0, 1..300, odd sizes,
 *    32 KiB and 256 KiB, random sequence numbers including 0 and 2^32-1;
 *  - decryption rejects every single-bit flip in a short packet and a
 *    flipped tag byte in a large one, and leaves dest untouched then.
 */
#include "includes.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#if OPENSSL_VERSION_NUMBER >= 0x30000000L && !defined(LIBRESSL_VERSION_NUMBER)
# define HAVE_EVP_MAC_POLY
#endif

#include "sshbuf.h"
#include "ssherr.h"
#include "chacha.h"
#include "poly1305.h"
#include "cipher-chachapoly.h"

#include "unit-check.h"

static size_t
unhex(u_char *out, size_t max, const char *s)
{
	size_t n = 0;
	unsigned int v;

	while (*s) {
		if (*s == ' ' || *s == ':') { s++; continue; }
		if (n >= max || sscanf(s, "%2x", &v) != 1) {
			fprintf(stderr, "bad hex\n");
			exit(2);
		}
		out[n++] = (u_char)v;
		s += 2;
	}
	return n;
}

/* RFC 8439 2.5.2 and A.3 (the vectors that need no long text). */
static const struct {
	const char *key, *msg, *tag;
} polyvec[] = {
	/* 2.5.2 */
	{ "85d6be7857556d337f4452fe42d506a8" "0103808afb0db2fd4abff6af4149f51b",
	  "43727970746f6772617068696320466f" "72756d2052657365617263682047726f" "7570",
	  "a8061dc1305136c6c22b8baf0c0127a9" },
	/* A.3 #1 */
	{ "0000000000000000000000000000000000000000000000000000000000000000",
	  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
	  "00000000000000000000000000000000" },
	/* A.3 #2 (r = 0: the tag is s for any text) */
	{ "00000000000000000000000000000000" "36e5f6b5c5e06070f0efca96227a863e",
	  "416e79207375626d697373696f6e20746f20746865204945544620696e74656e",
	  "36e5f6b5c5e06070f0efca96227a863e" },
	/* A.3 #5 */
	{ "0200000000000000000000000000000000000000000000000000000000000000",
	  "ffffffffffffffffffffffffffffffff",
	  "03000000000000000000000000000000" },
	/* A.3 #6 */
	{ "02000000000000000000000000000000" "ffffffffffffffffffffffffffffffff",
	  "02000000000000000000000000000000",
	  "03000000000000000000000000000000" },
	/* A.3 #7 */
	{ "0100000000000000000000000000000000000000000000000000000000000000",
	  "ffffffffffffffffffffffffffffffff" "f0ffffffffffffffffffffffffffffff" "11000000000000000000000000000000",
	  "05000000000000000000000000000000" },
	/* A.3 #8 */
	{ "0100000000000000000000000000000000000000000000000000000000000000",
	  "ffffffffffffffffffffffffffffffff" "fbfefefefefefefefefefefefefefefe" "01010101010101010101010101010101",
	  "00000000000000000000000000000000" },
	/* A.3 #9 */
	{ "0200000000000000000000000000000000000000000000000000000000000000",
	  "fdffffffffffffffffffffffffffffff",
	  "faffffffffffffffffffffffffffffff" },
	/* A.3 #10 */
	{ "0100000000000000040000000000000000000000000000000000000000000000",
	  "e33594d7505e43b90000000000000000" "3394d7505e4379cd0100000000000000" "00000000000000000000000000000000" "01000000000000000000000000000000",
	  "14000000000000005500000000000000" },
	/* A.3 #11 */
	{ "0100000000000000040000000000000000000000000000000000000000000000",
	  "e33594d7505e43b90000000000000000" "3394d7505e4379cd0100000000000000" "00000000000000000000000000000000",
	  "13000000000000000000000000000000" },
};

#ifdef HAVE_EVP_MAC_POLY
static int
evp_poly(u_char tag[16], const u_char *m, size_t len, const u_char key[32])
{
	EVP_MAC *mac;
	EVP_MAC_CTX *c;
	size_t ol = 0;
	int ok;

	if ((mac = EVP_MAC_fetch(NULL, "POLY1305", NULL)) == NULL)
		return -1;
	c = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac);
	ok = c != NULL && EVP_MAC_init(c, key, 32, NULL) &&
	    EVP_MAC_update(c, m, len) && EVP_MAC_final(c, tag, &ol, 16) &&
	    ol == 16;
	EVP_MAC_CTX_free(c);
	return ok ? 0 : 1;
}
#endif

/* Upstream's cipher-chachapoly.c construction on chacha.c + poly1305.c. */
static void
ref_crypt(const u_char key[64], u_int seqnr, u_char *dest, const u_char *src,
    u_int len, u_int aadlen, int do_encrypt, int *macok)
{
	struct chacha_ctx main_ctx, header_ctx;
	u_char seqbuf[8], one[8] = { 1, 0, 0, 0, 0, 0, 0, 0 };
	u_char poly_key[POLY1305_KEYLEN], tag[POLY1305_TAGLEN];

	chacha_keysetup(&main_ctx, key, 256);
	chacha_keysetup(&header_ctx, key + 32, 256);
	memset(seqbuf, 0, sizeof(seqbuf));
	POKE_U64(seqbuf, seqnr);
	memset(poly_key, 0, sizeof(poly_key));
	chacha_ivsetup(&main_ctx, seqbuf, NULL);
	chacha_encrypt_bytes(&main_ctx, poly_key, poly_key, sizeof(poly_key));
	*macok = 1;
	if (!do_encrypt) {
		poly1305_auth(tag, src, aadlen + len, poly_key);
		*macok = memcmp(tag, src + aadlen + len, sizeof(tag)) == 0;
	}
	chacha_ivsetup(&header_ctx, seqbuf, NULL);
	chacha_encrypt_bytes(&header_ctx, src, dest, aadlen);
	chacha_ivsetup(&main_ctx, seqbuf, one);
	chacha_encrypt_bytes(&main_ctx, src + aadlen, dest + aadlen, len);
	if (do_encrypt)
		poly1305_auth(dest + aadlen + len, dest, aadlen + len, poly_key);
}

static void
fill_random(u_char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (u_char)random();
}

static void
test_poly_vectors(void)
{
	u_char key[32], msg[256], want[16], got[16];
	size_t i, mlen;

	for (i = 0; i < sizeof(polyvec) / sizeof(polyvec[0]); i++) {
		CHECK(unhex(key, sizeof(key), polyvec[i].key) == 32, "key %zu", i);
		mlen = unhex(msg, sizeof(msg), polyvec[i].msg);
		CHECK(unhex(want, sizeof(want), polyvec[i].tag) == 16, "tag %zu", i);
		poly1305_auth(got, msg, mlen, key);
		CHECK(memcmp(got, want, 16) == 0, "poly1305_auth vector %zu", i);
#ifdef HAVE_EVP_MAC_POLY
		CHECK(evp_poly(got, msg, mlen, key) == 0 &&
		    memcmp(got, want, 16) == 0, "EVP_MAC POLY1305 vector %zu", i);
#endif
	}
}

/* RFC 8439 A.1 #1/#2 (= A.4 #1): all-zero key, nonce 0. */
static void
test_chacha_vector(void)
{
	u_char key[64], in[4 + 64 + 16], out[sizeof(in)], back[sizeof(in)];
	u_char blk0[64], blk1[64], tag[16];
	struct chachapoly_ctx *cp;
	u_int plen;

	unhex(blk0, sizeof(blk0),
	    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
	    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586");
	unhex(blk1, sizeof(blk1),
	    "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
	    "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f");
	memset(key, 0, sizeof(key));
	memset(in, 0, sizeof(in));
	cp = chachapoly_new(key, sizeof(key));
	CHECK(cp != NULL, "chachapoly_new");
	if (cp == NULL)
		return;
	CHECK(chachapoly_crypt(cp, 0, out, in, 64, 4, 16, 1) == 0, "encrypt");
	CHECK(memcmp(out, blk0, 4) == 0, "length keystream (A.1 #1)");
	CHECK(memcmp(out + 4, blk1, 64) == 0, "payload keystream (A.1 #2)");
	poly1305_auth(tag, out, 4 + 64, blk0);	/* poly key = A.4 #1 */
	CHECK(memcmp(out + 68, tag, 16) == 0, "tag with the A.4 #1 key");
	CHECK(chachapoly_get_length(cp, &plen, 0, out, 4) == 0 && plen == 0,
	    "get_length");
	CHECK(chachapoly_crypt(cp, 0, back, out, 64, 4, 16, 0) == 0 &&
	    memcmp(back, in, 68) == 0, "decrypt");
	chachapoly_free(cp);
}

static void
test_random(void)
{
	static const u_int fixed[] = { 0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 63,
	    64, 65, 127, 128, 129, 255, 256, 257, 1023, 4095, 4096, 4097,
	    16383, 32767, 32768, 32769, 35000, 65535, 65536, 262143, 262144 };
	static const u_int seqs[] = { 0, 1, 2, 255, 256, 65535, 0x7fffffff,
	    0x80000000, 0xfffffffe, 0xffffffff };
	const u_int maxlen = 262144 + 4 + 16;
	u_char key[64], *in, *out, *ref, *back, rkey[32], t1[16], t2[16];
	struct chachapoly_ctx *enc, *dec;
	u_int i, len, seq, plen;
	int macok, r;

	in = malloc(maxlen); out = malloc(maxlen);
	ref = malloc(maxlen); back = malloc(maxlen);
	if (!in || !out || !ref || !back) { fprintf(stderr, "oom\n"); exit(2); }
	for (i = 0; i < 700; i++) {
		fill_random(key, sizeof(key));
		if (i < sizeof(fixed) / sizeof(fixed[0]))
			len = fixed[i];
		else if (i < 400)
			len = i - sizeof(fixed) / sizeof(fixed[0]);	/* 0.. */
		else
			len = (u_int)random() % 40000;
		seq = i < 10 * 3 ? seqs[i % 10] : (u_int)random();
		fill_random(in, len + 4 + 16);
		/* the SSH transport puts the length in the aad; any 4 bytes do */
		enc = chachapoly_new(key, 64);
		dec = chachapoly_new(key, 64);
		CHECK(enc && dec, "chachapoly_new");
		if (!enc || !dec)
			break;
		r = chachapoly_crypt(enc, seq, out, in, len, 4, 16, 1);
		ref_crypt(key, seq, ref, in, len, 4, 1, &macok);
		CHECK(r == 0 && memcmp(out, ref, len + 4 + 16) == 0,
		    "encrypt differs from reference: len %u seq %u", len, seq);
		CHECK(chachapoly_get_length(dec, &plen, seq, out, 4) == 0 &&
		    plen == (u_int)PEEK_U32(in), "get_length len %u seq %u", len, seq);
		memset(back, 0xa5, len + 4);
		r = chachapoly_crypt(dec, seq, back, out, len, 4, 16, 0);
		CHECK(r == 0 && memcmp(back, in, len + 4) == 0,
		    "decrypt: len %u seq %u r %d", len, seq, r);
		/* reference decrypt of our ciphertext */
		ref_crypt(key, seq, ref, out, len, 4, 0, &macok);
		CHECK(macok && memcmp(ref, in, len + 4) == 0,
		    "reference rejects our packet: len %u", len);
		/* wrong sequence number must fail */
		CHECK(chachapoly_crypt(dec, seq + 1, back, out, len, 4, 16, 0) ==
		    SSH_ERR_MAC_INVALID, "wrong seqnr accepted len %u", len);
		/* corruption: bit flips (all bits for short, some for long) */
		if (len <= 40 || (i % 50) == 0) {
			u_int bit, nbits = (len + 4 + 16) * 8;
			for (bit = 0; bit < nbits;
			    bit += (len <= 40 ? 1 : 997)) {
				out[bit / 8] ^= 1 << (bit % 8);
				memset(back, 0x5a, len + 4);
				r = chachapoly_crypt(dec, seq, back, out, len,
				    4, 16, 0);
				CHECK(r == SSH_ERR_MAC_INVALID,
				    "bit %u flip accepted len %u", bit, len);
				CHECK(back[0] == 0x5a && back[len + 3] == 0x5a,
				    "dest written on bad MAC, len %u", len);
				out[bit / 8] ^= 1 << (bit % 8);
			}
		}
		chachapoly_free(enc);
		chachapoly_free(dec);
		/* raw Poly1305: fallback and libcrypto agree */
		fill_random(rkey, sizeof(rkey));
		poly1305_auth(t1, in, len, rkey);
#ifdef HAVE_EVP_MAC_POLY
		CHECK(evp_poly(t2, in, len, rkey) == 0 && memcmp(t1, t2, 16) == 0,
		    "poly1305_auth vs EVP_MAC len %u", len);
#else
		(void)t2;
#endif
	}
	free(in); free(out); free(ref); free(back);
}

int
main(void)
{
	srandom(0x0301);
	test_poly_vectors();
	test_chacha_vector();
	test_random();
#ifdef HAVE_EVP_MAC_POLY
	printf("libcrypto EVP_MAC POLY1305: %s\n",
	    EVP_MAC_fetch(NULL, "POLY1305", NULL) ? "present" : "absent (fallback)");
#endif
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
