/* offsleep - known off-CPU time in known functions: LONG (default 40) calls
 * of long_nap(), each 5 ms in nanosleep, and SHORT (default 0) calls of
 * short_nap(), each 100 us in nanosleep, interleaved.  Ground truth for
 * lp-record --mode off and --min-block.  A sleep lasts at least what it
 * asks, and a virtual CPU may oversleep by a millisecond or more: each nap
 * is timed, and at exit stderr says
 *   offsleep: long_ns=NS short_over_1ms=N
 * the naps' time in long_nap and how many short naps lasted over 1 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long long_ns;
static int short_over_1ms;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void nap_ns(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) void long_nap(void)
{
	long long t0 = now_ns();

	nap_ns(5000000);
	long_ns += now_ns() - t0;
}

__attribute__((noinline)) void short_nap(void)
{
	long long t0 = now_ns();

	nap_ns(100000);
	short_over_1ms += now_ns() - t0 > 1000000;
}

int main(int argc, char **argv)
{
	int nlong = argc > 1 ? atoi(argv[1]) : 40;
	int nshort = argc > 2 ? atoi(argv[2]) : 0;

	for (int i = 0; i < nlong || i < nshort; i++) {
		if (i < nlong)
			long_nap();
		if (i < nshort)
			short_nap();
	}
	fprintf(stderr, "offsleep: long_ns=%lld short_over_1ms=%d\n", long_ns, short_over_1ms);
	return 0;
}
