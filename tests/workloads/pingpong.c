/* pingpong - a context-switch-heavy program: two threads pass a byte back
 * and forth over two pipes ROUNDS times (default 100000): each round trip
 * is two switches, one or two of them blocks (a thread blocks in its read;
 * or the other's wakeup preempts it and it finds its byte waiting); after
 * DELAY_MS (default 0) of sleep, time for a tracer to attach by pid.
 * Prints on stderr "ns_per_round=N": the cost a switch tracer adds shows
 * there; "trimmed_ns=N", the mean round trip less the fastest and slowest
 * 2% (a round trip that waited milliseconds for the CPU on a busy
 * machine), as lp-record's calibration of a blocked interval's cost takes
 * its own; and "blocks=N preempted=N", the two threads' voluntary and
 * involuntary context switches while they passed the byte: the blocked
 * intervals a switch tracer sees, and how the round trips went. */
#define _GNU_SOURCE	/* RUSAGE_THREAD */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds;

struct switches {
	long blocks, preempted;
};

static struct switches echo_sw;

/* The calling thread's switches so far. */
static struct switches thread_switches(void)
{
	struct rusage u;

	getrusage(RUSAGE_THREAD, &u);
	return (struct switches){ u.ru_nvcsw, u.ru_nivcsw };
}

__attribute__((noinline)) static void *echo_thread(void *arg)
{
	struct switches s0 = thread_switches(), s1;
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(1);
	s1 = thread_switches();
	/* Read after the join. */
	echo_sw = (struct switches){ s1.blocks - s0.blocks, s1.preempted - s0.preempted };
	return NULL;
}

__attribute__((noinline)) static void ping(void)
{
	char c = 'x';

	if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
		exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t t;

	rounds = argc > 1 ? atol(argv[1]) : 100000;
	if (argc > 2)
		usleep(atol(argv[2]) * 1000);
	if (pipe(ab) || pipe(ba) || pthread_create(&t, NULL, echo_thread, NULL))
		return 1;
	int64_t *rt = calloc(rounds > 0 ? rounds : 1, sizeof(*rt)), prev;
	if (!rt)
		return 1;
	struct switches s0 = thread_switches(), s1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	prev = now_ns();
	for (long i = 0; i < rounds; i++) {
		ping();
		int64_t t = now_ns();

		rt[i] = t - prev;
		prev = t;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s1 = thread_switches();
	pthread_join(t, NULL);
	fprintf(stderr, "ns_per_round=%.0f\n",
		((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / rounds);
	qsort(rt, rounds, sizeof(*rt), cmp);
	double sum = 0;
	long cut = rounds / 50, k = 0;
	for (long i = cut; i < rounds - cut; i++, k++)
		sum += rt[i];
	if (k)
		fprintf(stderr, "trimmed_ns=%.0f\n", sum / k);
	fprintf(stderr, "blocks=%ld preempted=%ld\n", s1.blocks - s0.blocks + echo_sw.blocks,
		s1.preempted - s0.preempted + echo_sw.preempted);
	return 0;
}
