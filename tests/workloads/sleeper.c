/* sleeper - exactly 200 calls of nap(i, usec): call i sleeps 1 ms when i is
 * even and 3 ms when it is odd, and returns 2 * i.  Ground truth for
 * lp-trace's counts, durations, arguments and return values.  With a second
 * argument, a path, the calls start once that file exists (a tracer given
 * -p attached first). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) int nap(int i, long usec)
{
	struct timespec ts = { usec / 1000000, (usec % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0)
		;
	return 2 * i;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 200;
	long sum = 0;
	while (argc > 2 && access(argv[2], F_OK) != 0) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < calls; i++)
		sum += nap(i, i % 2 ? 3000 : 1000);
	printf("%ld\n", sum);
	return 0;
}
