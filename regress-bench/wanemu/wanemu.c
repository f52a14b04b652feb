/*
 * wanemu - a user-space WAN link emulator for network namespaces.
 *
 * wanemu joins two network namespaces ("a" and "b") with a point-to-point
 * IP link made of two TUN devices, one inside each namespace, and forwards
 * the packets between them.  Each direction (a->b and b->a) is emulated
 * independently:
 *
 *   arrival --> [random loss] --> [classify by DSCP] --> shaper + queue
 *           --> delay line --> delivery into the other namespace
 *
 * It exists because the kernel these benchmarks run on has no netem qdisc.
 *
 * Design
 * ------
 * One forwarding thread per direction.  A thread reads packets from its
 * input TUN, timestamps each with the moment it has to be delivered, keeps
 * it in a ring buffer, and writes it to the output TUN when that moment has
 * come.  The thread sleeps in epoll_wait() on the input TUN descriptor and
 * a timerfd (CLOCK_MONOTONIC, absolute expiry) that is armed for the
 * delivery time of the oldest packet; there is no busy polling.  The
 * forwarding threads ask for SCHED_FIFO so that packets leave on time even
 * when the (small) machine is busy with the endpoints of the benchmark.
 *
 * Shaper ("token bucket", rate in bits/s of wire bytes).  Instead of a
 * bucket that is refilled by a clock, each class keeps the virtual time
 * t_free at which the emulated link finishes sending everything it has
 * accepted so far (the GCRA form of a token bucket).  A packet of W wire
 * bytes arriving at time now starts at max(t_free, now - burst) and its
 * last bit leaves at end = start + W*8/rate; t_free becomes end.  The
 * backlog (the bytes still queued) is (end - now) * rate / 8, so the queue
 * limit is checked by comparing end - now with the queue limit expressed in
 * time: tail drop happens when a packet would make the backlog exceed it
 * (a packet arriving at an idle link is always accepted, so a packet larger
 * than the queue still gets through when the queue is empty).  With
 * burst = 0 this is exactly a serialising link of the given rate; with a
 * burst of B bytes it is a token bucket of depth B.
 *
 * Delay line.  A packet's delivery time is max(end, now) + delay.  Both
 * terms are non-decreasing in arrival order and the delay is constant per
 * direction, so the packets of one class leave in arrival order: a FIFO of
 * timestamped packets is all that is needed and the whole emulation of a
 * class is one ring buffer.  Nothing is moved between a "queue" and a
 * "delay line"; which of the two a packet is in is only a matter of time.
 *
 * Ring.  The ring is a byte buffer of variable-sized records (a small
 * header with the delivery time followed by the packet).  read() from the
 * TUN goes directly into the free space at the ring's tail, so a forwarded
 * packet is copied only by the kernel, once in and once out.
 *
 * DSCP policing.  Packets with a given DSCP can be sent through a class of
 * their own (separate shaper, queue and ring), like the background /
 * scavenger access categories of Wi-Fi WMM.  A policed class is an
 * independent virtual link: its bytes do not consume the main rate.
 *
 * Offload.  With IFF_VNET_HDR and TUNSETOFFLOAD the kernel hands us TCP
 * segmentation-offload (GSO) packets of up to 64 KiB, each preceded by a
 * virtio_net_hdr.  They are passed to the other TUN unchanged, which cuts
 * the per-packet cost roughly tenfold.  Rates, counters and loss are still
 * computed per wire packet: a GSO packet counts as ceil(payload/gso_size)
 * packets, each carrying its own IP and TCP headers.  When only some of the
 * wire packets of a GSO packet must be dropped (random loss, or a queue
 * that has room for only the first few), the packet is segmented here into
 * ordinary packets with freshly computed checksums and only the survivors
 * are queued.  --no-offload turns all of this off.
 *
 * Counters are kept per direction by the forwarding thread that owns them
 * (single writer, relaxed atomic stores) and are written by the main thread
 * as a JSON object to the stats file on SIGUSR1 and at exit.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#define WANEMU_VERSION "1.0"

#define MAX_POLICED      4          /* policed DSCP classes per direction */
#define MAX_CLASSES      (1 + MAX_POLICED)
#define VNET_HDR_LEN     ((unsigned)sizeof(struct virtio_net_hdr))
#define MAX_IP_PACKET    65535u     /* largest IP packet (GSO limit of tun) */
#define READ_SLACK       1024u      /* read buffer beyond that, to see oversize */
#define MAX_SEGS         65536u     /* bound on wire packets in one GSO packet */
#define READ_BATCH       64         /* packets read per wake-up before releasing */
#define RELEASE_EARLY_NS 2000       /* release packets due within 2 us now */
#define NS_PER_SEC       1000000000ull
#define PS_PER_NS        1000ull
#define PS_PER_SEC       1000000000000ull

/* ------------------------------------------------------------------ */
/* small helpers                                                        */
/* ------------------------------------------------------------------ */

static const char *progname = "wanemu";
static int verbose;

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: error: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* Time since program start, so that picosecond values fit in 64 bits. */
static uint64_t mono_base_ns;

static uint64_t mono_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return mono_raw_ns() - mono_base_ns;
}

/*
 * Counters have a single writer (the forwarding thread of their direction)
 * and are read by the main thread for the stats file.  Relaxed atomics make
 * that well-defined and cost nothing on x86.
 */
static inline void ctr_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

static inline void ctr_max(uint64_t *c, uint64_t v)
{
	if (v > __atomic_load_n(c, __ATOMIC_RELAXED))
		__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

static inline uint64_t ctr_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ------------------------------------------------------------------ */
/* command-line value parsing                                           */
/* ------------------------------------------------------------------ */

struct unit {
	const char *suffix;
	double mult;
};

/*
 * Parse "<number><suffix>" where suffix is one of units[] (case-insensitive,
 * "" allowed when listed).  Returns 0 on success.
 */
static int parse_with_units(const char *s, const struct unit *units,
			    double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	for (; units->suffix; units++) {
		if (strcasecmp(end, units->suffix) == 0) {
			*out = v * units->mult;
			return 0;
		}
	}
	return -1;
}

/* Rate in bits per second; "0" or "unlimited" means no rate limit. */
static uint64_t parse_rate(const char *opt, const char *s)
{
	static const struct unit units[] = {
		{ "", 1 }, { "bit", 1 }, { "kbit", 1e3 }, { "mbit", 1e6 },
		{ "gbit", 1e9 }, { "tbit", 1e12 }, { NULL, 0 }
	};
	double v;

	if (s && (strcasecmp(s, "unlimited") == 0 || strcasecmp(s, "none") == 0))
		return 0;
	if (parse_with_units(s, units, &v) || v > 1e13)
		die("%s: bad rate '%s' (use e.g. 100mbit, 1gbit, 2.5gbit; "
		    "suffixes bit/kbit/mbit/gbit/tbit, 0 = unlimited)", opt,
		    s ? s : "");
	if (v > 0 && v < 1000)
		die("%s: rate '%s' is below 1 kbit/s", opt, s);
	return (uint64_t)llround(v);
}

/* Duration in nanoseconds; a bare number is milliseconds. */
static uint64_t parse_duration(const char *opt, const char *s)
{
	static const struct unit units[] = {
		{ "", 1e6 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 },
		{ "s", 1e9 }, { NULL, 0 }
	};
	double v;

	if (parse_with_units(s, units, &v) || v > 3600e9)
		die("%s: bad duration '%s' (use e.g. 25ms, 500us, 0.1s; "
		    "a bare number is milliseconds, at most 1 hour)", opt,
		    s ? s : "");
	return (uint64_t)llround(v);
}

/* Size in bytes: B, KB/MB/GB (powers of 1000), KiB/MiB/GiB (1024). */
static uint64_t parse_size(const char *opt, const char *s)
{
	static const struct unit units[] = {
		{ "", 1 }, { "b", 1 }, { "kb", 1e3 }, { "mb", 1e6 },
		{ "gb", 1e9 }, { "kib", 1024.0 }, { "mib", 1048576.0 },
		{ "gib", 1073741824.0 }, { NULL, 0 }
	};
	double v;

	if (parse_with_units(s, units, &v) || v > 64.0 * 1073741824.0)
		die("%s: bad size '%s' (use e.g. 8MB, 512KiB, 1GiB; "
		    "KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024)", opt,
		    s ? s : "");
	return (uint64_t)llround(v);
}

/* Probability: "0.001" or "0.1%". */
static double parse_prob(const char *opt, const char *s)
{
	static const struct unit units[] = {
		{ "", 1 }, { "%", 0.01 }, { NULL, 0 }
	};
	double v;

	if (parse_with_units(s, units, &v) || v > 1.0)
		die("%s: bad probability '%s' (use e.g. 0.001 or 0.1%%, "
		    "between 0 and 1)", opt, s ? s : "");
	return v;
}

static long parse_int(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		die("%s: bad value '%s' (expected an integer from %ld to %ld)",
		    opt, s, lo, hi);
	return v;
}

/* DSCP given as a number (0..63) or a name: csN, afXY, ef, le, be. */
static int parse_dscp(const char *opt, const char *s)
{
	char *end;
	long v;

	if (strcasecmp(s, "be") == 0 || strcasecmp(s, "default") == 0)
		return 0;
	if (strcasecmp(s, "ef") == 0)
		return 46;
	if (strcasecmp(s, "le") == 0)
		return 1;
	if ((s[0] == 'c' || s[0] == 'C') && (s[1] == 's' || s[1] == 'S') &&
	    s[2] >= '0' && s[2] <= '7' && !s[3])
		return (s[2] - '0') * 8;
	if ((s[0] == 'a' || s[0] == 'A') && (s[1] == 'f' || s[1] == 'F') &&
	    s[2] >= '1' && s[2] <= '4' && s[3] >= '1' && s[3] <= '3' && !s[4])
		return (s[2] - '0') * 8 + (s[3] - '0') * 2;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < 0 || v > 63)
		die("%s: bad DSCP '%s' (0..63 or a name such as cs1, af11, ef, le; "
		    "note: DSCP 8 = CS1 = TOS byte 0x20)", opt, s);
	return (int)v;
}

/* ------------------------------------------------------------------ */
/* configuration                                                        */
/* ------------------------------------------------------------------ */

struct dscp_rule {
	int dscp;
	uint64_t rate;            /* bits/s */
	uint64_t queue;           /* bytes, 0 = default */
};

struct dir_conf {
	uint64_t delay_ns;
	int delay_set;
	uint64_t rate;            /* bits/s, 0 = unlimited */
	uint64_t queue;           /* bytes, 0 = default */
	double loss;
	struct dscp_rule rules[MAX_POLICED];
	int nrules;
};

static struct config {
	const char *ns[2];        /* namespace names or paths: a, b */
	const char *tun;
	struct dir_conf dir[2];   /* [0] = a->b, [1] = b->a */
	uint64_t burst;           /* bytes */
	unsigned mtu;
	unsigned overhead;        /* extra wire bytes per packet */
	unsigned txqueuelen;
	int offload;
	int rt_prio;
	uint64_t seed;
	uint64_t ring_mem;        /* bytes per main ring, 0 = automatic */
	const char *stats;
	const char *pidfile;
} cfg = {
	.tun = "tunlfn",
	.mtu = 1500,
	.txqueuelen = 1000,
	.offload = 1,
	.rt_prio = 50,
};

static void add_dscp_rule(struct dir_conf *dc, const char *opt, const char *spec)
{
	char buf[128], *colon, *colon2;
	struct dscp_rule r = { 0 };
	int i;

	if (strlen(spec) >= sizeof(buf))
		die("%s: value too long", opt);
	strcpy(buf, spec);
	colon = strchr(buf, ':');
	if (!colon)
		die("%s: expected DSCP:RATE[:QUEUE], e.g. 8:8mbit or cs1:8mbit, "
		    "got '%s'", opt, spec);
	*colon++ = '\0';
	colon2 = strchr(colon, ':');
	if (colon2)
		*colon2++ = '\0';
	r.dscp = parse_dscp(opt, buf);
	r.rate = parse_rate(opt, colon);
	if (r.rate == 0)
		die("%s: a policed class needs a rate > 0", opt);
	if (colon2)
		r.queue = parse_size(opt, colon2);
	for (i = 0; i < dc->nrules; i++) {
		if (dc->rules[i].dscp == r.dscp) {
			dc->rules[i] = r;       /* later option wins */
			return;
		}
	}
	if (dc->nrules >= MAX_POLICED)
		die("%s: at most %d policed DSCP classes per direction", opt,
		    MAX_POLICED);
	dc->rules[dc->nrules++] = r;
}

/* ------------------------------------------------------------------ */
/* ring buffer of timestamped packets                                   */
/* ------------------------------------------------------------------ */

/*
 * A record in the ring: this header, then `len` bytes of packet (including
 * the virtio_net_hdr when offload is on), padded to 8 bytes.
 */
struct rec {
	uint64_t release_ns;      /* delivery time (since program start) */
	uint32_t len;             /* bytes written to the output TUN */
	uint32_t wire;            /* wire bytes it represents */
	uint32_t segs;            /* wire packets it represents */
	uint32_t pad;
};

#define REC_ALIGN(n) (((n) + 7u) & ~(size_t)7u)

/*
 * Variable-sized records in a circular byte buffer.  Unwrapped, the data is
 * [head, tail) and the free space [tail, size) + [0, head).  When a record
 * does not fit between tail and the end of the buffer, the writer wraps:
 * `end` remembers where the data in the upper part stops and the next
 * records go at offset 0; the data is then [head, end) + [0, tail) and the
 * free space [tail, head).  The reader goes back to offset 0 when head
 * reaches end.  A record is always contiguous, so read() and write() work
 * on it directly.
 */
struct ring {
	uint8_t *buf;
	size_t size;
	size_t head, tail, end;
	int wrapped;
	uint64_t count;           /* records in the ring */
	size_t bytes;             /* bytes of records in the ring */
	int reserve_wraps;        /* pending reservation is at offset 0 */
};

static void ring_init(struct ring *r, size_t size)
{
	size = REC_ALIGN(size);
	r->buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->buf == MAP_FAILED)
		die("cannot allocate %zu bytes for a packet ring: %s", size,
		    strerror(errno));
	r->size = size;
	r->head = r->tail = r->end = 0;
	r->wrapped = 0;
	r->count = 0;
	r->bytes = 0;
}

/*
 * Return space for a record of up to `need` bytes (header included), or
 * NULL when the ring is full.  Nothing changes until ring_commit().
 */
static uint8_t *ring_reserve(struct ring *r, size_t need)
{
	need = REC_ALIGN(need);
	r->reserve_wraps = 0;
	if (r->count == 0) {
		/* empty: start again at the beginning, keeps records compact */
		r->head = r->tail = r->end = 0;
		r->wrapped = 0;
	}
	if (!r->wrapped) {
		if (r->size - r->tail >= need)
			return r->buf + r->tail;
		if (r->head >= need) {
			r->reserve_wraps = 1;
			return r->buf;
		}
		return NULL;
	}
	if (r->head - r->tail >= need)
		return r->buf + r->tail;
	return NULL;
}

/* Commit the reserved record; its header must already be filled in. */
static void ring_commit(struct ring *r, size_t len)
{
	len = REC_ALIGN(len);
	if (r->reserve_wraps) {
		r->end = r->tail;
		r->tail = 0;
		r->wrapped = 1;
		r->reserve_wraps = 0;
	}
	r->tail += len;
	r->count++;
	r->bytes += len;
}

static struct rec *ring_peek(struct ring *r)
{
	if (r->count == 0)
		return NULL;
	if (r->wrapped && r->head == r->end) {
		r->head = 0;
		r->wrapped = 0;
	}
	return (struct rec *)(void *)(r->buf + r->head);
}

static void ring_pop(struct ring *r)
{
	struct rec *h = (struct rec *)(void *)(r->buf + r->head);
	size_t len = REC_ALIGN(sizeof(struct rec) + h->len);

	r->head += len;
	r->count--;
	r->bytes -= len;
	if (r->wrapped && r->head == r->end) {
		r->head = 0;
		r->wrapped = 0;
	}
}

/* ------------------------------------------------------------------ */
/* shaper: token bucket in virtual-time (GCRA) form                     */
/* ------------------------------------------------------------------ */

struct shaper {
	uint64_t rate;            /* bits/s, 0 = unlimited */
	uint64_t t_free_ps;       /* when the link has sent all it accepted */
	uint64_t burst_ps;        /* bucket depth, as time at `rate` */
	uint64_t qlimit_ps;       /* queue limit, as time at `rate` */
	uint64_t qlimit_bytes;
	uint64_t peak_backlog_ps; /* largest backlog seen (for stats) */
};

static uint64_t bytes_to_ps(uint64_t bytes, uint64_t rate)
{
	/* bytes * 8e12 does not fit in 64 bits for large sizes */
	unsigned __int128 bits_ps = (unsigned __int128)bytes * 8 * PS_PER_SEC;

	return (uint64_t)((bits_ps + rate / 2) / rate);
}

static void shaper_init(struct shaper *s, uint64_t rate, uint64_t burst,
			uint64_t qlimit)
{
	memset(s, 0, sizeof(*s));
	s->rate = rate;
	s->qlimit_bytes = qlimit;
	if (rate) {
		s->burst_ps = bytes_to_ps(burst, rate);
		s->qlimit_ps = bytes_to_ps(qlimit, rate);
	}
}

/*
 * Offer `wire` bytes arriving at `now`.  Returns 0 when the queue is full
 * (tail drop), else 1 with *depart_ns set to when the last bit leaves.
 */
static int shaper_admit(struct shaper *s, uint64_t now, uint64_t wire,
			uint64_t *depart_ns)
{
	uint64_t now_ps, start, end, tx;

	if (s->rate == 0) {
		*depart_ns = now;
		return 1;
	}
	now_ps = now * PS_PER_NS;
	tx = bytes_to_ps(wire, s->rate);
	start = s->t_free_ps;
	if (now_ps > s->burst_ps && start < now_ps - s->burst_ps)
		start = now_ps - s->burst_ps;   /* idle: bucket full */
	end = start + tx;
	/* tail drop, but a packet arriving at an empty queue always fits */
	if (start > now_ps && end - now_ps > s->qlimit_ps)
		return 0;
	s->t_free_ps = end;
	if (end > now_ps)
		ctr_max(&s->peak_backlog_ps, end - now_ps);
	*depart_ns = (end > now_ps ? end : now_ps) / PS_PER_NS;
	if ((end > now_ps ? end : now_ps) % PS_PER_NS)
		(*depart_ns)++;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Internet checksum                                                    */
/* ------------------------------------------------------------------ */

/*
 * One's complement sum over memory, in memory byte order (RFC 1071: the
 * sum is independent of byte order if the result is stored the same way).
 */
static uint64_t csum_partial(const uint8_t *p, size_t n, uint64_t sum)
{
	uint32_t w32;
	uint16_t w16 = 0;

	while (n >= 4) {
		memcpy(&w32, p, 4);
		sum += w32;
		p += 4;
		n -= 4;
	}
	if (n >= 2) {
		memcpy(&w16, p, 2);
		sum += w16;
		p += 2;
		n -= 2;
	}
	if (n) {
		w16 = 0;
		memcpy(&w16, p, 1);     /* high byte in network order */
		sum += w16;
	}
	return sum;
}

static uint16_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* ------------------------------------------------------------------ */
/* packet parsing and software segmentation                             */
/* ------------------------------------------------------------------ */

/* What we need to know about a packet read from a TUN. */
struct pkt_info {
	int dscp;                 /* -1: not IPv4/IPv6 */
	uint32_t segs;            /* wire packets it represents */
	uint64_t wire;            /* wire bytes it represents */
	/* GSO packets only: */
	int gso;                  /* is a GSO packet */
	int can_segment;          /* TCP over IPv4/IPv6 we can split */
	int v6;
	unsigned thoff;           /* TCP header offset from IP header */
	unsigned hdrlen;          /* IP + TCP header bytes */
	unsigned mss;             /* payload bytes per wire packet */
	unsigned payload;         /* total payload bytes */
};

static int pkt_dscp(const uint8_t *ip, size_t len)
{
	if (len >= 20 && (ip[0] >> 4) == 4)
		return ip[1] >> 2;
	if (len >= 40 && (ip[0] >> 4) == 6)
		return ((ip[0] & 0x0f) << 4 | ip[1] >> 4) >> 2;
	return -1;
}

/*
 * Fill in `pi` for the IP packet ip[0..len) with the optional vnet header.
 * Malformed GSO metadata makes the packet count as a single wire packet
 * that we will not try to split.
 */
static void pkt_parse(const struct virtio_net_hdr *vh, const uint8_t *ip,
		      size_t len, unsigned overhead, struct pkt_info *pi)
{
	unsigned type, thoff, doff, ver;

	memset(pi, 0, sizeof(*pi));
	pi->dscp = pkt_dscp(ip, len);
	pi->segs = 1;
	pi->wire = len + overhead;
	if (!vh)
		return;
	type = vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;
	if (type == VIRTIO_NET_HDR_GSO_NONE || vh->gso_size == 0)
		return;
	ver = len ? ip[0] >> 4 : 0;
	if (type == VIRTIO_NET_HDR_GSO_TCPV4 || type == VIRTIO_NET_HDR_GSO_TCPV6) {
		if (type == VIRTIO_NET_HDR_GSO_TCPV4 && ver == 4 && len >= 20)
			thoff = (ip[0] & 0x0f) * 4u;
		else if (type == VIRTIO_NET_HDR_GSO_TCPV6 && ver == 6 && len >= 40)
			thoff = (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) ?
				vh->csum_start : 40;
		else
			return;
		if (thoff < 20 || (size_t)thoff + 20 > len)
			return;
		doff = (ip[thoff + 12] >> 4) * 4u;
		if (doff < 20 || (size_t)thoff + doff > len)
			return;
		pi->hdrlen = thoff + doff;
		pi->thoff = thoff;
		pi->v6 = ver == 6;
		/* IPv6 extension headers: we would have to walk them; don't */
		pi->can_segment = ver == 4 || (thoff == 40 && ip[6] == IPPROTO_TCP);
	} else {
		/* UFO and friends: trust the header length */
		if (vh->hdr_len == 0 || vh->hdr_len > len)
			return;
		pi->hdrlen = vh->hdr_len;
	}
	pi->gso = 1;
	pi->mss = vh->gso_size;
	pi->payload = (unsigned)(len - pi->hdrlen);
	pi->segs = pi->payload ? (pi->payload + pi->mss - 1) / pi->mss : 1;
	if (pi->segs > MAX_SEGS)
		pi->segs = MAX_SEGS;
	pi->wire = (uint64_t)pi->payload +
		   (uint64_t)pi->segs * (pi->hdrlen + overhead);
}

static void seg_bounds(const struct pkt_info *pi, unsigned i, unsigned *off,
		       unsigned *chunk)
{
	*off = i * pi->mss;
	*chunk = pi->payload - *off < pi->mss ? pi->payload - *off : pi->mss;
}

/* Wire bytes of segment i of a GSO packet. */
static uint64_t seg_wire(const struct pkt_info *pi, unsigned i, unsigned overhead)
{
	unsigned off, chunk;

	seg_bounds(pi, i, &off, &chunk);
	return (uint64_t)pi->hdrlen + chunk + overhead;
}

/*
 * Build wire packet i of the TCP GSO packet ip[] into out[] (a zeroed
 * virtio_net_hdr first when `vnet`), the way the kernel's TCP segmentation
 * does: sequence numbers advance by the payload, FIN/PSH stay on the last
 * segment and CWR on the first, IPv4 IDs increment, and the IP and TCP
 * checksums are computed in full (no offload flags).  Returns the number
 * of bytes written.
 */
static size_t seg_build(const uint8_t *ip, const struct pkt_info *pi,
			unsigned i, int vnet, uint8_t *out)
{
	unsigned off, chunk, tcplen;
	uint8_t *o = out, *th;
	uint64_t sum;
	uint16_t c;

	seg_bounds(pi, i, &off, &chunk);
	if (vnet) {
		memset(o, 0, VNET_HDR_LEN);
		o += VNET_HDR_LEN;
	}
	memcpy(o, ip, pi->hdrlen);
	memcpy(o + pi->hdrlen, ip + pi->hdrlen + off, chunk);
	th = o + pi->thoff;
	tcplen = pi->hdrlen - pi->thoff + chunk;

	put32(th + 4, get32(th + 4) + off);
	if (i + 1 < pi->segs)
		th[13] &= (uint8_t)~0x09;       /* FIN, PSH: last segment only */
	if (i > 0)
		th[13] &= (uint8_t)~0x80;       /* CWR: first segment only */
	th[16] = th[17] = 0;

	if (!pi->v6) {
		put16(o + 2, (uint16_t)(pi->hdrlen + chunk));
		put16(o + 4, (uint16_t)(get16(ip + 4) + i));
		o[10] = o[11] = 0;
		c = csum_fold(csum_partial(o, pi->thoff, 0));
		memcpy(o + 10, &c, 2);
		sum = csum_partial(o + 12, 8, 0);       /* addresses */
	} else {
		put16(o + 4, (uint16_t)(pi->hdrlen - 40 + chunk));
		sum = csum_partial(o + 8, 32, 0);       /* addresses */
	}
	sum += htons(IPPROTO_TCP);
	sum += htons((uint16_t)tcplen);
	c = csum_fold(csum_partial(th, tcplen, sum));
	memcpy(th + 16, &c, 2);
	return (size_t)(o - out) + pi->hdrlen + chunk;
}

/* ------------------------------------------------------------------ */
/* per-direction state                                                  */
/* ------------------------------------------------------------------ */

/* Late-delivery histogram bucket limits (ns). */
static const uint64_t late_limits[] = { 10000, 100000, 1000000, 10000000 };
static const char *const late_names[] = {
	"le_10us", "le_100us", "le_1ms", "le_10ms", "gt_10ms"
};
#define NLATE 5

struct class_stats {
	uint64_t packets, bytes;          /* accepted into the queue */
	uint64_t drop_packets, drop_bytes;/* tail drops of this class */
};

struct dir_stats {
	uint64_t rx_packets, rx_bytes, rx_reads;
	uint64_t tx_packets, tx_bytes, tx_writes;
	uint64_t drop_queue_full, drop_policed_queue_full, drop_loss;
	uint64_t drop_ring_full, drop_write_error;
	uint64_t drop_bytes;
	uint64_t segmented;               /* GSO packets split in software */
	uint64_t dscp_packets[64], dscp_bytes[64];
	uint64_t nonip_packets, nonip_bytes;
	uint64_t late[NLATE];
	uint64_t late_max_ns;
	uint64_t read_errors;
};

struct pclass {
	int dscp;                         /* -1 for the main class */
	struct shaper sh;
	struct ring ring;
	struct class_stats st;
};

struct dir {
	const char *name;                 /* "ab" or "ba" */
	int idx;
	int in_fd, out_fd;
	uint64_t delay_ns;
	double loss;
	uint64_t loss_threshold;          /* loss if rng() < threshold */
	int loss_all;                     /* loss == 1 */
	struct pclass cls[MAX_CLASSES];
	int ncls;
	int8_t class_of_dscp[64];

	int epfd, tfd, stopfd;
	uint64_t armed_ns;                /* timer expiry, UINT64_MAX = none */
	uint64_t rng[4];                  /* xoshiro256** state */
	uint8_t *scratch;                 /* one packet, for drops and splits */
	uint8_t *segbuf;                  /* one wire packet being built */
	uint8_t *lost;                    /* per-segment loss marks */
	size_t max_read;                  /* largest read from a TUN */

	pthread_t thread;
	int sched_ok;
	char sched_note[160];
	int failed;
	struct dir_stats st;
};

static struct dir dirs[2];
static pthread_t main_thread;

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static void rng_seed(uint64_t *s, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++) {       /* splitmix64 */
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		s[i] = z ^ (z >> 31);
	}
}

static int lost_one(struct dir *d)
{
	if (d->loss_all)
		return 1;
	return d->loss_threshold && rng_next(d->rng) < d->loss_threshold;
}

/* ------------------------------------------------------------------ */
/* forwarding                                                           */
/* ------------------------------------------------------------------ */

/* Put a copy of a packet (already built) into class c; 0 if ring full. */
static int enqueue_copy(struct dir *d, struct pclass *c, const uint8_t *data,
			size_t len, uint64_t depart, uint64_t wire, uint32_t segs)
{
	uint8_t *slot = ring_reserve(&c->ring, sizeof(struct rec) + len);
	struct rec *r;

	if (!slot)
		return 0;
	r = (struct rec *)(void *)slot;
	r->release_ns = depart + d->delay_ns;
	r->len = (uint32_t)len;
	r->wire = (uint32_t)wire;
	r->segs = segs;
	r->pad = 0;
	memcpy(slot + sizeof(*r), data, len);
	ring_commit(&c->ring, sizeof(*r) + len);
	return 1;
}

static void count_drop(struct dir *d, struct pclass *c, uint64_t *cause,
		       uint32_t segs, uint64_t wire)
{
	ctr_add(cause, segs);
	ctr_add(&d->st.drop_bytes, wire);
	if (c && cause != &d->st.drop_loss) {
		ctr_add(&c->st.drop_packets, segs);
		ctr_add(&c->st.drop_bytes, wire);
	}
}

/*
 * Slow path: split a GSO packet into wire packets, drop those marked lost
 * or that do not fit in the queue, and queue the others one by one.  The
 * packet must not live inside a ring reservation of class c.
 */
static void enqueue_split(struct dir *d, struct pclass *c, uint64_t *qfull,
			  const uint8_t *ip, const struct pkt_info *pi,
			  uint64_t now)
{
	unsigned i, vnet = cfg.offload;
	uint64_t depart, wire;
	size_t len;

	ctr_add(&d->st.segmented, 1);
	for (i = 0; i < pi->segs; i++) {
		wire = seg_wire(pi, i, cfg.overhead);
		if (d->lost[i]) {
			count_drop(d, c, &d->st.drop_loss, 1, wire);
			continue;
		}
		if (!shaper_admit(&c->sh, now, wire, &depart)) {
			count_drop(d, c, qfull, 1, wire);
			continue;
		}
		len = seg_build(ip, pi, i, vnet, d->segbuf);
		if (!enqueue_copy(d, c, d->segbuf, len, depart, wire, 1)) {
			count_drop(d, c, &d->st.drop_ring_full, 1, wire);
			continue;
		}
		ctr_add(&c->st.packets, 1);
		ctr_add(&c->st.bytes, wire);
	}
}

/*
 * Read one packet from the input TUN and queue it (or drop it).
 * Returns 1 if a packet was read, 0 if none was ready, -1 on fatal error.
 */
static int ingest_one(struct dir *d)
{
	struct pclass *main_c = &d->cls[0], *c;
	const struct virtio_net_hdr *vh = NULL;
	uint8_t *slot, *buf;
	const uint8_t *ip;
	struct pkt_info pi;
	uint64_t now, depart, *qfull;
	unsigned hl = cfg.offload ? VNET_HDR_LEN : 0;
	int any_lost = 0, cls_idx;
	uint32_t i, nlost = 0;
	ssize_t n;

	slot = ring_reserve(&main_c->ring, sizeof(struct rec) + d->max_read);
	buf = slot ? slot + sizeof(struct rec) : d->scratch;
	n = read(d->in_fd, buf, d->max_read);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		ctr_add(&d->st.read_errors, 1);
		msg("%s: read from TUN failed: %s", d->name, strerror(errno));
		return -1;
	}
	now = now_ns();
	if ((size_t)n <= hl)
		return 1;               /* nothing usable */
	if (hl)
		vh = (const struct virtio_net_hdr *)(void *)buf;
	ip = buf + hl;
	pkt_parse(vh, ip, (size_t)n - hl, cfg.overhead, &pi);

	ctr_add(&d->st.rx_reads, 1);
	ctr_add(&d->st.rx_packets, pi.segs);
	ctr_add(&d->st.rx_bytes, pi.wire);
	if (pi.dscp >= 0) {
		ctr_add(&d->st.dscp_packets[pi.dscp], pi.segs);
		ctr_add(&d->st.dscp_bytes[pi.dscp], pi.wire);
		cls_idx = d->class_of_dscp[pi.dscp];
	} else {
		ctr_add(&d->st.nonip_packets, pi.segs);
		ctr_add(&d->st.nonip_bytes, pi.wire);
		cls_idx = 0;
	}
	c = &d->cls[cls_idx];
	qfull = cls_idx ? &d->st.drop_policed_queue_full : &d->st.drop_queue_full;

	/* random loss, decided per wire packet */
	if (d->loss_threshold || d->loss_all) {
		for (i = 0; i < pi.segs; i++) {
			d->lost[i] = (uint8_t)lost_one(d);
			nlost += d->lost[i];
		}
		any_lost = nlost > 0;
		if (nlost == pi.segs) {
			count_drop(d, NULL, &d->st.drop_loss, pi.segs, pi.wire);
			return 1;
		}
	}

	/* fast path: the whole packet survives and fits */
	if (!any_lost && shaper_admit(&c->sh, now, pi.wire, &depart)) {
		ctr_add(&c->st.packets, pi.segs);
		ctr_add(&c->st.bytes, pi.wire);
		if (cls_idx == 0 && slot) {
			struct rec *r = (struct rec *)(void *)slot;

			r->release_ns = depart + d->delay_ns;
			r->len = (uint32_t)n;
			r->wire = (uint32_t)pi.wire;
			r->segs = pi.segs;
			r->pad = 0;
			ring_commit(&main_c->ring, sizeof(*r) + (size_t)n);
		} else if (!enqueue_copy(d, c, buf, (size_t)n, depart, pi.wire,
					 pi.segs)) {
			count_drop(d, c, &d->st.drop_ring_full, pi.segs, pi.wire);
		}
		return 1;
	}

	if (!pi.can_segment || pi.segs == 1) {
		/* drop it whole: lost (partly, but we cannot split it) or full */
		if (any_lost)
			count_drop(d, c, &d->st.drop_loss, pi.segs, pi.wire);
		else
			count_drop(d, c, qfull, pi.segs, pi.wire);
		return 1;
	}

	/* slow path: split it; the segments are built from a private copy */
	if (buf != d->scratch) {
		memcpy(d->scratch, buf, (size_t)n);
		buf = d->scratch;
		ip = buf + hl;
	}
	if (!any_lost)
		memset(d->lost, 0, pi.segs);
	enqueue_split(d, c, qfull, ip, &pi, now);
	return 1;
}

/* Write every packet whose delivery time has come. */
static void release_due(struct dir *d)
{
	uint64_t now = now_ns(), late;
	struct rec *r;
	int i, b;
	ssize_t n;

	for (i = 0; i < d->ncls; i++) {
		struct ring *ring = &d->cls[i].ring;

		while ((r = ring_peek(ring)) &&
		       r->release_ns <= now + RELEASE_EARLY_NS) {
			do {
				n = write(d->out_fd, r + 1, r->len);
			} while (n < 0 && errno == EINTR);
			if (n < 0) {
				count_drop(d, NULL, &d->st.drop_write_error,
					   r->segs, r->wire);
			} else {
				ctr_add(&d->st.tx_writes, 1);
				ctr_add(&d->st.tx_packets, r->segs);
				ctr_add(&d->st.tx_bytes, r->wire);
			}
			late = now > r->release_ns ? now - r->release_ns : 0;
			for (b = 0; b < NLATE - 1 && late > late_limits[b]; b++)
				;
			ctr_add(&d->st.late[b], 1);
			ctr_max(&d->st.late_max_ns, late);
			ring_pop(ring);
			/* a long burst: let time move on */
			if ((ring->count & 63) == 0)
				now = now_ns();
		}
	}
}

/* Arm the timer for the earliest queued packet. */
static void arm_timer(struct dir *d)
{
	uint64_t next = UINT64_MAX, t;
	struct itimerspec its;
	struct rec *r;
	int i;

	for (i = 0; i < d->ncls; i++) {
		r = ring_peek(&d->cls[i].ring);
		if (r && r->release_ns < next)
			next = r->release_ns;
	}
	if (next == d->armed_ns)
		return;
	memset(&its, 0, sizeof(its));
	if (next != UINT64_MAX) {
		t = next + mono_base_ns;
		its.it_value.tv_sec = (time_t)(t / NS_PER_SEC);
		its.it_value.tv_nsec = (long)(t % NS_PER_SEC);
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;   /* 0 would disarm */
	}
	if (timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		msg("%s: timerfd_settime: %s", d->name, strerror(errno));
	d->armed_ns = next;
}

static void *forward_thread(void *arg)
{
	struct dir *d = arg;
	struct epoll_event ev[4];
	uint64_t junk;
	int n, i, k, r, stop = 0;

	if (!d->sched_ok)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  /* 1 ns timer slack */
	while (!stop) {
		n = epoll_wait(d->epfd, ev, 4, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			msg("%s: epoll_wait: %s", d->name, strerror(errno));
			d->failed = 1;
			break;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].data.fd == d->stopfd)
				stop = 1;
			else if (ev[i].data.fd == d->tfd) {
				if (read(d->tfd, &junk, sizeof(junk)) < 0)
					{ /* EAGAIN: already consumed */ }
				d->armed_ns = UINT64_MAX;
			}
		}
		if (stop)
			break;
		release_due(d);
		for (k = 0; k < READ_BATCH; k++) {
			r = ingest_one(d);
			if (r < 0) {
				d->failed = 1;
				stop = 1;
				break;
			}
			if (r == 0)
				break;
		}
		release_due(d);
		arm_timer(d);
	}
	if (d->failed)
		pthread_kill(main_thread, SIGUSR2);    /* tell main to quit */
	return NULL;
}

/* ------------------------------------------------------------------ */
/* TUN set-up inside a namespace                                        */
/* ------------------------------------------------------------------ */

static int open_netns(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open network namespace '%s' (%s): %s%s", name, path,
		    strerror(errno),
		    errno == ENOENT ? " (create it with 'ip netns add')" : "");
	return fd;
}

static void if_ioctl(int sock, unsigned long req, struct ifreq *ifr,
		     const char *what, const char *ns)
{
	if (ioctl(sock, req, ifr) < 0)
		die("%s on %s in namespace %s: %s", what, ifr->ifr_name, ns,
		    strerror(errno));
}

/*
 * Create the TUN device `cfg.tun` inside namespace `ns`: enter it, open
 * /dev/net/tun (the device belongs to the namespace of the opener), set
 * offload, MTU and queue length, bring it up, and come back.
 */
static int open_tun_in(const char *ns, int home_fd)
{
	struct ifreq ifr;
	unsigned off;
	int nsfd, fd, sock, hdrsz = VNET_HDR_LEN;

	nsfd = open_netns(ns);
	if (setns(nsfd, CLONE_NEWNET) < 0)
		die("cannot enter network namespace %s: %s%s", ns,
		    strerror(errno), errno == EPERM ? " (run as root)" : "");
	close(nsfd);

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die("cannot open /dev/net/tun in %s: %s", ns, strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | (cfg.offload ? IFF_VNET_HDR : 0);
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", cfg.tun);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		die("cannot create TUN device %s in namespace %s: %s%s", cfg.tun,
		    ns, strerror(errno),
		    errno == EBUSY ? " (a device of that name is in use there)" :
		    errno == EINVAL ? " (a non-TUN device of that name exists?)" : "");
	if (cfg.offload) {
		off = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
		if (ioctl(fd, TUNSETVNETHDRSZ, &hdrsz) < 0)
			die("TUNSETVNETHDRSZ in %s: %s", ns, strerror(errno));
		if (ioctl(fd, TUNSETOFFLOAD, off) < 0)
			die("TUNSETOFFLOAD in %s: %s (try --no-offload)", ns,
			    strerror(errno));
	}

	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		die("socket in %s: %s", ns, strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", cfg.tun);
	ifr.ifr_mtu = (int)cfg.mtu;
	if_ioctl(sock, SIOCSIFMTU, &ifr, "setting MTU", ns);
	ifr.ifr_qlen = (int)cfg.txqueuelen;
	if_ioctl(sock, SIOCSIFTXQLEN, &ifr, "setting txqueuelen", ns);
	if_ioctl(sock, SIOCGIFFLAGS, &ifr, "reading flags", ns);
	ifr.ifr_flags |= IFF_UP;
	if_ioctl(sock, SIOCSIFFLAGS, &ifr, "bringing up", ns);
	close(sock);

	if (setns(home_fd, CLONE_NEWNET) < 0)
		die("cannot return to the original network namespace: %s",
		    strerror(errno));
	return fd;
}

/* ------------------------------------------------------------------ */
/* statistics                                                           */
/* ------------------------------------------------------------------ */

static unsigned stats_seq;
static uint64_t start_realtime_s;

static uint64_t backlog_bytes(const struct shaper *s, uint64_t ps)
{
	if (!s->rate)
		return 0;
	return (uint64_t)((double)ps * (double)s->rate / 8e12 + 0.5);
}

static void json_dir(FILE *f, struct dir *d)
{
	struct dir_stats *s = &d->st;
	const struct dir_conf *dc = &cfg.dir[d->idx];
	int i, first;

	fprintf(f, "  \"%s\": {\n", d->name);
	fprintf(f, "    \"from\": \"%s\", \"to\": \"%s\",\n",
		cfg.ns[d->idx], cfg.ns[!d->idx]);
	fprintf(f, "    \"delay_us\": %.3f, \"rate_bps\": %" PRIu64
		", \"queue_bytes\": %" PRIu64 ", \"loss\": %.9g,\n",
		(double)d->delay_ns / 1e3, dc->rate, d->cls[0].sh.qlimit_bytes,
		d->loss);
	fprintf(f, "    \"rx_packets\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
		", \"rx_reads\": %" PRIu64 ",\n", ctr_get(&s->rx_packets),
		ctr_get(&s->rx_bytes), ctr_get(&s->rx_reads));
	fprintf(f, "    \"tx_packets\": %" PRIu64 ", \"tx_bytes\": %" PRIu64
		", \"tx_writes\": %" PRIu64 ",\n", ctr_get(&s->tx_packets),
		ctr_get(&s->tx_bytes), ctr_get(&s->tx_writes));
	fprintf(f, "    \"drops\": {\"queue_full\": %" PRIu64
		", \"loss\": %" PRIu64 ", \"policed_queue_full\": %" PRIu64
		", \"ring_full\": %" PRIu64 ", \"write_error\": %" PRIu64
		", \"bytes\": %" PRIu64 "},\n",
		ctr_get(&s->drop_queue_full), ctr_get(&s->drop_loss),
		ctr_get(&s->drop_policed_queue_full),
		ctr_get(&s->drop_ring_full), ctr_get(&s->drop_write_error),
		ctr_get(&s->drop_bytes));
	fprintf(f, "    \"segmented\": %" PRIu64 ", \"read_errors\": %" PRIu64
		", \"queue_peak_bytes\": %" PRIu64 ",\n",
		ctr_get(&s->segmented), ctr_get(&s->read_errors),
		backlog_bytes(&d->cls[0].sh, ctr_get(&d->cls[0].sh.peak_backlog_ps)));
	fprintf(f, "    \"late\": {\"max_us\": %.1f",
		(double)ctr_get(&s->late_max_ns) / 1e3);
	for (i = 0; i < NLATE; i++)
		fprintf(f, ", \"%s\": %" PRIu64, late_names[i],
			ctr_get(&s->late[i]));
	fprintf(f, "},\n");
	fprintf(f, "    \"policed\": [");
	for (i = 1; i < d->ncls; i++) {
		struct pclass *c = &d->cls[i];

		fprintf(f, "%s\n      {\"dscp\": %d, \"rate_bps\": %" PRIu64
			", \"queue_bytes\": %" PRIu64 ", \"packets\": %" PRIu64
			", \"bytes\": %" PRIu64 ", \"drop_packets\": %" PRIu64
			", \"drop_bytes\": %" PRIu64 ", \"queue_peak_bytes\": %"
			PRIu64 "}", i > 1 ? "," : "", c->dscp, c->sh.rate,
			c->sh.qlimit_bytes, ctr_get(&c->st.packets),
			ctr_get(&c->st.bytes), ctr_get(&c->st.drop_packets),
			ctr_get(&c->st.drop_bytes),
			backlog_bytes(&c->sh, ctr_get(&c->sh.peak_backlog_ps)));
	}
	fprintf(f, "%s],\n", d->ncls > 1 ? "\n    " : "");
	fprintf(f, "    \"non_ip\": {\"packets\": %" PRIu64 ", \"bytes\": %"
		PRIu64 "},\n", ctr_get(&s->nonip_packets),
		ctr_get(&s->nonip_bytes));
	fprintf(f, "    \"dscp\": {");
	for (i = 0, first = 1; i < 64; i++) {
		uint64_t p = ctr_get(&s->dscp_packets[i]);

		if (!p)
			continue;
		fprintf(f, "%s\"%d\": {\"packets\": %" PRIu64 ", \"bytes\": %"
			PRIu64 "}", first ? "" : ", ", i, p,
			ctr_get(&s->dscp_bytes[i]));
		first = 0;
	}
	fprintf(f, "}\n  }");
}

static int write_stats(int final)
{
	char tmp[PATH_MAX];
	FILE *f;
	int i;

	if (!cfg.stats)
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", cfg.stats, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		msg("stats path too long");
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		msg("cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	stats_seq++;
	fprintf(f, "{\n  \"wanemu\": \"%s\", \"pid\": %d, \"seq\": %u, "
		"\"final\": %s,\n", WANEMU_VERSION, (int)getpid(), stats_seq,
		final ? "true" : "false");
	fprintf(f, "  \"started_unix\": %" PRIu64 ", \"elapsed_s\": %.3f,\n",
		start_realtime_s, (double)now_ns() / 1e9);
	fprintf(f, "  \"offload\": %s, \"mtu\": %u, \"tun\": \"%s\", "
		"\"sched\": \"%s\",\n", cfg.offload ? "true" : "false", cfg.mtu,
		cfg.tun, dirs[0].sched_note);
	for (i = 0; i < 2; i++) {
		json_dir(f, &dirs[i]);
		fprintf(f, "%s\n", i == 0 ? "," : "");
	}
	fprintf(f, "}\n");
	if (fclose(f) != 0 || rename(tmp, cfg.stats) < 0) {
		msg("cannot write %s: %s", cfg.stats, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void print_human(void)
{
	int i, j, b;

	for (i = 0; i < 2; i++) {
		struct dir *d = &dirs[i];
		struct dir_stats *s = &d->st;
		uint64_t tot = 0, ok = 0;

		for (b = 0; b < NLATE; b++)
			tot += s->late[b];
		ok = s->late[0] + s->late[1];
		fprintf(stderr, "%s: %s -> %s: rx %" PRIu64 " pkts %" PRIu64
			" bytes, tx %" PRIu64 " pkts %" PRIu64 " bytes\n",
			progname, cfg.ns[i], cfg.ns[!i], s->rx_packets,
			s->rx_bytes, s->tx_packets, s->tx_bytes);
		fprintf(stderr, "%s:   drops: queue-full %" PRIu64 ", loss %"
			PRIu64 ", policed-queue-full %" PRIu64 ", ring-full %"
			PRIu64 ", write-error %" PRIu64 "; split GSO %" PRIu64
			"\n", progname, s->drop_queue_full, s->drop_loss,
			s->drop_policed_queue_full, s->drop_ring_full,
			s->drop_write_error, s->segmented);
		fprintf(stderr, "%s:   timing: %.2f%% of writes within 100 us"
			" of schedule, latest %.1f us\n", progname,
			tot ? 100.0 * (double)ok / (double)tot : 100.0,
			(double)s->late_max_ns / 1e3);
		for (j = 0; j < 64; j++)
			if (s->dscp_packets[j])
				fprintf(stderr, "%s:   dscp %2d: %" PRIu64
					" pkts %" PRIu64 " bytes\n", progname,
					j, s->dscp_packets[j], s->dscp_bytes[j]);
		for (j = 1; j < d->ncls; j++)
			fprintf(stderr, "%s:   policed dscp %d at %" PRIu64
				" bit/s: %" PRIu64 " pkts %" PRIu64
				" bytes queued, %" PRIu64 " dropped\n", progname,
				d->cls[j].dscp, d->cls[j].sh.rate,
				d->cls[j].st.packets, d->cls[j].st.bytes,
				d->cls[j].st.drop_packets);
	}
}

/* ------------------------------------------------------------------ */
/* set-up and main                                                      */
/* ------------------------------------------------------------------ */

/* Default queue: rate x (RTT + 100 ms), at least 100 packets of MTU. */
static uint64_t default_queue(uint64_t rate)
{
	uint64_t rtt = cfg.dir[0].delay_ns + cfg.dir[1].delay_ns;
	double q = (double)rate / 8.0 * (double)(rtt + 100000000ull) / 1e9;
	uint64_t min = 100ull * cfg.mtu;

	return q < (double)min ? min : (uint64_t)q;
}

/*
 * Ring size: room for a full queue, for everything in flight on the delay
 * line (rate x delay), the bucket, record headers (25% margin) and a few
 * maximal records for reservations and wrap-around.  With no rate limit
 * the line is sized for 20 Gbit/s (above what this emulator can forward).
 */
static size_t ring_size(uint64_t rate, uint64_t delay_ns, uint64_t queue,
			size_t max_rec)
{
	double r = rate ? (double)rate : 20e9;
	double bytes = (double)queue + (double)cfg.burst +
		       r / 8.0 * (double)delay_ns / 1e9;
	double size = bytes * 1.25 + 8.0 * (double)max_rec + (1 << 20);

	if (cfg.ring_mem)
		size = (double)cfg.ring_mem;
	if (size > 8.0 * 1073741824.0)
		size = 8.0 * 1073741824.0;
	if (size < 4.0 * (double)max_rec)
		size = 4.0 * (double)max_rec;
	return (size_t)size;
}

static void setup_dir(struct dir *d, int idx, int in_fd, int out_fd)
{
	const struct dir_conf *dc = &cfg.dir[idx];
	size_t max_rec;
	struct epoll_event ev;
	int i;

	d->idx = idx;
	d->name = idx == 0 ? "ab" : "ba";
	d->in_fd = in_fd;
	d->out_fd = out_fd;
	d->delay_ns = dc->delay_ns;
	d->loss = dc->loss;
	d->loss_all = dc->loss >= 1.0;
	d->loss_threshold = 0;
	if (dc->loss > 0 && dc->loss < 1.0) {
		double t = ldexp(dc->loss, 64);   /* loss if rng() < t */

		d->loss_threshold = t >= 18446744073709549568.0 ?
			UINT64_MAX : (uint64_t)t;
	}
	rng_seed(d->rng, cfg.seed + (uint64_t)idx * 0x5851f42d4c957f2dull);
	d->max_read = (cfg.offload ? VNET_HDR_LEN : 0) + MAX_IP_PACKET + READ_SLACK;
	max_rec = sizeof(struct rec) + d->max_read;

	d->scratch = malloc(d->max_read);
	d->segbuf = malloc(d->max_read);
	d->lost = calloc(MAX_SEGS, 1);
	if (!d->scratch || !d->segbuf || !d->lost)
		die("out of memory");

	d->ncls = 1 + dc->nrules;
	memset(d->class_of_dscp, 0, sizeof(d->class_of_dscp));
	for (i = 0; i < d->ncls; i++) {
		struct pclass *c = &d->cls[i];
		uint64_t rate = i ? dc->rules[i - 1].rate : dc->rate;
		uint64_t q = i ? dc->rules[i - 1].queue : dc->queue;

		c->dscp = i ? dc->rules[i - 1].dscp : -1;
		if (i)
			d->class_of_dscp[c->dscp] = (int8_t)i;
		if (!q)
			q = rate ? default_queue(rate) : 0;
		shaper_init(&c->sh, rate, cfg.burst, q);
		ring_init(&c->ring, ring_size(rate, d->delay_ns, q, max_rec));
		if (verbose)
			msg("%s class %d (dscp %d): rate %" PRIu64 " bit/s, "
			    "queue %" PRIu64 " bytes, ring %zu bytes", d->name,
			    i, c->dscp, rate, q, c->ring.size);
	}

	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->epfd < 0 || d->tfd < 0 || d->stopfd < 0)
		die("epoll/timerfd/eventfd: %s", strerror(errno));
	d->armed_ns = UINT64_MAX;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = in_fd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, in_fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	ev.data.fd = d->tfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	ev.data.fd = d->stopfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->stopfd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

/*
 * Start a forwarding thread, as SCHED_FIFO if we may: on this kind of
 * machine a normal-priority thread was seen delivering packets tens of
 * milliseconds late when the endpoints kept the CPUs busy.
 */
static void start_thread(struct dir *d)
{
	struct sched_param sp = { .sched_priority = cfg.rt_prio };
	pthread_attr_t attr;
	int err = 0;

	if (cfg.rt_prio > 0) {
		pthread_attr_init(&attr);
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
		d->sched_ok = 1;
		err = pthread_create(&d->thread, &attr, forward_thread, d);
		pthread_attr_destroy(&attr);
		if (!err) {
			snprintf(d->sched_note, sizeof(d->sched_note),
				 "SCHED_FIFO priority %d", cfg.rt_prio);
			return;
		}
		d->sched_ok = 0;
		snprintf(d->sched_note, sizeof(d->sched_note),
			 "SCHED_OTHER (SCHED_FIFO refused: %s; packets may "
			 "leave late when the machine is busy)", strerror(err));
		msg("note: %s thread: %s", d->name, d->sched_note);
	} else {
		snprintf(d->sched_note, sizeof(d->sched_note),
			 "SCHED_OTHER (--rt-prio 0)");
	}
	err = pthread_create(&d->thread, NULL, forward_thread, d);
	if (err)
		die("pthread_create: %s", strerror(err));
}

static void write_pidfile(void)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (!cfg.pidfile)
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", cfg.pidfile,
		     (int)getpid()) >= (int)sizeof(tmp))
		die("pidfile path too long");
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) != 0 || rename(tmp, cfg.pidfile) < 0)
		die("cannot write %s: %s", cfg.pidfile, strerror(errno));
}

static void remove_pidfile(void)
{
	char buf[32];
	FILE *f;

	if (!cfg.pidfile || !(f = fopen(cfg.pidfile, "r")))
		return;
	if (fgets(buf, sizeof(buf), f) && atoi(buf) == (int)getpid())
		unlink(cfg.pidfile);
	fclose(f);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s --ns-a NS --ns-b NS [options]\n"
"\n"
"Join network namespaces NS-a and NS-b (names under /run/netns, or paths)\n"
"through a TUN device in each and emulate a WAN link between them.\n"
"Options given without -ab/-ba apply to both directions; a->b is what\n"
"namespace a sends to b.\n"
"\n"
"  --tun NAME              TUN device name in both namespaces (tunlfn)\n"
"  --delay T               one-way delay, e.g. 25ms, 500us (bare = ms; 0)\n"
"  --delay-ab T, --delay-ba T\n"
"  --rate R                bottleneck rate of wire bytes (IP header and\n"
"                          up), e.g. 100mbit, 1gbit; 0 = unlimited (0)\n"
"  --rate-ab R, --rate-ba R\n"
"  --queue S               queue limit in bytes, tail drop, e.g. 8MB, 4MiB\n"
"                          (default rate x (RTT + 100 ms), >= 100 MTUs)\n"
"  --queue-ab S, --queue-ba S\n"
"  --burst S               token bucket depth beyond one packet (0)\n"
"  --loss P                random loss per wire packet, e.g. 0.001, 0.1%%\n"
"  --loss-ab P, --loss-ba P\n"
"  --dscp-rate D:R[:S]     packets with DSCP D (0..63 or cs1, af11, ef, le)\n"
"                          get their own rate R and queue S (repeatable);\n"
"                          e.g. 8:8mbit polices CS1 (TOS 0x20) to 8 Mbit/s\n"
"  --dscp-rate-ab D:R[:S], --dscp-rate-ba D:R[:S]\n"
"  --overhead N            extra wire bytes counted per packet (0)\n"
"  --mtu N                 MTU of the TUN devices (1500)\n"
"  --txqueuelen N          TUN transmit queue length (1000)\n"
"  --no-offload            no GSO/checksum offload on the TUNs\n"
"  --rt-prio N             SCHED_FIFO priority, 0 = do not ask (50)\n"
"  --seed N                random seed for loss (default: from the clock)\n"
"  --ring-mem S            bytes per packet ring (default: from rate,\n"
"                          delay and queue)\n"
"  --stats FILE            write counters as JSON on SIGUSR1 and at exit\n"
"  --pidfile FILE          written once the link is forwarding\n"
"  -v, --verbose           --help, --version\n"
"\n"
"Stop with SIGTERM or SIGINT; SIGUSR1 rewrites the stats file.\n",
		progname);
}

enum {
	O_NS_A = 256, O_NS_B, O_TUN, O_DELAY, O_DELAY_AB, O_DELAY_BA, O_RATE,
	O_RATE_AB, O_RATE_BA, O_QUEUE, O_QUEUE_AB, O_QUEUE_BA, O_LOSS,
	O_LOSS_AB, O_LOSS_BA, O_DSCP, O_DSCP_AB, O_DSCP_BA, O_BURST,
	O_OVERHEAD, O_MTU, O_TXQ, O_NO_OFFLOAD, O_RTPRIO, O_SEED, O_RINGMEM,
	O_STATS, O_PIDFILE, O_HELP, O_VERSION
};

static const struct option long_opts[] = {
	{ "ns-a", required_argument, NULL, O_NS_A },
	{ "ns-b", required_argument, NULL, O_NS_B },
	{ "tun", required_argument, NULL, O_TUN },
	{ "delay", required_argument, NULL, O_DELAY },
	{ "delay-ab", required_argument, NULL, O_DELAY_AB },
	{ "delay-ba", required_argument, NULL, O_DELAY_BA },
	{ "rate", required_argument, NULL, O_RATE },
	{ "rate-ab", required_argument, NULL, O_RATE_AB },
	{ "rate-ba", required_argument, NULL, O_RATE_BA },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "queue-ab", required_argument, NULL, O_QUEUE_AB },
	{ "queue-ba", required_argument, NULL, O_QUEUE_BA },
	{ "loss", required_argument, NULL, O_LOSS },
	{ "loss-ab", required_argument, NULL, O_LOSS_AB },
	{ "loss-ba", required_argument, NULL, O_LOSS_BA },
	{ "dscp-rate", required_argument, NULL, O_DSCP },
	{ "dscp-rate-ab", required_argument, NULL, O_DSCP_AB },
	{ "dscp-rate-ba", required_argument, NULL, O_DSCP_BA },
	{ "burst", required_argument, NULL, O_BURST },
	{ "overhead", required_argument, NULL, O_OVERHEAD },
	{ "mtu", required_argument, NULL, O_MTU },
	{ "txqueuelen", required_argument, NULL, O_TXQ },
	{ "no-offload", no_argument, NULL, O_NO_OFFLOAD },
	{ "rt-prio", required_argument, NULL, O_RTPRIO },
	{ "seed", required_argument, NULL, O_SEED },
	{ "ring-mem", required_argument, NULL, O_RINGMEM },
	{ "stats", required_argument, NULL, O_STATS },
	{ "pidfile", required_argument, NULL, O_PIDFILE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 }
};

/* "--name" of the long option with value c, for messages */
static const char *opt_name(int c)
{
	static char buf[32];
	const struct option *o;

	for (o = long_opts; o->name; o++) {
		if (o->val == c) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	}
	return "option";
}

static void parse_args(int argc, char **argv)
{
	struct dir_conf *ab = &cfg.dir[0], *ba = &cfg.dir[1];
	const char *name;
	int c, seed_set = 0;

	while ((c = getopt_long(argc, argv, "v", long_opts, NULL)) != -1) {
		name = opt_name(c);
		switch (c) {
		case O_NS_A: cfg.ns[0] = optarg; break;
		case O_NS_B: cfg.ns[1] = optarg; break;
		case O_TUN:
			if (!*optarg || strlen(optarg) >= IFNAMSIZ ||
			    strchr(optarg, '/') || strchr(optarg, ' '))
				die("--tun: bad interface name '%s' (1..%d "
				    "characters, no '/' or spaces)", optarg,
				    IFNAMSIZ - 1);
			cfg.tun = optarg;
			break;
		case O_DELAY:
			ab->delay_ns = ba->delay_ns = parse_duration(name, optarg);
			break;
		case O_DELAY_AB: ab->delay_ns = parse_duration(name, optarg); break;
		case O_DELAY_BA: ba->delay_ns = parse_duration(name, optarg); break;
		case O_RATE: ab->rate = ba->rate = parse_rate(name, optarg); break;
		case O_RATE_AB: ab->rate = parse_rate(name, optarg); break;
		case O_RATE_BA: ba->rate = parse_rate(name, optarg); break;
		case O_QUEUE:
			ab->queue = ba->queue = parse_size(name, optarg);
			break;
		case O_QUEUE_AB: ab->queue = parse_size(name, optarg); break;
		case O_QUEUE_BA: ba->queue = parse_size(name, optarg); break;
		case O_LOSS: ab->loss = ba->loss = parse_prob(name, optarg); break;
		case O_LOSS_AB: ab->loss = parse_prob(name, optarg); break;
		case O_LOSS_BA: ba->loss = parse_prob(name, optarg); break;
		case O_DSCP:
			add_dscp_rule(ab, name, optarg);
			add_dscp_rule(ba, name, optarg);
			break;
		case O_DSCP_AB: add_dscp_rule(ab, name, optarg); break;
		case O_DSCP_BA: add_dscp_rule(ba, name, optarg); break;
		case O_BURST: cfg.burst = parse_size(name, optarg); break;
		case O_OVERHEAD:
			cfg.overhead = (unsigned)parse_int(name, optarg, 0, 256);
			break;
		case O_MTU:
			cfg.mtu = (unsigned)parse_int(name, optarg, 576, 65535);
			break;
		case O_TXQ:
			cfg.txqueuelen = (unsigned)parse_int(name, optarg, 1, 100000);
			break;
		case O_NO_OFFLOAD: cfg.offload = 0; break;
		case O_RTPRIO:
			cfg.rt_prio = (int)parse_int(name, optarg, 0, 99);
			break;
		case O_SEED:
			cfg.seed = (uint64_t)parse_int(name, optarg, 0, LONG_MAX);
			seed_set = 1;
			break;
		case O_RINGMEM: cfg.ring_mem = parse_size(name, optarg); break;
		case O_STATS: cfg.stats = optarg; break;
		case O_PIDFILE: cfg.pidfile = optarg; break;
		case 'v': verbose++; break;
		case O_HELP: usage(stdout); exit(0);
		case O_VERSION: printf("wanemu %s\n", WANEMU_VERSION); exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (!cfg.ns[0] || !cfg.ns[1])
		die("--ns-a and --ns-b are required (see --help)");
	if (strcmp(cfg.ns[0], cfg.ns[1]) == 0)
		die("--ns-a and --ns-b must be different namespaces");
	if (!seed_set)
		cfg.seed = mono_raw_ns() ^ ((uint64_t)getpid() << 32);
}

int main(int argc, char **argv)
{
	int home, fd_a, fd_b, sig, i, rc = 0;
	sigset_t set;

	mono_base_ns = mono_raw_ns() - NS_PER_SEC; /* keep times > 0 */
	start_realtime_s = (uint64_t)time(NULL);
	parse_args(argc, argv);
	if (geteuid() != 0)
		msg("warning: not running as root; entering namespaces and "
		    "creating TUN devices will probably fail");

	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		die("cannot open /proc/self/ns/net: %s", strerror(errno));
	fd_a = open_tun_in(cfg.ns[0], home);
	fd_b = open_tun_in(cfg.ns[1], home);
	close(home);

	setup_dir(&dirs[0], 0, fd_a, fd_b);
	setup_dir(&dirs[1], 1, fd_b, fd_a);

	/* signals are handled synchronously by the main thread only */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	main_thread = pthread_self();

	for (i = 0; i < 2; i++)
		start_thread(&dirs[i]);
	msg("forwarding %s <-> %s via %s: a->b %" PRIu64 " bit/s +%.3f ms, "
	    "b->a %" PRIu64 " bit/s +%.3f ms, mtu %u, offload %s, %s",
	    cfg.ns[0], cfg.ns[1], cfg.tun, cfg.dir[0].rate,
	    (double)cfg.dir[0].delay_ns / 1e6, cfg.dir[1].rate,
	    (double)cfg.dir[1].delay_ns / 1e6, cfg.mtu,
	    cfg.offload ? "on" : "off", dirs[0].sched_note);
	write_stats(0);
	write_pidfile();

	for (;;) {
		sig = sigwaitinfo(&set, NULL);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			msg("sigwaitinfo: %s", strerror(errno));
			rc = 1;
			break;
		}
		if (sig == SIGUSR1) {
			write_stats(0);
			continue;
		}
		if (sig == SIGUSR2) {
			msg("a forwarding thread failed; stopping");
			rc = 1;
		}
		break;
	}

	for (i = 0; i < 2; i++) {
		uint64_t one = 1;

		if (write(dirs[i].stopfd, &one, sizeof(one)) < 0)
			msg("eventfd write: %s", strerror(errno));
	}
	for (i = 0; i < 2; i++)
		pthread_join(dirs[i].thread, NULL);
	if (write_stats(1) < 0)
		rc = 1;
	print_human();
	remove_pidfile();
	close(fd_a);
	close(fd_b);
	return rc;
}
