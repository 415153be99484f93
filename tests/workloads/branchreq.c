/* branchreq - requests whose slow ones are, by construction, exactly those
 * that take a branch: handle_request(id) takes it when id % 10 == 3 (the
 * line marked BRANCH, which calls repair: 0.8 ms), and every request calls
 * lookup(id), 300 us when id % 5 == 0 (never a branch request) and 30 us
 * otherwise.  So at a 750 us threshold the slow requests are the branch's,
 * and a cut at 150 us on lookup's time leaves the id % 5 == 0 ones above.
 * handle_request returns 1 when it took the branch, lookup 1 when it was
 * slow: a tracer capturing ret= knows the truth of each span.
 *
 * The work is a fixed number of loop iterations, calibrated at start to
 * take the microseconds named (as tests/workloads/reqloop.c does): a
 * request's share of the CPU time is its share of the iterations whatever
 * preempts it, so the samples' shares are known by construction: per
 * request 100 + 800 + 30 + 100 units when it takes the branch, 100 + 300
 * + 100 when id % 5 == 0, 100 + 30 + 100 otherwise.
 *
 *   branchreq [SECONDS]     serve for SECONDS (default 5)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static double per_us;	/* loop iterations a microsecond */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* us microseconds of work (as calibrated) in the calling function's own
 * loop, so that a sample's leaf is that function */
#define WORK(us)                                                        \
	do {                                                            \
		uint64_t x_ = sink;                                     \
		for (long k_ = (long)((us) * per_us); k_ > 0; k_--)     \
			x_ = x_ * 6364136223846793005ULL + (uint64_t)k_; \
		sink = x_;                                              \
	} while (0)

__attribute__((noinline)) void parse(long id)
{
	WORK(100);
	sink += (uint64_t)id;
}

__attribute__((noinline)) void repair(long id)
{
	WORK(800);
	sink += (uint64_t)id;
}

__attribute__((noinline)) int lookup(long id)
{
	int slow = id % 5 == 0;

	WORK(slow ? 300 : 30);
	return slow;
}

__attribute__((noinline)) void respond(long id)
{
	WORK(100);
	sink += (uint64_t)id;
}

__attribute__((noinline)) int handle_request(long id)
{
	int took = id % 10 == 3;

	parse(id);
	if (took)
		repair(id); /* BRANCH */
	lookup(id);
	respond(id);
	return took;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	int64_t end = now_ns() + (int64_t)(secs * 1e9);
	long id;

	/* the fastest of 50 timed runs of 100000 iterations: one that no
	 * interrupt or preemption hit */
	int64_t best = INT64_MAX;
	per_us = 100000;	/* WORK(1) below: 100000 iterations, timed */
	for (int r = 0; r < 50; r++) {
		int64_t t = now_ns();
		WORK(1);
		t = now_ns() - t;
		if (t < best)
			best = t;
	}
	per_us = 100000 / (best / 1e3);
	for (id = 0; now_ns() < end; id++)
		handle_request(id);
	fprintf(stderr, "branchreq: %ld requests\n", id);
	return 0;
}
