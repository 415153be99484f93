/* ticks - calls of known times, for probes added and removed while it
 * runs (tests/lp-trace-control.bats): COUNT calls (argv[1]) of tick(i),
 * one every 2 ms, each call's index and CLOCK_MONOTONIC time at its
 * entry and return written to argv[2] ("I START END", ns), flushed at
 * once, so a test sees which calls fell inside a probe's attachment.
 * With argv[3], each call also sleeps that many microseconds (calls in
 * progress most of the time). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec inside;

__attribute__((noinline)) long tick(long i)
{
	for (long k = 0; k < 2000; k++)
		sink += k ^ i;
	if (inside.tv_nsec)
		nanosleep(&inside, NULL);
	return i;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 1000;
	FILE *log = fopen(argc > 2 ? argv[2] : "/dev/null", "w");
	struct timespec gap = { 0, 2000000 };

	if (!log)
		return 1;
	if (argc > 3)
		inside.tv_nsec = atol(argv[3]) % 1000000 * 1000;
	for (long i = 0; i < count; i++) {
		long long s = now_ns();
		tick(i);
		long long e = now_ns();
		fprintf(log, "%ld %lld %lld\n", i, s, e);
		fflush(log);
		nanosleep(&gap, NULL);
	}
	return fclose(log) != 0;
}
