/* lines - a source line hit a known number of times with known values:
 * the line marked HIT runs 37 times, for i = 0..36, with sq = i * i,
 * total = the sum of the squares before it, and the global `calls`
 * counting up from 1.  Locals are volatile so that they live in the
 * frame (DW_OP_fbreg) at that line; `calls` and `label` have fixed
 * addresses (DW_OP_addr); `n` is a register parameter; `twice` is
 * computed from `i` where it is needed (DW_OP_stack_value at -O1). */
#include <stdio.h>

volatile long calls;
const char *label = "squares";
volatile long sink;

__attribute__((noinline)) void use(long v)
{
	sink = v;
}

__attribute__((noinline)) long accumulate(int n)
{
	volatile long total = 0;
	for (int i = 0; i < n; i++) {
		/* NOCODE: a line without code, between two with some */
		volatile long sq = (long)i * i;
		long twice = 2L * i;	/* not volatile: a computed location */
		calls++;
		total += sq; /* HIT */
		use(twice);
	}
	return total;
}

int main(void)
{
	/* Touch the string first: BPF cannot fault a page in. */
	printf("%s\n", label);
	printf("%ld\n", accumulate(37));
	return 0;
}
