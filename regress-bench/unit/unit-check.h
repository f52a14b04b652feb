/*
 * unit-check.h: the check counter shared by openssh-lfn's unit tests
 * (regress-bench/unit/*.c, built by regress-bench/tests/fastpath-unit.sh).
 * CHECK(cond, fmt, ...) counts a check and, when cond is false, a failure
 * with file, line and message on stderr; main() returns failures != 0.
 */
#ifndef LFN_UNIT_CHECK_H
#define LFN_UNIT_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...) do { \
	checks++; \
	if (!(cond)) { \
		failures++; \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} \
} while (0)

#endif /* LFN_UNIT_CHECK_H */
