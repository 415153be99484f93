/* cheapline - line probes whose cost depends on where in the line they go.
 * The line marked CHEAP holds two statements: the first opens with a load
 * (the kernel single-steps it out of line), the second with a call of tick
 * (which the kernel emulates); the line marked STEPPED has only the load.
 * Each runs N times (argument, default 50) for i = 0..N-1 with k = 3 * i
 * (k volatile: in the frame); total ends at 3 * N * (N - 1) / 2 * 2 and
 * ticks at N; prints total.  The line marked BRANCHY tests k and calls odd
 * only for odd k (N / 2 times): its call is a statement of the line that
 * not every pass reaches.  With a second argument, prints the time an
 * iteration took on stderr (bench/lines.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile long total;
volatile long ticks;
volatile long odds;

/* Opens with a push (the clobber of a callee-saved register asks for one),
 * emulated by the kernel: a function probe at its cheapest, for
 * bench/lines.sh to compare a line probe with. */
__attribute__((noinline)) void tick(void)
{
	__asm__ volatile("" ::: "rbx");
	ticks++;
}

__attribute__((noinline)) void odd(void)
{
	odds++;
}

__attribute__((noinline)) long run(long n)
{
	for (long i = 0; i < n; i++) {
		volatile long k = 3 * i;
		total += k; tick(); /* CHEAP */
		total += k; /* STEPPED */
		if (k & 1) odd(); /* BRANCHY */
	}
	return total;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	long r = run(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%ld\n", r);
	if (argc > 2)
		fprintf(stderr, "%ld iterations, %.1f ns per iteration\n", n,
			((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)(n ? n : 1));
	return ticks == n ? 0 : 1;
}
