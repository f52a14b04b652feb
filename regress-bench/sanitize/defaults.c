/*
 * regress-bench/sanitize/defaults.c — the sanitizer options compiled into
 * every program of the sanitizer build (regress-bench/sanitize/run links
 * this object into each of them through LDFLAGS; it is not instrumented).
 *
 * The runtime reads these before the environment's ASAN_OPTIONS /
 * UBSAN_OPTIONS, so they hold even where the environment does not reach:
 * sftp-server and the other programs that sshd starts in a session get an
 * environment of sshd's making.  Every report (ASan, UBSan, LSan) goes to
 * a file LFN_SAN_REPORTS/report.PID, a directory the build names, because
 * a daemon's stderr is usually lost.  (Built with clang, whose ASan runtime
 * holds UBSan's: with gcc, libubsan keeps its own report file and writes
 * UBSan's reports to stderr whatever log_path says.)
 *
 * LeakSanitizer: on for the client tools (ssh, scp, sftp, ssh-keygen,
 * ssh-add) unless traced (strace), off elsewhere, as upstream's own
 * sanitize-address CI has it everywhere (.github/configs: detect_leaks=0):
 * sshd, sshd-session and the helpers end with exit() holding their state.
 * Leaks of upstream's unpatched code are suppressed below.
 *
 * This runs inside the sanitizer runtime's start-up, before libc is ready:
 * no libc string functions (the runtime intercepts them), just raw
 * readlink(2) of /proc/self/exe and read(2) of /proc/self/status.
 */
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LFN_SAN_REPORTS
#error "build with -DLFN_SAN_REPORTS=\"/path/to/reports\""
#endif

static const char *const leak_checked[] = {
	"ssh", "scp", "sftp", "ssh-keygen", "ssh-add", 0
};

static int
streq(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b)
		a++, b++;
	return *a == *b;
}

/* under ptrace (the tests that count syscalls with strace) LeakSanitizer
 * cannot stop the world and reports a fatal error instead: no leak check */
static int
traced(void)
{
	static const char key[] = "\nTracerPid:";
	char buf[4096];
	long n, i, j;
	int fd;

	fd = (int)syscall(SYS_open, "/proc/self/status", 0 /* O_RDONLY */);
	if (fd < 0)
		return 0;
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (i = 0; i < n; i++) {
		for (j = 0; key[j] != '\0' && buf[i + j] == key[j]; j++)
			;
		if (key[j] != '\0')
			continue;
		for (i += j; buf[i] == ' ' || buf[i] == '\t'; i++)
			;
		return buf[i] >= '1' && buf[i] <= '9';
	}
	return 0;
}

static int
client_tool(void)
{
	static int cached = -1;
	char buf[4096];
	const char *base = buf, *p;
	long n;
	int i;

	if (cached != -1)
		return cached;
	cached = 0;
	n = syscall(SYS_readlink, "/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return cached;
	buf[n] = '\0';
	for (p = buf; *p != '\0'; p++)
		if (*p == '/')
			base = p + 1;
	for (i = 0; leak_checked[i] != 0; i++)
		if (streq(base, leak_checked[i]))
			cached = 1;
	if (cached && traced())
		cached = 0;
	return cached;
}

#define COMMON "log_path=" LFN_SAN_REPORTS "/report"
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__lsan_default_options(void);

const char *
__asan_default_options(void)
{
	/* a small quarantine: the tests that bound a process's memory see
	 * freed memory come back as it does without ASan, not 256 MiB later */
	return client_tool() ?
	    COMMON ":detect_leaks=1:quarantine_size_mb=16" :
	    COMMON ":detect_leaks=0:quarantine_size_mb=16";
}

const char *
__lsan_default_options(void)
{
	return client_tool() ? "detect_leaks=1" : "detect_leaks=0";
}

/*
 * Leaks of upstream's own code, the same in stock 10.5p1 (no patch
 * touches these functions or their callers' handling), reported
 * upstream's way rather than here:
 *  - ssh: the environment copy of compat_init_setproctitle()
 *    (openbsd-compat/setproctitle.c:117): ssh.c's IdentityAgent handling
 *    setenv()s/unsetenv()s SSH_AUTH_SOCK, which drops the copied string.
 *  - ssh: userauth_hostbased() (sshconnect2.c) keeps authctxt->oktypes,
 *    never freed once hostbased was tried.
 *  - ssh -O conninfo/info (mux.c): the request's name, in the client
 *    (mux_client_request_info) and the master (mux_master_process_ext_info).
 */
const char *__lsan_default_suppressions(void);

const char *
__lsan_default_suppressions(void)
{
	return "leak:compat_init_setproctitle\n"
	    "leak:userauth_hostbased\n"
	    "leak:mux_client_request_info\n"
	    "leak:mux_master_process_ext_info\n";
}

const char *
__ubsan_default_options(void)
{
	return COMMON ":print_stacktrace=1:halt_on_error=1";
}
