/*
 * packet-buffers: unit test for the kept packet buffers of openssh-lfn
 * patch 0303.
 *
 * Built by regress-bench/tests/packet-memory.sh against a built tree.  It
 * compiles the tree's packet.c into itself (#include) to reach its static
 * functions and the session state; the rest comes from libssh.a.
 *
 * Checks, on a connection without keys (plaintext packets over a
 * socketpair, as before the first key exchange):
 *  - received plaintext is cleared: a USERAUTH_REQUEST carrying a marker
 *    is read and consumed completely by its parser, then a short packet
 *    is read: the marker must be gone from the incoming packet's whole
 *    allocation (upstream's sshbuf_reset() clears it; the old
 *    sshbuf_reset_keep() cleared only the unconsumed part, i.e. nothing);
 *  - the incoming packet keeps its allocation from packet to packet
 *    (upstream's sshbuf_reset() shrank it to 256 bytes);
 *  - channel data is cleared like any other packet: received, from the
 *    incoming packet's allocation once the next packet was read; sent,
 *    from the outgoing packet once it went out;
 *  - a big packet does not pin its allocation: after a 200 KiB packet and
 *    a small one, the incoming buffer is back below 128 KiB.
 * (0306 left channel data in the kept buffers until
 * ssh_packet_clear_kept(), and 0312 took the padding from a per-connection
 * pool; both were withdrawn on 2026-12-06, and their checks with them.)
 */
#define SSHBUF_INTERNAL 1
#include "packet.c"

#include <sys/socket.h>

#include "unit-check.h"

#define MARKER_RX	"SECRET-PASSWORD-MARKER-rx-5f3a9c"
#define MARKER_CH	"SECRET-CHANNEL-DATA-MARKER-b71e02"
#define MARKER_TX	"SECRET-CHANNEL-DATA-MARKER-tx-4d8e"

static int
contains(struct sshbuf *b, const char *marker)
{
	const u_char *p;
	size_t alloc, mlen = strlen(marker), i;

	if (b == NULL)
		return 0;
	/* only called on empty buffers: sshbuf_ptr() is the allocation */
	if (sshbuf_len(b) != 0) {
		fprintf(stderr, "buffer not empty (%zu)\n", sshbuf_len(b));
		return -1;
	}
	p = sshbuf_ptr(b);
	alloc = sshbuf_alloc(b);
	for (i = 0; i + mlen <= alloc; i++)
		if (memcmp(p + i, marker, mlen) == 0)
			return 1;
	return 0;
}

/* Feed one plaintext packet (type, string payload of plen bytes). */
static void
feed(struct ssh *ssh, u_char type, const char *marker, size_t plen)
{
	struct sshbuf *b, *payload;
	size_t padlen;
	int r;

	if ((b = sshbuf_new()) == NULL || (payload = sshbuf_new()) == NULL)
		abort();
	/* payload: type, (channel id,) string of plen bytes ending in marker */
	if ((r = sshbuf_put_u8(payload, type)) != 0)
		abort();
	if (type == SSH2_MSG_CHANNEL_DATA &&
	    (r = sshbuf_put_u32(payload, 0)) != 0)
		abort();
	if ((r = sshbuf_put_u32(payload, plen)) != 0)
		abort();
	if (plen > strlen(marker)) {
		u_char *p;

		if ((r = sshbuf_reserve(payload, plen - strlen(marker),
		    &p)) != 0)
			abort();
		memset(p, 'x', plen - strlen(marker));
	}
	if ((r = sshbuf_put(payload, marker, MINIMUM(plen,
	    strlen(marker)))) != 0)
		abort();
	padlen = 8 - ((4 + 1 + sshbuf_len(payload)) % 8);
	if (padlen < 4)
		padlen += 8;
	if ((r = sshbuf_put_u32(b, 1 + sshbuf_len(payload) + padlen)) != 0 ||
	    (r = sshbuf_put_u8(b, padlen)) != 0 ||
	    (r = sshbuf_putb(b, payload)) != 0 ||
	    (r = sshbuf_reserve(b, padlen, NULL)) != 0)
		abort();
	if ((r = ssh_packet_process_incoming(ssh, sshbuf_ptr(b),
	    sshbuf_len(b))) != 0) {
		fprintf(stderr, "process_incoming: %s\n", ssh_err(r));
		abort();
	}
	sshbuf_free(b);
	sshbuf_free(payload);
}

/* Read one packet and consume it completely, as its handler would. */
static u_char
read_consume(struct ssh *ssh)
{
	u_char type = 0;
	int r;

	if ((r = ssh_packet_read_poll2(ssh, &type, NULL)) != 0) {
		fprintf(stderr, "read_poll2: %s\n", ssh_err(r));
		abort();
	}
	if (type == SSH2_MSG_CHANNEL_DATA && (r = sshpkt_get_u32(ssh,
	    NULL)) != 0)
		abort();
	if ((r = sshpkt_get_string_direct(ssh, NULL, NULL)) != 0 ||
	    (r = sshpkt_get_end(ssh)) != 0) {
		fprintf(stderr, "parse: %s\n", ssh_err(r));
		abort();
	}
	return type;
}

static void
test_receive(struct ssh *ssh)
{
	struct session_state *state = ssh->state;
	int r;

	/* a password, then a short packet that overwrites only its start */
	feed(ssh, SSH2_MSG_USERAUTH_REQUEST, MARKER_RX, 2000);
	CHECK(read_consume(ssh) == SSH2_MSG_USERAUTH_REQUEST, "type");
	feed(ssh, SSH2_MSG_IGNORE, "", 0);
	CHECK(read_consume(ssh) == SSH2_MSG_IGNORE, "type");
	r = contains(state->incoming_packet, MARKER_RX);
	CHECK(r == 0, "a consumed USERAUTH_REQUEST stays in the incoming "
	    "packet's allocation after the next packet was read (%d)", r);
	CHECK(sshbuf_alloc(state->incoming_packet) >= 2000,
	    "the incoming packet shrank to %zu bytes between packets",
	    sshbuf_alloc(state->incoming_packet));

	/* channel data: cleared as any other packet */
	feed(ssh, SSH2_MSG_CHANNEL_DATA, MARKER_CH, 2000);
	CHECK(read_consume(ssh) == SSH2_MSG_CHANNEL_DATA, "type");
	feed(ssh, SSH2_MSG_IGNORE, "", 0);
	CHECK(read_consume(ssh) == SSH2_MSG_IGNORE, "type");
	r = contains(state->incoming_packet, MARKER_CH);
	CHECK(r == 0, "received channel data stays in the incoming "
	    "packet's allocation after the next packet was read (%d)", r);
	r = contains(state->compression_buffer, MARKER_CH);
	CHECK(r == 0, "... in the compression buffer (%d)", r);

	/* a big packet's allocation is released, not kept */
	feed(ssh, SSH2_MSG_IGNORE, "big", 200 * 1024);
	CHECK(read_consume(ssh) == SSH2_MSG_IGNORE, "type");
	CHECK(sshbuf_alloc(state->incoming_packet) >= 200 * 1024,
	    "200 KiB packet in %zu bytes?", sshbuf_alloc(state->incoming_packet));
	feed(ssh, SSH2_MSG_IGNORE, "", 0);
	CHECK(read_consume(ssh) == SSH2_MSG_IGNORE, "type");
	CHECK(sshbuf_alloc(state->incoming_packet) <= 128 * 1024,
	    "the incoming packet keeps %zu bytes after a 200 KiB packet",
	    sshbuf_alloc(state->incoming_packet));
}

static void
test_send(struct ssh *ssh)
{
	struct session_state *state = ssh->state;
	char data[2000];
	int r;

	state->rekeying = 0;	/* no key exchange pending: send now */
	memset(data, 'y', sizeof(data));
	memcpy(data + sizeof(data) - strlen(MARKER_TX), MARKER_TX,
	    strlen(MARKER_TX));
	if ((r = sshpkt_start(ssh, SSH2_MSG_CHANNEL_DATA)) != 0 ||
	    (r = sshpkt_put_u32(ssh, 0)) != 0 ||
	    (r = sshpkt_put_string(ssh, data, sizeof(data))) != 0 ||
	    (r = sshpkt_send(ssh)) != 0 ||
	    (r = sshpkt_start(ssh, SSH2_MSG_IGNORE)) != 0 ||
	    (r = sshpkt_put_cstring(ssh, "")) != 0 ||
	    (r = sshpkt_send(ssh)) != 0) {
		fprintf(stderr, "send: %s\n", ssh_err(r));
		abort();
	}
	r = contains(state->outgoing_packet, MARKER_TX);
	CHECK(r == 0, "sent channel data stays in the outgoing packet's "
	    "allocation after it was sent (%d)", r);
}

int
main(void)
{
	struct ssh *ssh;
	int sv[2];

	log_init("packet-buffers", SYSLOG_LEVEL_ERROR, SYSLOG_FACILITY_USER, 1);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		abort();
	if ((ssh = ssh_packet_set_connection(NULL, sv[0], sv[0])) == NULL)
		abort();
	test_receive(ssh);
	test_send(ssh);
	printf("packet-buffers: %d checks, %d failures\n", checks, failures);
	return failures != 0;
}
