/* sleepers - a process of N threads (default 16, the main thread included)
 * that all sleep in one known function, sleeper_wait(), waking every PERIOD
 * on an absolute deadline and measuring how late each wake-up was: its own
 * ground truth for how much an observer (a profiler stopping its threads)
 * disturbs it.
 *
 *	sleepers [-t THREADS] [-p PERIOD_US] [-d SECONDS] [-r]
 *
 * -r asks for SCHED_FIFO (when allowed) so the lateness measures timers and
 * stops, not the other processes competing for the CPUs.  Prints "ready N"
 * once every thread runs; on SIGUSR1 prints the lateness of the wake-ups
 * since the previous SIGUSR1 (or the start):
 *	wakeups N mean_us X p50_us X p99_us X max_us X over_1ms N
 * Stacks: main -> sleeper_loop -> sleeper_wait -> clock_nanosleep, and
 * start_thread -> sleeper_thread -> sleeper_loop -> sleeper_wait -> ... */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256
#define BUCKET_NS 10000			/* 10 us */
#define NBUCKETS 100000			/* up to 1 s; later ones land in the last */

static int nthreads = 16;
static int64_t period_ns = 5000000;
static double duration;			/* seconds; 0: until killed */
static _Atomic(uint64_t) *hist;		/* [thread][bucket] */
static _Atomic(int64_t) max_late;	/* exact, since the last report */
static volatile sig_atomic_t report_requested;
static int64_t end_ns;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_usr1(int sig)
{
	(void)sig;
	report_requested = 1;
}

/* The ground truth: every thread is found here, blocked. */
__attribute__((noinline)) static int64_t sleeper_wait(int64_t deadline)
{
	struct timespec ts = { deadline / 1000000000LL, deadline % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	return now_ns() - deadline;
}

static void report(void)
{
	static uint64_t *prev;
	uint64_t *delta = calloc(NBUCKETS, sizeof(*delta));
	uint64_t n = 0, sum = 0;

	if (!prev)
		prev = calloc((size_t)nthreads * NBUCKETS, sizeof(*prev));
	for (int t = 0; t < nthreads; t++)
		for (int b = 0; b < NBUCKETS; b++) {
			uint64_t v = atomic_load_explicit(&hist[(size_t)t * NBUCKETS + b],
							  memory_order_relaxed);
			delta[b] += v - prev[(size_t)t * NBUCKETS + b];
			prev[(size_t)t * NBUCKETS + b] = v;
		}
	for (int b = 0; b < NBUCKETS; b++) {
		n += delta[b];
		sum += delta[b] * (uint64_t)b;
	}
	uint64_t p50 = 0, p99 = 0, seen = 0, over_1ms = 0;
	for (int b = 0; b < NBUCKETS; b++) {
		if (!delta[b])
			continue;
		if ((uint64_t)b * BUCKET_NS >= 1000000)
			over_1ms += delta[b];
		seen += delta[b];
		if (!p50 && seen * 2 >= n)
			p50 = b;
		if (!p99 && seen * 100 >= n * 99)
			p99 = b;
	}
	int64_t max = atomic_exchange(&max_late, 0);
	/* Bucket b holds lateness in [b, b+1) * 10 us: report upper bounds;
	 * the maximum is exact. */
	printf("wakeups %llu mean_us %.1f p50_us %llu p99_us %llu max_us %lld over_1ms %llu\n",
	       (unsigned long long)n, n ? (sum + n / 2.0) * BUCKET_NS / 1000.0 / n : 0.0,
	       (unsigned long long)(p50 + 1) * BUCKET_NS / 1000,
	       (unsigned long long)(p99 + 1) * BUCKET_NS / 1000,
	       (long long)(max + 999) / 1000, (unsigned long long)over_1ms);
	fflush(stdout);
	free(delta);
}

__attribute__((noinline)) static void sleeper_loop(int id)
{
	int64_t deadline = now_ns() + period_ns;

	for (;;) {
		int64_t late = sleeper_wait(deadline);
		int64_t b = late / BUCKET_NS;

		int64_t m = atomic_load(&max_late);
		while (late > m && !atomic_compare_exchange_weak(&max_late, &m, late))
			;
		if (b < 0)
			b = 0;
		if (b >= NBUCKETS)
			b = NBUCKETS - 1;
		atomic_fetch_add_explicit(&hist[(size_t)id * NBUCKETS + b], 1,
					  memory_order_relaxed);
		if (id == 0 && report_requested) {
			report_requested = 0;
			report();
		}
		if (end_ns && now_ns() >= end_ns)
			break;
		deadline += period_ns;
		/* Fallen behind by a whole period: skip ahead, no burst. */
		if (deadline < now_ns())
			deadline = now_ns() + period_ns;
	}
}

__attribute__((noinline)) static void *sleeper_thread(void *arg)
{
	sleeper_loop((int)(intptr_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int c, fifo = 0;
	pthread_t th[MAX_THREADS];
	sigset_t set, old;

	while ((c = getopt(argc, argv, "t:p:d:r")) != -1) {
		switch (c) {
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'p':
			period_ns = atoll(optarg) * 1000;
			break;
		case 'd':
			duration = atof(optarg);
			break;
		case 'r':
			fifo = 1;
			break;
		default:
			fprintf(stderr, "usage: sleepers [-t THREADS] [-p PERIOD_US] [-d SECONDS] [-r]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || period_ns <= 0) {
		fprintf(stderr, "sleepers: bad arguments\n");
		return 2;
	}
	hist = calloc((size_t)nthreads * NBUCKETS, sizeof(*hist));
	if (duration > 0)
		end_ns = now_ns() + (int64_t)(duration * 1e9);
	if (fifo) {
		struct sched_param sp = { .sched_priority = 10 };
		/* Inherited by the threads created below. */
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			fprintf(stderr, "sleepers: no SCHED_FIFO: %s\n", strerror(errno));
	}
	/* Only the main thread takes SIGUSR1. */
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, sleeper_thread, (void *)(intptr_t)i)) {
			fprintf(stderr, "sleepers: cannot create a thread\n");
			return 1;
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	printf("ready %d\n", nthreads);
	fflush(stdout);
	sleeper_loop(0);
	for (int i = 1; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
