/* mtcalls - 4 threads, each calling work(t, i) exactly 50 times (200 calls
 * in all), a 200 us sleep in each call; work returns t * 1000 + i. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define NTHREADS 4
#define CALLS 50

__attribute__((noinline)) int work(int t, int i)
{
	struct timespec ts = { 0, 200000 };
	nanosleep(&ts, NULL);
	return t * 1000 + i;
}

static void *thread(void *arg)
{
	int t = (int)(long)arg;
	long sum = 0;
	for (int i = 0; i < CALLS; i++)
		sum += work(t, i);
	return (void *)sum;
}

int main(void)
{
	pthread_t th[NTHREADS];
	for (long t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, thread, (void *)t);
	long total = 0;
	for (int t = 0; t < NTHREADS; t++) {
		void *r;
		pthread_join(th[t], &r);
		total += (long)r;
	}
	printf("%ld\n", total);
	return 0;
}
