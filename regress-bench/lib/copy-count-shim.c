/*
 * copy-count-shim.c: LD_PRELOAD shim for sftp-server-copies.sh.
 * Counts the bytes that the process moves with memcpy()/memmove() calls
 * of at least 64 KiB (bulk copies: a transfer's data, not headers) and,
 * at exit (sftp-server leaves by _exit()), appends "PID BYTES" to the
 * file named by COPY_COUNT_FILE.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BULK	65536

static unsigned long long copied;

typedef void *(*copy_fn)(void *, const void *, size_t);

static void *
count(const char *name, void *d, const void *s, size_t n)
{
	copy_fn real = (copy_fn)dlsym(RTLD_NEXT, name);

	if (n >= BULK)
		copied += n;
	return real(d, s, n);
}

void *memcpy(void *d, const void *s, size_t n) { return count("memcpy", d, s, n); }
void *memmove(void *d, const void *s, size_t n) { return count("memmove", d, s, n); }

void *
__memcpy_chk(void *d, const void *s, size_t n, size_t dlen)
{
	if (n > dlen)
		abort();
	return count("memcpy", d, s, n);
}

void *
__memmove_chk(void *d, const void *s, size_t n, size_t dlen)
{
	if (n > dlen)
		abort();
	return count("memmove", d, s, n);
}

static void
report(void)
{
	const char *path = getenv("COPY_COUNT_FILE");
	FILE *f;

	if (path == NULL || (f = fopen(path, "a")) == NULL)
		return;
	fprintf(f, "%ld %llu\n", (long)getpid(), copied);
	fclose(f);
}

static void __attribute__((destructor))
report_at_exit(void)
{
	report();
}

void
_exit(int status)
{
	void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_exit");

	report();
	real(status);
	abort();
}
