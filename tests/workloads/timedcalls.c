/* timedcalls - a fixed amount of work in many short timed calls, for
 * measuring what a sample adds to a call: CALLS calls (argv[1], default
 * 20000) of work(), ~40 us each here, timed with CLOCK_MONOTONIC.  Prints on
 * stderr "calls=N kept=K mean_ns=M total_ns=T": M is the mean duration of
 * the K calls in which the thread was not switched out (on a busy machine
 * another thread took its CPU for a while), T their sum.  With argv[2],
 * writes each call's "START END SWITCHED" there (ns, ns, 0 or 1), one a
 * line, to be matched with samples. */
#define _GNU_SOURCE	/* RUSAGE_THREAD */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile uint64_t sink;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void step(long i)
{
	sink += i * 7;
}

__attribute__((noinline)) static void work(void)
{
	for (long i = 0; i < 20000; i++)
		step(i);
}

/* The thread's context switches so far. */
static long switches(void)
{
	struct rusage u;

	getrusage(RUSAGE_THREAD, &u);
	return u.ru_nvcsw + u.ru_nivcsw;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000;
	int64_t *start = calloc(calls, sizeof(*start)), *end = calloc(calls, sizeof(*end));
	char *sw = calloc(calls, 1);
	int64_t sum = 0;
	long kept = 0, n = switches();

	if (calls <= 0 || !start || !end || !sw)
		return 1;
	for (long i = 0; i < calls; i++) {
		start[i] = now_ns();
		work();
		end[i] = now_ns();
		/* Read after the call's end: its cost falls between calls. */
		long m = switches();

		sw[i] = m != n;
		n = m;
	}
	for (long i = 0; i < calls; i++)
		if (!sw[i]) {
			sum += end[i] - start[i];
			kept++;
		}
	fprintf(stderr, "calls=%ld kept=%ld mean_ns=%.0f total_ns=%lld\n", calls, kept,
		(double)sum / kept, (long long)sum);
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f)
			return 1;
		for (long i = 0; i < calls; i++)
			fprintf(f, "%lld %lld %d\n", (long long)start[i], (long long)end[i], sw[i]);
		if (fclose(f))
			return 1;
	}
	return 0;
}
