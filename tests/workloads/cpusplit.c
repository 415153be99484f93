/* cpusplit - known truth for lp-record: function a() takes 25% and b() 75% of
 * this thread's CPU time, by construction: they alternate, a() burning 5 ms
 * and b() 15 ms of CLOCK_THREAD_CPUTIME_ID (not wall time, so a loaded machine
 * does not skew the split).  Runs for argv[1] seconds of wall time (default
 * 10), or until it has used argv[2] seconds of CPU, or until killed: a CPU
 * budget gives a sampler the same number of samples on a loaded machine.
 * Each call overshoots its target by up to a round of the loop between two
 * clock reads: some microseconds natively, a millisecond or more under an
 * emulator (qemu's TCG), where a() then takes more than its 25%.  With a
 * third argument, a file, what each really took is written there at the
 * end: its CPU time and its rounds of the loop,
 *	cpusplit: a_ns=N b_ns=M a_rounds=R b_rounds=S
 * the rounds a measure of the time the CPU ran each that no stolen time
 * swells: a virtual CPU's thread that the host deschedules for 10 ms
 * inside a() counts 10 ms of a()'s CPU time, but neither rounds nor, but
 * for one, samples.  With CPUSPLIT_BY_ROUNDS=1 in the environment the split
 * is of rounds instead, 1:3 exactly: a() runs as many rounds as its first
 * call took in 5 ms of CPU time, b() three times as many, so that two runs
 * split alike however much time the host takes from either. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static int64_t a_ns, b_ns;	/* the CPU time a() and b() took */
static int64_t a_rounds, b_rounds;	/* and their rounds of spin's loop */
static int64_t a_quota;		/* by rounds: a() call's rounds (0: by CPU time) */

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
__attribute__((noinline)) static int64_t spin(int64_t ns, int64_t quota, int64_t *rounds)
{
	int64_t start = cpu_ns(), now, n = 0;

	do {
		for (int i = 0; i < 20000; i++)
			sink += i * 7;
		++n;
	} while ((now = cpu_ns(), quota ? n < quota : now < start + ns));
	*rounds += n;
	return now - start;
}

__attribute__((noinline)) void a(void)
{
	if (a_quota < 0) {	/* by rounds, the first call: the quota */
		int64_t before = a_rounds;

		a_ns += spin(5000000, 0, &a_rounds);
		a_quota = a_rounds - before;
		return;
	}
	a_ns += spin(5000000, a_quota, &a_rounds);
}

__attribute__((noinline)) void b(void)
{
	b_ns += spin(15000000, 3 * a_quota, &b_rounds);
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
	const char *by_rounds = getenv("CPUSPLIT_BY_ROUNDS");

	if (by_rounds && atoi(by_rounds))
		a_quota = -1;

	while (wall_ns() < end && cpu_ns() < cpu_end) {
		a();
		b();
	}
	if (argc > 3) {
		FILE *f = fopen(argv[3], "w");

		if (!f || fprintf(f, "cpusplit: a_ns=%lld b_ns=%lld a_rounds=%lld b_rounds=%lld\n",
			       (long long)a_ns, (long long)b_ns, (long long)a_rounds, (long long)b_rounds) < 0 ||
		    fclose(f) != 0) {
			perror(argv[3]);
			return 1;
		}
	}
	return 0;
}
