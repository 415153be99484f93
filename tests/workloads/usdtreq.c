/* usdtreq - USDT probes with known arguments (sys/sdt.h, no semaphores):
 * lp:req(int i, int 3i) and lp:wide(long long -3000000000 i, unsigned
 * char 200 + i) for i = 0..49, after a 50 ms pause; lp:never is never
 * reached.  Each req(i) then nests three lp:work__start(k, i) ..
 * lp:work__done(k) pairs, k = 2, 1, 0 from the outermost in. */
#include <stdio.h>
#include <sys/sdt.h>
#include <time.h>

__attribute__((noinline)) static int work(int k, int i)
{
	DTRACE_PROBE2(lp, work__start, k, i);
	int r = k > 0 ? work(k - 1, i) + 1 : 0;
	DTRACE_PROBE1(lp, work__done, k);
	return r;
}

/* Not inlined into main's loop with constant-folded arguments. */
__attribute__((noinline)) static int req(int i)
{
	DTRACE_PROBE2(lp, req, i, i * 3);
	long long w = -3000000000LL * i;
	unsigned char b = (unsigned char)(200 + i);
	DTRACE_PROBE2(lp, wide, w, b);
	return i + work(2, i) - 2;
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 50000000 };
	nanosleep(&ts, NULL);
	if (argc > 5)
		DTRACE_PROBE(lp, never);
	int sum = 0;
	for (int i = 0; i < 50; i++)
		sum += req(i);
	(void)argv;
	printf("%d\n", sum);
	return 0;
}
