/* inlinenest - a hot loop two inlines deep: hot_inlined() is inlined into
 * mid_inlined(), itself inlined into outer() (always_inline, so even the
 * workloads' -fno-inline keeps both inlined), called by main.  With --inline
 * a sampler shows main;outer;mid_inlined;hot_inlined, each inlined function
 * of kind i, and with --srcline each frame at its own line: outer at its
 * call of mid_inlined (line MID_CALL), mid_inlined at its call of
 * hot_inlined (HOT_CALL), hot_inlined in its loop (HOT_LOOP).  Runs for
 * argv[1] seconds of CPU time (default 10). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static inline __attribute__((always_inline)) void hot_inlined(void)
{
	for (int i = 0; i < 100000; i++)
		sink += i * 5; /* HOT_LOOP */
}

static inline __attribute__((always_inline)) void mid_inlined(void)
{
	sink ^= 3;
	hot_inlined(); /* HOT_CALL */
}

__attribute__((noinline)) void outer(void)
{
	mid_inlined(); /* MID_CALL */
	sink++;
}

int main(int argc, char **argv)
{
	/* Seconds of its own CPU time: what a cpu-clock sampler counts. */
	clock_t end = (clock_t)((argc > 1 ? atof(argv[1]) : 10) * CLOCKS_PER_SEC);

	while (clock() < end)
		outer();
	return 0;
}
