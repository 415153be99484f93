/* cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer */
/* nofp - known stacks in a build without frame pointers (as Debian builds),
 * for lp-record's default unwinding.  argv[1]: seconds of wall time;
 * argv[2]: what to do, each with one known stack:
 *   deep   main;dive x 41;work: 41 frames of 1 KiB each, deeper than the
 *          first stack copy (8 KiB), all of the CPU in work
 *   calls  main;serve;handle;work: handle() called over and over (a
 *          function to trace with a return probe), ~20 us each
 *   sleep  main;nap;usleep...: blocked in libc's nanosleep, 1 ms at a time
 *   plt    main;through_plt, calling libc's pthread_getspecific (a few
 *          instructions) through its PLT stub over and over: a good part of the samples are in the stub,
 *          whose CFI computes the CFA from the pc (DW_OP_breg16)
 * argv[3], optional: a file main writes "START END" to as it returns, the
 * CLOCK_MONOTONIC nanoseconds (the clock of lp's samples) from just before
 * it does the work to just after: what ran before main (ld.so, libc's
 * start) and after it (exit) has no stack through main. */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef DEPTH
#define DEPTH 40	/* deepfp.c: 100 */
#endif

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void work(int iters)
{
	for (int i = 0; i < iters; i++)
		sink += i * 7;
}

/* Not a tail call: the frame's buffer is read after the call returns. */
__attribute__((noinline)) int dive(int n, double end)
{
	volatile char buf[1024];

	buf[n] = (char)n;
	if (n == 0) {
		while (now() < end)
			work(100000);
		return 0;
	}
	return dive(n - 1, end) + buf[n];
}

__attribute__((noinline)) int handle(int i)
{
	work(20000);
	return i + 1;
}

__attribute__((noinline)) void serve(double end)
{
	int i = 0;

	while (now() < end)
		i = handle(i);
	sink += i;
}

__attribute__((noinline)) void nap(double end)
{
	while (now() < end)
		usleep(1000);
}

__attribute__((noinline)) void through_plt(double end)
{
	pthread_key_t key;

	pthread_key_create(&key, NULL);
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink += (uintptr_t)pthread_getspecific(key);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	const char *what = argc > 2 ? argv[2] : "deep";
	/* Chosen before the work's start: the libc calls that choose (their
	 * first calls go through ld.so to be bound) are no part of it. */
	int mode = !strcmp(what, "deep") ? 0 : !strcmp(what, "calls") ? 1 :
		   !strcmp(what, "sleep") ? 2 : !strcmp(what, "plt") ? 3 : -1;
	uint64_t start = now_ns();
	double end = now() + secs;

	if (mode < 0)
		return 2;
	if (mode == 0)
		sink += dive(DEPTH, end);
	else if (mode == 1)
		serve(end);
	else if (mode == 2)
		nap(end);
	else
		through_plt(end);
	uint64_t stop = now_ns();

	if (argc > 3) {
		FILE *f = fopen(argv[3], "w");

		if (!f || fprintf(f, "%" PRIu64 " %" PRIu64 "\n", start, stop) < 0 || fclose(f))
			return 1;
	}
	return 0;
}
