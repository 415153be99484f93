/* cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer */
/* names-c - static functions for a stripped binary (tests/names.bats): the
 * tests strip copies of it (to a .gnu_debuglink, to a debug file found by
 * build-id, and bare), and each function must keep an identity of its own.
 * hot_a() 60% and hot_b() 30% of the loop's work, each in its own loop;
 * both static, so a stripped build has no symbol for either.  Built as
 * Debian builds C: -O2, no frame pointers, PIE.  Runs argv[1] seconds
 * (default 10) of wall time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static volatile long work = 20000;

__attribute__((noipa)) static long hot_a(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 3;
	return n;
}

__attribute__((noipa)) static long hot_b(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i ^ 7;
	return n;
}

__attribute__((noipa)) static long cold_c(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 5;
	return n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);

	while (now() < end) {
		hot_a(6 * work);
		hot_b(3 * work);
		cold_c(work);
	}
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
