/* jumpline - a line entered by a jump into its middle.  The line marked
 * JUMPED opens with a load of k (single-stepped by the kernel), then calls
 * tick (emulated: where a line probe would rather go); step's "goto mid"
 * for i a multiple of 4 jumps past the load straight to that call.  So the
 * line's first instruction runs for the i that are not multiples of 4 (37
 * of the default N = 50) and the call for every i: a probe moved to the
 * call would count passes that never went through the line's start.
 * step(i) for i = 0..N-1 (argument, default 50), k = 3 * i (volatile: in
 * the frame); prints total (3 * the sum of those i: 2739 for 50) and ticks
 * (N).  GCC -O1 lays it out so (tests/lp-trace-lines.bats checks with
 * objdump). */
#include <stdio.h>
#include <stdlib.h>

volatile long total;
volatile long ticks;

/* Opens with a push: emulated (cheapline.c's tick). */
__attribute__((noinline)) void tick(void)
{
	__asm__ volatile("" ::: "rbx");
	ticks++;
}

__attribute__((noinline)) void step(long i)
{
	volatile long k = 3 * i;
	if (i % 4 == 0)
		goto mid;
	total += k; mid: tick(); /* JUMPED */
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50;
	for (long i = 0; i < n; i++)
		step(i);
	printf("%ld %ld\n", total, ticks);
	return 0;
}
