/*
 * sftp-engine: unit test for the SFTP client's reply engine (sftp-client.c:
 * sftp_send_req(), sftp_pump(), the request table and the held queue).
 *
 * Built by regress-bench/tests/sftp-reply-engine.sh against a built tree.
 * It compiles the tree's sftp-client.c into itself (#include) to see the
 * connection's table and held queue, with poll() counted, and talks to a
 * scripted server in a child process over a socketpair.
 *
 * Checks:
 *  - inert: synchronous calls alone never poll and leave the table empty;
 *  - replies in any order run each completion once, with its reply; a
 *    completion may send;
 *  - a synchronous call amid completions gets its own reply, and the
 *    completions whose replies come first run meanwhile, the later ones
 *    from sftp_pump();
 *  - the held bound: more replies than requests, or more bytes than they
 *    may bring, is fatal("Server sent more replies than requests"); a
 *    reply to nothing sent while no synchronous request is out is
 *    fatal("Unexpected reply %u"); both after every outstanding
 *    completion ran once with SFTP_REPLY_LOST;
 *  - sftp_free() and a closed connection run each outstanding completion
 *    once with SFTP_REPLY_LOST, in send order, and no other;
 *  - a server that stops reading until its replies are read: the write
 *    path reads them meanwhile (no deadlock), within the held bound;
 *  - a completion that waits is fatal.
 */
#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <poll.h>
#include <setjmp.h>
#include <signal.h>

static int poll_calls;
int test_poll(struct pollfd *, nfds_t, int);

#define poll(a, b, c) test_poll(a, b, c)
#include "sftp-client.c"
#undef poll

#include "unit-check.h"

int showprogress = 0;
volatile sig_atomic_t interrupted = 0;

int
test_poll(struct pollfd *pfd, nfds_t n, int timeout)
{
	poll_calls++;
	return poll(pfd, n, timeout);
}

/* fatal() ends "the connection": back to the test that expects it */
static jmp_buf jb;
static int jb_armed;
static char last_fatal[512];

void
cleanup_exit(int i)
{
	if (jb_armed) {
		jb_armed = 0;
		longjmp(jb, 1);
	}
	fprintf(stderr, "unexpected fatal: %s\n", last_fatal);
	_exit(2);
}

static void
log_handler(LogLevel level, int forced, const char *msg, void *ctx)
{
	if (level == SYSLOG_LEVEL_FATAL)
		snprintf(last_fatal, sizeof(last_fatal), "%s", msg);
	if (level <= SYSLOG_LEVEL_ERROR)
		fprintf(stderr, "log: %s\n", msg);
}

/* --- the scripted server (a child process) ------------------------------ */

static void
srv_write(int fd, const void *p, size_t n)
{
	const u_char *s = p;
	ssize_t r;

	while (n > 0) {
		if ((r = write(fd, s, n)) == -1) {
			if (errno == EINTR)
				continue;
			_exit(0);	/* the client went away */
		}
		s += r;
		n -= r;
	}
}

static int
srv_readn(int fd, void *p, size_t n)
{
	u_char *s = p;
	ssize_t r;

	while (n > 0) {
		if ((r = read(fd, s, n)) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		s += r;
		n -= r;
	}
	return 0;
}

/* One request: its type, id and (for READ) length; -1 at EOF */
struct srv_req {
	u_char type;
	u_int id, len;
};

static int
srv_read(int fd, struct srv_req *q)
{
	u_char h[4], *b;
	u_int n, hl;

	if (srv_readn(fd, h, 4) != 0)
		return -1;
	n = PEEK_U32(h);
	if (n < 5 || n > SFTP_MAX_MSG_LENGTH || (b = malloc(n)) == NULL)
		_exit(3);
	if (srv_readn(fd, b, n) != 0)
		_exit(3);
	q->type = b[0];
	q->id = PEEK_U32(b + 1);
	q->len = 0;
	if (q->type == SSH2_FXP_READ && n >= 9) {
		hl = PEEK_U32(b + 5);
		if (9 + hl + 12 <= n)
			q->len = PEEK_U32(b + 9 + hl + 8);
	}
	free(b);
	return 0;
}

static void
srv_msg(int fd, u_char type, u_int id, const void *body, size_t blen)
{
	u_char h[9];

	POKE_U32(h, 5 + blen);
	h[4] = type;
	POKE_U32(h + 5, id);
	srv_write(fd, h, 9);
	if (blen > 0)
		srv_write(fd, body, blen);
}

static void
srv_status(int fd, u_int id, u_int code)
{
	u_char b[12];

	POKE_U32(b, code);
	POKE_U32(b + 4, 0);	/* message */
	POKE_U32(b + 8, 0);	/* language */
	srv_msg(fd, SSH2_FXP_STATUS, id, b, sizeof(b));
}

static void
srv_data(int fd, u_int id, u_int len)
{
	u_char *b = calloc(1, 4 + (size_t)len);

	if (b == NULL)
		_exit(3);
	POKE_U32(b, len);
	srv_msg(fd, SSH2_FXP_DATA, id, b, 4 + (size_t)len);
	free(b);
}

#define ATTRS_SIZE	4242

/* The honest answer to q */
static void
srv_answer(int fd, struct srv_req *q)
{
	u_char b[12];

	switch (q->type) {
	case SSH2_FXP_READ:
		srv_data(fd, q->id, q->len);
		break;
	case SSH2_FXP_STAT:
	case SSH2_FXP_LSTAT:
		POKE_U32(b, SSH2_FILEXFER_ATTR_SIZE);
		POKE_U64(b + 4, ATTRS_SIZE);
		srv_msg(fd, SSH2_FXP_ATTRS, q->id, b, 12);
		break;
	default:
		srv_status(fd, q->id, SSH2_FX_OK);
		break;
	}
}

/* INIT, then VERSION 3 without extensions */
static void
srv_hello(int fd)
{
	u_char h[4], b[5];

	if (srv_readn(fd, h, 4) != 0 || PEEK_U32(h) != 5 ||
	    srv_readn(fd, b, 5) != 0 || b[0] != SSH2_FXP_INIT)
		_exit(3);
	POKE_U32(h, 5);
	srv_write(fd, h, 4);
	b[0] = SSH2_FXP_VERSION;
	POKE_U32(b + 1, 3);
	srv_write(fd, b, 5);
}

/* wait for the client to close */
static void
srv_drain(int fd)
{
	struct srv_req q;

	while (srv_read(fd, &q) == 0)
		;
}

/* --- the client's side ---------------------------------------------------- */

struct fixture {
	struct sftp_conn *conn;
	pid_t pid;
	int fd;
};

typedef void server_fn(int, void *);

/* bufsz: the socket buffers' size, 0: the default */
static void
start(struct fixture *f, server_fn *server, void *arg, int bufsz)
{
	int sv[2], i;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1) {
		perror("socketpair");
		exit(2);
	}
	for (i = 0; bufsz > 0 && i < 2; i++) {
		(void)setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &bufsz,
		    sizeof(bufsz));
		(void)setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &bufsz,
		    sizeof(bufsz));
	}
	if ((f->pid = fork()) == -1) {
		perror("fork");
		exit(2);
	}
	if (f->pid == 0) {
		close(sv[0]);
		signal(SIGPIPE, SIG_IGN);
		alarm(60);
		srv_hello(sv[1]);
		server(sv[1], arg);
		_exit(0);
	}
	close(sv[1]);
	f->fd = sv[0];
	f->conn = sftp_init(f->fd, f->fd, 0, 0, 0);
	if (f->conn == NULL) {
		fprintf(stderr, "sftp_init failed\n");
		exit(2);
	}
}

static void
stop(struct fixture *f, int free_conn)
{
	int status;

	if (free_conn)
		sftp_free(f->conn);
	f->conn = NULL;
	close(f->fd);
	if (waitpid(f->pid, &status, 0) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		CHECK(0, "the server child ended badly (status 0x%x)", status);
}

/* What a completion saw */
struct rec {
	int calls, lost, seq;
	u_char type;
	u_int id, status;
	size_t dlen;
	uint64_t size;
};
static int seq;

/* a completion that sends one more request, given here */
static struct rec *chain_next;
static u_int send_stat(struct sftp_conn *, const char *, struct rec *);

static void
done_rec(struct sftp_conn *conn, u_int id, u_char type, struct sshbuf *msg,
    void *ctx)
{
	struct rec *r = ctx;
	const u_char *d;
	Attrib a;

	r->calls++;
	r->seq = ++seq;
	r->type = type;
	CHECK(id == r->id, "completion for id %u called with id %u", r->id, id);
	CHECK(conn->in_done, "in_done not set in a completion");
	if (type == SFTP_REPLY_LOST) {
		r->lost++;
		CHECK(msg == NULL, "LOST with a message");
		return;
	}
	CHECK(msg != NULL, "a reply without its message");
	if (type == SSH2_FXP_STATUS)
		CHECK(sshbuf_get_u32(msg, &r->status) == 0, "status");
	else if (type == SSH2_FXP_DATA)
		CHECK(sshbuf_get_string_direct(msg, &d, &r->dlen) == 0, "data");
	else if (type == SSH2_FXP_ATTRS) {
		CHECK(decode_attrib(msg, &a) == 0, "attrs");
		r->size = a.size;
	}
	if (chain_next != NULL) {
		struct rec *n = chain_next;

		chain_next = NULL;
		send_stat(conn, "/chained", n);
	}
}

/* STAT path, with r's completion (NULL: a synchronous caller's entry) */
static u_int
send_stat(struct sftp_conn *conn, const char *path, struct rec *r)
{
	struct sshbuf *m;
	u_int id = sftp_req_id(conn);

	if ((m = sshbuf_new()) == NULL ||
	    sshbuf_put_u8(m, SSH2_FXP_STAT) != 0 ||
	    sshbuf_put_u32(m, id) != 0 ||
	    sshbuf_put_cstring(m, path) != 0)
		abort();
	if (r != NULL) {
		memset(r, 0, sizeof(*r));
		r->id = id;
		sftp_send_req(conn, m, done_rec, r);
	} else
		send_msg(conn, m);
	CHECK(sshbuf_len(m) == 0, "message not reset after sending");
	sshbuf_free(m);
	return id;
}

static void
send_read(struct sftp_conn *conn, u_int len, struct rec *r)
{
	struct sshbuf *m;
	u_int id = sftp_req_id(conn);

	memset(r, 0, sizeof(*r));
	r->id = id;
	if ((m = sshbuf_new()) == NULL ||
	    sshbuf_put_u8(m, SSH2_FXP_READ) != 0 ||
	    sshbuf_put_u32(m, id) != 0 ||
	    sshbuf_put_string(m, "h", 1) != 0 ||
	    sshbuf_put_u64(m, 0) != 0 ||
	    sshbuf_put_u32(m, len) != 0)
		abort();
	sftp_send_req(conn, m, done_rec, r);
	sshbuf_free(m);
}

static int
all_called(struct rec *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].calls == 0)
			return 0;
	return 1;
}

/* --- the cases ------------------------------------------------------------ */

/* answer every request honestly, one at a time */
static void
srv_honest(int fd, void *arg)
{
	struct srv_req q;

	while (srv_read(fd, &q) == 0)
		srv_answer(fd, &q);
}

static void
test_inert(void)
{
	struct fixture f;
	Attrib a;
	int i;

	start(&f, srv_honest, NULL, 0);
	poll_calls = 0;
	for (i = 0; i < 20; i++) {
		CHECK(sftp_stat(f.conn, "/x", 1, &a) == 0 &&
		    a.size == ATTRS_SIZE, "inert: sftp_stat");
		CHECK(sftp_lstat(f.conn, "/y", 1, &a) == 0, "inert: lstat");
	}
	CHECK(poll_calls == 0, "inert: synchronous calls polled %d times",
	    poll_calls);
	CHECK(f.conn->nreqs == 0 && f.conn->nheld == 0 &&
	    f.conn->allow == 0, "inert: table %u, held %u, allow %zu",
	    f.conn->nreqs, f.conn->nheld, f.conn->allow);
	stop(&f, 1);
}

#define NOOO	16

/* read NOOO + 1 requests, answer them in a scrambled order */
static void
srv_scrambled(int fd, void *arg)
{
	struct srv_req q[NOOO + 1];
	static const int order[NOOO] =
	    { 5, 15, 0, 3, 14, 1, 2, 9, 8, 7, 13, 4, 11, 12, 6, 10 };
	int i;

	for (i = 0; i < NOOO; i++)
		if (srv_read(fd, &q[i]) != 0)
			_exit(3);
	for (i = 0; i < NOOO; i++)
		srv_status(fd, q[order[i]].id, 100 + order[i]);
	/* the request the first completion sent */
	if (srv_read(fd, &q[NOOO]) != 0)
		_exit(3);
	srv_answer(fd, &q[NOOO]);
	srv_drain(fd);
}

static void
test_out_of_order(void)
{
	struct fixture f;
	struct rec r[NOOO], chained;
	int i, ok = 1, ran = 0, n;

	start(&f, srv_scrambled, NULL, 0);
	for (i = 0; i < NOOO; i++)
		send_stat(f.conn, "/o", &r[i]);
	memset(&chained, 0, sizeof(chained));
	chain_next = &chained;
	while (!all_called(r, NOOO) || chained.calls == 0) {
		if ((n = sftp_pump(f.conn, 1)) < 1)
			CHECK(0, "blocking pump ran %d", n);
		ran += n;
	}
	for (i = 0; i < NOOO; i++) {
		if (r[i].calls != 1 || r[i].type != SSH2_FXP_STATUS ||
		    r[i].status != (u_int)(100 + i) || r[i].lost)
			ok = 0;
	}
	CHECK(ok, "out of order: a completion did not run once with its reply");
	CHECK(ran == NOOO + 1, "out of order: pump says %d ran", ran);
	/* the server answered in this order: 5 first, 10 last */
	CHECK(r[5].seq < r[15].seq && r[6].seq < r[10].seq,
	    "out of order: completions not run in arrival order");
	CHECK(chained.calls == 1 && chained.type == SSH2_FXP_ATTRS &&
	    chained.size == ATTRS_SIZE, "out of order: the request a "
	    "completion sent did not complete");
	CHECK(sftp_pump(f.conn, 0) == 0, "out of order: pump(0) ran more");
	CHECK(f.conn->nreqs == 0 && f.conn->nheld == 0,
	    "out of order: table %u held %u", f.conn->nreqs, f.conn->nheld);
	stop(&f, 1);
	for (i = 0; i < NOOO; i++)
		CHECK(r[i].calls == 1, "out of order: %d called again on free",
		    i);
}

/* A, B, S read; answered B, S, A */
static void
srv_sync_amid(int fd, void *arg)
{
	struct srv_req q[3];
	int i;

	for (i = 0; i < 3; i++)
		if (srv_read(fd, &q[i]) != 0)
			_exit(3);
	srv_status(fd, q[1].id, 2);
	srv_answer(fd, &q[2]);
	srv_status(fd, q[0].id, 1);
	srv_honest(fd, arg);
}

static void
test_sync_amid(void)
{
	struct fixture f;
	struct rec a, b;
	Attrib at;
	int rc;

	start(&f, srv_sync_amid, NULL, 0);
	send_stat(f.conn, "/a", &a);
	send_stat(f.conn, "/b", &b);
	rc = sftp_stat(f.conn, "/sync", 1, &at);
	CHECK(rc == 0 && at.size == ATTRS_SIZE,
	    "sync amid: sftp_stat failed or got another reply");
	CHECK(b.calls == 1 && b.status == 2,
	    "sync amid: the completion whose reply came first did not run");
	CHECK(a.calls == 0, "sync amid: a completion ran before its reply");
	while (a.calls == 0)
		CHECK(sftp_pump(f.conn, 1) == 1, "sync amid: pump");
	CHECK(a.calls == 1 && a.status == 1 && !a.lost, "sync amid: A");
	/* and a synchronous call with nothing else out afterwards */
	CHECK(sftp_stat(f.conn, "/again", 1, &at) == 0, "sync amid: again");
	stop(&f, 1);
	CHECK(a.calls == 1 && b.calls == 1, "sync amid: ran again on free");
}

struct flood {
	int n;		/* this many replies to id 9999 */
	size_t body;	/* of this many bytes */
};

/* read two requests, answer with replies to nothing sent */
static void
srv_flood(int fd, void *arg)
{
	struct flood *fl = arg;
	struct srv_req q;
	u_char *b;
	int i;

	if (srv_read(fd, &q) != 0 || srv_read(fd, &q) != 0)
		_exit(3);
	if ((b = calloc(1, fl->body + 4)) == NULL)
		_exit(3);
	for (i = 0; i < fl->n; i++)
		srv_msg(fd, SSH2_FXP_STATUS, 9999, b, fl->body + 4);
	free(b);
	srv_drain(fd);
}

/*
 * One completion and one synchronous request out; the server floods:
 * fatal with want, the completion LOST once
 */
static void
held_case(const char *what, struct flood *fl, const char *want)
{
	struct fixture f;
	static struct rec c;

	start(&f, srv_flood, fl, 0);
	send_stat(f.conn, "/c", &c);
	send_stat(f.conn, "/sync", NULL);
	last_fatal[0] = '\0';
	if (setjmp(jb) == 0) {
		jb_armed = 1;
		while (1)
			sftp_pump(f.conn, 1);
	}
	jb_armed = 0;
	CHECK(strcmp(last_fatal, want) == 0, "%s: fatal \"%s\", not \"%s\"",
	    what, last_fatal, want);
	CHECK(c.calls == 1 && c.lost == 1,
	    "%s: the completion ran %d times (lost %d)", what, c.calls, c.lost);
	CHECK(f.conn->nreqs == 0, "%s: table not emptied", what);
	stop(&f, 1);
	CHECK(c.calls == 1, "%s: the completion ran again on free", what);
}

static void
test_held_bound(void)
{
	struct flood fl;

	/* 2 requests out: a third held reply is one too many */
	fl.n = 3;
	fl.body = 8;
	held_case("held count", &fl,
	    "Server sent more replies than requests");
	/* 2 x 4 KiB may come: one reply of 9 KiB is too much */
	fl.n = 1;
	fl.body = 9 * 1024;
	held_case("held bytes", &fl,
	    "Server sent more replies than requests");
}

static void
test_unexpected(void)
{
	struct fixture f;
	struct flood fl;
	struct rec c1, c2;

	fl.n = 1;
	fl.body = 8;
	start(&f, srv_flood, &fl, 0);
	send_stat(f.conn, "/c1", &c1);
	send_stat(f.conn, "/c2", &c2);
	last_fatal[0] = '\0';
	if (setjmp(jb) == 0) {
		jb_armed = 1;
		while (1)
			sftp_pump(f.conn, 1);
	}
	jb_armed = 0;
	CHECK(strcmp(last_fatal, "Unexpected reply 9999") == 0,
	    "unexpected: fatal \"%s\"", last_fatal);
	CHECK(c1.calls == 1 && c1.lost == 1 && c2.calls == 1 && c2.lost == 1 &&
	    c1.seq < c2.seq, "unexpected: LOST not once each, in send order");
	stop(&f, 1);
	CHECK(c1.calls == 1 && c2.calls == 1, "unexpected: ran again on free");
}

/* read 3, answer the second; then close */
static void
srv_one_of_three(int fd, void *arg)
{
	struct srv_req q[3];
	int i, close_early = arg != NULL;

	for (i = 0; i < 3; i++)
		if (srv_read(fd, &q[i]) != 0)
			_exit(3);
	srv_status(fd, q[1].id, 7);
	if (close_early) {
		close(fd);
		return;
	}
	srv_drain(fd);
}

static void
test_lost(void)
{
	struct fixture f;
	struct rec r[3];
	int i;

	/* on sftp_free() */
	start(&f, srv_one_of_three, NULL, 0);
	for (i = 0; i < 3; i++)
		send_stat(f.conn, "/l", &r[i]);
	CHECK(sftp_pump(f.conn, 1) == 1, "lost: pump");
	CHECK(r[1].calls == 1 && r[1].status == 7 && r[0].calls == 0 &&
	    r[2].calls == 0, "lost: the answered one");
	stop(&f, 1);
	CHECK(r[0].calls == 1 && r[0].lost == 1 && r[2].calls == 1 &&
	    r[2].lost == 1 && r[1].calls == 1 && r[1].lost == 0 &&
	    r[0].seq < r[2].seq, "lost on free: not once each, in send order");

	/* on a closed connection */
	start(&f, srv_one_of_three, "close", 0);
	for (i = 0; i < 3; i++)
		send_stat(f.conn, "/l", &r[i]);
	last_fatal[0] = '\0';
	if (setjmp(jb) == 0) {
		jb_armed = 1;
		while (1)
			sftp_pump(f.conn, 1);
	}
	jb_armed = 0;
	CHECK(strcmp(last_fatal, "Connection closed") == 0,
	    "closed: fatal \"%s\"", last_fatal);
	CHECK(r[0].calls == 1 && r[0].lost == 1 && r[2].calls == 1 &&
	    r[2].lost == 1 && r[1].calls == 1 && r[1].lost == 0,
	    "closed: LOST not once each");
	stop(&f, 1);
	CHECK(r[0].calls == 1 && r[2].calls == 1, "closed: ran again on free");
}

#define NSTALL		3000
#define STALL_BATCH	200
#define STALL_LEN	16384

/*
 * A sequential server that does not read while it writes: it reads
 * STALL_BATCH requests (fewer when no more come for 100 ms), then writes
 * all their replies (blocking until the client reads them), then reads on
 */
static void
srv_stall(int fd, void *arg)
{
	struct srv_req q[STALL_BATCH];
	struct pollfd pfd;
	int i, n;

	for (;;) {
		for (n = 0; n < STALL_BATCH; n++) {
			pfd.fd = fd;
			pfd.events = POLLIN;
			if (n > 0 && poll(&pfd, 1, 100) == 0)
				break;
			if (srv_read(fd, &q[n]) != 0)
				return;
		}
		for (i = 0; i < n; i++)
			srv_answer(fd, &q[i]);
	}
}

static void
on_alarm(int sig)
{
	static const char m[] = "FAIL: deadlock (no progress in 60 s)\n";

	(void)write(STDERR_FILENO, m, sizeof(m) - 1);
	_exit(1);
}

static void
test_stall(void)
{
	struct fixture f;
	static struct rec r[NSTALL];
	struct rec s;
	Attrib at;
	u_int peak = 0;
	int i, ok = 1;

	start(&f, srv_stall, NULL, 8192);
	signal(SIGALRM, on_alarm);
	alarm(60);
	for (i = 0; i < NSTALL; i++) {
		send_read(f.conn, STALL_LEN, &r[i]);
		if (f.conn->nheld > peak)
			peak = f.conn->nheld;
		if (i == NSTALL / 2)
			send_stat(f.conn, "/mid", &s);
	}
	/* a synchronous call now takes the held replies first */
	CHECK(sftp_stat(f.conn, "/sync", 1, &at) == 0 &&
	    at.size == ATTRS_SIZE, "stall: synchronous stat");
	CHECK(f.conn->nheld == 0 || f.conn->nheld <= f.conn->nreqs,
	    "stall: held %u > table %u", f.conn->nheld, f.conn->nreqs);
	while (!all_called(r, NSTALL) || s.calls == 0)
		sftp_pump(f.conn, 1);
	alarm(0);
	for (i = 0; i < NSTALL; i++) {
		if (r[i].calls != 1 || r[i].type != SSH2_FXP_DATA ||
		    r[i].dlen != STALL_LEN)
			ok = 0;
	}
	CHECK(ok, "stall: a read did not complete once with its data");
	CHECK(s.calls == 1 && s.size == ATTRS_SIZE, "stall: the stat");
	CHECK(peak > 0, "stall: the write path never read a reply");
	CHECK(f.conn->nreqs == 0 && f.conn->nheld == 0 &&
	    f.conn->held_bytes == 0, "stall: table %u held %u (%zu bytes)",
	    f.conn->nreqs, f.conn->nheld, f.conn->held_bytes);
	stop(&f, 1);
	printf("stall: %d reads of %d bytes, up to %u replies held while "
	    "sending\n", NSTALL, STALL_LEN, peak);
}

/* a completion that waits */
static void
done_waits(struct sftp_conn *conn, u_int id, u_char type, struct sshbuf *msg,
    void *ctx)
{
	Attrib a;

	if (type != SFTP_REPLY_LOST)
		(void)sftp_stat(conn, "/nested", 1, &a);
}

static void
test_done_waits(void)
{
	struct fixture f;
	struct sshbuf *m;
	u_int id;

	start(&f, srv_honest, NULL, 0);
	id = sftp_req_id(f.conn);
	if ((m = sshbuf_new()) == NULL ||
	    sshbuf_put_u8(m, SSH2_FXP_STAT) != 0 ||
	    sshbuf_put_u32(m, id) != 0 ||
	    sshbuf_put_cstring(m, "/w") != 0)
		abort();
	sftp_send_req(f.conn, m, done_waits, NULL);
	sshbuf_free(m);
	last_fatal[0] = '\0';
	if (setjmp(jb) == 0) {
		jb_armed = 1;
		sftp_pump(f.conn, 1);
	}
	jb_armed = 0;
	CHECK(strstr(last_fatal, "called from a completion") != NULL,
	    "a completion that waits: fatal \"%s\"", last_fatal);
	/* (the process would have ended: the connection is not reused) */
	stop(&f, 0);
}

int
main(void)
{
	log_init("sftp-engine", SYSLOG_LEVEL_FATAL, SYSLOG_FACILITY_USER, 1);
	set_log_handler(log_handler, NULL);
	signal(SIGPIPE, SIG_IGN);

	test_inert();
	test_out_of_order();
	test_sync_amid();
	test_held_bound();
	test_unexpected();
	test_lost();
	test_stall();
	test_done_waits();

	printf("%d checks, %d failures\n", checks, failures);
	return failures != 0;
}
