/*
 * sftp_client_fuzz: sftp-client.c (patches 0206, 0207-0212, 0271) against a fuzzed
 * SFTP server.  README.md describes the input format.
 *
 * sftp-client.c is compiled into the harness with its connection I/O
 * (atomicio6, atomiciov6, the reply engine's poll) redirected to an
 * in-process server: it parses every request the client sends and answers
 * from a model (a download source of the fuzzer's size, an upload target),
 * in the order and with the twists the fuzz input picks for each reply:
 * reordered replies, short reads, error statuses, EOF at the end, and
 * dishonest ones (raw messages, wrong ids, early EOF, garbage attributes,
 * duplicate replies).  Local files live in a temporary directory.
 *
 * Invariants: no sanitizer report; against an honest server
 *  - a download that succeeds wrote exactly the remote file;
 *  - an upload that succeeds left exactly the local file on the server;
 *  - a failed read (download) or write (upload) makes the transfer fail;
 *  - so does a failed close at an upload's end;
 *  - FUZZ_STRICT=1: so does a failed truncating (size) fsetstat at an
 *    upload's end that leaves the server's file at the wrong length
 *    (a known finding, patch 0210, was 0209; a new file written whole is fine);
 *  - the reply engine runs a completion at most once, and only one it
 *    entered; when sftp_free() frees a connection, each of its
 *    completions has run exactly once and its request table and held
 *    queue are empty (fuzz_req_*(), fuzz_conn_freed()).
 */
#include "fuzz_common.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <dirent.h>
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

/*
 * The reply engine's bookkeeping, seen from outside (sftp-client.c is not
 * changed for the harness): a completion entered in a connection's table
 * (TAILQ_INSERT_TAIL of a struct sftp_req, in req_add()), one run
 * (req_run()'s call done(conn, id, type, msg, ctx)), and a connection
 * freed (sftp_free()'s freezero()).  Checked in fuzz_req_*() below.
 */
#include "includes.h"
#include <sys/queue.h>
struct sftp_req;
struct sftp_conn;
static void fuzz_req_added(void *, const struct sftp_req *);
static void fuzz_nothing(void *, const void *);
static void fuzz_conn_freed(struct sftp_conn *);
static void fuzz_conn_nothing(const void *);
struct sshbuf;
static void fuzz_req_ran(void (*)(struct sftp_conn *, u_int, u_char,
    struct sshbuf *, void *), struct sftp_conn *, u_int, u_char,
    struct sshbuf *, void *);
#undef TAILQ_INSERT_TAIL
#define TAILQ_INSERT_TAIL(head, elm, field) do { \
	(elm)->field.tqe_next = NULL; \
	(elm)->field.tqe_prev = (head)->tqh_last; \
	*(head)->tqh_last = (elm); \
	(head)->tqh_last = &(elm)->field.tqe_next; \
	_Generic((elm), struct sftp_req *: fuzz_req_added, \
	    default: fuzz_nothing)((void *)(head), (elm)); \
} while (0)
#define done(c, i, t, m, x) fuzz_req_ran(done, c, i, t, m, x)
#define freezero(p, n) (_Generic((p), struct sftp_conn *: fuzz_conn_freed, \
	default: fuzz_conn_nothing)(p), freezero(p, n))

#define atomicio6 fuzz_atomicio6
#define atomiciov6 fuzz_atomiciov6
#define poll(a, b, c) fuzz_poll(a, b, c)
#include "sftp-client.c"
#undef poll
#undef atomicio6
#undef atomiciov6
#undef done
#undef freezero

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
	char *path2;		/* RENAME's new path */
	int file;		/* 0 source, 1 upload target, -1 none */
	uint64_t off;
	u_int len;
	u_int pflags;
	struct sshbuf *data;
	Attrib a;
	int hidx;		/* dir mode: the handle's slot, or -1 */
};

static struct srv {
	struct fuzz_in in;
	struct sshbuf *from, *to;
	struct req *pend;
	size_t npend, apend;
	uint64_t src_size;
	int src_random;
	struct sshbuf *up;	/* the upload target's content */
	size_t up_cap;		/* its room */
	u_int read_limit;
	int no_limits;
	u_int budget;
	int dishonest;
	int read_failed, write_failed, setstat_failed, close_failed;
	int open_failed;
	/* dir mode (op 7): a small filesystem, sftp_{down,up}load_dir() */
	int dirmode;
	u_int nreply;		/* (FUZZ_DEBUG=1 says which reply is which) */
	uint64_t data_budget;	/* bytes of DATA served and WRITE taken */
} srv;

static void tree_answer(struct sshbuf *, struct req *, u_char);
static void tree_error(struct req *);

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

/*
 * room for size bytes in b, doubled as it grows: an sshbuf grows by what
 * is asked, so a file written 8 KiB at a time would be copied over and
 * over (8 MiB: seconds)
 */
static int
buf_room(struct sshbuf *b, size_t *capp, size_t size)
{
	size_t cap = MAXIMUM(size, 2 * *capp);
	int r;

	if (size <= *capp)
		return 0;
	if ((r = sshbuf_allocate(b, cap - sshbuf_len(b))) == 0)
		*capp = cap;
	return r;
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
		if (buf_room(srv.up, &srv.up_cap, size) != 0 ||
		    sshbuf_reserve(srv.up, size - have, &p) != 0)
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
	r->hidx = -1;
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
	case SSH2_FXP_OPENDIR:
	case SSH2_FXP_MKDIR:
		if (sshbuf_get_cstring(b, &r->path, NULL) != 0)
			FUZZ_INVARIANT(0, "bad path request");
		r->file = path_file(r->path);
		if (r->type == SSH2_FXP_SETSTAT &&
		    decode_attrib(b, &r->a) != 0)
			FUZZ_INVARIANT(0, "bad SETSTAT");
		break;
	case SSH2_FXP_REMOVE:
	case SSH2_FXP_RENAME:
		if (sshbuf_get_cstring(b, &r->path, NULL) != 0 ||
		    (r->type == SSH2_FXP_RENAME &&
		    sshbuf_get_cstring(b, &r->path2, NULL) != 0))
			FUZZ_INVARIANT(0, "bad REMOVE or RENAME");
		break;
	case SSH2_FXP_READ:
	case SSH2_FXP_WRITE:
	case SSH2_FXP_FSTAT:
	case SSH2_FXP_FSETSTAT:
	case SSH2_FXP_CLOSE:
	case SSH2_FXP_READDIR:
		if (sshbuf_get_string_direct(b, &h, &hl) != 0)
			FUZZ_INVARIANT(0, "bad handle request");
		r->file = handle_file(h, hl);
		r->hidx = hl == 3 && h[0] == 'H' ? (h[1] << 8 | h[2]) : -1;
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
		    sshbuf_get_string_direct(b, &h, &hl) == 0) {
			r->file = handle_file(h, hl);
			r->hidx = hl == 3 && h[0] == 'H' ?
			    (h[1] << 8 | h[2]) : -1;
		}
		break;
	}
}

static void
req_free(struct req *r)
{
	free(r->path);
	free(r->path2);
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
	size_t i, n, at;
	uint64_t size, len;
	u_char dir, code;
	int f;

	if (srv.npend == 0 || srv.budget == 0)
		return 0;	/* (budget 0: the server went away) */
	srv.budget--;
	at = srv.in.off;
	dir = fin_more(&srv.in) ? fin_u8(&srv.in) : 0;
	i = 0;
	if ((dir & 7) == 1) {
		i = fin_u8(&srv.in) % srv.npend;	/* reorder */
		/* dir mode: a handle's requests are processed in order */
		for (n = 0; srv.dirmode && srv.pend[i].hidx >= 0 && n < i; n++)
			if (srv.pend[n].hidx == srv.pend[i].hidx) {
				i = n;
				break;
			}
	}
	r = srv.pend[i];
	memmove(srv.pend + i, srv.pend + i + 1,
	    (srv.npend - i - 1) * sizeof(*srv.pend));
	srv.npend--;
	if ((m = sshbuf_new()) == NULL)
		abort();
	f = r.file;
	debug3("fuzz: reply %u: to type %u id %u, directive 0x%02x "
	    "(input byte %zu)", srv.nreply++, r.type, r.id, dir, at);

	if (r.type == SSH2_FXP_INIT) {
		if (sshbuf_put_u8(m, SSH2_FXP_VERSION) != 0 ||
		    sshbuf_put_u32(m, SSH2_FILEXFER_VERSION) != 0 ||
		    (!srv.no_limits &&
		    (sshbuf_put_cstring(m, "limits@openssh.com") != 0 ||
		    sshbuf_put_cstring(m, "1") != 0)) ||
		    sshbuf_put_cstring(m, "fsync@openssh.com") != 0 ||
		    sshbuf_put_cstring(m, "1") != 0)
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
		case SSH2_FXP_CLOSE:
			if (srv.dirmode)
				tree_error(&r);	/* a file written: failed */
			else
				srv.close_failed = 1;
			break;
		case SSH2_FXP_FSETSTAT:
			/* -p's times and modes may fail (upstream warns) */
			if (r.a.flags & SSH2_FILEXFER_ATTR_SIZE)
				srv.setstat_failed = 1;
			break;
		case SSH2_FXP_OPEN: srv.open_failed = 1; break;
		case SSH2_FXP_REMOVE:
			/* "no such file" for a name it holds: a lie */
			srv.dishonest |= code == SSH2_FX_NO_SUCH_FILE;
			break;
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

	if (srv.dirmode) {
		tree_answer(m, &r, dir);
		goto reply;
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
 reply:
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

/*
 * The connection's poll(): sftp-client.c's reply engine (conn_poll()) and
 * handle_dest_replies(); nothing else polls the connection.
 *  - POLLIN|POLLOUT, waiting (a request sent while completions are out):
 *    while the server has requests to answer, an input byte says whether
 *    it answers first (bit 0: a reply, generated now if none is waiting,
 *    is readable and the request cannot go yet; the engine reads it into
 *    its held queue and polls again) or the request goes;
 *  - POLLIN, waiting (sftp_pump() blocking): the server answers, or, with
 *    nothing left to answer, has gone (the read reports it); no input;
 *  - POLLIN, not waiting: readable when a reply is waiting; no input.
 */
int
fuzz_poll(struct pollfd *pfd, unsigned long n, int timeout)
{
	unsigned long i;
	size_t at;
	int in = -1, out = -1, ready = 0, first;

	for (i = 0; i < n; i++) {
		pfd[i].revents = 0;
		if (pfd[i].fd == FAKE_IN && pfd[i].events == POLLIN)
			in = i;
		else if (pfd[i].fd == FAKE_OUT && pfd[i].events == POLLOUT)
			out = i;
		else
			FUZZ_INVARIANT(0, "poll on fd %d (events %d)",
			    pfd[i].fd, pfd[i].events);
	}
	if (out != -1) {
		FUZZ_INVARIANT(in != -1 && timeout == -1, "poll for a write "
		    "without reading (fds %lu, timeout %d)", n, timeout);
		at = srv.in.off;
		first = srv.npend > 0 && (fin_u8(&srv.in) & 1);
		debug3("fuzz: send poll: %s (input byte %zu)", srv.npend == 0 ?
		    "nothing to answer, the request goes" : first ?
		    "the server answers first" : "the request goes", at);
		if (first && sshbuf_len(srv.to) == 0)
			srv_generate();
		if (first || sshbuf_len(srv.to) > 0) {
			pfd[in].revents = POLLIN;	/* (or the EOF) */
			ready++;
		}
		if (!first) {
			pfd[out].revents = POLLOUT;
			ready++;
		}
		return ready;
	}
	if (in == -1)
		return 0;
	if (timeout != 0 && sshbuf_len(srv.to) == 0)
		(void)srv_generate();
	if (timeout != 0 || sshbuf_len(srv.to) > 0) {
		pfd[in].revents = POLLIN;	/* (or the EOF) */
		ready++;
	}
	return ready;
}

/*
 * The engine's invariants (doc/sftp-client-engine.md, 2.2): a completion
 * runs at most once, and only one entered in the table; when sftp_free()
 * frees a connection, each of its completions has run exactly once and
 * the table and the held queue are empty.  On the engine's fatal() paths
 * its LOST pass runs them; on any other fatal() the harness's sftp_free()
 * does.  The hooks are macros around the include above.
 */
struct fuzz_reg {
	struct sftp_conn *conn;
	u_int id;
	int ran;
};
static struct fuzz_reg *fuzz_regs;
static size_t fuzz_nregs, fuzz_aregs, fuzz_regs_open;

static void
fuzz_regs_reset(void)
{
	fuzz_nregs = fuzz_regs_open = 0;
}

static void
fuzz_nothing(void *head, const void *elm)
{
}

static void
fuzz_conn_nothing(const void *p)
{
}

static void
fuzz_req_added(void *head, const struct sftp_req *e)
{
	struct sftp_conn *conn = (struct sftp_conn *)((char *)head -
	    offsetof(struct sftp_conn, reqs));

	if (e->done == NULL)
		return;		/* a synchronous caller's */
	if (fuzz_nregs == fuzz_aregs) {
		fuzz_aregs = fuzz_aregs ? 2 * fuzz_aregs : 1024;
		if ((fuzz_regs = realloc(fuzz_regs,
		    fuzz_aregs * sizeof(*fuzz_regs))) == NULL)
			abort();
	}
	fuzz_regs[fuzz_nregs].conn = conn;
	fuzz_regs[fuzz_nregs].id = e->id;
	fuzz_regs[fuzz_nregs++].ran = 0;
}

static void
fuzz_req_ran(sftp_done_fn *fn, struct sftp_conn *conn, u_int id,
    u_char type, struct sshbuf *msg, void *ctx)
{
	size_t i;

	/* mostly in order: from the first one that has not run */
	while (fuzz_regs_open < fuzz_nregs && fuzz_regs[fuzz_regs_open].ran)
		fuzz_regs_open++;
	for (i = fuzz_regs_open; i < fuzz_nregs; i++) {
		if (fuzz_regs[i].conn == conn && fuzz_regs[i].id == id &&
		    !fuzz_regs[i].ran)
			break;
	}
	FUZZ_INVARIANT(i < fuzz_nregs, "completion of request %u run "
	    "again, or never entered (type %u)", id, type);
	FUZZ_INVARIANT((type == SFTP_REPLY_LOST) == (msg == NULL),
	    "completion of request %u: type %u, msg %p", id, type, msg);
	fuzz_regs[i].ran = 1;
	fn(conn, id, type, msg, ctx);
}

static void
fuzz_conn_freed(struct sftp_conn *conn)
{
	size_t i, j, n;

	FUZZ_INVARIANT(TAILQ_EMPTY(&conn->reqs) && conn->nreqs == 0 &&
	    conn->ndone == 0 && conn->allow == 0, "sftp_free(): %u requests "
	    "(%u with completions) left in the table", conn->nreqs,
	    conn->ndone);
	FUZZ_INVARIANT(TAILQ_EMPTY(&conn->held) && conn->nheld == 0 &&
	    conn->held_bytes == 0, "sftp_free(): %u replies (%zu bytes) "
	    "left held", conn->nheld, conn->held_bytes);
	for (i = j = n = 0; i < fuzz_nregs; i++) {
		if (fuzz_regs[i].conn != conn) {
			fuzz_regs[j++] = fuzz_regs[i];
			continue;
		}
		FUZZ_INVARIANT(fuzz_regs[i].ran, "sftp_free(): the completion "
		    "of request %u never ran", fuzz_regs[i].id);
		n++;
	}
	debug3("fuzz: sftp_free(): %zu completions, each run once", n);
	fuzz_nregs = j;
	fuzz_regs_open = 0;
}

static char dir_path[64], dl_path[80], ul_path[80];
static char dd_path[80], up_path[80], upbig_path[80];

static void write_local(const char *, uint64_t, int);

/* remove a tree the client made (its modes may lack r or x) */
static void
rm_tree(const char *path)
{
	struct dirent *dp;
	struct stat sb;
	DIR *dirp;
	char *p;

	if (lstat(path, &sb) == -1)
		return;
	if (!S_ISDIR(sb.st_mode)) {
		unlink(path);
		return;
	}
	chmod(path, 0700);
	if ((dirp = opendir(path)) != NULL) {
		while ((dp = readdir(dirp)) != NULL) {
			if (strcmp(dp->d_name, ".") == 0 ||
			    strcmp(dp->d_name, "..") == 0)
				continue;
			if (asprintf(&p, "%s/%s", path, dp->d_name) == -1)
				abort();
			rm_tree(p);
			free(p);
		}
		closedir(dirp);
	}
	rmdir(path);
}

/*
 * The local tree dir mode uploads: files of 0 bytes to 40 KiB, a
 * subdirectory, symlinks to a file and to the subdirectory, a FIFO (never
 * to be opened); upbig adds one that sftp-pipeline.c leaves to
 * sftp_upload() (4 MiB + 1)
 */
static void
local_tree(const char *top, int big)
{
	char p[160];

	if (mkdir(top, 0755) == -1)
		abort();
#define L(name) (snprintf(p, sizeof(p), "%s/%s", top, name), p)
	write_local(L("a"), 5, 0);
	write_local(L("b"), 20000, 1);
	write_local(L("empty"), 0, 0);
	if (mkdir(L("sub"), 0750) == -1)
		abort();
	write_local(L("sub/c"), 40000, 1);
	write_local(L("sub/d"), 100, 0);
	if (symlink("a", L("l")) == -1 || symlink("sub", L("ls")) == -1 ||
	    mkfifo(L("fifo"), 0644) == -1)
		abort();
	if (big)
		write_local(L("big"), 4 * 1024 * 1024 + 1, 1);
#undef L
}

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
	snprintf(dd_path, sizeof(dd_path), "%s/dd", dir_path);
	snprintf(up_path, sizeof(up_path), "%s/up", dir_path);
	snprintf(upbig_path, sizeof(upbig_path), "%s/upbig", dir_path);
	local_tree(up_path, 0);
	local_tree(upbig_path, 1);
}

static void
tmpdir_cleanup(void)
{
	if (dir_path[0] == '\0')
		return;
	rm_tree(dir_path);
}

/*
 * Descriptors: fatal() longjmps out of transfers that hold local files
 * (and directories) open; those of the input are closed after it
 */
#define FD_TRACK	4096
static u_char fds_before[FD_TRACK / 8];

static void
fds_scan(u_char *set)
{
	struct dirent *dp;
	DIR *dirp;
	int fd;

	memset(set, 0, FD_TRACK / 8);
	if ((dirp = opendir("/proc/self/fd")) == NULL)
		return;
	while ((dp = readdir(dirp)) != NULL) {
		fd = atoi(dp->d_name);
		if (dp->d_name[0] >= '0' && dp->d_name[0] <= '9' &&
		    fd != dirfd(dirp) && fd < FD_TRACK)
			set[fd / 8] |= 1 << (fd % 8);
	}
	closedir(dirp);
}

static void
fds_close_new(void)
{
	u_char now[FD_TRACK / 8];
	int fd;

	fds_scan(now);
	for (fd = 0; fd < FD_TRACK; fd++)
		if ((now[fd / 8] & ~fds_before[fd / 8]) & (1 << (fd % 8)))
			close(fd);
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

/*
 * Dir mode (op 7): sftp_download_dir() and sftp_upload_dir(), whose small
 * files go through sftp-pipeline.c (0271).  The server is a small
 * filesystem: nodes with absolute paths (directories, files with their
 * content, symlinks to another node, a FIFO) and a handle table.  Honest,
 * it answers as sftp-server would, with one twist a real server has too:
 * a file's size in its directory listing may differ from what its reads
 * return (it changed in between; the input says how).  Dishonest (d&7 ==
 * 4), it lists what the input says (names, types, sizes, a count that
 * lies), gives a handle the input makes up, or canonicalizes a path to a
 * name the input picks.
 */
#define T_DIR	1
#define T_REG	2
#define T_LNK	3
#define T_FIFO	4
#define TREE_NODES	128
#define TREE_HANDLES	1024
#define TREE_DL		"/r/dir"	/* what is downloaded */
#define TREE_UL		"/r/up"		/* where it is uploaded */

static struct tnode {
	char *path;
	int type, target;	/* a symlink's node */
	struct sshbuf *data;
	size_t cap;		/* its room (buf_room()) */
	int lie;		/* the listing's size: 0 honest, else lie_size */
	uint64_t lie_size;
	int close_failed;	/* a CLOSE of it written to was refused */
} tnodes[TREE_NODES];
static int ntnodes;

static struct thandle {
	int used, node, kind;	/* kind: 1 directory, 2 read, 3 write */
	u_int pos;		/* a directory's next entry */
} thandles[TREE_HANDLES];

static int
tree_find(const char *path)
{
	int i;

	for (i = 0; i < ntnodes; i++)
		if (tnodes[i].type != 0 && strcmp(tnodes[i].path, path) == 0)
			return i;
	return -1;
}

static int
tree_add(const char *path, int type)
{
	struct tnode *n;

	if (ntnodes >= TREE_NODES)
		return -1;
	n = &tnodes[ntnodes];
	memset(n, 0, sizeof(*n));
	if ((n->path = strdup(path)) == NULL ||
	    (type == T_REG && (n->data = sshbuf_new()) == NULL))
		abort();
	n->type = type;
	n->target = -1;
	return ntnodes++;
}

static void
tree_free(void)
{
	int i;

	for (i = 0; i < ntnodes; i++) {
		free(tnodes[i].path);
		sshbuf_free(tnodes[i].data);
	}
	ntnodes = 0;
	memset(thandles, 0, sizeof(thandles));
}

/* the node a path names, symlinks followed (the last one if follow) */
static int
tree_resolve(const char *path, int follow)
{
	char cur[1024];
	const char *s = path, *e;
	size_t cl = 0, len;
	int n = -1, hops = 0;

	if (path == NULL || *s != '/')
		return -1;
	while (*s != '\0') {
		while (*s == '/')
			s++;
		if (*s == '\0')
			break;
		if ((e = strchr(s, '/')) == NULL)
			e = s + strlen(s);
		len = e - s;
		if (cl + 1 + len >= sizeof(cur))
			return -1;
		cur[cl++] = '/';
		memcpy(cur + cl, s, len);
		cl += len;
		cur[cl] = '\0';
		if ((n = tree_find(cur)) == -1)
			return -1;
		for (s = e; *s == '/'; s++)
			;
		while (tnodes[n].type == T_LNK && (*s != '\0' || follow)) {
			if (++hops > 8 || (n = tnodes[n].target) < 0)
				return -1;
			cl = strlen(tnodes[n].path);
			memcpy(cur, tnodes[n].path, cl + 1);
		}
	}
	return n;
}

static const char *
tree_base(const char *path)
{
	const char *p = strrchr(path, '/');

	return p == NULL ? path : p + 1;
}

/* a new node's canonical path: its parent an existing directory, or NULL */
static char *
tree_new_path(const char *path)
{
	char *parent, *p, *np = NULL;
	int k;

	if (path == NULL || *tree_base(path) == '\0' ||
	    (p = strrchr(path, '/')) == NULL)
		return NULL;
	if ((parent = strndup(path, p - path)) == NULL)
		abort();
	k = tree_resolve(parent, 1);
	free(parent);
	if (k >= 0 && tnodes[k].type == T_DIR &&
	    asprintf(&np, "%s/%s", tnodes[k].path, tree_base(path)) == -1)
		np = NULL;
	return np;
}

/* the children of directory node d (k-th, or -1) */
static int
tree_child(int d, u_int k)
{
	size_t dl = strlen(tnodes[d].path);
	int i;

	for (i = 0; i < ntnodes; i++) {
		if (tnodes[i].type == 0 ||
		    strncmp(tnodes[i].path, tnodes[d].path, dl) != 0 ||
		    tnodes[i].path[dl] != '/' ||
		    strchr(tnodes[i].path + dl + 1, '/') != NULL)
			continue;
		if (k-- == 0)
			return i;
	}
	return -1;
}

static void
tree_attrs(struct sshbuf *m, int n, int listing)
{
	Attrib a;
	struct tnode *t = &tnodes[n];

	attrib_clear(&a);
	a.flags = SSH2_FILEXFER_ATTR_SIZE | SSH2_FILEXFER_ATTR_PERMISSIONS |
	    SSH2_FILEXFER_ATTR_ACMODTIME;
	a.atime = a.mtime = 1700000000 + n;
	switch (t->type) {
	case T_DIR: a.perm = S_IFDIR | 0755; a.size = 4096; break;
	case T_LNK: a.perm = S_IFLNK | 0777; a.size = 1; break;
	case T_FIFO: a.perm = S_IFIFO | 0644; a.size = 0; break;
	default:
		a.perm = S_IFREG | 0644;
		a.size = sshbuf_len(t->data);
		if (listing && t->lie == 4)
			a.flags &= ~SSH2_FILEXFER_ATTR_SIZE;
		else if (listing && t->lie != 0)
			a.size = t->lie_size;
		break;
	}
	if (encode_attrib(m, &a) != 0)
		abort();
}

static void
tree_name(struct sshbuf *m, const char *name)
{
	if (sshbuf_put_cstring(m, name) != 0 ||
	    sshbuf_put_cstring(m, name) != 0)	/* (the long name) */
		abort();
}

static int
tree_handle_new(int node, int kind)
{
	int i;

	for (i = 0; i < TREE_HANDLES; i++) {
		if (!thandles[i].used) {
			thandles[i].used = 1;
			thandles[i].node = node;
			thandles[i].kind = kind;
			thandles[i].pos = 0;
			return i;
		}
	}
	return -1;
}

static struct thandle *
tree_handle(const struct req *r)
{
	if (r->hidx < 0 || r->hidx >= TREE_HANDLES || !thandles[r->hidx].used)
		return NULL;
	return &thandles[r->hidx];
}

static void
put_handle(struct sshbuf *m, u_int id, int h)
{
	u_char hb[3] = { 'H', h >> 8, h & 0xff };

	if (sshbuf_put_u8(m, SSH2_FXP_HANDLE) != 0 ||
	    sshbuf_put_u32(m, id) != 0 || sshbuf_put_string(m, hb, 3) != 0)
		abort();
}

/* an error status sent for r: a CLOSE still closes */
static void
tree_error(struct req *r)
{
	struct thandle *h = tree_handle(r);

	if (h == NULL)
		return;
	if (h->kind == 3)
		tnodes[h->node].close_failed = 1;	/* an upload's close */
	h->used = 0;
}

static void
file_resize(struct sshbuf *b, size_t *capp, uint64_t size)
{
	size_t have = sshbuf_len(b);
	u_char *p;

	if (size > UP_MAX)
		size = UP_MAX;
	if (size < have) {
		if (sshbuf_consume_end(b, have - size) != 0)
			abort();
	} else if (size > have) {
		if (buf_room(b, capp, size) != 0 ||
		    sshbuf_reserve(b, size - have, &p) != 0)
			abort();
		memset(p, 0, size - have);
	}
}

/* a dishonest listing: names, types and sizes from the input */
static void
tree_lie_listing(struct sshbuf *m, u_int id)
{
	static const char *names[] = { ".", "..", "a", "b", "e", "sub", "c",
	    "d", "l", "ld", "p", "new", "", "x/y", "../../../etc", "sub" };
	static const u_int types[] = { S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO,
	    S_IFSOCK, 0 };
	char longname[256];
	u_char c = fin_u8(&srv.in), s, t;
	u_int n = c & 0x3f, i;
	Attrib a;

	if (sshbuf_put_u8(m, SSH2_FXP_NAME) != 0 ||
	    sshbuf_put_u32(m, id) != 0 ||
	    sshbuf_put_u32(m, (c & 0x80) ? fin_u32(&srv.in) : n) != 0)
		abort();
	if (c & 0x40)
		n *= 64;	/* many: the same entry over and over */
	/*
	 * (an sshbuf grows 256 bytes at a time: room at once, or a long
	 * listing costs seconds; one past what the client takes is enough)
	 */
	if (n > 16 && sshbuf_allocate(m, SFTP_MAX_MSG_LENGTH + 1024) != 0)
		abort();
	for (i = 0; i < n && sshbuf_len(m) <= SFTP_MAX_MSG_LENGTH; i++) {
		if (i == 0 || (c & 0x40) == 0) {
			s = fin_u8(&srv.in);
			t = fin_u8(&srv.in);
			attrib_clear(&a);
			a.flags = t >> 4;
			a.size = (uint64_t)fin_u16(&srv.in) << (fin_u8(&srv.in) & 63);
			a.perm = types[t % 6] | 0644;
			if (t % 6 == 5)
				a.perm = fin_u32(&srv.in);
			a.atime = a.mtime = fin_u32(&srv.in);
		}
		if (s == 0xff) {
			memset(longname, 'n', sizeof(longname) - 1);
			longname[sizeof(longname) - 1] = '\0';
			tree_name(m, longname);
		} else
			tree_name(m, names[s % (sizeof(names) / sizeof(*names))]);
		if (encode_attrib(m, &a) != 0)
			abort();
	}
}

static void
tree_answer(struct sshbuf *m, struct req *r, u_char dir)
{
	struct thandle *h = tree_handle(r);
	const u_char *d;
	char *np;
	uint64_t size, len;
	size_t dn;
	u_char *p;
	int n, k, lie = (dir & 7) == 4;

	/*
	 * a handle the server never gave or already closed: only after a
	 * dishonest reply (a made-up handle, a raw reply to a CLOSE); a
	 * handle's requests are processed in order (srv_generate())
	 */
	if (h == NULL && (r->type == SSH2_FXP_READ ||
	    r->type == SSH2_FXP_WRITE || r->type == SSH2_FXP_READDIR ||
	    r->type == SSH2_FXP_FSETSTAT || r->type == SSH2_FXP_CLOSE))
		FUZZ_INVARIANT(srv.dishonest, "client sent request type %u "
		    "on a handle it does not hold (slot %d)", r->type, r->hidx);
	switch (r->type) {
	case SSH2_FXP_EXTENDED:
		if (strcmp(r->ext, "limits@openssh.com") == 0) {
			if (sshbuf_put_u8(m, SSH2_FXP_EXTENDED_REPLY) != 0 ||
			    sshbuf_put_u32(m, r->id) != 0 ||
			    sshbuf_put_u64(m, 256 * 1024) != 0 ||
			    sshbuf_put_u64(m, srv.read_limit) != 0 ||
			    sshbuf_put_u64(m, srv.read_limit) != 0 ||
			    sshbuf_put_u64(m, 64) != 0)
				abort();
		} else if (strcmp(r->ext, "fsync@openssh.com") == 0)
			status(m, r->id, h != NULL && h->kind != 1 ?
			    SSH2_FX_OK : SSH2_FX_FAILURE);
		else
			status(m, r->id, SSH2_FX_OP_UNSUPPORTED);
		return;
	case SSH2_FXP_REALPATH:
		if (sshbuf_put_u8(m, SSH2_FXP_NAME) != 0 ||
		    sshbuf_put_u32(m, r->id) != 0 ||
		    sshbuf_put_u32(m, 1) != 0)
			abort();
		if (lie) {
			static const char *lies[] = { "/", "", "/r/dir/..",
			    "/r/up/sub", "/r/dir/a", "/nonexistent", ".",
			    "/r/dir/l" };

			srv.dishonest = 1;
			tree_name(m, lies[fin_u8(&srv.in) % 8]);
		} else
			tree_name(m, strcmp(r->path, ".") == 0 ? "/r" : r->path);
		if (sshbuf_put_u32(m, 0) != 0)	/* no attributes */
			abort();
		return;
	case SSH2_FXP_STAT:
	case SSH2_FXP_LSTAT:
	case SSH2_FXP_FSTAT:
		n = r->type == SSH2_FXP_FSTAT ? (h != NULL ? h->node : -1) :
		    tree_resolve(r->path, r->type == SSH2_FXP_STAT);
		if (n < 0) {
			status(m, r->id, SSH2_FX_NO_SUCH_FILE);
			return;
		}
		if (sshbuf_put_u8(m, SSH2_FXP_ATTRS) != 0 ||
		    sshbuf_put_u32(m, r->id) != 0)
			abort();
		if (lie) {
			srv.dishonest = 1;
			put_attrs(m, 0, 1);
		} else
			tree_attrs(m, n, 0);
		return;
	case SSH2_FXP_OPENDIR:
	case SSH2_FXP_OPEN:
		if (lie) {	/* a handle the input makes up */
			srv.dishonest = 1;
			d = fin_bytes(&srv.in, fin_u8(&srv.in) % 8, &dn);
			if (sshbuf_put_u8(m, SSH2_FXP_HANDLE) != 0 ||
			    sshbuf_put_u32(m, r->id) != 0 ||
			    sshbuf_put_string(m, d, dn) != 0)
				abort();
			return;
		}
		n = tree_resolve(r->path, 1);
		if (r->type == SSH2_FXP_OPENDIR) {
			if (n < 0 || tnodes[n].type != T_DIR ||
			    (k = tree_handle_new(n, 1)) < 0) {
				status(m, r->id, n < 0 ?
				    SSH2_FX_NO_SUCH_FILE : SSH2_FX_FAILURE);
				return;
			}
			put_handle(m, r->id, k);
			return;
		}
		if (n < 0 && (r->pflags & SSH2_FXF_CREAT) &&
		    tree_resolve(r->path, 0) < 0 &&
		    (np = tree_new_path(r->path)) != NULL) {
			n = tree_add(np, T_REG);	/* a new file */
			free(np);
		}
		if (n < 0 || tnodes[n].type != T_REG ||
		    (k = tree_handle_new(n, (r->pflags & SSH2_FXF_WRITE) ?
		    3 : 2)) < 0) {
			status(m, r->id, n < 0 ?
			    SSH2_FX_NO_SUCH_FILE : SSH2_FX_FAILURE);
			srv.open_failed = 1;
			return;
		}
		if ((r->pflags & SSH2_FXF_TRUNC) && (r->pflags & SSH2_FXF_WRITE))
			file_resize(tnodes[n].data, &tnodes[n].cap, 0);
		put_handle(m, r->id, k);
		return;
	case SSH2_FXP_READDIR:
		if (h == NULL || h->kind != 1) {
			status(m, r->id, SSH2_FX_FAILURE);
			return;
		}
		if (lie) {
			srv.dishonest = 1;
			tree_lie_listing(m, r->id);
			return;
		}
		/* ".", "..", the children: four at a time */
		for (k = 0; k < 4; k++)
			if (h->pos + k >= 2 &&
			    tree_child(h->node, h->pos + k - 2) < 0)
				break;
		if (k == 0) {
			status(m, r->id, SSH2_FX_EOF);
			return;
		}
		if (sshbuf_put_u8(m, SSH2_FXP_NAME) != 0 ||
		    sshbuf_put_u32(m, r->id) != 0 ||
		    sshbuf_put_u32(m, k) != 0)
			abort();
		for (; k > 0; k--, h->pos++) {
			if (h->pos < 2) {
				tree_name(m, h->pos ? ".." : ".");
				tree_attrs(m, h->node, 1);	/* (a dir) */
				continue;
			}
			n = tree_child(h->node, h->pos - 2);
			tree_name(m, tree_base(tnodes[n].path));
			tree_attrs(m, n, 1);
		}
		return;
	case SSH2_FXP_READ:
		if (h == NULL || h->kind != 2) {
			status(m, r->id, SSH2_FX_FAILURE);
			srv.dishonest = 1;	/* (the client's: not asked) */
			return;
		}
		size = sshbuf_len(tnodes[h->node].data);
		if (r->off >= size || lie) {
			if (r->off < size)
				srv.dishonest = 1;	/* early EOF */
			status(m, r->id, SSH2_FX_EOF);
			return;
		}
		len = MINIMUM((uint64_t)r->len, size - r->off);
		if ((dir & 7) == 2 && len > 1)	/* a short read */
			len = 1 + fin_u16(&srv.in) % (len - 1);
		if ((dir & 7) == 7 && (dir & 0x40)) {
			len += 1 + fin_u8(&srv.in);	/* more than asked */
			srv.dishonest = 1;
		}
		if (len > srv.data_budget)
			srv.budget = 0;		/* enough: the server goes */
		else
			srv.data_budget -= len;
		if (sshbuf_put_u8(m, SSH2_FXP_DATA) != 0 ||
		    sshbuf_put_u32(m, r->id) != 0 ||
		    sshbuf_put_u32(m, len) != 0 ||
		    sshbuf_reserve(m, len, &p) != 0)
			abort();
		memset(p, 0, len);
		memcpy(p, sshbuf_ptr(tnodes[h->node].data) + r->off,
		    MINIMUM(len, size - r->off));
		return;
	case SSH2_FXP_WRITE:
		if (h == NULL || h->kind != 3 || r->off > UP_MAX ||
		    sshbuf_len(r->data) > UP_MAX - r->off) {
			status(m, r->id, SSH2_FX_FAILURE);
			srv.write_failed = 1;
			return;
		}
		if (sshbuf_len(r->data) > srv.data_budget)
			srv.budget = 0;
		else
			srv.data_budget -= sshbuf_len(r->data);
		size = r->off + sshbuf_len(r->data);
		if (size > sshbuf_len(tnodes[h->node].data))
			file_resize(tnodes[h->node].data,
			    &tnodes[h->node].cap, size);
		memcpy(sshbuf_mutable_ptr(tnodes[h->node].data) + r->off,
		    sshbuf_ptr(r->data), sshbuf_len(r->data));
		status(m, r->id, SSH2_FX_OK);
		return;
	case SSH2_FXP_FSETSTAT:
	case SSH2_FXP_SETSTAT:
		n = r->type == SSH2_FXP_FSETSTAT ?
		    (h != NULL && h->kind == 3 ? h->node : -1) :
		    tree_resolve(r->path, 1);
		if (n < 0) {
			status(m, r->id, SSH2_FX_FAILURE);
			return;
		}
		if ((r->a.flags & SSH2_FILEXFER_ATTR_SIZE) &&
		    tnodes[n].type == T_REG)
			file_resize(tnodes[n].data, &tnodes[n].cap, r->a.size);
		status(m, r->id, SSH2_FX_OK);
		return;
	case SSH2_FXP_MKDIR:
		n = -1;
		if (tree_resolve(r->path, 0) < 0 &&
		    (np = tree_new_path(r->path)) != NULL) {
			n = tree_add(np, T_DIR);
			free(np);
		}
		status(m, r->id, n < 0 ? SSH2_FX_FAILURE : SSH2_FX_OK);
		return;
	case SSH2_FXP_CLOSE:
		if (h == NULL) {
			status(m, r->id, SSH2_FX_FAILURE);
			srv.dishonest = 1;	/* (not a handle it was given) */
			return;
		}
		h->used = 0;
		status(m, r->id, SSH2_FX_OK);
		return;
	case SSH2_FXP_REMOVE:
		/* (an open handle keeps writing to the node, as to an inode) */
		if ((n = tree_resolve(r->path, 0)) < 0 ||
		    tnodes[n].type == T_DIR) {
			status(m, r->id, n < 0 ?
			    SSH2_FX_NO_SUCH_FILE : SSH2_FX_FAILURE);
			return;
		}
		tnodes[n].type = 0;
		status(m, r->id, SSH2_FX_OK);
		return;
	case SSH2_FXP_RENAME:
		/* a file, not over an existing name (as v3 has it) */
		if ((n = tree_resolve(r->path, 0)) < 0 ||
		    tnodes[n].type != T_REG) {
			status(m, r->id, n < 0 ?
			    SSH2_FX_NO_SUCH_FILE : SSH2_FX_FAILURE);
			return;
		}
		if (tree_resolve(r->path2, 0) >= 0 ||
		    (np = tree_new_path(r->path2)) == NULL) {
			status(m, r->id, SSH2_FX_FAILURE);
			return;
		}
		free(tnodes[n].path);
		tnodes[n].path = np;
		status(m, r->id, SSH2_FX_OK);
		return;
	default:
		status(m, r->id, SSH2_FX_OP_UNSUPPORTED);
		return;
	}
}

/* the remote tree a download copies (dir mode): five files, the input's */
static void
tree_setup_download(void)
{
	static const char *files[] = { "/r/dir/a", "/r/dir/b", "/r/dir/e",
	    "/r/dir/sub/c", "/r/dir/sub/d" };
	struct tnode *t;
	uint64_t size;
	u_char lie;
	u_int i;
	int n;

	tree_add("/r", T_DIR);
	tree_add(TREE_DL, T_DIR);
	tree_add("/r/dir/sub", T_DIR);
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		size = fin_u16(&srv.in);
		lie = fin_u8(&srv.in);
		size <<= (lie >> 4) & 3;		/* < 512 KiB */
		n = tree_add(files[i], T_REG);
		t = &tnodes[n];
		file_resize(t->data, &t->cap, size);
		fuzz_fill(sshbuf_mutable_ptr(t->data), size, 7919 * i,
		    (lie >> 3) & 1);
		/* what the listing says: the file changed since, or not */
		switch (t->lie = lie & 7) {
		case 1: t->lie_size = size + 1 + fin_u16(&srv.in); break;
		case 2: t->lie_size = size - MINIMUM(size, 1 + fin_u16(&srv.in)); break;
		case 3: t->lie_size = 4 * 1024 * 1024 + 1; break; /* not pipelined */
		case 4: break;				/* no size */
		case 5: t->lie_size = 0; break;
		default: t->lie = 0; break;
		}
	}
	n = tree_add("/r/dir/l", T_LNK);
	tnodes[n].target = tree_find("/r/dir/a");
	n = tree_add("/r/dir/ld", T_LNK);
	tnodes[n].target = tree_find("/r/dir/sub");
	tree_add("/r/dir/p", T_FIFO);
}

/* the server before an upload: /r, and (flags) /r/up with longer files */
static void
tree_setup_upload(u_char df, uint64_t old)
{
	int n;

	tree_add("/r", T_DIR);
	if ((df & 0x10) == 0)
		return;
	tree_add(TREE_UL, T_DIR);
	n = tree_add(TREE_UL "/b", T_REG);
	/* older, maybe longer */
	file_resize(tnodes[n].data, &tnodes[n].cap, old);
	fuzz_fill(sshbuf_mutable_ptr(tnodes[n].data), old, 3, 1);
	n = tree_add(TREE_UL "/a", T_REG);
	file_resize(tnodes[n].data, &tnodes[n].cap, 1000);
	if (df & 0x40)
		tree_add(TREE_UL "/sub", T_REG);	/* not a directory */
	else
		tree_add(TREE_UL "/sub", T_DIR);
}

/* the local file holds exactly b */
static int
file_equals_buf(const char *path, const struct sshbuf *b)
{
	return file_equals(path, sshbuf_len(b), 0, b);
}

/* an honest download that succeeded: dst holds the tree under node d */
static void
tree_check_download(int d, const char *dst, int follow, int depth)
{
	char *p;
	u_int k;
	int n, t;

	FUZZ_INVARIANT(depth < 8, "remote tree loops");
	for (k = 0; (n = tree_child(d, k)) >= 0; k++) {
		t = n;
		if (tnodes[n].type == T_LNK) {
			if (!follow)
				continue;
			t = tnodes[n].target;
		}
		if (asprintf(&p, "%s/%s", dst, tree_base(tnodes[n].path)) == -1)
			abort();
		if (tnodes[t].type == T_REG)
			FUZZ_INVARIANT(file_equals_buf(p, tnodes[t].data),
			    "downloaded \"%s\" differs from remote \"%s\" "
			    "(%zu bytes, listed %d/%llu)", p, tnodes[t].path,
			    sshbuf_len(tnodes[t].data), tnodes[t].lie,
			    (unsigned long long)tnodes[t].lie_size);
		else if (tnodes[t].type == T_DIR)
			tree_check_download(t, p, follow, depth + 1);
		free(p);
	}
}

/* an honest upload that succeeded: the server has the local tree at dst */
static void
tree_check_upload(const char *src, const char *dst, int follow, int depth)
{
	struct dirent *dp;
	struct stat sb;
	char *ls, *rs;
	DIR *dirp;
	int n;

	FUZZ_INVARIANT(depth < 8, "local tree loops");
	if ((dirp = opendir(src)) == NULL)
		abort();
	while ((dp = readdir(dirp)) != NULL) {
		if (strcmp(dp->d_name, ".") == 0 ||
		    strcmp(dp->d_name, "..") == 0)
			continue;
		if (asprintf(&ls, "%s/%s", src, dp->d_name) == -1 ||
		    asprintf(&rs, "%s/%s", dst, dp->d_name) == -1)
			abort();
		if ((follow ? stat(ls, &sb) : lstat(ls, &sb)) == -1)
			abort();
		n = tree_resolve(rs, 0);
		if (S_ISREG(sb.st_mode))
			FUZZ_INVARIANT(n >= 0 && tnodes[n].type == T_REG &&
			    file_equals_buf(ls, tnodes[n].data),
			    "uploaded \"%s\" differs on the server (%s: %zu "
			    "bytes, local %llu)", ls, n < 0 ? "missing" :
			    "present", n < 0 || tnodes[n].data == NULL ? 0 :
			    sshbuf_len(tnodes[n].data),
			    (unsigned long long)sb.st_size);
		else if (S_ISDIR(sb.st_mode)) {
			FUZZ_INVARIANT(n >= 0 && tnodes[n].type == T_DIR,
			    "uploaded directory \"%s\" missing", rs);
			tree_check_upload(ls, rs, follow, depth + 1);
		}
		free(ls);
		free(rs);
	}
	closedir(dirp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int registered;
	struct sftp_conn *volatile conn = NULL;
	volatile int ret = -2;
	u_char op, fl, df = 0;
	const char *up = NULL;
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
	/* fl bit 6 is unused (it chose the held 0265/0266 server model) */
	nreq = (op & 0x40) ? 1 + ((op >> 3) & 7) : 0;	/* -R, or the ramp */
	if ((op & 7) == 1 || (op & 7) == 4) {
		usize = (uint64_t)fin_u16(&srv.in) << (fin_u8(&srv.in) & 7);
		up_resize(fin_u16(&srv.in));	/* what the target held */
		write_local(ul_path, usize, fl >> 7);
	}
	if ((op & 7) == 7) {		/* dir mode */
		srv.dirmode = 1;
		srv.data_budget = 64 * 1024 * 1024;
		df = fin_u8(&srv.in);
		up = (df & 0x20) ? upbig_path : up_path;
		if (df & 1)
			tree_setup_upload(df, MINIMUM(srv.src_size, 256 * 1024));
		else
			tree_setup_download();
	}
	unlink(dl_path);
	rm_tree(dd_path);
	fds_scan(fds_before);
	fuzz_regs_reset();	/* (a connection fatal() left unreturned) */

	if (setjmp(fuzz_jmp) != 0)
		goto done;	/* fatal(): sftp would exit */
	fuzz_jmp_armed = 1;
	conn = sftp_init(FAKE_IN, FAKE_OUT, 0, nreq, 0);
	if (conn == NULL)
		goto done;
	switch (op & 7) {
	case 0:		/* sftp get / scp download */
	case 2:		/* ... after the lookup's lstat (0210, was 0211) */
	case 3:		/* ... after a stat, with -p */
		if ((op & 7) == 2 &&
		    sftp_lstat(conn, SRC_PATH, 1, &a) != 0)
			break;
		if ((op & 7) == 3 &&
		    sftp_stat(conn, SRC_PATH, 1, &a) != 0)
			break;
		ret = sftp_download(conn, SRC_PATH, dl_path, NULL,
		    (op & 7) == 3, 0, (op >> 4) & 1, (op >> 5) & 1);
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
			/* 0210 (was 0209): harmless when the file has its length */
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
	case 7:		/* get -R, put -R, scp -r: sftp-pipeline.c */
		if (df & 1)
			ret = sftp_upload_dir(conn, up, TREE_UL, (df >> 1) & 1,
			    0, (df >> 3) & 1, (op >> 4) & 1, (df >> 2) & 1,
			    (op >> 5) & 1);
		else
			ret = sftp_download_dir(conn, TREE_DL, dd_path, NULL,
			    (df >> 1) & 1, 0, (df >> 3) & 1, (op >> 4) & 1,
			    (df >> 2) & 1, (op >> 5) & 1);
		fuzz_jmp_armed = 0;
		debug("fuzz: %s returned %d, server %s", (df & 1) ?
		    "sftp_upload_dir" : "sftp_download_dir", ret,
		    srv.dishonest ? "dishonest" : "honest");
		if (ret != 0 || srv.dishonest)
			break;
		if (df & 1) {
			/*
			 * a refused CLOSE fails the upload when its file is
			 * kept: not a part the client closed and removed
			 * (0276: when the destination existed, or it failed)
			 */
			for (i = 0; i < (size_t)ntnodes; i++)
				if (tnodes[i].type != 0 &&
				    tnodes[i].close_failed)
					srv.close_failed = 1;
			FUZZ_INVARIANT(!srv.write_failed,
			    "upload of a tree succeeded after a failed write");
			FUZZ_INVARIANT(!srv.close_failed,
			    "upload of a tree succeeded after a failed close");
			tree_check_upload(up, TREE_UL, (df >> 2) & 1, 0);
		} else {
			FUZZ_INVARIANT(!srv.read_failed, "download of a tree "
			    "succeeded after a failed read");
			tree_check_download(tree_find(TREE_DL), dd_path,
			    (df >> 2) & 1, 0);
		}
		break;
	case 5:
		(void)sftp_stat(conn, SRC_PATH, 1, &a);
		(void)sftp_lstat(conn, UP_PATH, 1, &a);
		break;
	case 6:
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
	fds_close_new();
	tree_free();
	rm_tree(dd_path);
	for (i = 0; i < srv.npend; i++)
		req_free(&srv.pend[i]);
	free(srv.pend);
	sshbuf_free(srv.from);
	sshbuf_free(srv.to);
	sshbuf_free(srv.up);
	(void)ret;
	return 0;
}
