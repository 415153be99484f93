/* mallocloop - malloc and free in a loop, timed: a bystander (or a target)
 * of a probe on libc's malloc.
 *
 *   mallocloop ROUNDS CALLS     ROUNDS rounds of CALLS malloc+free pairs;
 *                               prints the fastest round's ns per pair
 *   mallocloop 0                until killed
 *
 * The fastest round, in the thread's own CPU time: the pair's own cost,
 * whatever else the machine does (a round preempted by other work took 4x
 * its wall time in a clean-clone run).  A breakpoint on malloc (a uprobe)
 * makes each pair cost a trap, >= ~1 us here, against tens of ns without:
 * the trap runs in the thread, its CPU time counted. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 5;
	long calls = argc > 2 ? atol(argv[2]) : 100000;
	long best = -1;
	for (long r = 0; rounds == 0 || r < rounds; r++) {
		long t0 = now_ns();
		for (long i = 0; i < calls; i++) {
			void *volatile p = malloc(32 + (size_t)(i & 7));
			free(p);
		}
		long d = now_ns() - t0;
		if (best < 0 || d < best)
			best = d;
	}
	printf("%.1f\n", (double)best / (double)calls);
	return 0;
}
