/* cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer */
/* names-c - static functions for a stripped binary (tests/names.bats): the
 * tests strip copies of it (to a .gnu_debuglink, to a debug file found by
 * build-id, and bare), and each function must keep an identity of its own.
 * hot_a() 60%, hot_b() 30% and cold_c() 10% of the thread's CPU time, each
 * spinning in its own loop (the thread's CPU clock read every 20000
 * iterations, so a loaded machine does not skew the split), in rounds of
 * random length; all static, so a
 * stripped build has no symbol for any.  Built as
 * Debian builds C: -O2, no frame pointers, PIE.  Runs until it has used
 * argv[1] seconds (default 10) of CPU: a sampler gets as many samples on a
 * loaded machine. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static long cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

__attribute__((noipa)) static long hot_a(long us)
{
	long end = cpu_us() + us;

	do {
		for (long i = 0; i < 20000; i++)
			sink += (unsigned long)i * 3;
	} while (cpu_us() < end);
	return us;
}

__attribute__((noipa)) static long hot_b(long us)
{
	long end = cpu_us() + us;

	do {
		for (long i = 0; i < 20000; i++)
			sink += (unsigned long)i ^ 7;
	} while (cpu_us() < end);
	return us;
}

__attribute__((noipa)) static long cold_c(long us)
{
	long end = cpu_us() + us;

	do {
		for (long i = 0; i < 20000; i++)
			sink += (unsigned long)i * 5;
	} while (cpu_us() < end);
	return us;
}

int main(int argc, char **argv)
{
	long end = cpu_us() + (long)(1e6 * (argc > 1 ? atof(argv[1]) : 10));

	/* Rounds of a random length (1 to 20 ms of CPU, in the 6:3:1 ratio):
	 * rounds of one length would be sampled at the same phases by a
	 * sampler whose period divides it (499 Hz and 10 ms rounds gave
	 * cold_c twice its share). */
	srand(1);
	while (cpu_us() < end) {
		long k = 1 + rand() % 20;

		hot_a(600 * k);
		hot_b(300 * k);
		cold_c(100 * k);
	}
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
