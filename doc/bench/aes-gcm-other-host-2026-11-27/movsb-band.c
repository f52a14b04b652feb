#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void movsb(void *d, const void *s, size_t n) { __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"); }
int main(void) {
	size_t n = 65536; char *s = aligned_alloc(4096, n + 8192), *d = aligned_alloc(4096, n + 8192);
	memset(s, 1, n + 8192); memset(d, 2, n + 8192);
	int offs[] = {0,1,2,4,6,8,10,12,14,15,16,20,24,28,31,32,48,63,64};
	for (unsigned i = 0; i < sizeof offs / sizeof *offs; i++) {
		struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
		for (int k = 0; k < 5000; k++) movsb(d + offs[i], s, n);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double t = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		printf("dst %4d bytes past src: %.1f GB/s\n", offs[i], 5000.0 * n / t / 1e9);
	}
	return 0;
}
