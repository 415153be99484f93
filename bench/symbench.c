/* symbench - how fast lib/debuginfo/symbolize.c answers: N distinct addresses in this
 * process (its own functions and libc's) symbolized once (cold: Dwfl, symbol
 * tables), then looked up again and again (cached).  Built and run by
 * bench/record.sh against $(O)/liblp.a; prints one line of figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stream/stream.h"
#include "debuginfo/symbolize.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	void *funcs[] = {
		(void *)printf, (void *)malloc, (void *)free, (void *)qsort, (void *)memcpy,
		(void *)strlen, (void *)fopen, (void *)fclose, (void *)getline, (void *)strtol,
		(void *)snprintf, (void *)fwrite, (void *)fflush, (void *)calloc, (void *)realloc,
		(void *)strcmp, (void *)strchr, (void *)memset, (void *)clock_gettime, (void *)main,
		(void *)lp_symbolizer__new, (void *)lp_symbolizer__user, (void *)lp_dict__frame,
		(void *)lp_dict__stack, (void *)lp_writer__sample, (void *)lp_reader__next,
		(void *)getpid, (void *)read, (void *)write, (void *)close, (void *)atoi,
	};
	size_t nf = sizeof(funcs) / sizeof(funcs[0]), n = nf * 32;
	long rounds = argc > 1 ? atol(argv[1]) : 300;
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	struct lp_dict *dict = lp_dict__new();
	struct lp_symbolizer *s = lp_symbolizer__new(dict);
	size_t resolved = 0;
	pid_t pid = getpid();

	for (size_t i = 0; i < n; i++)
		addrs[i] = (uint64_t)(uintptr_t)funcs[i % nf] + i / nf;
	double t0 = now();
	for (size_t i = 0; i < n; i++)
		resolved += *lp_symbolizer__user(s, pid, addrs[i], false)->symbol != 0;
	double t1 = now();
	for (long r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++)
			lp_symbolizer__user(s, pid, addrs[i], r & 1);
	double t2 = now();
	double cached = (double)rounds * n / (t2 - t1);
	printf("addresses=%zu resolved=%zu cold_us_per_addr=%.1f cached_per_s=%.0f\n", n,
	       resolved, (t1 - t0) * 1e6 / n, cached);
	lp_symbolizer__free(s);
	lp_dict__free(dict);
	free(addrs);
	return 0;
}
