/* offsleep - known off-CPU time in known functions: LONG (default 40) calls
 * of long_nap(), each 5 ms in nanosleep, and SHORT (default 0) calls of
 * short_nap(), each 100 us in nanosleep, interleaved.  Ground truth for
 * lp-record --mode off and --min-block. */
#include <stdlib.h>
#include <time.h>

static void nap_ns(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) void long_nap(void)
{
	nap_ns(5000000);
}

__attribute__((noinline)) void short_nap(void)
{
	nap_ns(100000);
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
	return 0;
}
