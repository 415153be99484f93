/* deep - one recursion N deep (default 100): down(N) calls down(N - 1) ...
 * down(0), N + 1 calls, then returns N.  Deeper than lp-trace keeps a
 * thread's open calls (32) and than the kernel keeps uretprobes (64). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int down(int n)
{
	return n ? down(n - 1) + 1 : 0;
}

int main(int argc, char **argv)
{
	printf("%d\n", down(argc > 1 ? atoi(argv[1]) : 100));
	return 0;
}
