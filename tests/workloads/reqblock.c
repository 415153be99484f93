/* reqblock - a request loop whose truth is known by construction: N requests
 * (default 400; 0: until killed) through handle_request(); one in twelve
 * (i % 12 == 11) is slow: it spins ~0.3 ms like the others, then blocks 3 ms
 * in nanosleep inside wait_for_disk().  The fast ones only spin ~0.3 ms in
 * compute().  So a slow request spends ~90% of its wall time under
 * wait_for_disk, a fast one none.  Fewer than 10% are slow, so a p90 cut
 * falls among the fast ones: a fast request stretched by preemption on a
 * busy machine then joins the slow group rather than pushing a slow one
 * below the cut. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) long compute(double ms)
{
	double end = now_ms() + ms;
	volatile long x = 0;

	while (now_ms() < end)
		for (int k = 0; k < 200; k++)
			x += k;
	return x;
}

__attribute__((noinline)) void wait_for_disk(void)
{
	struct timespec ts = { 0, 3000000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline)) long handle_request(int i)
{
	long r = compute(0.3);

	if (i % 12 == 11)
		wait_for_disk();
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400;
	long sum = 0;

	for (int i = 0; n == 0 || i < n; i++)	/* 0: until killed */
		sum += handle_request(i);
	printf("%ld\n", sum & 1);
	return 0;
}
