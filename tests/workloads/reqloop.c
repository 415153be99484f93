/* cflags: -O2 -fno-optimize-sibling-calls -fno-shrink-wrap */
/* reqloop - a request loop on one thread whose truth is known by
 * construction, for issue 10's goal (bench/selfcost.sh loop): each request
 * goes through handle_request(i); 19 in 20 call fast_path(), ~30 us of CPU,
 * one in 20 calls slow_path(), ~400 us.  Which request of each block of 20
 * is the slow one comes from a fixed pseudo-random sequence (splitmix64 of
 * the block number): irregular, like real traffic, yet exactly 5% of any
 * run of whole blocks, so a p95 cut has the fast mode below it and the slow
 * mode above, as the goal assumes.  handle_request returns 1 for a slow
 * request, 0 for a fast one: a tracer capturing ret= knows each span's class.
 *
 * The work is a fixed number of loop iterations (calibrated at start, so
 * ~30 and ~400 us here), not "spin until the clock says so": a sample or a
 * probe hit landing in a request makes it longer, it never makes the request
 * do less, so the truth does not depend on the profiler.
 *
 *   reqloop [SECS [FAST_US [SLOW_US]]]   SECS 0 (default): until killed
 *
 * Prints on stderr, after calibrating and before serving:
 *   reqloop: fast_ns=N slow_ns=N fast_iters=N slow_iters=N slow_every=20
 * the unperturbed durations of fast_path and slow_path (the fastest of 50
 * timed calls each: within a few % on a busy machine) and their iterations
 * of the same loop body (their work's exact ratio), and at the end the
 * requests served. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static long fast_iters, slow_iters;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Stores a path's result.  Its call (no sibling call, no shrink-wrapping:
 * the first-line cflags) makes the paths non-leaf functions with a frame:
 * GCC 12 at -O2 gives leaf functions no frame whatever
 * -mno-omit-leaf-frame-pointer says, and a frame-pointer unwind from such a
 * leaf skips its caller (main;slow_path, no handle_request). */
__attribute__((noinline)) static void store(uint64_t s)
{
	sink = s;
}

/* The loop body is in each path itself, so a sample's leaf is fast_path or
 * slow_path (called from handle_request), never a shared helper. */
__attribute__((noinline)) void fast_path(void)
{
	uint64_t s = sink;

	for (long k = 0; k < fast_iters; k++)
		s = s * 6364136223846793005ULL + (uint64_t)k;
	store(s);
}

__attribute__((noinline)) void slow_path(void)
{
	uint64_t s = sink;

	for (long k = 0; k < slow_iters; k++)
		s = s * 6364136223846793005ULL + (uint64_t)k;
	store(s);
}

/* Out of handle_request, which then opens with push %rbp: a uprobe there
 * is emulated (~1 us), not single-stepped (~13 us) as on the movabs that
 * -O2 would schedule first (PERF-NOTES.md). */
__attribute__((noinline)) static int is_slow(long i)
{
	return (long)(splitmix64((uint64_t)i / 20) % 20) == i % 20;
}

__attribute__((noinline)) int handle_request(long i)
{
	int slow = is_slow(i);

	if (slow)
		slow_path();
	else
		fast_path();
	return slow;
}

/* The fastest of n timed calls: the run no interrupt or preemption hit. */
static int64_t fastest(void (*f)(void), int n)
{
	int64_t best = INT64_MAX;

	for (int r = 0; r < n; r++) {
		int64_t t = now_ns();

		f();
		t = now_ns() - t;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	double fast_us = argc > 2 ? atof(argv[2]) : 30;
	double slow_us = argc > 3 ? atof(argv[3]) : 400;
	int64_t end;
	long i;

	/* Iterations per microsecond, from 100000 of them (~100 us). */
	fast_iters = 100000;
	double per_us = fast_iters / (fastest(fast_path, 50) / 1e3);
	fast_iters = (long)(fast_us * per_us);
	slow_iters = (long)(slow_us * per_us);
	fprintf(stderr, "reqloop: fast_ns=%lld slow_ns=%lld fast_iters=%ld slow_iters=%ld slow_every=20\n",
		(long long)fastest(fast_path, 50), (long long)fastest(slow_path, 50),
		fast_iters, slow_iters);

	end = now_ns() + (int64_t)(secs * 1e9);
	/* Whole blocks of 20: exactly one slow request in each. */
	for (i = 0; secs <= 0 || i % 20 != 0 || now_ns() < end; i++)
		handle_request(i);
	fprintf(stderr, "reqloop: %ld requests, %ld slow\n", i, i / 20);
	return 0;
}
