/* cheapline - line probes whose cost depends on where in the line they go.
 * The line marked CHEAP holds two statements: the first opens with a load
 * (the kernel single-steps it out of line), the second with a call of tick
 * (which the kernel emulates); the line marked STEPPED has only the load.
 * Each runs N times (argument, default 50) for i = 0..N-1 with k = 3 * i
 * (k volatile: in the frame); total ends at 3 * N * (N - 1) / 2 * 2 and
 * ticks at N; prints total.  The line marked BRANCHY tests k and calls odd
 * only for odd k (N / 2 times): its call is a statement of the line that
 * not every pass reaches. */
#include <stdio.h>
#include <stdlib.h>

volatile long total;
volatile long ticks;
volatile long odds;

__attribute__((noinline)) void tick(void)
{
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
	printf("%ld\n", run(n));
	return ticks == n ? 0 : 1;
}
