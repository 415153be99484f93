/* inlined - a hot function inlined (always_inline, so even the workloads'
 * -fno-inline keeps it inlined) into its caller outer(), itself called by
 * main: with --inline a sampler shows main;outer;hot_inlined, hot_inlined of
 * kind i.  Runs for argv[1] seconds (default 10). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static inline __attribute__((always_inline)) void hot_inlined(void)
{
	for (int i = 0; i < 100000; i++)
		sink += i * 5;
}

__attribute__((noinline)) void outer(void)
{
	hot_inlined();
	sink++;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	double end, now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + (argc > 1 ? atof(argv[1]) : 10);
	do {
		outer();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec + ts.tv_nsec / 1e9;
	} while (now < end);
	return 0;
}
