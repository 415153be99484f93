/* timedcalls - a fixed amount of work in many short timed calls, for
 * measuring what a sample adds to a call: CALLS calls (argv[1], default
 * 20000) of work(), ~40 us each here, timed with CLOCK_MONOTONIC.  Prints on
 * stderr "calls=N kept=K mean_ns=M total_ns=T": M is the mean duration of
 * the calls shorter than 3 times the median (a longer one waited for the CPU
 * on a busy machine), T their sum.  With argv[2], writes each call's
 * "START END" (ns) there, one a line, to be matched with samples. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000;
	int64_t *start = calloc(calls, sizeof(*start)), *end = calloc(calls, sizeof(*end));
	int64_t *d = calloc(calls, sizeof(*d)), sum = 0;
	long kept = 0;

	if (calls <= 0 || !start || !end || !d)
		return 1;
	for (long i = 0; i < calls; i++) {
		start[i] = now_ns();
		work();
		end[i] = now_ns();
	}
	for (long i = 0; i < calls; i++)
		d[i] = end[i] - start[i];
	qsort(d, calls, sizeof(*d), cmp);
	for (long i = 0; i < calls; i++)
		if (d[i] < 3 * d[calls / 2]) {
			sum += d[i];
			kept++;
		}
	fprintf(stderr, "calls=%ld kept=%ld mean_ns=%.0f total_ns=%lld\n", calls, kept,
		(double)sum / kept, (long long)sum);
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f)
			return 1;
		for (long i = 0; i < calls; i++)
			fprintf(f, "%lld %lld\n", (long long)start[i], (long long)end[i]);
		if (fclose(f))
			return 1;
	}
	return 0;
}
