/* cpusplit - known truth for lp-record: function a() takes 25% and b() 75% of
 * this thread's CPU time, by construction: they alternate, a() burning 5 ms
 * and b() 15 ms of CLOCK_THREAD_CPUTIME_ID (not wall time, so a loaded machine
 * does not skew the split).  Runs for argv[1] seconds of wall time (default
 * 10), or until it has used argv[2] seconds of CPU, or until killed: a CPU
 * budget gives a sampler the same number of samples on a loaded machine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The clock is read every few microseconds of work, so almost every sample
 * lands in the loop body of the function itself. */
__attribute__((noinline)) static void spin(int64_t ns)
{
	int64_t end = cpu_ns() + ns;

	do {
		for (int i = 0; i < 20000; i++)
			sink += i * 7;
	} while (cpu_ns() < end);
}

__attribute__((noinline)) void a(void)
{
	spin(5000000);
}

__attribute__((noinline)) void b(void)
{
	spin(15000000);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	double cpu = argc > 2 ? atof(argv[2]) : 0;
	int64_t end = wall_ns() + (int64_t)(secs * 1e9);
	int64_t cpu_end = cpu > 0 ? (int64_t)(cpu * 1e9) : INT64_MAX;
	/* 2 KiB of stack between main's callees and the outermost frames: a
	 * DWARF copy of 512 bytes cannot reach main, 8 KiB can. */
	volatile char pad[2048];

	pad[0] = pad[sizeof(pad) - 1] = 0;

	while (wall_ns() < end && cpu_ns() < cpu_end) {
		a();
		b();
	}
	return 0;
}
