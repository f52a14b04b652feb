/*
 * wanperf - the measuring tools used with wanemu, so that its tests need
 * nothing beyond a C compiler and iproute2.
 *
 *   wanperf server [-B ADDR] [-p PORT]
 *       TCP sink.  Serves any number of clients at once (a thread each)
 *       until killed.
 *   wanperf client HOST [-p PORT] [-t SECS] [-O SECS] [-Q TOS] [-C CC]
 *                  [--verify] [--lowat BYTES]
 *       Send TCP data to a wanperf server for -t seconds and print one
 *       JSON line with the throughput that the *receiver* measured over
 *       the run minus the first -O seconds (slow start).
 *   wanperf ping HOST [-c COUNT] [-i SECS] [-W SECS] [-s BYTES] [-Q TOS]
 *       ICMP echo (raw socket, needs root); prints "key=value" statistics
 *       (min/avg/median/max RTT in ms, loss).  Exit 0 when any reply came.
 *   wanperf jget FILE|- PATH
 *       Print the JSON value at PATH (keys and array indexes separated by
 *       dots, e.g. ab.dscp.8.bytes) in FILE (- = stdin); exit 1 when it is
 *       absent.
 *
 * Client/server protocol: the client sends a 24-byte hello (magic, flags,
 * duration, omit) and then data.  The server times the transfer from the
 * first data byte; at that moment + duration it answers with one text line
 * of results and the client, on reading it, resets the connection (so the
 * data still queued in its socket does not have to drain at the emulated
 * rate).  With --verify the data is a pattern of the stream offset that
 * the server checks byte by byte.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PORT   5301
#define MAGIC          "WANPERF1"
#define FLAG_VERIFY    1u
#define CHUNK          (256 * 1024)
#define MAX_INTERVALS  3600

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("wanperf: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double parse_num(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		die("%s: bad value '%s' (expected %g..%g)", opt, s, lo, hi);
	return v;
}

/* 64-bit word number k of the --verify pattern. */
static uint64_t pattern_word(uint64_t k)
{
	uint64_t z = k * 0x9e3779b97f4a7c15ull + 0x1234567ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint8_t pattern_byte(uint64_t off)
{
	return (uint8_t)(pattern_word(off >> 3) >> ((off & 7) * 8));
}

struct hello {
	char magic[8];
	uint32_t flags;
	uint32_t duration_ms;
	uint32_t omit_ms;
	uint32_t reserved;
};

static int resolve(const char *host, const char *port, int socktype,
		   struct addrinfo **res)
{
	struct addrinfo hints;
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = socktype;
	hints.ai_flags = AI_NUMERICSERV | (host ? 0 : AI_PASSIVE);
	err = getaddrinfo(host, port, &hints, res);
	if (err)
		die("cannot resolve '%s': %s", host ? host : "*", gai_strerror(err));
	return 0;
}

/* ------------------------------------------------------------------ */
/* server                                                               */
/* ------------------------------------------------------------------ */

static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	size_t got = 0;
	ssize_t n;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (got < len) {
		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		n = recv(fd, (char *)buf + got, len - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static void *serve_one(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint8_t *buf = malloc(CHUNK);
	uint64_t total = 0, win_start_bytes = 0, bad_at = UINT64_MAX;
	uint64_t interval[MAX_INTERVALS] = { 0 };
	double t0 = 0, t_end, t_win = 0, t_last = 0, now, win_s;
	int started = 0, in_window = 0, timeout, verify, sent_result = 0;
	struct hello h;
	char line[65536];
	size_t pos;
	ssize_t n;
	unsigned i, nint;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (!buf || read_full(fd, &h, sizeof(h), 10000) < 0 ||
	    memcmp(h.magic, MAGIC, 8) != 0) {
		free(buf);
		close(fd);
		return NULL;
	}
	verify = !!(h.flags & FLAG_VERIFY);
	t_end = 0;
	for (;;) {
		if (started) {
			now = now_s();
			if (now >= t_end)
				break;
			timeout = (int)((t_end - now) * 1000) + 1;
		} else {
			timeout = 30000;
		}
		if (poll(&p, 1, timeout) < 0 && errno != EINTR)
			break;
		n = recv(fd, buf, CHUNK, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break;
		}
		now = now_s();
		if (!started) {
			started = 1;
			t0 = now;
			t_end = t0 + h.duration_ms / 1000.0;
			t_win = t0;
		}
		if (verify && bad_at == UINT64_MAX) {
			for (i = 0; i < (unsigned)n; i++) {
				if (buf[i] != pattern_byte(total + i)) {
					bad_at = total + i;
					break;
				}
			}
		}
		total += (uint64_t)n;
		t_last = now;
		i = (unsigned)(now - t0);
		if (i < MAX_INTERVALS)
			interval[i] += (uint64_t)n;
		if (!in_window && now - t0 >= h.omit_ms / 1000.0) {
			in_window = 1;
			t_win = now;
			win_start_bytes = total;
		}
	}
	if (!in_window) {       /* shorter than the omitted part: use it all */
		win_start_bytes = 0;
		t_win = t0;
	}
	win_s = t_last - t_win;
	nint = started ? (unsigned)(t_last - t0) + 1 : 0;
	if (nint > MAX_INTERVALS)
		nint = MAX_INTERVALS;
	pos = (size_t)snprintf(line, sizeof(line),
		"bytes=%" PRIu64 " window_bytes=%" PRIu64 " window_s=%.6f "
		"bps=%.0f total_s=%.6f verify=%s bad_offset=%" PRId64
		" intervals_mbps=", total, total - win_start_bytes, win_s,
		win_s > 0 ? (double)(total - win_start_bytes) * 8 / win_s : 0.0,
		t_last - t0, !verify ? "off" : bad_at == UINT64_MAX ? "ok" : "FAIL",
		bad_at == UINT64_MAX ? (int64_t)-1 : (int64_t)bad_at);
	for (i = 0; i < nint && pos < sizeof(line) - 32; i++)
		pos += (size_t)snprintf(line + pos, sizeof(line) - pos, "%s%.1f",
					i ? "," : "", (double)interval[i] * 8 / 1e6);
	snprintf(line + pos, sizeof(line) - pos, "\n");
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) > 0)
		sent_result = 1;
	shutdown(fd, SHUT_WR);
	/* drain until the client resets or closes */
	while (sent_result) {
		if (poll(&p, 1, 10000) <= 0)
			break;
		n = recv(fd, buf, CHUNK, 0);
		if (n <= 0)
			break;
	}
	free(buf);
	close(fd);
	return NULL;
}

static int cmd_server(int argc, char **argv)
{
	const char *bind_addr = NULL, *port = NULL;
	char portbuf[16];
	struct addrinfo *ai;
	int fd, c, one = 1;
	pthread_attr_t attr;
	pthread_t t;

	snprintf(portbuf, sizeof(portbuf), "%d", DEFAULT_PORT);
	port = portbuf;
	while ((c = getopt(argc, argv, "B:p:")) != -1) {
		switch (c) {
		case 'B': bind_addr = optarg; break;
		case 'p': port = optarg; break;
		default: die("usage: wanperf server [-B ADDR] [-p PORT]");
		}
	}
	/* without -B: one dual-stack socket on :: (IPv4 too), else IPv4 */
	resolve(bind_addr ? bind_addr : "::", port, SOCK_STREAM, &ai);
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && !bind_addr && errno == EAFNOSUPPORT) {
		freeaddrinfo(ai);
		resolve("0.0.0.0", port, SOCK_STREAM, &ai);
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6 && !bind_addr) {
		int zero = 0;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0)
		die("bind to port %s: %s", port, strerror(errno));
	if (listen(fd, 64) < 0)
		die("listen: %s", strerror(errno));
	freeaddrinfo(ai);
	signal(SIGPIPE, SIG_IGN);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 1 << 20);
	fprintf(stderr, "wanperf: listening on port %s\n", port);
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept: %s", strerror(errno));
		}
		if (pthread_create(&t, &attr, serve_one, (void *)(intptr_t)cfd))
			close(cfd);
	}
}

/* ------------------------------------------------------------------ */
/* client                                                               */
/* ------------------------------------------------------------------ */

static int connect_retry(const char *host, const char *port, int tos,
			 const char *cc, double timeout_s)
{
	struct addrinfo *ai;
	double deadline = now_s() + timeout_s;
	int fd;

	resolve(host, port, SOCK_STREAM, &ai);
	for (;;) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (tos >= 0) {
			if (ai->ai_family == AF_INET6) {
				if (setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos,
					       sizeof(tos)) < 0)
					die("IPV6_TCLASS: %s", strerror(errno));
			} else if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos,
					      sizeof(tos)) < 0) {
				die("IP_TOS: %s", strerror(errno));
			}
		}
		if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
				     (socklen_t)strlen(cc)) < 0)
			die("TCP_CONGESTION %s: %s", cc, strerror(errno));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if ((errno != ECONNREFUSED && errno != ENETUNREACH &&
		     errno != EHOSTUNREACH && errno != ETIMEDOUT) ||
		    now_s() > deadline)
			die("connect to %s port %s: %s", host, port,
			    strerror(errno));
		close(fd);
		usleep(100000);
	}
	freeaddrinfo(ai);
	return fd;
}

static const char *field(const char *line, const char *key, char *out,
			 size_t outlen)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");

			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, p + kl + 1, n);
			out[n] = '\0';
			return out;
		}
		p += kl;
	}
	snprintf(out, outlen, "0");
	return NULL;
}

static int cmd_client(int argc, char **argv)
{
	const char *host = NULL, *port = NULL, *cc = NULL;
	double duration = 10, omit = 2, t_start, t_done, deadline;
	int tos = -1, verify = 0, fd, i, one = 1, lowat = 4 << 20;
	char portbuf[16], result[70000], v[65536];
	size_t rlen = 0, pos = CHUNK;
	uint64_t base = 0, sent = 0;
	static uint8_t buf[CHUNK];
	struct hello h;
	struct linger lg = { 1, 0 };
	struct pollfd p;
	ssize_t n;

	snprintf(portbuf, sizeof(portbuf), "%d", DEFAULT_PORT);
	port = portbuf;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--verify")) {
			verify = 1;
			continue;
		}
		if (a[0] != '-') {
			if (host)
				die("client: unexpected argument '%s'", a);
			host = a;
			continue;
		}
		if (!val)
			die("client: %s needs a value", a);
		i++;
		if (!strcmp(a, "-p"))
			port = val;
		else if (!strcmp(a, "-t"))
			duration = parse_num(a, val, 0.1, 3600);
		else if (!strcmp(a, "-O"))
			omit = parse_num(a, val, 0, 3600);
		else if (!strcmp(a, "-Q"))
			tos = (int)parse_num(a, val, 0, 255);
		else if (!strcmp(a, "-C"))
			cc = val;
		else if (!strcmp(a, "--lowat"))
			lowat = (int)parse_num(a, val, 16384, 1 << 30);
		else
			die("client: unknown option %s", a);
	}
	if (!host)
		die("usage: wanperf client HOST [-p PORT] [-t SECS] [-O SECS] "
		    "[-Q TOS] [-C CC] [--verify] [--lowat BYTES]");
	if (omit >= duration)
		die("client: -O (%g) must be shorter than -t (%g)", omit, duration);
	signal(SIGPIPE, SIG_IGN);

	fd = connect_retry(host, port, tos, cc, 10);
	setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, 8);
	h.flags = verify ? FLAG_VERIFY : 0;
	h.duration_ms = (uint32_t)(duration * 1000);
	h.omit_ms = (uint32_t)(omit * 1000);
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		die("send: %s", strerror(errno));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!verify)
		for (i = 0; i < CHUNK; i++)
			buf[i] = (uint8_t)(i * 7);

	t_start = now_s();
	deadline = t_start + duration + 60;
	p.fd = fd;
	for (;;) {
		p.events = POLLIN | POLLOUT;
		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (now_s() > deadline)
			die("no result from the server %.0f s after the end",
			    deadline - t_start - duration);
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			n = recv(fd, result + rlen, sizeof(result) - 1 - rlen, 0);
			if (n > 0) {
				rlen += (size_t)n;
				result[rlen] = '\0';
				if (strchr(result, '\n') || rlen == sizeof(result) - 1)
					break;
				continue;
			}
			if (n == 0 || (errno != EAGAIN && errno != EINTR))
				die("connection lost before the result: %s",
				    n == 0 ? "closed by server" : strerror(errno));
		}
		if (!(p.revents & POLLOUT))
			continue;
		if (pos == CHUNK) {
			if (verify) {
				for (i = 0; i < CHUNK / 8; i++) {
					uint64_t w = pattern_word(base / 8 + (uint64_t)i);

					memcpy(buf + i * 8, &w, 8);   /* little-endian */
				}
			}
			pos = 0;
		}
		n = send(fd, buf + pos, CHUNK - pos, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("send: %s", strerror(errno));
		}
		pos += (size_t)n;
		sent += (uint64_t)n;
		if (pos == CHUNK)
			base += CHUNK;
	}
	t_done = now_s();
	/* reset: do not wait for queued data to drain at the emulated rate */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);

	printf("{\"host\": \"%s\", \"tos\": %d, \"seconds\": %.3f, "
	       "\"sent_bytes\": %" PRIu64, host, tos < 0 ? 0 : tos,
	       t_done - t_start, sent);
	printf(", \"bytes\": %s", field(result, "bytes", v, sizeof(v)) ? v : "0");
	printf(", \"window_bytes\": %s",
	       field(result, "window_bytes", v, sizeof(v)) ? v : "0");
	printf(", \"window_s\": %s", field(result, "window_s", v, sizeof(v)) ? v : "0");
	printf(", \"bps\": %s", field(result, "bps", v, sizeof(v)) ? v : "0");
	printf(", \"verify\": \"%s\"", field(result, "verify", v, sizeof(v)) ? v : "?");
	printf(", \"bad_offset\": %s",
	       field(result, "bad_offset", v, sizeof(v)) ? v : "-1");
	printf(", \"intervals_mbps\": [%s]}\n",
	       field(result, "intervals_mbps", v, sizeof(v)) ? v : "");
	field(result, "verify", v, sizeof(v));
	return strcmp(v, "FAIL") == 0 ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* ping                                                                 */
/* ------------------------------------------------------------------ */

static uint16_t icmp_csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static double real_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmd_ping(int argc, char **argv)
{
	const char *host = NULL;
	double interval = 0.2, wait_s = 2, t, next, last_send = 0;
	double *sent_at, *rtt, sum = 0, sum2 = 0, mn = 1e9, mx = 0;
	int count = 5, size = 56, tos = -1, quiet = 0, fd, i, c;
	int nsent = 0, nrecv = 0, dups = 0;
	uint8_t pkt[65536], in[65536];
	char cbuf[256];
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	double t_rx;
	uint16_t id = (uint16_t)getpid();
	uint8_t *seen;
	struct sockaddr_in dst, from;
	struct pollfd p;
	struct addrinfo *ai;
	struct icmphdr *ic;
	ssize_t n;

	while ((c = getopt(argc, argv, "c:i:W:s:Q:q")) != -1) {
		switch (c) {
		case 'c': count = (int)parse_num("-c", optarg, 1, 1000000); break;
		case 'i': interval = parse_num("-i", optarg, 0.0001, 60); break;
		case 'W': wait_s = parse_num("-W", optarg, 0.001, 600); break;
		case 's': size = (int)parse_num("-s", optarg, 0, 65000); break;
		case 'Q': tos = (int)parse_num("-Q", optarg, 0, 255); break;
		case 'q': quiet = 1; break;
		default:
			die("usage: wanperf ping HOST [-c COUNT] [-i SECS] "
			    "[-W SECS] [-s BYTES] [-Q TOS] [-q]");
		}
	}
	if (optind + 1 != argc)
		die("usage: wanperf ping HOST [-c COUNT] [-i SECS] [-W SECS] "
		    "[-s BYTES] [-Q TOS] [-q]");
	host = argv[optind];
	{
		struct addrinfo hints;

		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_INET;
		hints.ai_socktype = SOCK_RAW;
		if (getaddrinfo(host, NULL, &hints, &ai))
			die("ping: cannot resolve IPv4 address '%s'", host);
		memcpy(&dst, ai->ai_addr, sizeof(dst));
		freeaddrinfo(ai);
	}
	fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (fd < 0)
		die("ping: raw socket: %s (needs root)", strerror(errno));
	if (tos >= 0)
		setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	/*
	 * RTTs are taken from the kernel's receive timestamp (CLOCK_REALTIME)
	 * so that the wake-up latency of this process on a busy machine does
	 * not count; the send time is read just before sendto().
	 */
	i = 1;
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &i, sizeof(i));
	sent_at = calloc((size_t)count, sizeof(double));
	rtt = calloc((size_t)count, sizeof(double));
	seen = calloc((size_t)count, 1);
	if (!sent_at || !rtt || !seen)
		die("out of memory");

	next = now_s();
	p.fd = fd;
	p.events = POLLIN;
	for (;;) {
		t = now_s();
		if (nsent < count && t >= next) {
			ic = (struct icmphdr *)(void *)pkt;
			memset(pkt, 0, sizeof(*ic) + (size_t)size);
			ic->type = ICMP_ECHO;
			ic->un.echo.id = htons(id);
			ic->un.echo.sequence = htons((uint16_t)nsent);
			for (i = 0; i < size; i++)
				pkt[sizeof(*ic) + (size_t)i] = (uint8_t)i;
			ic->checksum = icmp_csum(pkt, sizeof(*ic) + (size_t)size);
			sent_at[nsent] = real_s();
			if (sendto(fd, pkt, sizeof(*ic) + (size_t)size, 0,
				   (struct sockaddr *)&dst, sizeof(dst)) < 0 && !quiet)
				fprintf(stderr, "wanperf: ping: sendto: %s\n",
					strerror(errno));
			last_send = now_s();
			nsent++;
			next += interval;
			if (next < t)
				next = t + interval;
			continue;
		}
		if (nsent == count && (nrecv == count || t - last_send >= wait_s))
			break;
		{
			double until = nsent < count ? next : last_send + wait_s;
			int ms = (int)((until - t) * 1000);

			if (ms < 0)
				ms = 0;
			if (poll(&p, 1, ms) <= 0)
				continue;
		}
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = in;
		iov.iov_len = sizeof(in);
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		n = recvmsg(fd, &mh, 0);
		t_rx = real_s();
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				t_rx = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
			}
		}
		if (n < (ssize_t)(sizeof(struct iphdr) + sizeof(*ic)))
			continue;
		{
			unsigned ihl = (in[0] & 0x0f) * 4u;
			unsigned seq;

			if ((size_t)n < ihl + sizeof(*ic) ||
			    from.sin_addr.s_addr != dst.sin_addr.s_addr)
				continue;
			ic = (struct icmphdr *)(void *)(in + ihl);
			if (ic->type != ICMP_ECHOREPLY || ntohs(ic->un.echo.id) != id)
				continue;
			seq = ntohs(ic->un.echo.sequence);
			/* sequence numbers wrap at 65536: take the newest match */
			while (seq + 65536u < (unsigned)nsent)
				seq += 65536u;
			if (seq >= (unsigned)nsent)
				continue;
			if (seen[seq]) {
				dups++;
				continue;
			}
			seen[seq] = 1;
			rtt[nrecv++] = (t_rx - sent_at[seq]) * 1e3;
		}
	}
	for (i = 0; i < nrecv; i++) {
		sum += rtt[i];
		sum2 += rtt[i] * rtt[i];
		if (rtt[i] < mn)
			mn = rtt[i];
		if (rtt[i] > mx)
			mx = rtt[i];
	}
	qsort(rtt, (size_t)nrecv, sizeof(double), cmp_double);
	printf("sent=%d received=%d dups=%d loss_pct=%.3f", nsent, nrecv, dups,
	       nsent ? 100.0 * (nsent - nrecv) / nsent : 0.0);
	if (nrecv) {
		double avg = sum / nrecv;

		printf(" min_ms=%.3f avg_ms=%.3f median_ms=%.3f max_ms=%.3f "
		       "mdev_ms=%.3f", mn, avg, rtt[nrecv / 2], mx,
		       sqrt(fmax(0, sum2 / nrecv - avg * avg)));
	}
	printf("\n");
	return nrecv ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* jget: a tiny JSON path lookup                                        */
/* ------------------------------------------------------------------ */

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Skip one JSON value; NULL on malformed input. */
static const char *skip_value(const char *p, int depth)
{
	p = ws(p);
	if (depth > 64)
		return NULL;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		return *p == '"' ? p + 1 : NULL;
	}
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = skip_value(p, depth + 1);     /* key */
				if (!p || *(p = ws(p)) != ':')
					return NULL;
				p++;
			}
			p = skip_value(p, depth + 1);
			if (!p)
				return NULL;
			p = ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (!*p || strchr(",:]}", *p))
		return NULL;
	while (*p && !strchr(",]} \t\r\n", *p))
		p++;
	return p;
}

/* Find member `key` (object) or element number `key` (array) of value p. */
static const char *child(const char *p, const char *key, size_t klen)
{
	p = ws(p);
	if (*p == '{') {
		p = ws(p + 1);
		while (*p == '"') {
			const char *k = p + 1, *v;

			v = skip_value(p, 0);
			if (!v || *(v = ws(v)) != ':')
				return NULL;
			if ((size_t)(v - 1 - k) == klen && !memcmp(k, key, klen))
				return ws(v + 1);
			p = skip_value(v + 1, 0);
			if (!p || *(p = ws(p)) != ',')
				return NULL;
			p = ws(p + 1);
		}
		return NULL;
	}
	if (*p == '[') {
		char num[32];
		long idx;

		if (klen == 0 || klen >= sizeof(num))
			return NULL;
		memcpy(num, key, klen);
		num[klen] = '\0';
		idx = strtol(num, NULL, 10);
		p = ws(p + 1);
		for (; idx > 0; idx--) {
			p = skip_value(p, 0);
			if (!p || *(p = ws(p)) != ',')
				return NULL;
			p = ws(p + 1);
		}
		return *p == ']' ? NULL : p;
	}
	return NULL;
}

static int cmd_jget(int argc, char **argv)
{
	const char *p, *path, *end;
	char *text;
	FILE *f;
	long len;

	if (argc != 3)
		die("usage: wanperf jget FILE|- PATH   (PATH like ab.dscp.8.bytes)");
	f = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "r");
	if (!f)
		die("jget: cannot open %s: %s", argv[1], strerror(errno));
	/* read it all; works for pipes too */
	text = NULL;
	len = 0;
	for (;;) {
		size_t n;

		text = realloc(text, (size_t)len + 65536 + 1);
		if (!text)
			die("jget: out of memory");
		n = fread(text + len, 1, 65536, f);
		len += (long)n;
		if (n < 65536)
			break;
	}
	if (ferror(f))
		die("jget: cannot read %s", argv[1]);
	text[len] = '\0';
	if (f != stdin)
		fclose(f);
	p = text;
	for (path = argv[2]; p && *path; path = *end ? end + 1 : end) {
		end = strchr(path, '.');
		if (!end)
			end = path + strlen(path);
		p = child(p, path, (size_t)(end - path));
	}
	if (!p)
		return 1;
	end = skip_value(p, 0);
	if (!end)
		die("jget: malformed JSON in %s", argv[1]);
	if (*p == '"')
		printf("%.*s\n", (int)(end - p - 2), p + 1);
	else
		printf("%.*s\n", (int)(end - p), p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "server"))
		return cmd_server(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "client"))
		return cmd_client(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "ping"))
		return cmd_ping(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "jget"))
		return cmd_jget(argc - 1, argv + 1);
	fprintf(stderr, "usage: wanperf server|client|ping|jget ...  "
		"(see the comment at the top of wanperf.c)\n");
	return 2;
}
