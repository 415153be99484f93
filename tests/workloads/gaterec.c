/* gaterec - known truth for lp-record --inside FUNC with recursion.  Each
 * round, rec(4) nests five calls of rec, each burning 1 ms of this
 * thread's CPU before its inner call and 1 ms after that call returned,
 * then out() burns 10 ms outside rec.  So rec is on the stack for 50% of
 * the CPU time, and each depth of rec (1 to 5 calls on the stack) is the
 * innermost for a fifth of that; a gate that ended at the first return of
 * a nested call would see only 30% (the five spins before the inner calls,
 * the innermost one's after).  Runs until it has used argv[1] seconds of
 * CPU (default 2). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void spin(int64_t ns)
{
	int64_t end = cpu_ns() + ns;

	do {
		for (int i = 0; i < 20000; i++)
			sink += i * 7;
	} while (cpu_ns() < end);
}

__attribute__((noinline)) void rec(int n)
{
	spin(1000000);
	if (n > 0)
		rec(n - 1);
	spin(1000000);
}

__attribute__((noinline)) void out(void)
{
	spin(10000000);
}

int main(int argc, char **argv)
{
	double cpu = argc > 1 ? atof(argv[1]) : 2;
	int64_t cpu_end = (int64_t)(cpu * 1e9);

	while (cpu_ns() < cpu_end) {
		rec(4);
		out();
	}
	return 0;
}
