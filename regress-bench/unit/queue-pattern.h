/*
 * queue-pattern.h: an sshbuf used as a byte queue, its bytes checked in
 * order (openssh-lfn unit test window-queue.c).
 * queue_put() appends the next bytes of a counter pattern after the test
 * has made room, and checks that sshbuf_reserve() then moved nothing;
 * queue_take() consumes bytes from the start and checks each.  Include
 * after unit-check.h, sshbuf.h and ssherr.h.
 */
#ifndef LFN_QUEUE_PATTERN_H
#define LFN_QUEUE_PATTERN_H

#include <stdint.h>

static uint64_t next_in, next_out;	/* counter pattern positions */

static u_char
pattern(uint64_t pos)
{
	return (u_char)((pos * 2654435761u) >> 13);
}

/* Append len pattern bytes; the room "after" made must be enough. */
static void
queue_put(struct sshbuf *b, size_t len, const char *after)
{
	const u_char *before = sshbuf_ptr(b);
	size_t have = sshbuf_len(b), i;
	u_char *p;
	int r;

	if ((r = sshbuf_reserve(b, len, &p)) != 0) {
		CHECK(0, "sshbuf_reserve: %s", ssh_err(r));
		return;
	}
	CHECK(have == 0 || sshbuf_ptr(b) == before,
	    "sshbuf_reserve moved data after %s", after);
	for (i = 0; i < len; i++)
		p[i] = pattern(next_in++);
}

/* Consume up to len bytes, each checked against the pattern. */
static void
queue_take(struct sshbuf *b, size_t len)
{
	const u_char *p = sshbuf_ptr(b);
	size_t i;

	len = len < sshbuf_len(b) ? len : sshbuf_len(b);
	for (i = 0; i < len; i++) {
		if (p[i] != pattern(next_out)) {
			CHECK(0, "byte %llu corrupted",
			    (unsigned long long)next_out);
			return;
		}
		next_out++;
	}
	CHECK(sshbuf_consume(b, len) == 0, "sshbuf_consume failed");
}

#endif /* LFN_QUEUE_PATTERN_H */
