/* deepfp - a stack deeper than lp-record's largest copy (64 KiB), built with
 * frame pointers (the Makefile's default flags): main;dive x 101;work, each
 * dive frame over 1 KiB, so --call-graph auto must join the copy's DWARF
 * frames to the frame-pointer chain past it.  argv[1]: seconds. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 100

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

int main(int argc, char **argv)
{
	sink += dive(DEPTH, now() + (argc > 1 ? atof(argv[1]) : 5));
	return 0;
}
