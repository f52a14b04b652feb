/*
 * pipe-quota-shim.c: LD_PRELOAD shim for fastpath-pipe-quota.sh.  Makes
 * F_SETPIPE_SZ above PIPE_QUOTA_ROOM bytes (default 256 KiB) fail with
 * EPERM, as Linux does for an unprivileged user whose pipe pages would go
 * over fs.pipe-user-pages-soft: it simulates, for sshd-session running as
 * root in a test, a user with only that much room left under the quota.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>

static int
shim(const char *name, int fd, int cmd, long arg)
{
	int (*real)(int, int, ...) = (int (*)(int, int, ...))dlsym(RTLD_NEXT, name);
	const char *room = getenv("PIPE_QUOTA_ROOM");

	if (cmd == F_SETPIPE_SZ && arg > (room ? atol(room) : 262144)) {
		errno = EPERM;
		return -1;
	}
	return real(fd, cmd, arg);
}

int
fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return shim("fcntl", fd, cmd, arg);
}

int
fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return shim("fcntl64", fd, cmd, arg);
}
