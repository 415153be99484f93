/* fib - naive recursion: fib(N) (default 15) makes 2 * fib(N + 1) - 1
 * calls (1973 for 15), nested N deep; prints fib(N) (610 for 15).  An
 * optional second argument repeats it that many times, a pause of 1 ms
 * between rounds (for SIGINT mid-run). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) unsigned long fib(int n)
{
	return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 15;
	long rounds = argc > 2 ? atol(argv[2]) : 1;
	unsigned long r = 0;
	for (long i = 0; i < rounds; i++) {
		r = fib(n);
		if (rounds > 1) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	printf("%lu\n", r);
	return 0;
}
