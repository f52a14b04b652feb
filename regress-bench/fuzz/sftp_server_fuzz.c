/*
 * sftp_server_fuzz: sftp-server's real processing loop, sftp_server_main(),
 * as the series changes it (patches 0104, 0262, 0315), fed a fuzzed SFTP
 * client byte stream.  README.md describes the input format; mkcorpus
 * writes seeds, capture-sftp records real clients' sessions as seeds.
 *
 * sftp-server.c is compiled into the harness, so that its statics can be
 * reset between inputs (server_reset()).  Per input:
 *  - byte 0 picks the server's options (bit 0: -R; bits 1-3: a -P or -p
 *    list, server_opts[]); the rest is what the client sends: all of it
 *    goes into a pipe whose write end is then closed, the server's stdin;
 *    its stdout is /dev/null (always writable: the loop never waits);
 *  - the server runs in the scratch directory (below), rebuilt before each
 *    input: "f" (100000 bytes), "d/", "d/g" (1234), "empty", "link" -> "f";
 *  - it ends at the stream's EOF (sftp_server_cleanup_exit() -> _exit()),
 *    or through fatal() (cleanup_exit()): both longjmp back here, and the
 *    harness closes the handles it left open and resets its statics.
 *
 * Invariants: no sanitizer report; the main loop ends (a loop that spins
 * or waits is libFuzzer's -timeout, 5 s: sftp_server_fuzz.options); every
 * descriptor the server opened is in its handle table (none is left open
 * once the harness has closed the handles).
 *
 * The sandbox (CI runs this as root, and the server removes, renames,
 * truncates and chmods whatever path it is sent): before the first input
 * the process restricts itself with Landlock (sandbox()) to creating,
 * writing and removing beneath the scratch directory and libFuzzer's
 * output directories only, and to reading /usr, /lib*, /etc, /dev/null,
 * /dev/urandom, the harness's own directory and what the command line
 * names.  Landlock does not cover a file's mode, owner and times, nor
 * (before ABI 3) truncate(): the harness lets the server make those calls
 * only on files beneath the scratch directory (guard_path(), guard_fd()).
 * Nor does it cover a pipe reached through /proc/self/fd: the server opens
 * only regular files, directories and the devices Landlock lets through
 * (fuzz_open()).  Without Landlock (an old kernel, or FUZZ_NO_LANDLOCK=1)
 * every input runs with -R (read-only) and opens only files beneath the
 * scratch directory.  Each input's work is bounded: every file at most
 * FILE_MAX bytes (RLIMIT_FSIZE), WORK_MAX bytes of replies, copy-data,
 * check-file hashing and user lookups together (work()).
 */
#include "fuzz_common.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <sanitizer/common_interface_defs.h>

/* sftp-server.c's headers that have include guards (the macros below must
 * not rename their declarations) */
#include "atomicio.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "misc.h"
#include "match.h"
#include "sftp-hash.h"

/*
 * The server's calls the harness intercepts: its exits, its log (never to
 * syslog), the bounded work (below) and the file system calls Landlock
 * does not cover (guard_path()).  The headers above declared the real
 * ones; only sftp-server.c's calls are renamed.
 */
void fuzz_server_exit(int) __attribute__((noreturn));
void fuzz_server_log_init(const char *, LogLevel, SyslogFacility, int);
static ssize_t fuzz_write(int, const void *, size_t);
size_t fuzz_atomicio(ssize_t (*)(int, void *, size_t), int, void *, size_t);
int fuzz_sftp_hash_blocks(int, uint64_t, uint64_t, uint32_t, struct sshbuf *);
struct passwd *fuzz_getpwuid(uid_t);
struct passwd *fuzz_getpwnam(const char *);
struct group *fuzz_getgrgid(gid_t);
int fuzz_tilde_expand(const char *, uid_t, char **);
int fuzz_open(const char *, int, ...);
int fuzz_truncate(const char *, off_t);
int fuzz_chmod(const char *, mode_t);
int fuzz_fchmod(int, mode_t);
int fuzz_fchmodat(int, const char *, mode_t, int);
int fuzz_chown(const char *, uid_t, gid_t);
int fuzz_fchown(int, uid_t, gid_t);
int fuzz_fchownat(int, const char *, uid_t, gid_t, int);
int fuzz_utimes(const char *, const struct timeval *);
int fuzz_futimes(int, const struct timeval *);
int fuzz_utimensat(int, const char *, const struct timespec *, int);

#define _exit(i)		fuzz_server_exit(i)
#define log_init		fuzz_server_log_init
#define write			fuzz_write
#define atomicio		fuzz_atomicio
#define sftp_hash_blocks	fuzz_sftp_hash_blocks
#define getpwuid		fuzz_getpwuid
#define getpwnam		fuzz_getpwnam
#define getgrgid		fuzz_getgrgid
#define tilde_expand		fuzz_tilde_expand
#define open			fuzz_open
#define truncate		fuzz_truncate
#define chmod			fuzz_chmod
#define fchmod			fuzz_fchmod
#define fchmodat		fuzz_fchmodat
#define chown			fuzz_chown
#define fchown			fuzz_fchown
#define fchownat		fuzz_fchownat
#define utimes			fuzz_utimes
#define futimes			fuzz_futimes
#define utimensat		fuzz_utimensat
#include "sftp-server.c"
#undef _exit
#undef log_init
#undef write
#undef atomicio
#undef sftp_hash_blocks
#undef getpwuid
#undef getpwnam
#undef getgrgid
#undef tilde_expand
#undef open
#undef truncate
#undef chmod
#undef fchmod
#undef fchmodat
#undef chown
#undef fchown
#undef fchownat
#undef utimes
#undef futimes
#undef utimensat

/* Landlock: <linux/landlock.h> may predate the rights of later ABIs */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)	/* ABI 5 */
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF	(1U << 0)	/* ABI 7 */
#endif

#define FILE_MAX	(4 * 1024 * 1024)	/* RLIMIT_FSIZE per input */
#define WORK_MAX	(64 * 1024 * 1024)	/* replies, copy-data, hashing */
#define WORK_LOOKUP	(16 * 1024)	/* a user or group lookup (~0.1 ms) */
#define NOFILE_MAX	256			/* RLIMIT_NOFILE per input */
#define PIPE_WANT	(1024 * 1024)		/* F_SETPIPE_SZ */
#define SCRATCH_F_SIZE	100000

/* byte 0 of an input: bit 0 -R, bits 1-3 a request list */
static const char *server_opts[8][2] = {
	{ NULL, NULL },
	{ "-P", "write,remove,rename" },
	{ "-P", "check-file-handle,check-file" },
	{ "-P", "read" },
	{ "-P", "open" },
	{ "-p", "open,read,close,lstat,stat,fstat,realpath,opendir,readdir,"
	    "limits" },			/* a download-only server */
	{ "-p", "open,read,write,close,stat,lstat,fstat,fsetstat,"
	    "fsync,limits,realpath" },	/* what scp needs */
	{ "-p", "open*,read*,close,*stat*,realpath" },	/* patterns */
};

static struct {
	int ready;		/* sandboxed, scratch made */
	int landlock;		/* 0: the read-only fallback */
	char scratch[PATH_MAX];	/* canonical path */
	size_t scratch_len;
	int scratch_fd, cwd_fd;
	int stdin_save, stdout_save, devnull;
	size_t pipe_max;	/* the stream is cut there */
	struct passwd *pw;	/* the current user's, a pwcopy() */
	int debug;		/* FUZZ_DEBUG: the server logs at DEBUG3 */
	uint64_t work;		/* this input's, against WORK_MAX */
	char *progname;		/* __progname before sftp_server_main() */
} fz;

/* --- the server's exits and the bounded work ----------------------------- */

void
fuzz_server_exit(int code)
{
	if (fuzz_jmp_armed) {
		fuzz_jmp_armed = 0;
		longjmp(fuzz_jmp, 1);
	}
	fprintf(stderr, "fuzz: sftp-server exit(%d) outside the harness\n",
	    code);
	abort();
}

/* sftp-server logs to syslog unless -e: here only to the harness's handler */
void
fuzz_server_log_init(const char *av0, LogLevel level, SyslogFacility facility,
    int on_stderr)
{
	log_init(av0, level, facility, 1);
	set_log_handler(fuzz_log_handler, NULL);
}

/* 0 if n more bytes of work fit this input's budget */
static int
work(uint64_t n)
{
	if (n > WORK_MAX - fz.work)
		return -1;
	fz.work += n;
	return 0;
}

/*
 * replies to /dev/null (stdout): past the budget the client stops reading
 * (EOF); the server's other writes (files) are bounded by FILE_MAX
 */
static ssize_t
fuzz_write(int fd, const void *p, size_t len)
{
	if (fd == STDOUT_FILENO && work(len) != 0)
		return 0;
	return write(fd, p, len);
}

/* copy-data's reads and writes */
size_t
fuzz_atomicio(ssize_t (*f)(int, void *, size_t), int fd, void *s, size_t n)
{
	if (work(n) != 0) {
		errno = EDQUOT;
		return 0;
	}
	return atomicio(f, fd, s, n);
}

/* check-file's hashing: the range it would read */
int
fuzz_sftp_hash_blocks(int fd, uint64_t off, uint64_t len, uint32_t bsize,
    struct sshbuf *out)
{
	struct stat st;
	uint64_t end;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		end = st.st_size;
		if (len != 0 && off + len >= off && off + len < end)
			end = off + len;
		if (end > off && work(end - off) != 0)
			return EDQUOT;
	}
	return sftp_hash_blocks(fd, off, len, bsize, out);
}

/*
 * users-groups-by-id's, home-directory's and expand-path's user and group
 * lookups: each reads /etc/passwd or /etc/group (64000 ids in one request
 * took 7.5 s); past the budget the user is not found
 */
struct passwd *
fuzz_getpwuid(uid_t uid)
{
	return work(WORK_LOOKUP) == 0 ? getpwuid(uid) : NULL;
}

struct passwd *
fuzz_getpwnam(const char *name)
{
	return work(WORK_LOOKUP) == 0 ? getpwnam(name) : NULL;
}

struct group *
fuzz_getgrgid(gid_t gid)
{
	return work(WORK_LOOKUP) == 0 ? getgrgid(gid) : NULL;
}

int
fuzz_tilde_expand(const char *path, uid_t uid, char **out)
{
	return work(WORK_LOOKUP) == 0 ? tilde_expand(path, uid, out) : -1;
}

/* --- the guards: what Landlock does not cover ---------------------------- */

/* 1 if fd is a file beneath the scratch directory */
static int
fd_in_scratch(int fd)
{
	char proc[64], path[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if ((n = readlink(proc, path, sizeof(path) - 1)) <= 0)
		return 0;
	path[n] = '\0';
	return strncmp(path, fz.scratch, fz.scratch_len) == 0 &&
	    (path[fz.scratch_len] == '/' || path[fz.scratch_len] == '\0');
}

/*
 * 0 if the server may change path's mode, owner, times or size (the link
 * itself if nofollow): it is beneath the scratch directory.  Otherwise -1
 * with errno: EACCES, as Landlock would answer, or why path cannot be
 * found (the call itself would fail so).
 */
static int
guard_path(const char *path, int nofollow)
{
	int fd, ok;

	if ((fd = open(path, O_PATH | O_CLOEXEC |
	    (nofollow ? O_NOFOLLOW : 0))) == -1)
		return -1;
	ok = fd_in_scratch(fd);
	close(fd);
	if (!ok) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

static int
guard_fd(int fd)
{
	if (fd_in_scratch(fd))
		return 0;
	errno = EACCES;
	return -1;
}

/*
 * Opens only regular files, directories and, under Landlock, the character
 * devices it lets through (/dev/null, /dev/urandom): a FIFO, a pipe reached
 * through /proc/self/fd (Landlock does not restrict those) or a tty could
 * block the server, which would look like a hang.  Without Landlock only
 * files beneath the scratch directory (a read of /proc/kmsg or a tracefs
 * pipe blocks too).
 */
int
fuzz_open(const char *path, int flags, ...)
{
	struct stat st;
	va_list ap;
	mode_t mode = 0;
	int fd, ok;

	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	if ((fd = open(path, O_PATH | O_CLOEXEC)) != -1) {
		ok = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) ||
		    S_ISDIR(st.st_mode) || (fz.landlock && S_ISCHR(st.st_mode)));
		if (!fz.landlock)
			ok = ok && fd_in_scratch(fd);
		close(fd);
		if (!ok) {
			errno = EACCES;
			return -1;
		}
	}
	return open(path, flags, mode);
}

int
fuzz_truncate(const char *path, off_t len)
{
	return guard_path(path, 0) == -1 ? -1 : truncate(path, len);
}

int
fuzz_chmod(const char *path, mode_t mode)
{
	return guard_path(path, 0) == -1 ? -1 : chmod(path, mode);
}

int
fuzz_fchmod(int fd, mode_t mode)
{
	return guard_fd(fd) == -1 ? -1 : fchmod(fd, mode);
}

int
fuzz_fchmodat(int dfd, const char *path, mode_t mode, int flags)
{
	if (dfd != AT_FDCWD)
		abort();
	return guard_path(path, flags & AT_SYMLINK_NOFOLLOW) == -1 ? -1 :
	    fchmodat(dfd, path, mode, flags);
}

int
fuzz_chown(const char *path, uid_t uid, gid_t gid)
{
	return guard_path(path, 0) == -1 ? -1 : chown(path, uid, gid);
}

int
fuzz_fchown(int fd, uid_t uid, gid_t gid)
{
	return guard_fd(fd) == -1 ? -1 : fchown(fd, uid, gid);
}

int
fuzz_fchownat(int dfd, const char *path, uid_t uid, gid_t gid, int flags)
{
	if (dfd != AT_FDCWD)
		abort();
	return guard_path(path, flags & AT_SYMLINK_NOFOLLOW) == -1 ? -1 :
	    fchownat(dfd, path, uid, gid, flags);
}

int
fuzz_utimes(const char *path, const struct timeval *tv)
{
	return guard_path(path, 0) == -1 ? -1 : utimes(path, tv);
}

int
fuzz_futimes(int fd, const struct timeval *tv)
{
	return guard_fd(fd) == -1 ? -1 : futimes(fd, tv);
}

int
fuzz_utimensat(int dfd, const char *path, const struct timespec *ts,
    int flags)
{
	if (dfd != AT_FDCWD)
		abort();
	return guard_path(path, flags & AT_SYMLINK_NOFOLLOW) == -1 ? -1 :
	    utimensat(dfd, path, ts, flags);
}

/* --- the scratch directory ------------------------------------------------ */

/* remove everything in directory dfd (whatever modes the server left) */
static void
rm_below(int dfd)
{
	struct dirent *e;
	DIR *d;
	int fd, again = 1;

	while (again) {
		again = 0;
		if ((fd = dup(dfd)) == -1 || (d = fdopendir(fd)) == NULL)
			abort();
		rewinddir(d);
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			again = 1;
			if (unlinkat(dfd, e->d_name, 0) == 0)
				continue;
			/* a directory */
			(void)fchmodat(dfd, e->d_name, 0700, 0);
			if ((fd = openat(dfd, e->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
				fprintf(stderr, "fuzz: cannot remove %s/%s: "
				    "%s\n", fz.scratch, e->d_name,
				    strerror(errno));
				abort();
			}
			rm_below(fd);
			close(fd);
			if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) != 0)
				abort();
		}
		closedir(d);
	}
}

static void
put_file(const char *name, size_t size)
{
	u_char buf[SCRATCH_F_SIZE];
	int fd;

	if ((fd = openat(fz.scratch_fd, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0644)) == -1)
		abort();
	fuzz_fill(buf, size, 0, 0);
	if (write(fd, buf, size) != (ssize_t)size)
		abort();
	close(fd);
}

/* every input starts from the same files (README.md) */
static void
scratch_reset(void)
{
	if (fchmod(fz.scratch_fd, 0700) != 0)
		abort();
	rm_below(fz.scratch_fd);
	put_file("f", SCRATCH_F_SIZE);
	put_file("empty", 0);
	if (mkdirat(fz.scratch_fd, "d", 0755) != 0 ||
	    symlinkat("f", fz.scratch_fd, "link") != 0)
		abort();
	put_file("d/g", 1234);
}

/*
 * The scratch directory: Landlock lets this process remove what is
 * beneath it but not itself, so a child made now (not sandboxed) removes
 * it, and an empty artifact directory (below), once this process has
 * gone, however it ends: the pipe it waits on then reports EOF.
 */
static void
scratch_make(const char *artifacts)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX], c;
	int p[2], fd;
	pid_t pid;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(path, sizeof(path), "%s/sftp_server_fuzz.XXXXXX", tmp);
	if (mkdtemp(path) == NULL || realpath(path, fz.scratch) == NULL) {
		fprintf(stderr, "fuzz: mkdtemp %s: %s\n", path,
		    strerror(errno));
		abort();
	}
	fz.scratch_len = strlen(fz.scratch);
	if ((fz.scratch_fd = open(fz.scratch, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		abort();
	if (pipe2(p, O_CLOEXEC) != 0 || (pid = fork()) == -1)
		abort();
	if (pid == 0) {
		for (fd = 0; fd < 1024; fd++)
			if (fd != p[0] && fd != fz.scratch_fd)
				close(fd);
		while (read(p[0], &c, 1) != 0 && errno == EINTR)
			;
		rm_below(fz.scratch_fd);
		rmdir(fz.scratch);
		if (artifacts != NULL)
			rmdir(artifacts);	/* if empty */
		_exit(0);
	}
	close(p[0]);		/* p[1] stays open (close-on-exec) */
}

/* --- the sandbox ---------------------------------------------------------- */

#define LL_READ	(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_EXEC	(LL_READ | LANDLOCK_ACCESS_FS_EXECUTE)
#define LL_RW	(LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
	LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
	LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | \
	LANDLOCK_ACCESS_FS_TRUNCATE)
#define LL_FILE	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
	LANDLOCK_ACCESS_FS_IOCTL_DEV)	/* what a rule on a file may hold */

static uint64_t ll_handled;

/* allow access beneath path (what the ABI knows of it); absent: nothing */
static void
ll_allow(int ruleset, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr pb;
	struct stat st;
	int fd;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return;
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= LL_FILE;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access & ll_handled;
	pb.parent_fd = fd;
	if (pb.allowed_access != 0 && syscall(SYS_landlock_add_rule, ruleset,
	    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0) {
		fprintf(stderr, "fuzz: landlock rule for %s: %s\n", path,
		    strerror(errno));
		abort();
	}
	close(fd);
}

/* the directory a file path (or a prefix like "dir/crash-") is in */
static void
ll_allow_dir_of(int ruleset, const char *path, uint64_t access)
{
	char *dup = xstrdup(path), *slash = strrchr(dup, '/');

	if (slash == NULL)
		ll_allow(ruleset, ".", access);
	else {
		slash[1] = '\0';
		ll_allow(ruleset, dup, access);
	}
	free(dup);
}

/*
 * What libFuzzer reads and writes: -artifact_prefix's directory (written),
 * the corpus directories (the first one written), input files and -dict
 * (read); FUZZ_RW_DIRS (':'-separated) for anything else it should write
 */
static void
ll_allow_libfuzzer(int ruleset, int argc, char **argv)
{
	const char *a, *env;
	char *dirs, *d, *cp;
	struct stat st;
	int i, corpus = 0;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strncmp(a, "-artifact_prefix=", 17) == 0)
			ll_allow_dir_of(ruleset, a + 17, LL_RW);
		else if (strncmp(a, "-exact_artifact_path=", 21) == 0)
			ll_allow_dir_of(ruleset, a + 21, LL_RW);
		else if (strncmp(a, "-dict=", 6) == 0)
			ll_allow(ruleset, a + 6, LL_READ);
		else if (a[0] != '-' && stat(a, &st) == 0)
			ll_allow(ruleset, a, S_ISDIR(st.st_mode) &&
			    corpus++ == 0 ? LL_RW : LL_READ);
	}
	if ((env = getenv("FUZZ_RW_DIRS")) != NULL) {
		dirs = xstrdup(env);
		for (cp = dirs; (d = strsep(&cp, ":")) != NULL;)
			if (*d != '\0')
				ll_allow(ruleset, d, LL_RW);
		free(dirs);
	}
}

/* 1: Landlock restricts this process now; 0: unavailable */
static int
sandbox(int argc, char **argv)
{
	struct landlock_ruleset_attr attr;
	char exe[PATH_MAX];
	ssize_t n;
	int abi, ruleset;

	if (getenv("FUZZ_NO_LANDLOCK") != NULL)
		return 0;	/* to try the fallback */
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return 0;
	ll_handled = LL_RW | LANDLOCK_ACCESS_FS_EXECUTE |
	    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_SOCK |
	    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	    LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (abi < 2)
		ll_handled &= ~LANDLOCK_ACCESS_FS_REFER;
	if (abi < 3)
		ll_handled &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi < 5)
		ll_handled &= ~LANDLOCK_ACCESS_FS_IOCTL_DEV;
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = ll_handled;
	if ((ruleset = syscall(SYS_landlock_create_ruleset, &attr,
	    sizeof(attr), 0)) == -1) {
		fprintf(stderr, "fuzz: landlock_create_ruleset: %s\n",
		    strerror(errno));
		abort();
	}
	/* libraries, llvm-symbolizer (ASan's reports), NSS */
	ll_allow(ruleset, "/usr", LL_EXEC);
	ll_allow(ruleset, "/lib", LL_EXEC);
	ll_allow(ruleset, "/lib32", LL_EXEC);
	ll_allow(ruleset, "/lib64", LL_EXEC);
	ll_allow(ruleset, "/libx32", LL_EXEC);
	ll_allow(ruleset, "/etc", LL_READ);
	ll_allow(ruleset, "/dev/null", LL_READ);
	ll_allow(ruleset, "/dev/urandom", LL_READ);
	/* LeakSanitizer lists the threads (FUZZ_ARGS=-detect_leaks=1) */
	ll_allow(ruleset, "/proc/self/task", LANDLOCK_ACCESS_FS_READ_DIR);
	/* this binary, for the symbolizer */
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		ll_allow_dir_of(ruleset, exe, LL_READ);
	}
	ll_allow(ruleset, fz.scratch, LL_RW);
	ll_allow_libfuzzer(ruleset, argc, argv);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		abort();
	/* ABI 7: no audit record for every path the fuzzer is refused */
	if (syscall(SYS_landlock_restrict_self, ruleset,
	    abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF : 0) != 0) {
		fprintf(stderr, "fuzz: landlock_restrict_self: %s\n",
		    strerror(errno));
		abort();
	}
	close(ruleset);
	return 1;
}

/* --- set up, once --------------------------------------------------------- */

/*
 * libFuzzer writes an artifact to the current directory unless told
 * otherwise; that is not for this process to write into.  Returns the
 * directory made for them instead, or NULL if argv names one.
 */
static char *
artifact_prefix(int *argc, char ***argv)
{
	static char dir[PATH_MAX], arg[PATH_MAX + 32];
	const char *tmp = getenv("TMPDIR");
	char **nargv;
	int i;

	for (i = 1; i < *argc; i++)
		if (strncmp((*argv)[i], "-artifact_prefix=", 17) == 0 ||
		    strncmp((*argv)[i], "-exact_artifact_path=", 21) == 0)
			return NULL;
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/sftp_server_fuzz-artifacts.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(arg, sizeof(arg), "-artifact_prefix=%s/", dir);
	nargv = xcalloc(*argc + 2, sizeof(*nargv));
	memcpy(nargv, *argv, *argc * sizeof(*nargv));
	nargv[(*argc)++] = arg;
	*argv = nargv;
	fprintf(stderr, "sftp_server_fuzz: no -artifact_prefix: artifacts "
	    "go to %s/\n", dir);
	return dir;
}

/* libFuzzer's modes that only run other processes of this binary */
static int
supervisor(int argc, char **argv)
{
	static const char *flags[] = { "-fork=", "-jobs=", "-merge=",
	    "-minimize_crash=", "-set_cover_merge=", NULL };
	int i, j;

	for (i = 1; i < argc; i++)
		for (j = 0; flags[j] != NULL; j++)
			if (strncmp(argv[i], flags[j], strlen(flags[j])) == 0 &&
			    atoi(argv[i] + strlen(flags[j])) != 0)
				return 1;
	return 0;
}

static void
setup(int argc, char **argv, const char *artifacts)
{
	struct passwd *pw;
	long long v;
	int p[2], size;

	fuzz_log_init();
	fuzz_env_int("FUZZ_DEBUG", 0, &v);
	fz.debug = v != 0;
	if ((pw = getpwuid(getuid())) == NULL)
		abort();
	fz.pw = pwcopy(pw);
	/* what sshd gives the subsystem */
	setenv("SSH_CONNECTION", "127.0.0.1 40000 127.0.0.1 22", 1);
	if ((fz.cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (fz.devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1 ||
	    (fz.stdin_save = fcntl(0, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    (fz.stdout_save = fcntl(1, F_DUPFD_CLOEXEC, 3)) == -1)
		abort();
	/* how much of an input the pipe holds */
	if (pipe(p) != 0)
		abort();
	if ((size = fcntl(p[1], F_SETPIPE_SZ, PIPE_WANT)) == -1)
		size = fcntl(p[1], F_GETPIPE_SZ);
	fz.pipe_max = size > 0 ? size : 4096;
	close(p[0]);
	close(p[1]);
	if (fz.pipe_max < PIPE_WANT)
		fprintf(stderr, "sftp_server_fuzz: a pipe holds %zu bytes: "
		    "longer streams are cut there\n", fz.pipe_max);

	scratch_make(artifacts);
	/* what ASan's reports need later (/proc/self/maps, the symbolizer) */
	__sanitizer_sandbox_on_notify(NULL);
	if ((fz.landlock = sandbox(argc, argv)) == 0)
		fprintf(stderr, "sftp_server_fuzz: no Landlock: every input "
		    "runs read-only (-R) in %s\n", fz.scratch);
	fz.ready = 1;
}

static int fz_argc;
static char **fz_argv;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *artifacts;

	fz_argc = *argc;
	fz_argv = *argv;
	if (supervisor(*argc, *argv))
		return 0;	/* its children set themselves up */
	artifacts = artifact_prefix(argc, argv);
	setup(*argc, *argv, artifacts);
	return 0;
}

/* --- one input ------------------------------------------------------------ */

/* the server's statics, as a new process would have them */
static void
server_reset(void)
{
	extern char *__progname;
	u_int i;

	for (i = 0; i < num_handles; i++) {
		if (handles[i].use == HANDLE_FILE)
			close(handles[i].fd);
		else if (handles[i].use == HANDLE_DIR)
			closedir(handles[i].dirp);
		if (handles[i].use != HANDLE_UNUSED)
			free(handles[i].name);
	}
	free(handles);
	handles = NULL;
	num_handles = 0;
	first_unused_handle = -1;
	sshbuf_free(iqueue);
	sshbuf_free(oqueue);
	iqueue = oqueue = NULL;
	init_done = 0;
	version = 0;
	readonly = 0;
	free(request_allowlist);
	free(request_denylist);
	request_allowlist = request_denylist = NULL;
	if (pw != NULL)
		pwfree(pw);
	pw = NULL;
	free(client_addr);
	client_addr = NULL;
	log_level = SYSLOG_LEVEL_ERROR;
	optind = 1;		/* getopt() from the start */
	optreset = 1;
	if (__progname != fz.progname) {
		free(__progname);	/* ssh_get_progname()'s copy */
		__progname = fz.progname;
	}
}

/* which of descriptors 0..NOFILE_MAX-1 are open */
static void
fds_open(u_char *open_now)
{
	int fd;

	for (fd = 0; fd < NOFILE_MAX; fd++)
		open_now[fd] = fcntl(fd, F_GETFD) != -1;
}

static void
set_limit(int resource, rlim_t cur, struct rlimit *old)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) != 0)
		abort();
	if (old != NULL)
		*old = rl;
	rl.rlim_cur = MINIMUM(cur, rl.rlim_max);
	if (setrlimit(resource, &rl) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *argv[12];
	volatile int argc = 0;
	u_char before[NOFILE_MAX], after[NOFILE_MAX];
	struct rlimit fsize, nofile;
	struct sigaction ign, xfsz;
	extern char *__progname;
	u_char opt = size > 0 ? data[0] : 0;
	size_t len;
	int p[2], fd;

	if (!fz.ready)		/* a supervisor (above) that runs inputs */
		setup(fz_argc, fz_argv, NULL);
	argv[argc++] = "sftp-server";
	if ((opt & 1) || !fz.landlock)	/* without Landlock always */
		argv[argc++] = "-R";
	if (server_opts[(opt >> 1) & 7][0] != NULL) {
		argv[argc++] = server_opts[(opt >> 1) & 7][0];
		argv[argc++] = server_opts[(opt >> 1) & 7][1];
	}
	if (fz.debug) {
		argv[argc++] = "-l";
		argv[argc++] = "DEBUG3";
	}
	argv[argc] = NULL;

	scratch_reset();
	fds_open(before);

	/* the client's stream: all of it in the pipe, then EOF */
	len = size > 0 ? MINIMUM(size - 1, fz.pipe_max) : 0;
	if (pipe2(p, O_CLOEXEC) != 0 ||
	    fcntl(p[1], F_SETFL, O_NONBLOCK) != 0)	/* never waits */
		abort();
	if (len > 4096)
		(void)fcntl(p[1], F_SETPIPE_SZ, (int)fz.pipe_max);
	if (len > 0 && write(p[1], data + 1, len) == -1)
		abort();	/* (what did not fit is cut) */
	close(p[1]);
	if (dup2(p[0], STDIN_FILENO) == -1 ||
	    dup2(fz.devnull, STDOUT_FILENO) == -1)
		abort();
	close(p[0]);

	/* the bounds (FILE_MAX: a write beyond fails with EFBIG) */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGXFSZ, &ign, &xfsz);
	set_limit(RLIMIT_FSIZE, FILE_MAX, &fsize);
	set_limit(RLIMIT_NOFILE, NOFILE_MAX, &nofile);
	fz.work = 0;
	fz.progname = __progname;
	if (fchdir(fz.scratch_fd) != 0)
		abort();

	if (setjmp(fuzz_jmp) == 0) {
		fuzz_jmp_armed = 1;
		sftp_server_main(argc, (char **)argv, fz.pw);
		abort();	/* it never returns */
	}
	fuzz_jmp_armed = 0;

	if (fchdir(fz.cwd_fd) != 0 ||
	    setrlimit(RLIMIT_NOFILE, &nofile) != 0 ||
	    setrlimit(RLIMIT_FSIZE, &fsize) != 0 ||
	    sigaction(SIGXFSZ, &xfsz, NULL) != 0 ||
	    dup2(fz.stdin_save, STDIN_FILENO) == -1 ||
	    dup2(fz.stdout_save, STDOUT_FILENO) == -1)
		abort();
	server_reset();

	fds_open(after);
	for (fd = 0; fd < NOFILE_MAX; fd++)
		FUZZ_INVARIANT(!after[fd] || before[fd],
		    "descriptor %d left open: not in the handle table", fd);
	return 0;
}
