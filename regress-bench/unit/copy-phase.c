/*
 * copy-phase: unit test for sshbuf_allocate_stream() (openssh-lfn patch
 * 0313), which keeps a stream buffer's end away from the page offset that
 * makes the kernel's copy of a read or write slow.
 *
 * Built by regress-bench/tests/fastpath-copy-phase.sh against a built tree.
 *
 * A buffer takes a stream's bytes at its end (reads, or packets bound for a
 * socket) and gives them from its start.  Checks, with appends and drains
 * of uneven sizes from a fresh buffer (whose malloc'd data sits 16 bytes
 * past a page, the slow case for reads from a file's start):
 *  - after every call the end is at least 256 bytes, modulo the page size,
 *    from the stream offset of the next byte appended;
 *  - the data moves only when that was not so, or when sshbuf would have
 *    packed it anyway: bytes moved (the backlog whenever its address
 *    changes) stay within 10 % of what the same appends and drains move
 *    through sshbuf_allocate_queue() and sshbuf_reserve() alone;
 *  - every byte comes out in order, and sshbuf_reserve() of the size
 *    asked for does not move the data again.
 */
#include "includes.h"

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sshbuf.h"
#include "ssherr.h"
#include "unit-check.h"
#include "queue-pattern.h"

#define PAGE	4096
#define NEAR	256

static uint64_t moved, appended;
static int aligned;	/* 0: sshbuf_allocate_queue() alone, the reference */
static uint64_t near;	/* appends that left the end near the offset */

static void
append(struct sshbuf *b, size_t len, size_t most)
{
	const u_char *before = sshbuf_ptr(b);
	size_t have = sshbuf_len(b), d;
	int r;

	r = aligned ? sshbuf_allocate_stream(b, len, most, (u_int)next_in) :
	    sshbuf_allocate_queue(b, len, most);
	if (r != 0) {
		CHECK(0, "making room: %s", ssh_err(r));
		return;
	}
	if (have > 0 && sshbuf_ptr(b) != before)
		moved += have;
	d = ((uintptr_t)sshbuf_ptr(b) + sshbuf_len(b) - (uintptr_t)next_in) %
	    PAGE;
	if (aligned && (d < NEAR || d > PAGE - NEAR))
		near++;
	/* the reference may pack in sshbuf_reserve(): count that too */
	before = sshbuf_ptr(b);
	have = sshbuf_len(b);
	if (!aligned) {
		u_char *p;

		if (sshbuf_reserve(b, len, &p) == 0) {
			if (have > 0 && sshbuf_ptr(b) != before)
				moved += have;
			sshbuf_consume_end(b, len);
		}
	}
	queue_put(b, len, "making room");
	appended += len;
}

/* one run of both patterns; returns the bytes moved */
static uint64_t
run(void)
{
	struct sshbuf *b;
	unsigned int seed = 1, i;
	size_t len;

	moved = appended = 0;
	/* reads of a file: up to 128 KiB, a consumer taking 32 KiB packets */
	if ((b = sshbuf_new()) == NULL)
		exit(2);
	for (i = 0; i < 20000; i++) {
		len = (i % 7 == 0) ? 1 + rand_r(&seed) % 131072 : 131072;
		append(b, len, 2 * 1024 * 1024);
		while (sshbuf_len(b) > 256 * 1024 || rand_r(&seed) % 3 == 0)
			queue_take(b, 32768);
	}
	queue_take(b, sshbuf_len(b));
	sshbuf_free(b);
	/* packets bound for a socket: uneven sizes, writes that take part */
	if ((b = sshbuf_new()) == NULL)
		exit(2);
	for (i = 0; i < 50000; i++) {
		append(b, 32768 + 13 + rand_r(&seed) % 300, 0);
		if (rand_r(&seed) % 2)
			queue_take(b, rand_r(&seed) % (sshbuf_len(b) + 1));
		if (sshbuf_len(b) > 512 * 1024)
			queue_take(b, sshbuf_len(b));
	}
	queue_take(b, sshbuf_len(b));
	sshbuf_free(b);
	CHECK(next_out == next_in, "lost data: %llu in, %llu out",
	    (unsigned long long)next_in, (unsigned long long)next_out);
	return moved;
}

int
main(void)
{
	uint64_t ref, got;

	aligned = 0;
	ref = run();
	aligned = 1;
	got = run();
	CHECK(near == 0, "%llu appends left the end within %d bytes of the "
	    "stream offset modulo the page", (unsigned long long)near, NEAR);
	CHECK(got <= ref + ref / 10, "moved %llu bytes, sshbuf alone %llu",
	    (unsigned long long)got, (unsigned long long)ref);
	printf("appended %llu; moved %llu, sshbuf alone %llu\n",
	    (unsigned long long)appended, (unsigned long long)got,
	    (unsigned long long)ref);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
