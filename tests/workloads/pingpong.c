/* pingpong - a context-switch-heavy program: two threads pass a byte back
 * and forth over two pipes ROUNDS times (default 100000), so each round trip
 * is two blocks and two wakeups; after DELAY_MS (default 0) of sleep, time
 * for a tracer to attach by pid.  Prints "ns_per_round=N" on stderr: the
 * cost a switch tracer adds shows there. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds;

__attribute__((noinline)) static void *echo_thread(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(1);
	return NULL;
}

__attribute__((noinline)) static void ping(void)
{
	char c = 'x';

	if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
		exit(1);
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
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < rounds; i++)
		ping();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, NULL);
	fprintf(stderr, "ns_per_round=%.0f\n",
		((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / rounds);
	return 0;
}
