/* gatethreads - N threads (argv[2], default 4) spinning for argv[1] seconds
 * of wall time (default 3): the even-numbered ones (0, 2...) inside inner(),
 * the odd ones inside outer(), neither calling the other.  Each prints
 * "TID inner" or "TID outer" as it starts, so a test knows which threads
 * lp-record --inside inner may sample. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static double secs = 3;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(double end)
{
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

__attribute__((noinline)) void inner(double end)
{
	spin(end);
}

__attribute__((noinline)) void outer(double end)
{
	spin(end);
}

static void *worker(void *arg)
{
	long i = (long)arg;
	double end = now() + secs;

	pthread_mutex_lock(&out_lock);
	printf("%ld %s\n", (long)syscall(SYS_gettid), i % 2 ? "outer" : "inner");
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	if (i % 2)
		outer(end);
	else
		inner(end);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t *t = calloc(n, sizeof(*t));

	if (argc > 1)
		secs = atof(argv[1]);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
