/* copytime - what copying BYTES (argv[1], default 65536) costs this
 * machine now, for tests that bound a cost by the copies it makes
 * (tests/cost.bats: a DWARF sample copies the top of the stack).  Prints
 * the median over 201 rounds of one copy's time, in ns, each round the
 * mean of 16 copies between two buffers that stay in the caches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 201
#define COPIES 16

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 65536;
	char *src = malloc(bytes), *dst = malloc(bytes);
	long long ns[ROUNDS];

	if (!bytes || !src || !dst) {
		fprintf(stderr, "usage: copytime [BYTES]\n");
		return 2;
	}
	memset(src, 1, bytes);
	memset(dst, 2, bytes);
	for (int r = 0; r < ROUNDS; r++) {
		long long t = now_ns();

		for (int i = 0; i < COPIES; i++) {
			memcpy(i & 1 ? src : dst, i & 1 ? dst : src, bytes);
			__asm__ volatile("" : : "r"(src), "r"(dst) : "memory");
		}
		ns[r] = (now_ns() - t) / COPIES;
	}
	qsort(ns, ROUNDS, sizeof(ns[0]), by_value);
	printf("%lld\n", ns[ROUNDS / 2]);
	return 0;
}
