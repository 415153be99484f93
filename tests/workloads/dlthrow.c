/* dlthrow - a C program (no C++ of its own: no libstdc++, no exception
 * tables, nothing it imports throws) that loads the C++ library argv[1]
 * (the libthrow workload) with dlopen, and whose traced(i) an exception
 * crosses: for i in 0..N-1 (N from argv[2], default 30) main calls the
 * library's lp_throw_guard(traced, i), which calls traced(i) in a try
 * block; traced calls the library's lp_throw_work(i) through a pointer
 * from dlsym, which throws on i % 3 == 0, caught in lp_throw_guard above
 * traced.  Truth: N calls of traced, ceil(N / 3) left by the exception,
 * the others return 2i + 1.  Prints "ok SUM caught K", SUM the returns'
 * sum (620 for N = 30), K the exceptions caught (10).
 *
 * With PAUSE_MS (argv[3]) and a C library that cannot throw (argv[4], the
 * libhot workload), it first calls traced(i) N times with no library
 * loaded, then loads argv[4] and calls it N times more, before loading
 * argv[1] as above; it pauses PAUSE_MS after it starts and after each
 * load (a tracer's time to read what was loaded), and prints "plain S1
 * S2" first, each the sum of a round's returns (N * N: 900 for N = 30).
 * With "signal" for argv[3], it waits after loading argv[1] until it gets
 * SIGUSR1 (a tracer attached meanwhile, the library already loaded). */
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long (*work)(long);

static long plain_work(long i)
{
	return 2 * i;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) long traced(long i)
{
	return work(i) + 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: dlthrow LIBRARY [N]\n");
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 30;
	bool by_signal = argc == 4 && !strcmp(argv[3], "signal");
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (by_signal)
		sigprocmask(SIG_BLOCK, &usr1, NULL);
	if (argc > 4) {
		long ms = atol(argv[3]), sum[2] = { 0, 0 };
		work = plain_work;
		for (int round = 0; round < 2; round++) {
			if (round && !dlopen(argv[4], RTLD_NOW)) {
				fprintf(stderr, "dlthrow: %s\n", dlerror());
				return 1;
			}
			pause_ms(ms);
			for (long i = 0; i < n; i++)
				sum[round] += traced(i);
		}
		printf("plain %ld %ld\n", sum[0], sum[1]);
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlthrow: %s\n", dlerror());
		return 1;
	}
	long (*guard)(long (*)(long), long) = (long (*)(long (*)(long), long))dlsym(h, "lp_throw_guard");
	long (*caught)(void) = (long (*)(void))dlsym(h, "lp_throw_caught");
	work = (long (*)(long))dlsym(h, "lp_throw_work");
	if (!guard || !caught || !work) {
		fprintf(stderr, "dlthrow: %s\n", dlerror());
		return 1;
	}
	if (argc > 4)
		pause_ms(atol(argv[3]));
	int sig;
	if (by_signal)
		sigwait(&usr1, &sig);
	long sum = 0;
	for (long i = 0; i < n; i++) {
		long r = guard(traced, i);
		if (r >= 0)
			sum += r;
	}
	printf("ok %ld caught %ld\n", sum, caught());
	return 0;
}
