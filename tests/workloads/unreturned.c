/* cflags: -O2 -fno-omit-frame-pointer -foptimize-sibling-calls */
/* unreturned - calls whose return a tracer never sees, and calls that share
 * a return.  For i in 0..N-1 (N from argv[1], default 100), main calls
 * step(i): step calls leaf(i), then on odd i it leaves by longjmp back to
 * main (so step and leaf never return), and on even i tail-calls
 * tail(i) (a jmp: step's return is tail's).  Truth: N spans of leaf;
 * N/2 finished spans of step, each enclosing one of tail; N/2 calls of
 * step that never returned. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf back;
volatile long sink;

__attribute__((noinline)) long tail(long i)
{
	sink += i;
	return i * 2;
}

__attribute__((noinline)) void bail(void)
{
	longjmp(back, 1);
}

__attribute__((noinline)) long leaf(long i)
{
	sink += i;
	return i + 1;
}

__attribute__((noinline)) long step(long i)
{
	if (leaf(i) & 1)	/* leaf(i) = i + 1: odd for even i */
		return tail(i);
	bail();
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	for (volatile long i = 0; i < n; i++)
		if (setjmp(back) == 0)
			step(i);
	printf("%ld\n", (long)sink);
	return 0;
}
