/*
 * openssh-lfn libFuzzer harnesses: what they share (README.md).
 *
 * fatal() in the code under test ends "the connection" (cleanup_exit):
 * upstream answers malformed peer input that way, so it is not a finding.
 * The harness turns it into a longjmp back to LLVMFuzzerTestOneInput, which
 * then frees what it owns.  FUZZ_INVARIANT() is a finding: it prints
 * "fuzz-invariant:" and aborts, which libFuzzer reports as a crash with
 * the reproducer's path.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include "includes.h"

#include <sys/types.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static jmp_buf fuzz_jmp;
static int fuzz_jmp_armed;
static char fuzz_last_fatal[512];

#define FUZZ_INVARIANT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz-invariant: %s:%d: %s: ", \
		    __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

/*
 * FUZZ_STRICT (README.md, default 1): fail on the known findings about
 * channel window overruns and an ignored fsetstat failure
 */
static int
fuzz_env_int(const char *name, long long dflt, long long *vp)
{
	const char *s = getenv(name);
	char *ep;
	long long v;

	if (s == NULL || *s == '\0') {
		*vp = dflt;
		return 0;
	}
	v = strtoll(s, &ep, 0);
	if (*ep != '\0') {
		fprintf(stderr, "%s=%s: not a number\n", name, s);
		abort();
	}
	*vp = v;
	return 1;
}

static int
fuzz_strict(void)
{
	static int done, strict;
	long long v;

	if (!done) {
		fuzz_env_int("FUZZ_STRICT", 1, &v);
		strict = v != 0;
		done = 1;
	}
	return strict;
}

/* keep the last fatal/error message for the harness; print with FUZZ_DEBUG */
static void
fuzz_log_handler(LogLevel level, int forced, const char *msg, void *ctx)
{
	static int dbg = -1;
	long long v;

	if (dbg == -1) {
		fuzz_env_int("FUZZ_DEBUG", 0, &v);
		dbg = v != 0;
	}
	if (level == SYSLOG_LEVEL_FATAL)
		snprintf(fuzz_last_fatal, sizeof(fuzz_last_fatal), "%s", msg);
	if (dbg)
		fprintf(stderr, "log(%d): %s\n", (int)level, msg);
}

static void
fuzz_log_init(void)
{
	static int done;
	long long v;

	if (done)
		return;
	fuzz_env_int("FUZZ_DEBUG", 0, &v);
	log_init("fuzz", v ? SYSLOG_LEVEL_DEBUG3 : SYSLOG_LEVEL_ERROR,
	    SYSLOG_FACILITY_AUTH, 0);
	set_log_handler(fuzz_log_handler, NULL);
	/* as ssh and sshd do: a closed pipe is an error return, not a signal */
	signal(SIGPIPE, SIG_IGN);
	done = 1;
}

void
cleanup_exit(int i)
{
	if (fuzz_jmp_armed) {
		fuzz_jmp_armed = 0;
		longjmp(fuzz_jmp, 1);
	}
	fprintf(stderr, "fuzz: cleanup_exit(%d) outside the harness: %s\n",
	    i, fuzz_last_fatal);
	abort();
}

/*
 * libssh.a's sshkey.o wants these; no harness signs with a security key or
 * a PKCS#11 token (upstream's fuzz harnesses use ssh-sk-null.cc likewise).
 */
struct sshkey;
int
sshsk_sign(const char *provider_path, struct sshkey *key,
    u_char **sigp, size_t *lenp, const u_char *data, size_t datalen,
    u_int compat, const char *pin)
{
	return -59;	/* SSH_ERR_FEATURE_UNSUPPORTED */
}

int
pkcs11_sign(struct sshkey *key, u_char **sigp, size_t *lenp,
    const u_char *data, size_t datalen, const char *alg,
    const char *sk_provider, const char *sk_pin, u_int compat)
{
	return -59;
}

void
pkcs11_key_free(struct sshkey *key)
{
}

/* a reader over the fuzz input; reads past the end give zeros */
struct fuzz_in {
	const uint8_t *p;
	size_t len, off;
};

static int
fin_more(const struct fuzz_in *f)
{
	return f->off < f->len;
}

static uint8_t
fin_u8(struct fuzz_in *f)
{
	return f->off < f->len ? f->p[f->off++] : 0;
}

static uint32_t
fin_u16(struct fuzz_in *f)
{
	uint32_t v = fin_u8(f);

	return (v << 8) | fin_u8(f);
}

static uint32_t
fin_u32(struct fuzz_in *f)
{
	uint32_t v = fin_u16(f);

	return (v << 16) | fin_u16(f);
}

/* up to want bytes of the input, without copying; *got says how many */
static const uint8_t *
fin_bytes(struct fuzz_in *f, size_t want, size_t *got)
{
	const uint8_t *p = f->p + f->off;

	if (want > f->len - f->off)
		want = f->len - f->off;
	f->off += want;
	*got = want;
	return p;
}

/*
 * Deterministic filler: the byte at stream offset off, compressible or not.
 * Table-driven (periods 25 and 65521), so filling and checking megabytes
 * per input stays cheap under the sanitizers.
 */
#define FUZZ_FILL_PERIOD	65521
static uint8_t fuzz_tbl[2][FUZZ_FILL_PERIOD + 65536];

static void
fuzz_tbl_init(void)
{
	static int done;
	uint64_t x;
	size_t i;

	if (done)
		return;
	for (i = 0; i < sizeof(fuzz_tbl[0]); i++) {
		fuzz_tbl[0][i] = "openssh-lfn fuzz filler. "
		    [(i % FUZZ_FILL_PERIOD) % 25];
		x = (i % FUZZ_FILL_PERIOD) * 0x9e3779b97f4a7c15ULL;
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		fuzz_tbl[1][i] = (uint8_t)(x >> 32);
	}
	done = 1;
}

static uint8_t
fuzz_fill_byte(uint64_t off, int random)
{
	fuzz_tbl_init();
	return fuzz_tbl[random != 0][off % FUZZ_FILL_PERIOD];
}

static void
fuzz_fill(uint8_t *p, size_t len, uint64_t off, int random)
{
	size_t n;

	fuzz_tbl_init();
	while (len > 0) {
		n = len < 65536 ? len : 65536;
		memcpy(p, &fuzz_tbl[random != 0][off % FUZZ_FILL_PERIOD], n);
		p += n;
		off += n;
		len -= n;
	}
}

/* 0 if p[0..len) is the filler from offset off */
static int
fuzz_fill_cmp(const uint8_t *p, size_t len, uint64_t off, int random)
{
	size_t n;

	fuzz_tbl_init();
	while (len > 0) {
		n = len < 65536 ? len : 65536;
		if (memcmp(p, &fuzz_tbl[random != 0][off % FUZZ_FILL_PERIOD],
		    n) != 0)
			return 1;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

#endif /* FUZZ_COMMON_H */
