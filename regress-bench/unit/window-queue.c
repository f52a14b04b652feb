/*
 * window-queue: unit test for sshbuf_allocate_queue() (openssh-lfn patch
 * 0203), which makes room in a channel's output buffer before each packet
 * of a grown receive window is appended.
 *
 * Built by regress-bench/tests/fastpath-unit.sh against a built tree.
 *
 * A channel's output buffer is a queue: packets are appended at the end and
 * the local consumer (a pipe to cat or sftp-server) drains it from the
 * start.  When the consumer lags, the queue holds most of the window; a
 * policy that packs or reallocates whenever the room runs out then copies
 * the whole backlog every few packets (the server's CPU went to memmove and
 * recallocarray in a 2 Gbit/s x 100 ms scp upload).  Checks, on a simulated
 * queue with a 16 MiB window and 32 KiB packets:
 *  - lagging consumer (backlog 85-95 % of the window, drained 256 KiB at a
 *    time): bytes moved by packs and reallocations (the backlog length
 *    whenever the data's address changes) stay below 3x the bytes appended;
 *  - consumer that never reads: the queue fills to the window with O(log n)
 *    moves and never needs more than the window after its offset;
 *  - every byte comes out in order (a counter pattern is checked as it is
 *    consumed), and sshbuf's max_size is still enforced.
 */
#include "includes.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sshbuf.h"
#include "ssherr.h"
#include "unit-check.h"
#include "queue-pattern.h"

#define WINDOW		(16 * 1024 * 1024)
#define PACKET		(32 * 1024)
#define DRAIN		(256 * 1024)

/* Append one packet the way channel_input_data() does; count moves. */
static void
append(struct sshbuf *b, size_t len, uint64_t *moved, uint64_t *moves)
{
	const u_char *before = sshbuf_ptr(b);
	size_t have = sshbuf_len(b);
	int r;

	if ((r = sshbuf_allocate_queue(b, len, WINDOW)) != 0) {
		CHECK(0, "sshbuf_allocate_queue: %s", ssh_err(r));
		return;
	}
	if (have > 0 && sshbuf_ptr(b) != before) {
		*moved += have;
		(*moves)++;
	}
	queue_put(b, len, "sshbuf_allocate_queue");
}

int
main(void)
{
	struct sshbuf *b;
	uint64_t appended = 0, moved = 0, moves = 0;
	u_char *p;

	/* 1. Lagging consumer: backlog kept at 85-95 % of the window. */
	if ((b = sshbuf_new()) == NULL)
		return 2;
	while (appended < 1024ULL * 1024 * 1024) {
		while (sshbuf_len(b) < WINDOW * 95ULL / 100) {
			append(b, PACKET, &moved, &moves);
			appended += PACKET;
		}
		while (sshbuf_len(b) > WINDOW * 85ULL / 100)
			queue_take(b, DRAIN);
	}
	queue_take(b, sshbuf_len(b));
	CHECK(next_out == next_in, "lost data: %llu in, %llu out",
	    (unsigned long long)next_in, (unsigned long long)next_out);
	printf("lagging consumer: %llu MiB appended, %llu MiB moved in %llu "
	    "moves (%.2f x)\n", (unsigned long long)(appended >> 20),
	    (unsigned long long)(moved >> 20), (unsigned long long)moves,
	    (double)moved / appended);
	CHECK(moved < 3 * appended, "moved %.2f x what was appended",
	    (double)moved / appended);
	sshbuf_free(b);

	/* 2. Consumer that never reads: fill to the window. */
	if ((b = sshbuf_new()) == NULL)
		return 2;
	moved = moves = 0;
	next_in = next_out = 0;
	while (sshbuf_len(b) + PACKET <= WINDOW)
		append(b, PACKET, &moved, &moves);
	printf("stalled consumer: %zu bytes queued in %llu moves\n",
	    sshbuf_len(b), (unsigned long long)moves);
	CHECK(moves <= 24, "%llu moves to fill the window",
	    (unsigned long long)moves);
	CHECK(moved <= 2ULL * WINDOW, "moved %llu bytes to fill the window",
	    (unsigned long long)moved);
	queue_take(b, sshbuf_len(b));
	CHECK(next_out == next_in, "lost data in the stalled queue");
	sshbuf_free(b);

	/* 3. max_size still enforced. */
	if ((b = sshbuf_new()) == NULL)
		return 2;
	if (sshbuf_set_max_size(b, 1024 * 1024) != 0)
		CHECK(0, "sshbuf_set_max_size failed");
	CHECK(sshbuf_allocate_queue(b, 1024 * 1024 + 1, WINDOW) ==
	    SSH_ERR_NO_BUFFER_SPACE, "allocation beyond max_size accepted");
	CHECK(sshbuf_allocate_queue(b, 600 * 1024, WINDOW) == 0 &&
	    sshbuf_reserve(b, 600 * 1024, &p) == 0, "600 KiB refused");
	CHECK(sshbuf_consume(b, 500 * 1024) == 0, "consume failed");
	/* 100 KiB held + 900 KiB fits in 1 MiB only after packing */
	CHECK(sshbuf_allocate_queue(b, 900 * 1024, WINDOW) == 0 &&
	    sshbuf_reserve(b, 900 * 1024, &p) == 0,
	    "room within max_size not made");
	CHECK(sshbuf_allocate_queue(b, 100 * 1024, WINDOW) ==
	    SSH_ERR_NO_BUFFER_SPACE, "max_size overrun accepted");
	sshbuf_free(b);

	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("window-queue: ok\n");
	return 0;
}
