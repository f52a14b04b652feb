/*
 * packet-buffers: unit test for the kept packet buffers and the padding
 * pool of openssh-lfn patches 0303/0306.
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
 *  - channel data, which may stay in the kept buffers (0306), is cleared
 *    by ssh_packet_clear_kept() (what sshd and ssh call when idle or when
 *    a channel is freed), received and sent;
 *  - a big packet does not pin its allocation: after a 200 KiB packet and
 *    a small one, the incoming buffer is back below 128 KiB;
 *  - the padding pool is fork-safe: after fork(), child and parent must
 *    not produce the same padding bytes.
 */
#define SSHBUF_INTERNAL 1
#include "packet.c"

#include <sys/socket.h>
#include <sys/wait.h>

#include "unit-check.h"

/* only in trees that have it (openssh-lfn with 0306) */
void ssh_packet_clear_kept(struct ssh *) __attribute__((weak));
static void (* volatile clear_kept)(struct ssh *) = ssh_packet_clear_kept;

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

	/* channel data: may be kept, but ssh_packet_clear_kept() clears */
	feed(ssh, SSH2_MSG_CHANNEL_DATA, MARKER_CH, 2000);
	CHECK(read_consume(ssh) == SSH2_MSG_CHANNEL_DATA, "type");
	feed(ssh, SSH2_MSG_IGNORE, "", 0);
	CHECK(read_consume(ssh) == SSH2_MSG_IGNORE, "type");
	CHECK(clear_kept != NULL, "no ssh_packet_clear_kept(): "
	    "received channel data is never cleared");
	if (clear_kept != NULL) {
		clear_kept(ssh);
		r = contains(state->incoming_packet, MARKER_CH);
		CHECK(r == 0, "received channel data still in the incoming "
		    "packet after ssh_packet_clear_kept() (%d)", r);
		r = contains(state->compression_buffer, MARKER_CH);
		CHECK(r == 0, "... in the compression buffer (%d)", r);
	}

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
	if (clear_kept != NULL) {
		clear_kept(ssh);
		r = contains(state->outgoing_packet, MARKER_TX);
		CHECK(r == 0, "sent channel data still in the outgoing "
		    "packet after ssh_packet_clear_kept() (%d)", r);
	}
}

static void
test_padding_fork(struct ssh *ssh)
{
	struct session_state *state = ssh->state;
	u_char first[16], mine[64], child[64];
	int fds[2], status;
	pid_t pid;

	packet_random_padding(state, first, sizeof(first));	/* fill it */
	if (pipe(fds) != 0)
		abort();
	if ((pid = fork()) == -1)
		abort();
	if (pid == 0) {
		packet_random_padding(state, mine, sizeof(mine));
		if (write(fds[1], mine, sizeof(mine)) != sizeof(mine))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	packet_random_padding(state, mine, sizeof(mine));
	if (read(fds[0], child, sizeof(child)) != sizeof(child))
		abort();
	waitpid(pid, &status, 0);
	CHECK(memcmp(mine, child, sizeof(mine)) != 0, "parent and forked "
	    "child sent the same %zu padding bytes", sizeof(mine));
	packet_random_padding(state, child, sizeof(child));
	CHECK(memcmp(mine, child, sizeof(mine)) != 0, "padding repeats");
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
	test_padding_fork(ssh);
	printf("packet-buffers: %d checks, %d failures\n", checks, failures);
	return failures != 0;
}
