/*
 * openssh-lfn libFuzzer harnesses: a keyed packet state and the peer's side
 * of it (README.md).  ssh_packet_set_state() refuses the "none" cipher, so
 * the states use an AEAD cipher with fixed keys, and the harness encrypts
 * what the peer sends with the same keys.
 */
#ifndef FUZZ_PACKET_H
#define FUZZ_PACKET_H

#include "ssherr.h"
#include "sshbuf.h"
#include "packet.h"
#include "cipher.h"
#include "kex.h"
#include "ssh2.h"
#include "sshkey.h"
#include "misc.h"

/* fixed keys: up to 64 bytes of key, 12 of IV */
static const u_char fkey[64] = "openssh-lfn packet_fuzz key material, not secret, 64 bytes long";
static const u_char fiv[12] = "fuzz iv 12b";

static int
put_newkeys(struct sshbuf *m, const char *name, const struct sshcipher *c,
    int comp)
{
	struct sshbuf *b;
	int r;

	if ((b = sshbuf_new()) == NULL)
		return SSH_ERR_ALLOC_FAIL;
	if ((r = sshbuf_put_cstring(b, name)) != 0 ||
	    (r = sshbuf_put_u32(b, 1)) != 0 ||
	    (r = sshbuf_put_u32(b, cipher_blocksize(c))) != 0 ||
	    (r = sshbuf_put_string(b, fkey, cipher_keylen(c))) != 0 ||
	    (r = sshbuf_put_string(b, fiv, cipher_ivlen(c))) != 0)
		goto out;
	if (cipher_authlen(c) == 0) {
		r = SSH_ERR_INTERNAL_ERROR;	/* AEAD only */
		goto out;
	}
	if ((r = sshbuf_put_u32(b, comp ? COMP_DELAYED : COMP_NONE)) != 0 ||
	    (r = sshbuf_put_cstring(b, comp ? "zlib@openssh.com" : "none")) != 0)
		goto out;
	r = sshbuf_put_stringb(m, b);
 out:
	sshbuf_free(b);
	return r;
}

/*
 * A post-authentication packet state as sshd's privsep child would receive
 * it: cipher name with the fixed keys both ways, zlib@openssh.com if comp.
 */
static struct ssh *
fuzz_make_state(const char *name, const struct sshcipher *c, int comp)
{
	struct ssh *ssh;
	struct sshbuf *m;
	int r;

	if ((ssh = ssh_packet_set_connection(NULL, -1, -1)) == NULL)
		abort();
	if ((m = sshbuf_new()) == NULL)
		abort();
	if ((r = sshbuf_put_u32(m, 64)) != 0 ||		/* we_need */
	    (r = sshbuf_put_cstring(m, "ssh-ed25519")) != 0 ||
	    (r = sshbuf_put_u32(m, KEY_ED25519)) != 0 ||
	    (r = sshbuf_put_u32(m, -1)) != 0 ||		/* nid */
	    (r = sshbuf_put_u32(m, KEX_C25519_SHA256)) != 0 ||
	    (r = sshbuf_put_u32(m, 0)) != 0 ||		/* strict */
	    (r = sshbuf_put_string(m, NULL, 0)) != 0 ||	/* my */
	    (r = sshbuf_put_string(m, NULL, 0)) != 0 ||	/* peer */
	    (r = sshbuf_put_cstring(m, "SSH-2.0-fuzz")) != 0 ||
	    (r = sshbuf_put_cstring(m, "SSH-2.0-fuzz")) != 0 ||
	    (r = sshbuf_put_string(m, "session-id", 10)) != 0 ||
	    (r = sshbuf_put_u32(m, 0)) != 0 ||		/* flags */
	    (r = put_newkeys(m, name, c, comp)) != 0 ||		/* out */
	    (r = put_newkeys(m, name, c, comp)) != 0 ||		/* in */
	    (r = sshbuf_put_u64(m, 0)) != 0 ||		/* rekey_limit */
	    (r = sshbuf_put_u32(m, 0)) != 0 ||		/* rekey_interval */
	    (r = sshbuf_put_u32(m, 0)) != 0 ||		/* p_send */
	    (r = sshbuf_put_u64(m, 0)) != 0 ||
	    (r = sshbuf_put_u32(m, 0)) != 0 ||
	    (r = sshbuf_put_u64(m, 0)) != 0 ||
	    (r = sshbuf_put_u32(m, 0)) != 0 ||		/* p_read */
	    (r = sshbuf_put_u64(m, 0)) != 0 ||
	    (r = sshbuf_put_u32(m, 0)) != 0 ||
	    (r = sshbuf_put_u64(m, 0)) != 0 ||
	    (r = sshbuf_put_string(m, NULL, 0)) != 0 ||	/* input */
	    (r = sshbuf_put_string(m, NULL, 0)) != 0 ||	/* output */
	    (r = sshbuf_put_u32(m, 0)) != 0 ||		/* interactive */
	    (r = sshbuf_put_u32(m, 0xffffffff)) != 0 ||
	    (r = sshbuf_put_u32(m, 0xffffffff)) != 0)
		abort();
	if ((r = ssh_packet_set_state(ssh, m)) != 0) {
		fprintf(stderr, "ssh_packet_set_state: %s\n", ssh_err(r));
		abort();
	}
	sshbuf_free(m);
	return ssh;
}

/* the peer's sending side: frames and encrypts packets like packet.c */
struct fuzz_tx {
	const struct sshcipher *cipher;
	struct sshcipher_ctx *enc;
	u_int seqnr, bs;
};

static void
fuzz_tx_init(struct fuzz_tx *tx, const struct sshcipher *c)
{
	memset(tx, 0, sizeof(*tx));
	tx->cipher = c;
	tx->bs = cipher_blocksize(c);
	if (cipher_init(&tx->enc, c, fkey, cipher_keylen(c),
	    fiv, cipher_ivlen(c), CIPHER_ENCRYPT) != 0)
		abort();
}

static void
fuzz_tx_free(struct fuzz_tx *tx)
{
	cipher_free(tx->enc);
	tx->enc = NULL;
}

/*
 * One binary packet for payload into *out (malloc'ed, *outlen).  extra:
 * more padding blocks; badpad >= 0: that padding length byte instead;
 * flip: corrupt byte (flip - 1) of the encrypted packet.
 */
static void
fuzz_tx_frame(struct fuzz_tx *tx, const u_char *payload, size_t plen,
    u_int extra, int badpad, size_t flip, u_char **out, size_t *outlen)
{
	u_char *pkt, *enc;
	size_t padlen, packlen, total, authlen = cipher_authlen(tx->cipher);

	padlen = tx->bs - ((1 + plen) % tx->bs);
	if (padlen < 4)
		padlen += tx->bs;
	padlen += (extra % 4) * tx->bs;
	if (padlen > 255)
		padlen -= tx->bs * ((padlen - 255 + tx->bs - 1) / tx->bs);
	packlen = 1 + plen + padlen;
	total = 4 + packlen;
	if ((pkt = malloc(total)) == NULL ||
	    (enc = malloc(total + authlen)) == NULL)
		abort();
	POKE_U32(pkt, packlen);
	pkt[4] = badpad >= 0 ? (u_char)badpad : (u_char)padlen;
	if (plen)
		memcpy(pkt + 5, payload, plen);
	memset(pkt + 5 + plen, 0, padlen);
	if (cipher_crypt(tx->enc, tx->seqnr, enc, pkt, packlen, 4,
	    authlen) != 0)
		abort();
	tx->seqnr++;
	if (flip)
		enc[(flip - 1) % (total + authlen)] ^= 0x01 | (flip >> 16);
	free(pkt);
	*out = enc;
	*outlen = total + authlen;
}

#endif /* FUZZ_PACKET_H */
