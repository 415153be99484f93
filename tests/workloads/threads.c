/* threads - N threads (argv[2], default 4) spinning for argv[1] seconds
 * (default 10) of wall time, each in its own function worker_loop: every one
 * must be seen by a sampler.  Prints nothing; the tids are in /proc. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static double secs = 10;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *worker_loop(void *arg)
{
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t *t = calloc(n, sizeof(*t));

	if (argc > 1)
		secs = atof(argv[1]);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker_loop, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
