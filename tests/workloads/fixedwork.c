/* fixedwork - a fixed amount of CPU work (argv[1] rounds, default 100; one
 * round is ~10 ms on these machines), for measuring what a sampler costs the
 * target: prints "wall_s=W cpu_s=C" on stderr at the end.  Calls a() and b()
 * (1:3 work) through main, with frame pointers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double secs(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Not a leaf (gcc drops the frame pointer of leaf functions even with
 * -mno-omit-leaf-frame-pointer), so frame pointers give main;a;work. */
__attribute__((noinline)) static void tick(void)
{
	sink++;
}

__attribute__((noinline)) static void work(long n)
{
	for (long i = 0; i < n; i++) {
		sink += i * 7;
		if (!(i & 0xffff))
			tick();
	}
}

__attribute__((noinline)) void a(void)
{
	work(2500000);
}

__attribute__((noinline)) void b(void)
{
	work(7500000);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	double w0 = secs(CLOCK_MONOTONIC), c0 = secs(CLOCK_PROCESS_CPUTIME_ID);

	for (long r = 0; r < rounds; r++) {
		a();
		b();
	}
	fprintf(stderr, "wall_s=%.4f cpu_s=%.4f\n", secs(CLOCK_MONOTONIC) - w0,
		secs(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
}
