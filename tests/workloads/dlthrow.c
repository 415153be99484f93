/* dlthrow - a C program (no C++ of its own: no libstdc++, no exception
 * tables, nothing it imports throws) that loads the C++ library argv[1]
 * (the libthrow workload) with dlopen, and whose traced(i) an exception
 * crosses: for i in 0..N-1 (N from argv[2], default 30) main calls the
 * library's lp_throw_guard(traced, i), which calls traced(i) in a try
 * block; traced calls the library's lp_throw_work(i) through a pointer
 * from dlsym, which throws on i % 3 == 0, caught in lp_throw_guard above
 * traced.  Truth: N calls of traced, ceil(N / 3) left by the exception,
 * the others return 2i + 1.  Prints "ok SUM caught K", SUM the returns'
 * sum (620 for N = 30), K the exceptions caught (10). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static long (*work)(long);

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
	long sum = 0;
	for (long i = 0; i < n; i++) {
		long r = guard(traced, i);
		if (r >= 0)
			sum += r;
	}
	printf("ok %ld caught %ld\n", sum, caught());
	return 0;
}
