/* cflags: -fcf-protection=full */
/* cetloop - a tight loop of N calls (default 100000) to tick(), built with
 * -fcf-protection as Ubuntu and Fedora build everything, so that tick()
 * opens with endbr64 and then push %rbp.  Prints the sum and how long the
 * loop took (ns per call) on stderr: the cost of a probe per call. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile long sink;

__attribute__((noinline)) void touch(long i)
{
	sink = i;
}

/* Not a leaf, so it sets up a frame: endbr64; push %rbp; mov %rsp,%rbp. */
__attribute__((noinline)) long tick(long i)
{
	touch(i);
	return i & 7;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, sum = 0;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sum += tick(i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("%ld\n", sum);
	fprintf(stderr, "cetloop: %ld calls, %.1f ns per call\n", n, n ? ns / n : 0);
	return 0;
}
