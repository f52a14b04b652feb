/*
 * channel_fuzz: a hostile peer's CHANNEL_* messages against one session
 * channel with receive-window autotuning (patches 0201-0204; 0309's bulk reads on
 * the send side).  README.md describes the input format.
 *
 * The channel is opened the way ssh opens a session (channel_new +
 * channel_send_open, so the window RTT fallback is the open round trip),
 * its local ends are pipes the harness feeds (producer) and drains
 * (consumer), and the connection is a plaintext packet state whose input
 * the harness frames and whose output it parses: the opened window, the
 * WINDOW_ADJUSTs and the data the channel sends (a keyed post-auth state,
 * fuzz_packet.h: packets go out at once, as after authentication).  Time is the harness's
 * (monotime is wrapped), so window growth is reproducible.
 *
 * Invariants: no sanitizer report;
 *  - the channel's receive window never exceeds its maximum (after an
 *    overrun: FUZZ_STRICT=1 only, see check_window()), and with a peer
 *    that respects the window it equals the peer's view (what we
 *    advertised minus what the peer sent);
 *  - the maximum grows only for an autotuned channel, never beyond the
 *    cap; a fixed (tty-sized) channel keeps it;
 *  - what waits for the consumer stays within the window plus the 10 %
 *    grace and one packet (after an overrun: FUZZ_STRICT=1 only);
 *  - the consumer receives exactly the accepted data, in order;
 *  - the channel never sends more than the peer's window or maxpacket,
 *    and sends exactly what the producer wrote, in order;
 *  - FUZZ_STRICT=1: a fatal() because a channel buffer is full (the known
 *    finding: an overrun of a full 128 MiB window) is a finding too.
 */
#include "fuzz_common.h"

#include <sys/uio.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_packet.h"
#include "channels.h"
#include "dispatch.h"

/* the harness's clock (-Wl,--wrap=monotime,--wrap=monotime_double) */
static double fake_now = 1000.0;
double __wrap_monotime_double(void) { return fake_now; }
time_t __wrap_monotime(void) { return (time_t)fake_now; }

struct seg {
	uint64_t off;
	size_t len;
};

struct cf {
	struct ssh *ssh;
	struct ssh *peer;	/* decodes what ssh sends */
	struct fuzz_tx tx;	/* encrypts what the peer sends */
	int id;			/* our channel */
	int in_w, out_r;	/* producer's and consumer's pipe ends */
	int fixed;		/* opened with a window that must not grow */
	u_int cap, start_max;
	int opened;		/* OPEN_CONFIRMATION sent */
	u_int remote_id;
	/* peer's view of our receive window */
	uint64_t advertised, peer_sent;
	int overran;		/* peer ignored the window at least once */
	/* consumer: accepted data not yet drained */
	struct seg *segs;
	size_t nsegs, asegs, seg_head;
	uint64_t data_off;	/* filler offset of the next peer data */
	/* our send side */
	uint64_t rwin_granted, we_sent;
	u_int rmaxpacket;
	int send_unknown;	/* a raw message may have set them */
	uint64_t produced, recv_off;
	int eof_sent, close_sent;
	struct sshbuf *pkt;
	int dead;
};

static Channel *
chan(struct cf *cf)
{
	return cf->id < 0 ? NULL : channel_by_id(cf->ssh, cf->id);
}

static void
check_window(struct cf *cf)
{
	Channel *c = chan(cf);
	size_t queued;

	if (c == NULL || c->type != SSH_CHANNEL_OPEN)
		return;
	/*
	 * After an overrun within the 10 % grace, the consumer's draining
	 * credits the excess back (upstream's accounting since 9.6): the
	 * window then exceeds its maximum, and repeated overruns let it drift
	 * further (a known finding): checked with FUZZ_STRICT=1.
	 */
	FUZZ_INVARIANT((cf->overran && !fuzz_strict()) ||
	    c->local_window <= c->local_window_max,
	    "window %u > max %u%s", c->local_window, c->local_window_max,
	    cf->overran ? " after an overrun (credited back)" : "");
	if (cf->fixed)
		FUZZ_INVARIANT(c->local_window_max == cf->start_max,
		    "fixed window changed %u -> %u", cf->start_max,
		    c->local_window_max);
	else
		FUZZ_INVARIANT(c->local_window_max <= MAXIMUM(cf->cap,
		    cf->start_max), "window max %u beyond cap %u",
		    c->local_window_max, cf->cap);
	if (!cf->overran && c->ostate == CHAN_OUTPUT_OPEN &&
	    !(c->flags & (CHAN_CLOSE_SENT|CHAN_CLOSE_RCVD)))
		FUZZ_INVARIANT(cf->advertised - cf->peer_sent ==
		    (uint64_t)c->local_window,
		    "peer may send %llu, channel expects %u",
		    (unsigned long long)(cf->advertised - cf->peer_sent),
		    c->local_window);
	queued = sshbuf_len(c->output);
	FUZZ_INVARIANT((cf->overran && !fuzz_strict()) ||
	    queued <= (size_t)c->local_window_max +
	    c->local_window_max / 10 + c->local_maxpacket,
	    "%zu bytes queued for the consumer, window %u", queued,
	    c->local_window_max);
}

/* the peer sends one packet */
static void
deliver(struct cf *cf, const u_char *payload, size_t plen)
{
	u_char *enc;
	size_t enclen;
	int r;

	fuzz_tx_frame(&cf->tx, payload, plen, 0, -1, 0, &enc, &enclen);
	r = ssh_packet_process_incoming(cf->ssh, (const char *)enc, enclen);
	free(enc);
	if (r != 0) {
		cf->dead = 1;
		return;
	}
	if ((r = ssh_dispatch_run(cf->ssh, DISPATCH_NONBLOCK, NULL)) != 0)
		cf->dead = 1;
	check_window(cf);
}

static void
seg_add(struct cf *cf, uint64_t off, size_t len)
{
	if (cf->nsegs == cf->asegs) {
		cf->asegs = cf->asegs ? cf->asegs * 2 : 64;
		if ((cf->segs = realloc(cf->segs,
		    cf->asegs * sizeof(*cf->segs))) == NULL)
			abort();
	}
	cf->segs[cf->nsegs].off = off;
	cf->segs[cf->nsegs++].len = len;
}

/*
 * What the peer sends is built here, not in malloc'ed memory: a fatal()
 * longjmps out of deliver() and would leak it.
 */
static u_char msgbuf[128 * 1024];

/* the peer sends len bytes of channel data (type 94, or 95 if ext) */
static void
peer_data(struct cf *cf, size_t len, int ext)
{
	Channel *c = chan(cf);
	u_char *m = msgbuf;
	size_t hl = ext ? 13 : 9;
	int accepted;

	if (hl + len > sizeof(msgbuf))
		len = sizeof(msgbuf) - hl;
	m[0] = ext ? SSH2_MSG_CHANNEL_EXTENDED_DATA : SSH2_MSG_CHANNEL_DATA;
	POKE_U32(m + 1, cf->id);
	if (ext) {
		POKE_U32(m + 5, SSH2_EXTENDED_DATA_STDERR);
		POKE_U32(m + 9, len);
	} else
		POKE_U32(m + 5, len);
	fuzz_fill(m + hl, len, cf->data_off, 1);
	/* would the channel keep it for the consumer? (else it drops it) */
	accepted = !ext && c != NULL && c->type == SSH_CHANNEL_OPEN &&
	    c->ostate == CHAN_OUTPUT_OPEN && len <= c->local_maxpacket;
	if (c != NULL && c->type == SSH_CHANNEL_OPEN &&
	    !ext &&
	    (len <= c->local_maxpacket || c->ostate != CHAN_OUTPUT_OPEN)) {
		if (cf->peer_sent + len > cf->advertised)
			cf->overran = 1;
		cf->peer_sent += len;
	}
	if (accepted && len > 0)
		seg_add(cf, cf->data_off, len);
	cf->data_off += len;
	deliver(cf, m, hl + len);
}

static void
peer_msg(struct cf *cf, u_char type, const u_char *body, size_t blen)
{
	u_char *m = msgbuf;

	if (1 + blen > sizeof(msgbuf))
		abort();
	m[0] = type;
	if (blen)
		memcpy(m + 1, body, blen);
	deliver(cf, m, 1 + blen);
}

/* decode and check what the connection sent */
static void
parse_output(struct cf *cf)
{
	struct sshbuf *out = ssh_packet_get_output(cf->ssh);
	const u_char *p, *d;
	u_char type, *pkt = NULL;
	uint32_t v, chan, seq;
	size_t len;
	uint64_t plen;
	int r;

	if (sshbuf_len(out) == 0)
		return;
	r = ssh_packet_process_incoming(cf->peer, (const char *)sshbuf_ptr(out),
	    sshbuf_len(out));
	FUZZ_INVARIANT(r == 0, "peer input: %s", ssh_err(r));
	sshbuf_reset(out);
	for (;;) {
		r = ssh_packet_read_poll2(cf->peer, &type, &seq);
		FUZZ_INVARIANT(r == 0, "what the channel sent does not decode: "
		    "%s", ssh_err(r));
		if (type == SSH_MSG_NONE)
			break;
		/* d: the payload with its type byte, as before */
		p = sshpkt_ptr(cf->peer, &len);
		free(pkt);
		if ((pkt = malloc(len + 1)) == NULL)
			abort();
		pkt[0] = type;
		memcpy(pkt + 1, p, len);
		d = pkt;
		len++;
		switch (type) {
		case SSH2_MSG_CHANNEL_OPEN:
			/* string type, u32 id, u32 window, u32 maxpacket */
			FUZZ_INVARIANT(len >= 17, "short CHANNEL_OPEN");
			v = PEEK_U32(d + 1);
			FUZZ_INVARIANT(len >= 5 + v + 12, "short CHANNEL_OPEN");
			cf->advertised = PEEK_U32(d + 5 + v + 4);
			break;
		case SSH2_MSG_CHANNEL_WINDOW_ADJUST:
			FUZZ_INVARIANT(len == 9, "WINDOW_ADJUST length %zu", len);
			chan = PEEK_U32(d + 1);
			v = PEEK_U32(d + 5);
			FUZZ_INVARIANT(chan == cf->remote_id,
			    "adjust for channel %u", chan);
			cf->advertised += v;
			FUZZ_INVARIANT(cf->overran ||
			    cf->advertised - cf->peer_sent <=
			    (uint64_t)CHAN_WINDOW_CAP_MAX + CHAN_SES_WINDOW_DEFAULT,
			    "window advertised %llu",
			    (unsigned long long)(cf->advertised - cf->peer_sent));
			break;
		case SSH2_MSG_CHANNEL_DATA:
			FUZZ_INVARIANT(len >= 9, "short CHANNEL_DATA");
			plen = PEEK_U32(d + 5);
			FUZZ_INVARIANT(len == 9 + plen, "CHANNEL_DATA length");
			FUZZ_INVARIANT(!cf->eof_sent && !cf->close_sent,
			    "data after EOF/CLOSE");
			FUZZ_INVARIANT(cf->send_unknown ||
			    plen <= cf->rmaxpacket,
			    "sent %llu > peer's maxpacket %u",
			    (unsigned long long)plen, cf->rmaxpacket);
			cf->we_sent += plen;
			FUZZ_INVARIANT(cf->send_unknown ||
			    cf->we_sent <= cf->rwin_granted,
			    "sent %llu bytes, peer granted %llu",
			    (unsigned long long)cf->we_sent,
			    (unsigned long long)cf->rwin_granted);
			FUZZ_INVARIANT(fuzz_fill_cmp(d + 9, plen, cf->recv_off,
			    0) == 0, "sent data differs (offset %llu)",
			    (unsigned long long)cf->recv_off);
			cf->recv_off += plen;
			break;
		case SSH2_MSG_CHANNEL_EOF:
			cf->eof_sent = 1;
			break;
		case SSH2_MSG_CHANNEL_CLOSE:
			cf->close_sent = 1;
			break;
		}
	}
	free(pkt);
}

/* one round of the channel loop: poll the pipes, read/write, send */
static void
step(struct cf *cf)
{
	static struct pollfd *pfd;
	static u_int npfd_alloc;
	u_int npfd_active = 0;
	struct timespec ts = { 0, 0 };

	channel_prepare_poll(cf->ssh, &pfd, &npfd_alloc, &npfd_active, 0, &ts);
	if (npfd_active > 0 && poll(pfd, npfd_active, 0) < 0)
		abort();
	channel_after_poll(cf->ssh, pfd, npfd_active);
	channel_output_poll(cf->ssh);
	parse_output(cf);
	check_window(cf);
}

/* the consumer reads up to max bytes and checks them */
static size_t
drain(struct cf *cf, size_t max)
{
	u_char buf[64 * 1024];
	size_t got = 0, i, k, want;
	ssize_t n;
	struct seg *s;

	while (got < max) {
		want = MINIMUM(sizeof(buf), max - got);
		if ((n = read(cf->out_r, buf, want)) <= 0)
			break;
		for (i = 0; i < (size_t)n; i += k) {
			FUZZ_INVARIANT(cf->seg_head < cf->nsegs,
			    "consumer got more than the peer sent");
			s = &cf->segs[cf->seg_head];
			k = MINIMUM(s->len, (size_t)n - i);
			FUZZ_INVARIANT(fuzz_fill_cmp(buf + i, k, s->off, 1) == 0,
			    "consumer data differs");
			s->off += k;
			if ((s->len -= k) == 0)
				cf->seg_head++;
		}
		got += n;
	}
	return got;
}

static void
produce(struct cf *cf, size_t len)
{
	u_char buf[16 * 1024];
	size_t n;
	ssize_t w;

	while (len > 0) {
		n = MINIMUM(len, sizeof(buf));
		fuzz_fill(buf, n, cf->produced, 0);
		if ((w = write(cf->in_w, buf, n)) <= 0)
			return;
		cf->produced += w;
		len -= w;
	}
}

/* a peer that fills the window each RTT while the consumer keeps up */
static void
bulk(struct cf *cf, u_int rounds, double rtt)
{
	Channel *c;
	size_t n, room, budget;
	u_int i;
	int k;

	for (i = 0; i < rounds && !cf->dead; i++) {
		/* one RTT: what the window allowed at its start */
		budget = cf->advertised > cf->peer_sent ?
		    cf->advertised - cf->peer_sent : 0;
		while ((c = chan(cf)) != NULL && !cf->dead && budget > 0 &&
		    cf->advertised > cf->peer_sent &&
		    c->ostate == CHAN_OUTPUT_OPEN) {
			room = cf->advertised - cf->peer_sent;
			n = MINIMUM(MINIMUM(room, budget), c->local_maxpacket);
			budget -= n;
			peer_data(cf, n, 0);
			/* (step() may free the channel: look it up again) */
			for (k = 0; k < 64 && (c = chan(cf)) != NULL &&
			    sshbuf_len(c->output) >= 512 * 1024; k++) {
				step(cf);
				drain(cf, SIZE_MAX);
			}
		}
		fake_now += rtt;
		for (k = 0; k < 64 && chan(cf) != NULL; k++) {
			step(cf);
			if (drain(cf, SIZE_MAX) == 0 && ((c = chan(cf)) == NULL ||
			    sshbuf_len(c->output) == 0))
				break;
		}
		step(cf);
	}
}

static void
set_nonblock_pipe(int fds[2], int size)
{
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
#ifdef F_SETPIPE_SZ
	fcntl(fds[0], F_SETPIPE_SZ, size);
#endif
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size, 0 };
	struct cf cf;
	Channel *c;
	int inp[2], outp[2], r;
	u_char body[512], op, hdr;
	const u_char *d;
	size_t n, len;
	uint32_t v;
	double rtt = 0.05;
	const struct sshcipher *cipher;

	fuzz_log_init();
	memset(&cf, 0, sizeof(cf));
	cf.id = -1;
	fake_now = 1000.0;
	fuzz_last_fatal[0] = '\0';
	hdr = fin_u8(&in);
	if ((cipher = cipher_by_name("aes128-gcm@openssh.com")) == NULL)
		abort();
	cf.ssh = fuzz_make_state("aes128-gcm@openssh.com", cipher, 0);
	cf.peer = fuzz_make_state("aes128-gcm@openssh.com", cipher, 0);
	fuzz_tx_init(&cf.tx, cipher);
	channel_init_channels(cf.ssh);
	/* cap: 2 MiB << 0..7 (off below 4 MiB), or 0 (HPNDisabled) */
	cf.cap = (hdr & 0x40) ? 0 : (2U * 1024 * 1024) << (hdr & 7);
	channel_set_window_autotune(cf.ssh, cf.cap, 0);
	cf.cap = MINIMUM(cf.cap, CHAN_WINDOW_CAP_MAX);
	ssh_dispatch_init(cf.ssh, &dispatch_protocol_ignore);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_OPEN_CONFIRMATION,
	    &channel_input_open_confirmation);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_OPEN_FAILURE,
	    &channel_input_open_failure);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_WINDOW_ADJUST,
	    &channel_input_window_adjust);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_DATA, &channel_input_data);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_EXTENDED_DATA,
	    &channel_input_extended_data);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_EOF, &channel_input_ieof);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_CLOSE, &channel_input_oclose);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_SUCCESS,
	    &channel_input_status_confirm);
	ssh_dispatch_set(cf.ssh, SSH2_MSG_CHANNEL_FAILURE,
	    &channel_input_status_confirm);
	if (pipe(inp) != 0 || pipe(outp) != 0)
		abort();
	set_nonblock_pipe(inp, 1024 * 1024);
	set_nonblock_pipe(outp, 1024 * 1024);
	cf.in_w = inp[1];
	cf.out_r = outp[0];
	/* a session as ssh opens one: no tty (autotuned) or tty (fixed) */
	cf.fixed = (hdr & 0x80) != 0 || cf.cap <= CHAN_SES_WINDOW_DEFAULT;
	c = channel_new(cf.ssh, "session", SSH_CHANNEL_OPENING, inp[0], outp[1],
	    -1, (hdr & 0x80) ? CHAN_SES_WINDOW_DEFAULT / 2 :
	    CHAN_SES_WINDOW_DEFAULT, CHAN_SES_PACKET_DEFAULT,
	    CHAN_EXTENDED_IGNORE, "fuzz", CHANNEL_NONBLOCK_SET);
	cf.id = c->self;
	cf.start_max = c->local_window_max;

	if (setjmp(fuzz_jmp) != 0) {
		/* fatal(): the connection ended */
		FUZZ_INVARIANT(!fuzz_strict() ||
		    strstr(fuzz_last_fatal, "append data") == NULL,
		    "fatal: %s (known finding: overrun of a full window)",
		    fuzz_last_fatal);
		goto done;
	}
	fuzz_jmp_armed = 1;
	channel_send_open(cf.ssh, cf.id);
	parse_output(&cf);

	while (fin_more(&in) && !cf.dead &&
	    cf.data_off < 512ULL * 1024 * 1024) {	/* time per input */
		op = fin_u8(&in);
		switch (op & 0x0f) {
		case 0:		/* data within the window (or not: bit 4) */
		case 1:		/* extended data */
			len = (op & 0x20) ? fin_u16(&in) :
			    (op & 0x40) ? CHAN_SES_PACKET_DEFAULT : fin_u8(&in);
			if (!(op & 0x10)) {
				uint64_t room = cf.advertised > cf.peer_sent ?
				    cf.advertised - cf.peer_sent : 0;
				len = MINIMUM(len, room);
				if (len == 0)
					break;
			}
			peer_data(&cf, len, op & 1);
			break;
		case 2:		/* WINDOW_ADJUST for our send side */
			v = (op & 0x10) ? fin_u32(&in) : fin_u16(&in) << (op >> 5);
			POKE_U32(body, cf.id);
			POKE_U32(body + 4, v);
			if ((c = chan(&cf)) != NULL &&
			    c->type == SSH_CHANNEL_OPEN &&
			    (uint64_t)c->remote_window + v <= 0xffffffffULL)
				cf.rwin_granted += v;
			peer_msg(&cf, SSH2_MSG_CHANNEL_WINDOW_ADJUST, body, 8);
			break;
		case 3:
			POKE_U32(body, cf.id);
			peer_msg(&cf, SSH2_MSG_CHANNEL_EOF, body, 4);
			break;
		case 4:
			POKE_U32(body, cf.id);
			peer_msg(&cf, SSH2_MSG_CHANNEL_CLOSE, body, 4);
			break;
		case 5:		/* OPEN_CONFIRMATION (or FAILURE) */
			fake_now += (op >> 4) * 0.01;
			rtt = (op >> 4) * 0.01;
			POKE_U32(body, cf.id);
			if (op & 0x08) {
				POKE_U32(body + 4, 2);
				POKE_U32(body + 8, 0);	/* "" */
				POKE_U32(body + 12, 0);	/* "" */
				peer_msg(&cf, SSH2_MSG_CHANNEL_OPEN_FAILURE,
				    body, 16);
				break;
			}
			cf.remote_id = fin_u16(&in);
			v = fin_u32(&in);
			POKE_U32(body + 4, cf.remote_id);
			POKE_U32(body + 8, v);
			POKE_U32(body + 12, fin_u16(&in) + 1);
			if ((c = chan(&cf)) != NULL &&
			    c->type == SSH_CHANNEL_OPENING) {
				cf.rwin_granted = v;
				cf.rmaxpacket = PEEK_U32(body + 12);
				cf.opened = 1;
			}
			peer_msg(&cf, SSH2_MSG_CHANNEL_OPEN_CONFIRMATION,
			    body, 16);
			break;
		case 6:		/* the consumer reads */
			step(&cf);
			drain(&cf, (size_t)fin_u8(&in) * 4096 +
			    ((op & 0x10) ? SIZE_MAX / 2 : 0));
			step(&cf);
			break;
		case 7:
			step(&cf);
			break;
		case 8:		/* time passes */
			fake_now += (double)fin_u16(&in) /
			    ((op & 0x10) ? 1e6 : 1e3);
			break;
		case 9:		/* the producer writes */
			produce(&cf, (size_t)fin_u16(&in) << ((op >> 4) & 7));
			step(&cf);
			break;
		case 10:	/* any message, the fuzzer's bytes */
			len = fin_u8(&in);
			d = fin_bytes(&in, len, &n);
			POKE_U32(body, (op & 0x10) ? fin_u32(&in) : cf.id);
			memcpy(body + 4, d, n);
			if ((c = chan(&cf)) != NULL && !(op & 0x20))
				cf.overran = 1;	/* unknown effect */
			/*
			 * A raw OPEN_CONFIRMATION that opens the channel sets
			 * its send window and maxpacket: take them as the
			 * channel does (exactly: remote id, window, maxpacket).
			 * A raw WINDOW_ADJUST adds to the window in ways
			 * (overflow checks) not modelled: stop checking it.
			 */
			if (c != NULL && (op >> 5) % 11 == 1 &&
			    PEEK_U32(body) == (u_int)cf.id &&
			    n == 12 && c->type == SSH_CHANNEL_OPENING) {
				cf.remote_id = PEEK_U32(d);
				cf.rwin_granted = PEEK_U32(d + 4);
				cf.rmaxpacket = PEEK_U32(d + 8);
				cf.opened = 1;
			} else if (c != NULL && (op >> 5) % 11 == 3)
				cf.send_unknown = 1;
			peer_msg(&cf, 90 + ((op >> 5) % 11), body, 4 + n);
			break;
		case 11:	/* bulk: fill the window each RTT, 1-8 rounds */
			bulk(&cf, 1 + fin_u8(&in) % 8, rtt > 0 ? rtt : 0.05);
			break;
		case 12:	/* the consumer stops; the peer fills the window */
			len = cf.advertised > cf.peer_sent ?
			    cf.advertised - cf.peer_sent : 0;
			while ((c = chan(&cf)) != NULL && !cf.dead &&
			    c->ostate == CHAN_OUTPUT_OPEN && len > 0) {
				n = MINIMUM(len, c->local_maxpacket);
				len -= n;
				peer_data(&cf, n, 0);
			}
			break;
		default:
			step(&cf);
			break;
		}
	}
	step(&cf);
 done:
	fuzz_jmp_armed = 0;
	(void)r;
	channel_free_channels(cf.ssh);
	ssh_packet_free(cf.ssh);
	ssh_packet_free(cf.peer);
	fuzz_tx_free(&cf.tx);
	close(cf.in_w);
	close(cf.out_r);
	free(cf.segs);
	return 0;
}
