/* cflags: -O2 */
/* scopes - a function whose structure, as DWARF gives it, is known by
 * construction (lp-trace --blocks' inlined calls and lexical blocks).
 * work(n), never inlined, holds three inlined calls and two nested blocks:
 *
 *   mid, called at MID_CALL (depth 1), and in it
 *     leaf, called at LEAF_CALL (depth 2)
 *   a block, lines BLOCK1_FIRST-BLOCK1_LAST, declaring a, and in it
 *     a block, lines BLOCK2_FIRST-BLOCK2_LAST, declaring b and c
 *     leaf, called at LEAF_CALL2 (depth 2: in the block)
 *
 * so leaf is inlined twice, mid once (always_inline: inlined even under the
 * workloads' -fno-inline).  Each statement touches the volatile sink, so
 * each line keeps code of its own, in its block.  main calls work(i) for i
 * = 0 .. argv[1] - 1 (default 25): mid and the leaf in it run that many
 * times, the outer block (and the leaf in it) for the i that are multiples
 * of 3 only.  Built -O2 (the first line): the code optimised programs
 * run. */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

static inline __attribute__((always_inline)) long leaf(long x)
{
	sink = x; /* LEAF */
	return sink * 3;
}

static inline __attribute__((always_inline)) long mid(long x)
{
	long m = leaf(x + sink); /* LEAF_CALL */
	sink = m;
	return sink + 1;
}

__attribute__((noinline)) long work(long n)
{
	long total = mid(n); /* MID_CALL */
	if (n % 3 == 0) {
		long a = sink + n; /* BLOCK1_FIRST */
		sink = a;
		{
			long b = sink + a; /* BLOCK2_FIRST */
			long c = b ^ sink;
			sink = c; /* BLOCK2_LAST */
		}
		total += leaf(sink + a); /* LEAF_CALL2 BLOCK1_LAST */
	}
	return total + sink;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 25, sum = 0;

	for (long i = 0; i < calls; i++)
		sum += work(i);
	printf("%ld\n", sum);
	return 0;
}
