/*
 * packet_fuzz: fuzzed packets through a post-authentication packet state
 * with zlib@openssh.com compression on (patches 0303, 0304; 0301 for
 * chacha20-poly1305).  README.md describes the input format.
 *
 * The state comes from ssh_packet_set_state() (what sshd's privsep uses),
 * chacha20-poly1305 or aes128-gcm with fixed keys, delayed compression,
 * after authentication: both directions compress.  The harness encrypts
 * what the fuzzer gives it as the payload of packets (so the payload is
 * the compressed stream the receiver inflates), and the receiver's replies
 * (received packets echoed, bulk data of the fuzzer's length) go through
 * its deflate path and are decoded by a second state: they must arrive
 * unchanged.
 *
 * Invariants: no sanitizer report; a corrupted packet is never accepted;
 * what the receiver sends decodes to exactly what it was asked to send;
 * no packet inflates to more than FUZZ_INFLATE_MAX bytes (the known
 * decompression-bomb finding; default 262144, the series' limit; 0: no
 * limit).
 */
#include "fuzz_common.h"

#include <zlib.h>

#include "fuzz_packet.h"

struct expect {
	u_char type;
	struct sshbuf *data;	/* copy, or NULL: filler */
	uint64_t off;
	size_t len;
	int random;
};

struct pf {
	struct ssh *rx;		/* the state under test */
	struct ssh *peer;	/* decodes rx's output */
	struct fuzz_tx tx;	/* the fuzzer's side: encrypts */
	z_stream zs;		/* the harness's own deflate (op 1) */
	int zs_started;
	struct expect *exp;
	size_t nexp, aexp, exp_done;
	uint64_t fill_off;
	long long inflate_max;
	int rx_dead;
};

static void
exp_add(struct pf *pf, u_char type, const u_char *d, size_t len,
    uint64_t off, int random)
{
	struct expect *e;

	if (pf->nexp == pf->aexp) {
		pf->aexp = pf->aexp ? pf->aexp * 2 : 16;
		if ((pf->exp = realloc(pf->exp, pf->aexp * sizeof(*e))) == NULL)
			abort();
	}
	e = &pf->exp[pf->nexp++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->len = len;
	e->off = off;
	e->random = random;
	if (d != NULL) {
		if ((e->data = sshbuf_new()) == NULL ||
		    sshbuf_put(e->data, d, len) != 0)
			abort();
	}
}

/* move rx's output to the peer and check every packet it decodes */
static void
peer_check(struct pf *pf)
{
	struct sshbuf *out = ssh_packet_get_output(pf->rx);
	const u_char *p;
	struct expect *e;
	u_char type, *want;
	uint32_t seq;
	size_t len;
	int r;

	if (sshbuf_len(out) == 0)
		return;
	r = ssh_packet_process_incoming(pf->peer, (const char *)sshbuf_ptr(out),
	    sshbuf_len(out));
	FUZZ_INVARIANT(r == 0, "peer input: %s", ssh_err(r));
	sshbuf_reset(out);
	for (;;) {
		r = ssh_packet_read_poll2(pf->peer, &type, &seq);
		FUZZ_INVARIANT(r == 0, "the receiver's output does not decode: %s",
		    ssh_err(r));
		if (type == SSH_MSG_NONE)
			break;
		if (type == SSH2_MSG_PONG || type == SSH2_MSG_DISCONNECT)
			continue;	/* rx answered a PING, or gave up */
		FUZZ_INVARIANT(pf->exp_done < pf->nexp,
		    "unexpected packet type %u from the receiver", type);
		e = &pf->exp[pf->exp_done++];
		p = sshpkt_ptr(pf->peer, &len);
		FUZZ_INVARIANT(type == e->type && len == e->len,
		    "sent type %u len %zu, decoded type %u len %zu",
		    e->type, e->len, type, len);
		if (e->data != NULL) {
			FUZZ_INVARIANT(memcmp(p, sshbuf_ptr(e->data), len) == 0,
			    "echoed payload changed (len %zu)", len);
		} else {
			if ((want = malloc(len + 1)) == NULL)
				abort();
			fuzz_fill(want, len, e->off, e->random);
			FUZZ_INVARIANT(memcmp(p, want, len) == 0,
			    "bulk payload changed (len %zu)", len);
			free(want);
		}
	}
}

static void
rx_send(struct pf *pf, u_char type, const u_char *d, size_t len,
    uint64_t off, int random)
{
	u_char *p;
	int r;

	if ((r = sshpkt_start(pf->rx, type)) != 0)
		goto fail;
	if (d != NULL)
		r = sshpkt_put(pf->rx, d, len);
	else {
		if ((p = malloc(len + 1)) == NULL)
			abort();
		fuzz_fill(p, len, off, random);
		r = sshpkt_put(pf->rx, p, len);
		free(p);
	}
	if (r != 0 || (r = sshpkt_send(pf->rx)) != 0)
		goto fail;
	exp_add(pf, type, d, len, off, random);
	return;
 fail:
	FUZZ_INVARIANT(0, "receiver cannot send: %s", ssh_err(r));
}

/* read what rx can; echo non-transport packets back as channel data */
static void
rx_poll(struct pf *pf, int echo)
{
	const u_char *p;
	u_char type;
	uint32_t seq;
	size_t len;
	int r;

	while (!pf->rx_dead) {
		if ((r = ssh_packet_read_poll2(pf->rx, &type, &seq)) != 0) {
			pf->rx_dead = 1;	/* the connection would end */
			return;
		}
		if (type == SSH_MSG_NONE)
			return;
		p = sshpkt_ptr(pf->rx, &len);
		FUZZ_INVARIANT(pf->inflate_max <= 0 ||
		    (long long)len + 1 <= pf->inflate_max,
		    "packet type %u inflated to %zu bytes > FUZZ_INFLATE_MAX %lld "
		    "(known finding: decompression bomb)", type, len + 1,
		    pf->inflate_max);
		/* (a channel's packets are at most 32 KiB; the peer refuses
		 * packets beyond PACKET_MAX_SIZE) */
		if (echo && type >= SSH2_MSG_GLOBAL_REQUEST &&
		    len + 1 <= 32 * 1024) {
			u_char *copy;

			if ((copy = malloc(len + 1)) == NULL)
				abort();
			copy[0] = type;
			memcpy(copy + 1, p, len);
			rx_send(pf, (echo & 1) ? SSH2_MSG_CHANNEL_DATA :
			    SSH2_MSG_IGNORE, copy, len + 1, 0, 0);
			free(copy);
		}
	}
}

/*
 * Frame payload as one binary packet, encrypt it as a peer would and hand
 * it to rx.  extra: more padding blocks; badpad: padding length byte to
 * use instead; flip: corrupt byte (flip - 1) of the encrypted packet.
 */
static void
send_to_rx(struct pf *pf, const u_char *payload, size_t plen, u_int extra,
    int badpad, size_t flip, int echo)
{
	u_char *enc;
	size_t enclen;
	int r;

	fuzz_tx_frame(&pf->tx, payload, plen, extra, badpad, flip, &enc, &enclen);
	if ((r = ssh_packet_process_incoming(pf->rx, (const char *)enc,
	    enclen)) != 0)
		pf->rx_dead = 1;
	free(enc);
	if (flip) {
		u_char type;
		uint32_t seq;

		/* the stream is unusable after this: it must not pass */
		if (!pf->rx_dead) {
			r = ssh_packet_read_poll2(pf->rx, &type, &seq);
			FUZZ_INVARIANT(r != 0 || type == SSH_MSG_NONE,
			    "corrupted packet accepted (type %u)", type);
		}
		pf->rx_dead = 1;
		return;
	}
	rx_poll(pf, echo);
}

/* op 1: compress with the harness's own deflate, so the stream stays valid */
static void
send_deflated(struct pf *pf, const u_char *d, size_t len, u_int repeat,
    int level, u_int extra, int echo)
{
	struct sshbuf *b;
	u_char *p;
	size_t chunk = 16 * 1024;
	u_int i;
	int r, zr;

	if (!pf->zs_started) {
		memset(&pf->zs, 0, sizeof(pf->zs));
		if (deflateInit(&pf->zs, level) != Z_OK)
			abort();
		pf->zs_started = 1;
	} else if (deflateParams(&pf->zs, level, Z_DEFAULT_STRATEGY) != Z_OK)
		return;
	/*
	 * At most 2 MiB of plaintext per packet: inflating more costs seconds
	 * here (sshbuf grows the output 32 KiB at a time, copying it each
	 * time), which would only slow the fuzzing down.
	 */
	if ((uint64_t)len * (repeat + 1) > 2 * 1024 * 1024)
		repeat = 2 * 1024 * 1024 / len - 1;
	if ((b = sshbuf_new()) == NULL)
		abort();
	for (i = 0; i <= repeat; i++) {
		pf->zs.next_in = (u_char *)d;
		pf->zs.avail_in = len;
		do {
			if ((r = sshbuf_reserve(b, chunk, &p)) != 0)
				goto out;	/* a packet this big is refused */
			pf->zs.next_out = p;
			pf->zs.avail_out = chunk;
			zr = deflate(&pf->zs, i == repeat ?
			    Z_SYNC_FLUSH : Z_NO_FLUSH);
			if ((r = sshbuf_consume_end(b, pf->zs.avail_out)) != 0)
				abort();
			if (zr != Z_OK && zr != Z_BUF_ERROR)
				abort();
		} while (pf->zs.avail_out == 0);
	}
	send_to_rx(pf, sshbuf_ptr(b), sshbuf_len(b), extra, -1, 0, echo);
 out:
	sshbuf_free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size, 0 };
	struct pf pf;
	const u_char *d;
	size_t i, n, len, done;
	u_int op, flags;
	int random;
	const char *cname;
	const struct sshcipher *cipher;

	fuzz_log_init();
	memset(&pf, 0, sizeof(pf));
	fuzz_env_int("FUZZ_INFLATE_MAX", 262144, &pf.inflate_max);
	flags = fin_u8(&in);
	cname = (flags & 1) ?
	    "aes128-gcm@openssh.com" : "chacha20-poly1305@openssh.com";
	if ((cipher = cipher_by_name(cname)) == NULL)
		abort();
	fuzz_tx_init(&pf.tx, cipher);
	pf.rx = fuzz_make_state(cname, cipher, 1);
	pf.peer = fuzz_make_state(cname, cipher, 1);

	if (setjmp(fuzz_jmp) != 0)
		goto done;	/* fatal(): the connection ended */
	fuzz_jmp_armed = 1;

	while (fin_more(&in) && !pf.rx_dead) {
		op = fin_u8(&in);
		switch (op & 3) {
		case 0:		/* a packet; the payload is the fuzzer's */
			len = fin_u16(&in);
			d = fin_bytes(&in, len, &n);
			send_to_rx(&pf, d, n, op >> 2,
			    (op & 0x40) ? fin_u8(&in) : -1,
			    (op & 0x80) ? fin_u32(&in) + 1 : 0, (op >> 4) & 3);
			break;
		case 1:		/* the fuzzer's bytes, deflated, maybe repeated */
			len = fin_u8(&in);
			flags = fin_u16(&in);
			d = fin_bytes(&in, len, &n);
			if (n == 0)
				break;
			send_deflated(&pf, d, n,
			    (flags & 0x8000) ? (flags & 0x7fff) * 16 : flags & 0xff,
			    (op >> 2) % 10, op >> 6, (op >> 4) & 3);
			break;
		case 2:		/* bulk data from rx: 0304's adaptive deflate */
			flags = fin_u8(&in);
			len = (size_t)(flags & 0x7f) * 32 * 1024 + fin_u16(&in);
			random = (op >> 2) & 1;
			for (done = 0; done < len; done += n) {
				n = MINIMUM(len - done, 32 * 1024 - (op >> 3));
				rx_send(&pf, (flags & 0x80) ?
				    SSH2_MSG_IGNORE : SSH2_MSG_CHANNEL_DATA,
				    NULL, n, pf.fill_off, random);
				pf.fill_off += n;
				if ((done / n) % 8 == 7)
					peer_check(&pf);
			}
			break;
		case 3:
			peer_check(&pf);
			break;
		}
	}
	peer_check(&pf);
	FUZZ_INVARIANT(pf.exp_done == pf.nexp, "%zu of %zu sent packets "
	    "did not arrive", pf.nexp - pf.exp_done, pf.nexp);
 done:
	fuzz_jmp_armed = 0;
	for (i = 0; i < pf.nexp; i++)
		sshbuf_free(pf.exp[i].data);
	free(pf.exp);
	if (pf.zs_started)
		deflateEnd(&pf.zs);
	fuzz_tx_free(&pf.tx);
	ssh_packet_free(pf.rx);
	ssh_packet_free(pf.peer);
	return 0;
}
