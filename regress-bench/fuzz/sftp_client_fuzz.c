/*
 * sftp_client_fuzz: sftp-client.c (patches 0206, 0207-0212) against a fuzzed
 * SFTP server.  README.md describes the input format.
 *
 * sftp-client.c is compiled into the harness with its connection I/O
 * (atomicio6, atomiciov6, poll on the connection) redirected to an
 * in-process server: it parses every request the client sends and answers
 * from a model (a download source of the fuzzer's size, an upload target),
 * in the order and with the twists the fuzz input picks for each reply:
 * reordered replies, short reads, error statuses, EOF at the end, and
 * dishonest ones (raw messages, wrong ids, early EOF, garbage attributes,
 * duplicate replies).  Local files live in a temporary directory.  As
 * openssh-lfn's server (0265, 0266) it also takes the requests an INIT
 * carries and open-copy@openssh-lfn, and makes a download's first reads
 * and its close itself, answered with the same twists.
 *
 * Invariants: no sanitizer report; against an honest server
 *  - a download that succeeds wrote exactly the remote file;
 *  - an upload that succeeds left exactly the local file on the server;
 *  - a failed read (download) or write (upload) makes the transfer fail;
 *  - so does a failed close at an upload's end;
 *  - FUZZ_STRICT=1: so does a failed truncating (size) fsetstat at an
 *    upload's end that leaves the server's file at the wrong length
 *    (a known finding, patch 0209; a new file written whole is fine).
 */
#include "fuzz_common.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "sshbuf.h"
#include "sftp.h"

#define FAKE_IN		1000001
#define FAKE_OUT	1000002

struct pollfd;
size_t fuzz_atomicio6(ssize_t (*)(int, void *, size_t), int, void *, size_t,
    int (*)(void *, size_t), void *);
size_t fuzz_atomiciov6(ssize_t (*)(int, const struct iovec *, int), int,
    const struct iovec *, int, int (*)(void *, size_t), void *);
int fuzz_poll(struct pollfd *, unsigned long, int);

#define atomicio6 fuzz_atomicio6
#define atomiciov6 fuzz_atomiciov6
#define poll(a, b, c) fuzz_poll(a, b, c)
#include "sftp-client.c"
#undef poll
#undef atomicio6
#undef atomiciov6

#include <poll.h>

int showprogress = 0;
volatile sig_atomic_t interrupted = 0;

#define SRC_PATH	"/r/file"
#define UP_PATH		"/r/up"
#define UP_MAX		(16 * 1024 * 1024)

struct req {
	u_char type;
	u_int id;
	char *path, *ext;
	int file;		/* 0 source, 1 upload target, -1 none */
	uint64_t off;
	u_int len;
	u_int pflags;
	struct sshbuf *data;
	Attrib a;
	u_int xflags, rd_id, rd_max, rd_len;	/* open-copy@openssh-lfn */
};

static struct srv {
	struct fuzz_in in;
	struct sshbuf *from, *to;
	struct req *pend;
	size_t npend, apend;
	uint64_t src_size;
	int src_random;
	struct sshbuf *up;	/* the upload target's content */
	u_int read_limit;
	int no_limits;
	u_int budget;
	int dishonest;
	int read_failed, write_failed, setstat_failed, close_failed;
	int open_failed;
	int lfn;		/* open-copy, init-requests@openssh-lfn */
} srv;

static void
srv_reply(struct sshbuf *m)
{
	if (sshbuf_put_stringb(srv.to, m) != 0)
		abort();
	sshbuf_reset(m);
}

static void
status(struct sshbuf *m, u_int id, u_int code)
{
	if (sshbuf_put_u8(m, SSH2_FXP_STATUS) != 0 ||
	    sshbuf_put_u32(m, id) != 0 || sshbuf_put_u32(m, code) != 0 ||
	    sshbuf_put_cstring(m, code ? "fuzz says no" : "ok") != 0 ||
	    sshbuf_put_cstring(m, "") != 0)
		abort();
}

static int
path_file(const char *p)
{
	if (p == NULL)
		return -1;
	if (strcmp(p, SRC_PATH) == 0)
		return 0;
	if (strcmp(p, UP_PATH) == 0)
		return 1;
	return -1;
}

static int
handle_file(const u_char *h, size_t len)
{
	if (len == 2 && h[0] == 'h' && (h[1] == '0' || h[1] == '1'))
		return h[1] - '0';
	return -1;
}

static uint64_t
file_size(int f)
{
	return f == 0 ? srv.src_size : sshbuf_len(srv.up);
}

static void
up_resize(uint64_t size)
{
	size_t have = sshbuf_len(srv.up);
	u_char *p;

	if (size > UP_MAX)
		size = UP_MAX;
	if (size < have) {
		if (sshbuf_consume_end(srv.up, have - size) != 0)
			abort();
	} else if (size > have) {
		if (sshbuf_reserve(srv.up, size - have, &p) != 0)
			abort();
		memset(p, 0, size - have);
	}
}

static void
pend_room(size_t n)
{
	while (srv.npend + n > srv.apend) {
		srv.apend = srv.apend ? srv.apend * 2 : 64;
		if ((srv.pend = realloc(srv.pend,
		    srv.apend * sizeof(*srv.pend))) == NULL)
			abort();
	}
}

static void srv_request(struct sshbuf *);

/* the requests an INIT carries (init-requests@openssh-lfn) */
static void
srv_init_requests(struct sshbuf *b)
{
	struct sshbuf *e, *p;
	char *name;

	while (sshbuf_len(b) > 0) {
		if (sshbuf_get_cstring(b, &name, NULL) != 0 ||
		    sshbuf_froms(b, &e) != 0)
			FUZZ_INVARIANT(0, "bad INIT extension");
		while (srv.lfn && strcmp(name, "init-requests@openssh-lfn") == 0 &&
		    sshbuf_len(e) > 0) {
			if (sshbuf_froms(e, &p) != 0)
				FUZZ_INVARIANT(0, "bad init request");
			srv_request(p);
			sshbuf_free(p);
		}
		sshbuf_free(e);
		free(name);
	}
}

/* a request the client sent: parse what the model needs */
static void
srv_request(struct sshbuf *b)
{
	struct req *r;
	const u_char *h;
	size_t hl;
	u_int v;

	pend_room(1);
	r = &srv.pend[srv.npend++];
	memset(r, 0, sizeof(*r));
	r->file = -1;
	if (sshbuf_get_u8(b, &r->type) != 0 || sshbuf_get_u32(b, &v) != 0)
		FUZZ_INVARIANT(0, "client sent a short request");
	r->id = v;		/* INIT: the version */
	switch (r->type) {
	case SSH2_FXP_OPEN:
		if (sshbuf_get_cstring(b, &r->path, NULL) != 0 ||
		    sshbuf_get_u32(b, &r->pflags) != 0)
			FUZZ_INVARIANT(0, "bad OPEN");
		r->file = path_file(r->path);
		break;
	case SSH2_FXP_STAT:
	case SSH2_FXP_LSTAT:
	case SSH2_FXP_SETSTAT:
	case SSH2_FXP_REALPATH:
		if (sshbuf_get_cstring(b, &r->path, NULL) != 0)
			FUZZ_INVARIANT(0, "bad path request");
		r->file = path_file(r->path);
		break;
	case SSH2_FXP_READ:
	case SSH2_FXP_WRITE:
	case SSH2_FXP_FSTAT:
	case SSH2_FXP_FSETSTAT:
	case SSH2_FXP_CLOSE:
		if (sshbuf_get_string_direct(b, &h, &hl) != 0)
			FUZZ_INVARIANT(0, "bad handle request");
		r->file = handle_file(h, hl);
		if (r->type == SSH2_FXP_READ &&
		    (sshbuf_get_u64(b, &r->off) != 0 ||
		    sshbuf_get_u32(b, &r->len) != 0))
			FUZZ_INVARIANT(0, "bad READ");
		if (r->type == SSH2_FXP_WRITE) {
			/* a copy: a child buffer would pin srv.from */
			if (sshbuf_get_u64(b, &r->off) != 0 ||
			    sshbuf_get_string_direct(b, &h, &hl) != 0)
				FUZZ_INVARIANT(0, "bad WRITE");
			if ((r->data = sshbuf_new()) == NULL ||
			    sshbuf_put(r->data, h, hl) != 0)
				abort();
		}
		if (r->type == SSH2_FXP_FSETSTAT &&
		    decode_attrib(b, &r->a) != 0)
			FUZZ_INVARIANT(0, "bad FSETSTAT");
		break;
	case SSH2_FXP_EXTENDED:
		if (sshbuf_get_cstring(b, &r->ext, NULL) != 0)
			FUZZ_INVARIANT(0, "bad EXTENDED");
		if (strcmp(r->ext, "fsync@openssh.com") == 0 &&
		    sshbuf_get_string_direct(b, &h, &hl) == 0)
			r->file = handle_file(h, hl);
		if (strcmp(r->ext, "open-copy@openssh-lfn") == 0) {
			if (sshbuf_get_cstring(b, &r->path, NULL) != 0 ||
			    sshbuf_skip_string(b) != 0 ||
			    sshbuf_get_u32(b, &r->pflags) != 0 ||
			    decode_attrib(b, &r->a) != 0 ||
			    sshbuf_get_u32(b, &r->xflags) != 0 ||
			    ((r->xflags & 2) != 0 &&
			    (sshbuf_get_u32(b, &r->rd_id) != 0 ||
			    sshbuf_get_u32(b, &r->rd_max) != 0 ||
			    sshbuf_get_u32(b, &r->rd_len) != 0)))
				FUZZ_INVARIANT(0, "bad open-copy");
			r->file = path_file(r->path);
		}
		break;
	case SSH2_FXP_INIT:
		srv_init_requests(b);	/* r may have moved */
		break;
	}
}

/*
 * open-copy's reads of the source, and its close if they reach the end,
 * as openssh-lfn's server makes them (0266): answered after the requests
 * received so far, or (d&0x20) before them; the reply's count, or
 * (d&0x40) a dishonest one
 */
static void
srv_open_reads(struct sshbuf *m, const struct req *r, u_char dir)
{
	uint64_t size = srv.src_size, all, off;
	u_int k, n, len, closed;
	struct req *q;
	size_t at = (dir & 0x20) ? 0 : srv.npend;

	len = r->rd_len ? MINIMUM(r->rd_len, 261120) : 261120;
	all = (size + len - 1) / len + 1;
	k = MINIMUM(r->rd_max, 64);
	n = all <= k ? all : (k > 0 ? k - 1 : 0);
	closed = n > 0 && n == all;
	pend_room(n + 1);
	memmove(srv.pend + at + n + closed, srv.pend + at,
	    (srv.npend - at) * sizeof(*srv.pend));
	srv.npend += n + closed;
	for (k = 0; k < n + closed; k++) {
		q = &srv.pend[at + k];
		memset(q, 0, sizeof(*q));
		q->type = k < n ? SSH2_FXP_READ : SSH2_FXP_CLOSE;
		q->id = r->rd_id + k;
		q->file = 0;
		off = (uint64_t)k * len;
		q->len = len;
		if (off >= size)
			off = size;
		else if (size - off < len)
			q->len = size - off;
		q->off = off;
	}
	if (dir & 0x40) {		/* lies about them */
		srv.dishonest = 1;
		n = fin_u32(&srv.in);
		closed = fin_u8(&srv.in);
	}
	if (sshbuf_put_u32(m, len) != 0 || sshbuf_put_u32(m, n) != 0 ||
	    sshbuf_put_u32(m, closed) != 0)
		abort();
}

static void
req_free(struct req *r)
{
	free(r->path);
	free(r->ext);
	sshbuf_free(r->data);
}

static void
put_attrs(struct sshbuf *m, int f, int garbage)
{
	Attrib a;

	attrib_clear(&a);
	a.flags = SSH2_FILEXFER_ATTR_SIZE | SSH2_FILEXFER_ATTR_PERMISSIONS |
	    SSH2_FILEXFER_ATTR_ACMODTIME;
	a.size = file_size(f);
	a.perm = S_IFREG | 0644;
	a.atime = a.mtime = 1700000000;
	if (garbage) {
		a.flags = fin_u8(&srv.in) & 0x0f;
		a.size = (uint64_t)fin_u32(&srv.in) << (fin_u8(&srv.in) & 31);
		a.perm = fin_u32(&srv.in);
	}
	if (encode_attrib(m, &a) != 0)
		abort();
}

/* answer one pending request, as the next directive says */
static int
srv_generate(void)
{
	struct sshbuf *m;
	struct req r;
	const u_char *d;
	size_t i, n;
	uint64_t size, len;
	u_char dir, code;
	int f;

	if (srv.npend == 0 || srv.budget == 0)
		return 0;
	srv.budget--;
	dir = fin_more(&srv.in) ? fin_u8(&srv.in) : 0;
	i = 0;
	if ((dir & 7) == 1)
		i = fin_u8(&srv.in) % srv.npend;	/* reorder */
	r = srv.pend[i];
	memmove(srv.pend + i, srv.pend + i + 1,
	    (srv.npend - i - 1) * sizeof(*srv.pend));
	srv.npend--;
	if ((m = sshbuf_new()) == NULL)
		abort();
	f = r.file;

	if (r.type == SSH2_FXP_INIT) {
		if (sshbuf_put_u8(m, SSH2_FXP_VERSION) != 0 ||
		    sshbuf_put_u32(m, SSH2_FILEXFER_VERSION) != 0 ||
		    (!srv.no_limits &&
		    (sshbuf_put_cstring(m, "limits@openssh.com") != 0 ||
		    sshbuf_put_cstring(m, "1") != 0)) ||
		    sshbuf_put_cstring(m, "fsync@openssh.com") != 0 ||
		    sshbuf_put_cstring(m, "1") != 0 ||
		    (srv.lfn &&
		    (sshbuf_put_cstring(m, "open-copy@openssh-lfn") != 0 ||
		    sshbuf_put_cstring(m, "1") != 0 ||
		    sshbuf_put_cstring(m, "init-requests@openssh-lfn") != 0 ||
		    sshbuf_put_cstring(m, "1") != 0)))
			abort();
		if ((dir & 7) == 5) {
			srv.dishonest = 1;
			d = fin_bytes(&srv.in, fin_u8(&srv.in), &n);
			if (sshbuf_put(m, d, n) != 0)
				abort();
		}
		srv_reply(m);
		goto out;
	}
	switch (dir & 7) {
	case 3:		/* an error status */
		code = 2 + fin_u8(&srv.in) % 7;
		status(m, r.id, code);
		switch (r.type) {
		case SSH2_FXP_READ: srv.read_failed = 1; break;
		case SSH2_FXP_WRITE: srv.write_failed = 1; break;
		case SSH2_FXP_FSETSTAT:
			/* -p's times and modes may fail (upstream warns) */
			if (r.a.flags & SSH2_FILEXFER_ATTR_SIZE)
				srv.setstat_failed = 1;
			break;
		case SSH2_FXP_CLOSE: srv.close_failed = 1; break;
		case SSH2_FXP_OPEN: srv.open_failed = 1; break;
		default: srv.dishonest |= r.type == SSH2_FXP_EXTENDED; break;
		}
		srv_reply(m);
		goto out;
	case 5:		/* raw: type and body from the fuzzer, right id */
	case 6:		/* ... any id */
		srv.dishonest = 1;
		d = fin_bytes(&srv.in, fin_u8(&srv.in), &n);
		if (sshbuf_put_u8(m, n ? d[0] : 0) != 0 ||
		    sshbuf_put_u32(m, (dir & 7) == 5 ? r.id : fin_u32(&srv.in)) != 0 ||
		    (n > 1 && sshbuf_put(m, d + 1, n - 1) != 0))
			abort();
		srv_reply(m);
		goto out;
	case 7:		/* honest, then the same reply once more */
		if (dir & 0x80)
			srv.dishonest = 1;
		break;
	}

	switch (r.type) {
	case SSH2_FXP_EXTENDED:
		if (strcmp(r.ext, "limits@openssh.com") == 0) {
			if (sshbuf_put_u8(m, SSH2_FXP_EXTENDED_REPLY) != 0 ||
			    sshbuf_put_u32(m, r.id) != 0 ||
			    sshbuf_put_u64(m, 256 * 1024) != 0 ||
			    sshbuf_put_u64(m, srv.read_limit) != 0 ||
			    sshbuf_put_u64(m, srv.read_limit) != 0 ||
			    sshbuf_put_u64(m, 64) != 0)
				abort();
		} else if (strcmp(r.ext, "open-copy@openssh-lfn") == 0) {
			if (f != 0 || (r.pflags & SSH2_FXF_WRITE)) {
				status(m, r.id, SSH2_FX_NO_SUCH_FILE);
				break;
			}
			if (sshbuf_put_u8(m, SSH2_FXP_EXTENDED_REPLY) != 0 ||
			    sshbuf_put_u32(m, r.id) != 0 ||
			    sshbuf_put_string(m, "h0", 2) != 0 ||
			    sshbuf_put_cstring(m, r.path) != 0)
				abort();
			put_attrs(m, 0, 0);
			if (r.xflags & 2)
				srv_open_reads(m, &r, dir);
		} else
			status(m, r.id, f >= 0 || r.file == -1 ?
			    SSH2_FX_OK : SSH2_FX_FAILURE);
		break;
	case SSH2_FXP_OPEN:
		if (f < 0 || (f == 0 && (r.pflags & SSH2_FXF_WRITE))) {
			status(m, r.id, SSH2_FX_NO_SUCH_FILE);
			srv.open_failed = 1;
			break;
		}
		if (f == 1 && (r.pflags & SSH2_FXF_TRUNC))
			up_resize(0);
		if (sshbuf_put_u8(m, SSH2_FXP_HANDLE) != 0 ||
		    sshbuf_put_u32(m, r.id) != 0 ||
		    sshbuf_put_string(m, f ? "h1" : "h0", 2) != 0)
			abort();
		break;
	case SSH2_FXP_STAT:
	case SSH2_FXP_LSTAT:
	case SSH2_FXP_FSTAT:
		if (f < 0) {
			status(m, r.id, SSH2_FX_NO_SUCH_FILE);
			break;
		}
		if ((dir & 7) == 4)
			srv.dishonest = 1;
		if (sshbuf_put_u8(m, SSH2_FXP_ATTRS) != 0 ||
		    sshbuf_put_u32(m, r.id) != 0)
			abort();
		put_attrs(m, f, (dir & 7) == 4);
		break;
	case SSH2_FXP_READ:
		size = file_size(f < 0 ? 0 : f);
		if (f < 0 || r.off >= size || ((dir & 7) == 4)) {
			if (f >= 0 && r.off < size)
				srv.dishonest = 1;	/* early EOF */
			status(m, r.id, f < 0 ? SSH2_FX_FAILURE : SSH2_FX_EOF);
			if (f < 0)
				srv.dishonest = 1;
			break;
		}
		len = MINIMUM((uint64_t)r.len, size - r.off);
		if ((dir & 7) == 2 && len > 1)	/* a short read */
			len = 1 + fin_u16(&srv.in) % (len - 1);
		if ((dir & 7) == 7 && (dir & 0x40)) {
			len += 1 + fin_u8(&srv.in);	/* more than asked */
			srv.dishonest = 1;
		}
		{
			u_char *p;

			if (sshbuf_put_u8(m, SSH2_FXP_DATA) != 0 ||
			    sshbuf_put_u32(m, r.id) != 0 ||
			    sshbuf_put_u32(m, len) != 0 ||
			    sshbuf_reserve(m, len, &p) != 0)
				abort();
			if (f == 0)
				fuzz_fill(p, len, r.off, srv.src_random);
			else
				memcpy(p, sshbuf_ptr(srv.up) + r.off,
				    MINIMUM(len, size - r.off));
		}
		break;
	case SSH2_FXP_WRITE:
		if (f != 1 || r.off > UP_MAX ||
		    sshbuf_len(r.data) > UP_MAX - r.off) {
			status(m, r.id, SSH2_FX_FAILURE);
			srv.write_failed = 1;
			break;
		}
		if (r.off + sshbuf_len(r.data) > sshbuf_len(srv.up))
			up_resize(r.off + sshbuf_len(r.data));
		memcpy(sshbuf_mutable_ptr(srv.up) + r.off,
		    sshbuf_ptr(r.data), sshbuf_len(r.data));
		status(m, r.id, SSH2_FX_OK);
		break;
	case SSH2_FXP_FSETSTAT:
		if (f == 1 && (r.a.flags & SSH2_FILEXFER_ATTR_SIZE))
			up_resize(r.a.size);
		status(m, r.id, f == 1 ? SSH2_FX_OK : SSH2_FX_FAILURE);
		break;
	case SSH2_FXP_CLOSE:
	case SSH2_FXP_SETSTAT:
		status(m, r.id, SSH2_FX_OK);
		break;
	default:
		status(m, r.id, SSH2_FX_OP_UNSUPPORTED);
		break;
	}
	if ((dir & 7) == 7 && (dir & 0x80)) {
		if (sshbuf_put_stringb(srv.to, m) != 0)
			abort();
	}
	srv_reply(m);
 out:
	sshbuf_free(m);
	req_free(&r);
	return 1;
}

/* the client writes a request */
size_t
fuzz_atomiciov6(ssize_t (*f)(int, const struct iovec *, int), int fd,
    const struct iovec *iov, int iovcnt, int (*cb)(void *, size_t), void *arg)
{
	struct sshbuf *b;
	size_t total = 0;
	u_int len;
	int i;

	FUZZ_INVARIANT(fd == FAKE_OUT, "write to fd %d", fd);
	for (i = 0; i < iovcnt; i++) {
		if (sshbuf_put(srv.from, iov[i].iov_base, iov[i].iov_len) != 0)
			abort();
		total += iov[i].iov_len;
	}
	while (sshbuf_len(srv.from) >= 4) {
		len = PEEK_U32(sshbuf_ptr(srv.from));
		FUZZ_INVARIANT(len <= SFTP_MAX_MSG_LENGTH,
		    "client sent a %u byte message", len);
		if (sshbuf_len(srv.from) < 4 + (size_t)len)
			break;
		if (sshbuf_froms(srv.from, &b) != 0)
			abort();
		srv_request(b);
		sshbuf_free(b);
	}
	return total;
}

/* the client reads replies */
size_t
fuzz_atomicio6(ssize_t (*f)(int, void *, size_t), int fd, void *s, size_t n,
    int (*cb)(void *, size_t), void *arg)
{
	size_t have;

	FUZZ_INVARIANT(fd == FAKE_IN, "read from fd %d", fd);
	while (sshbuf_len(srv.to) < n && srv_generate())
		;
	have = MINIMUM(n, sshbuf_len(srv.to));
	if (sshbuf_get(srv.to, s, have) != 0)
		abort();
	if (have < n)
		errno = EPIPE;	/* the server went away */
	return have;
}

int
fuzz_poll(struct pollfd *pfd, unsigned long n, int timeout)
{
	unsigned long i;
	int ready = 0;

	for (i = 0; i < n; i++) {
		FUZZ_INVARIANT(pfd[i].fd == FAKE_IN, "poll on fd %d", pfd[i].fd);
		pfd[i].revents = 0;
		/* a reply has arrived, or the server answers one now */
		if (sshbuf_len(srv.to) == 0 && srv.npend > 0 &&
		    (fin_u8(&srv.in) & 1))
			srv_generate();
		if (sshbuf_len(srv.to) > 0) {
			pfd[i].revents = POLLIN;
			ready++;
		}
	}
	return ready;
}

static char dir_path[64], dl_path[80], ul_path[80];

static void
tmpdir_init(void)
{
	if (dir_path[0] != '\0')
		return;
	snprintf(dir_path, sizeof(dir_path), "/tmp/sftp_client_fuzz.XXXXXX");
	if (mkdtemp(dir_path) == NULL)
		abort();
	snprintf(dl_path, sizeof(dl_path), "%s/dl", dir_path);
	snprintf(ul_path, sizeof(ul_path), "%s/ul", dir_path);
}

static void
tmpdir_cleanup(void)
{
	if (dir_path[0] == '\0')
		return;
	unlink(dl_path);
	unlink(ul_path);
	rmdir(dir_path);
}

/* compare a local file with the filler or a buffer */
static int
file_equals(const char *path, uint64_t size, int random,
    const struct sshbuf *b)
{
	u_char buf[65536], want[65536];
	uint64_t off = 0;
	ssize_t n;
	int fd, ok = 1;

	if ((fd = open(path, O_RDONLY)) == -1)
		return 0;
	while (ok && (n = read(fd, buf, sizeof(buf))) > 0) {
		if (off + n > size) {
			ok = 0;
			break;
		}
		if (b != NULL)
			ok = memcmp(buf, sshbuf_ptr(b) + off, n) == 0;
		else {
			fuzz_fill(want, n, off, random);
			ok = memcmp(buf, want, n) == 0;
		}
		off += n;
	}
	close(fd);
	return ok && off == size;
}

static void
write_local(const char *path, uint64_t size, int random)
{
	u_char buf[65536];
	uint64_t off;
	size_t n;
	int fd;

	if ((fd = open(path, O_WRONLY|O_CREAT|O_TRUNC, 0644)) == -1)
		abort();
	for (off = 0; off < size; off += n) {
		n = MINIMUM(sizeof(buf), size - off);
		fuzz_fill(buf, n, off, random);
		if (write(fd, buf, n) != (ssize_t)n)
			abort();
	}
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int registered;
	struct sftp_conn *volatile conn = NULL;
	volatile int ret = -2;
	u_char op, fl;
	uint64_t usize = 0;
	u_int nreq;
	size_t i;
	Attrib a;
	int ok;
	static const u_int rlimits[4] = { 8192, 32768, 65536, 261120 };

	fuzz_log_init();
	tmpdir_init();
	if (!registered) {
		atexit(tmpdir_cleanup);
		registered = 1;
	}
	memset(&srv, 0, sizeof(srv));
	srv.in.p = data;
	srv.in.len = size;
	srv.budget = 20000;
	if ((srv.from = sshbuf_new()) == NULL || (srv.to = sshbuf_new()) == NULL ||
	    (srv.up = sshbuf_new()) == NULL)
		abort();
	op = fin_u8(&srv.in);
	fl = fin_u8(&srv.in);
	srv.src_size = (uint64_t)fin_u16(&srv.in) << (fl & 7);	/* <= 8 MiB */
	srv.src_random = (fl >> 3) & 1;
	srv.read_limit = rlimits[(fl >> 4) & 3];
	srv.no_limits = (op & 0x80) != 0;
	srv.lfn = (fl >> 6) & 1;
	nreq = (op & 0x40) ? 1 + ((op >> 3) & 7) : 0;	/* -R, or the ramp */
	if ((op & 7) == 1 || (op & 7) == 4) {
		usize = (uint64_t)fin_u16(&srv.in) << (fin_u8(&srv.in) & 7);
		up_resize(fin_u16(&srv.in));	/* what the target held */
		write_local(ul_path, usize, fl >> 7);
	}
	unlink(dl_path);

	if (setjmp(fuzz_jmp) != 0)
		goto done;	/* fatal(): sftp would exit */
	fuzz_jmp_armed = 1;
	conn = sftp_init(FAKE_IN, FAKE_OUT, 0, nreq, 0);
	if (conn == NULL)
		goto done;
	switch (op & 7) {
	case 0:		/* sftp get / scp download */
	case 2:		/* ... after the lookup's lstat (0211) */
	case 3:		/* ... after a stat, with -p */
		if ((op & 7) == 2 &&
		    sftp_lstat(conn, SRC_PATH, 1, &a) != 0)
			break;
		if ((op & 7) == 3 &&
		    sftp_stat(conn, SRC_PATH, 1, &a) != 0)
			break;
		if (srv.lfn)	/* as scp and sftp get do (0265, 0266) */
			sftp_open_ahead_get(conn, SRC_PATH, 1);
		ret = sftp_download(conn, SRC_PATH, dl_path, NULL,
		    (op & 7) == 3, 0, (op >> 4) & 1, (op >> 5) & 1);
		sftp_open_ahead_done(conn);
		fuzz_jmp_armed = 0;
		if (ret == 0 && !srv.dishonest) {
			FUZZ_INVARIANT(!srv.read_failed,
			    "download succeeded after a failed read");
			ok = file_equals(dl_path, srv.src_size,
			    srv.src_random, NULL);
			FUZZ_INVARIANT(ok, "downloaded file differs from the "
			    "remote one (%llu bytes)",
			    (unsigned long long)srv.src_size);
		}
		break;
	case 1:		/* sftp put / scp upload */
	case 4:		/* ... with -p and fsync */
		ret = sftp_upload(conn, ul_path, UP_PATH, (op & 7) == 4, 0,
		    (op & 7) == 4, (op >> 5) & 1);
		fuzz_jmp_armed = 0;
		if (ret == 0 && !srv.dishonest) {
			FUZZ_INVARIANT(!srv.write_failed,
			    "upload succeeded after a failed write");
			FUZZ_INVARIANT(!srv.close_failed,
			    "upload succeeded after a failed close");
			/* 0209: harmless when the file has its length */
			FUZZ_INVARIANT(!fuzz_strict() || !srv.setstat_failed ||
			    sshbuf_len(srv.up) == usize,
			    "upload succeeded after its truncating fsetstat "
			    "failed, server file %zu bytes, local %llu "
			    "(known finding: fsetstat failure ignored)",
			    sshbuf_len(srv.up),
			    (unsigned long long)usize);
			if ((fuzz_strict() || !srv.setstat_failed) &&
			    !srv.close_failed) {
				ok = file_equals(ul_path, sshbuf_len(srv.up), 0,
				    srv.up) && sshbuf_len(srv.up) == usize;
				FUZZ_INVARIANT(ok, "uploaded file differs: "
				    "local %llu bytes, server %zu",
				    (unsigned long long)usize,
				    sshbuf_len(srv.up));
			}
		}
		break;
	case 5:
		(void)sftp_stat(conn, SRC_PATH, 1, &a);
		(void)sftp_lstat(conn, UP_PATH, 1, &a);
		break;
	default:
		{
			struct sftp_limits lim;

			(void)sftp_get_limits(conn, &lim);
		}
		break;
	}
 done:
	fuzz_jmp_armed = 0;
	if (conn != NULL)
		sftp_free(conn);
	for (i = 0; i < srv.npend; i++)
		req_free(&srv.pend[i]);
	free(srv.pend);
	sshbuf_free(srv.from);
	sshbuf_free(srv.to);
	sshbuf_free(srv.up);
	(void)ret;
	return 0;
}
