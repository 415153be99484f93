/* reqwork.h - what a request does in evloop.c and pool.c (lp issue 18's
 * workloads), shared by both: the units of work, the callbacks that do
 * them, the calibration of a unit, the latencies each prints with -v.
 * Included after the file's struct req (with its acc) and before its use.
 *
 * A unit: a fixed number of iterations of one loop, ~1 us as calibrated,
 * so that CPU shares are shares of units whatever preempts.  A fast request
 * (id % 25 != 0) runs on_read, on_process, on_write, each fast_work(r, 20);
 * a slow one the same with twelve on_slow before on_write, each
 * slow_path(r, 125): only slow requests call slow_path. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { SLOW_EVERY = 25, SLOW_PHASES = 12, FAST_UNITS = 20, SLOW_UNITS = 125 };

static long iters_per_unit, slow_units, total_units;

/* SIGUSR1 ends the steady phase at once: no request starts after it, those
 * in flight drain, the truth is printed.  A test ends the workload so once
 * its recording is done, however long its recorders took to start. */
static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

/* No SA_RESTART: a wait the signal comes in returns (EINTR). */
static void end_on_usr1(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
}
static int64_t *lat[2];	/* latencies (ns) of fast [0] and slow [1] requests */
static long nlat[2];

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A call after each loop, so that fast_work and slow_path are not leaves:
 * GCC at -O2 gives a leaf no frame, and a frame-pointer unwind from it
 * would skip the callback that called it (see reqloop.c).  Atomic: a
 * pool's workers run it at once. */
__attribute__((noinline)) static void account(long units, int slow)
{
	__atomic_add_fetch(&total_units, units, __ATOMIC_RELAXED);
	__atomic_add_fetch(&slow_units, slow ? units : 0, __ATOMIC_RELAXED);
}

/* r's work, in the calling function's own loop, so that a sample's leaf is
 * fast_work or slow_path, under the callback that called it */
#define WORK(r, units)                                                  \
	do {                                                            \
		uint64_t x_ = (r)->acc;                                 \
		for (long k_ = (units) * iters_per_unit; k_ > 0; k_--)  \
			x_ = x_ * 6364136223846793005ULL + (uint64_t)k_; \
		(r)->acc = x_;                                          \
	} while (0)

__attribute__((noinline)) void fast_work(struct req *r, long units)
{
	WORK(r, units);
	account(units, 0);
}

__attribute__((noinline)) void slow_path(struct req *r, long units)
{
	WORK(r, units);
	account(units, 1);
}

__attribute__((noinline)) void on_read(struct req *r)
{
	fast_work(r, FAST_UNITS);
}

__attribute__((noinline)) void on_process(struct req *r)
{
	fast_work(r, FAST_UNITS);
}

__attribute__((noinline)) void on_slow(struct req *r)
{
	slow_path(r, SLOW_UNITS);
}

__attribute__((noinline)) void on_write(struct req *r)
{
	fast_work(r, FAST_UNITS);
}

/* A unit: a microsecond's iterations, from the fastest of 50 timed runs
 * of 100000 (one that no interrupt or preemption hit). */
static void calibrate_unit(void)
{
	int64_t best = INT64_MAX;

	iters_per_unit = 100000;
	for (int i = 0; i < 50; i++) {
		int64_t t = now_ns();
		fast_work(&(struct req){ 0 }, 1);
		if (now_ns() - t < best)
			best = now_ns() - t;
	}
	iters_per_unit = (long)(100000 / (best / 1e3));
	total_units = slow_units = 0;	/* not the calibration's */
}

/* Records a request's latency (ns) of its kind. */
static void add_latency(int slow, int64_t ns)
{
	long n = nlat[slow]++;

	if (!(n & (n - 1)))	/* 0 or a power of two: grow */
		if (!(lat[slow] = realloc(lat[slow], 2 * (n + 1) * sizeof(int64_t))))
			abort();
	lat[slow][n] = ns;
}

static int cmp64(const void *a, const void *b)
{
	return (*(const int64_t *)a > *(const int64_t *)b) -
	       (*(const int64_t *)a < *(const int64_t *)b);
}

/* -v: the latencies of both kinds, in ms, on stderr, each line begun with
 * who; p(q) at (n - 1) * q / 100; the slow line ends with how many slow
 * requests were no slower than the fast ones' p99. */
static void print_latencies(const char *who)
{
	for (int s = 0; s < 2; s++) {
		int64_t *l = lat[s], n = nlat[s];
		long below = 0;

#define MS(p) (n ? l[(n - 1) * p / 100] / 1e6 : 0)
		qsort(l, n, sizeof(*l), cmp64);
		for (long i = 0; s && nlat[0] && i < n; i++)	/* fast's sorted */
			below += l[i] <= lat[0][(nlat[0] - 1) * 99 / 100];
		fprintf(stderr, "%s: %s latency ms: n=%ld min=%.2f p50=%.2f "
			"p90=%.2f p99=%.2f max=%.2f", who, s ? "slow" : "fast", (long)n,
			MS(0), MS(50), MS(90), MS(99), MS(100));
		fprintf(stderr, s ? " at_or_below_fast_p99=%ld\n" : "\n", below);
#undef MS
	}
}
