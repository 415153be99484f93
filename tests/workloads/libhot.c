/* cflags: -shared -fPIC */
/* libhot - a shared library (built as $(O)/tests/workloads/libhot, a .so
 * despite the name) whose exported lp_hot_in_library() burns CPU; loaded by
 * the "dlhot" workload. */
#include <stdint.h>

static volatile uint64_t sink;

void lp_hot_in_library(long n)
{
	for (long i = 0; i < n; i++)
		sink += i * 3;
}
