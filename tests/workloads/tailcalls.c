/* cflags: -O2 -fno-omit-frame-pointer -foptimize-sibling-calls */
/* tailcalls - the ways a function leaves besides ret, for lp-trace's
 * probes on return instructions.  For i in 0..N-1 (N from argv[1], default
 * 100), main calls: ctail(i), which on odd i tail-calls other(i) (a jmp);
 * jcctail(i), in assembly, which on odd i tail-calls other(i) with a
 * conditional jump (jne other) and else returns i + 3; sw(i), a switch
 * compiled to a jump table (jmp *%rax inside the function: no tail call);
 * ptail(other, i), a tail call through a pointer (jmp *%rax out of it).
 * Truth: 100 calls each of ctail, jcctail, sw, ptail; 200 of other; the
 * calls left by a tail call: odd i of ctail and jcctail, all of ptail.
 * Prints the sum of the results. */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) long other(long i)
{
	sink += i;
	return i * 10;
}

__attribute__((noinline)) long ctail(long i)
{
	if (i & 1)
		return other(i);
	sink++;
	return i + 3;
}

long jcctail(long i);
__asm__(".text\n"
	".globl jcctail\n"
	".type jcctail, @function\n"
	"jcctail:\n"
	"	test $1, %dil\n"
	"	jne other\n"
	"	lea 3(%rdi), %rax\n"
	"	ret\n"
	".size jcctail, .-jcctail\n");

__attribute__((noinline)) long sw(long i)
{
	switch (i % 8) {
	case 0: return i + 11;
	case 1: return i * 7;
	case 2: return i - 5;
	case 3: return i ^ 0x55;
	case 4: return i << 3;
	case 5: return i | 0x100;
	case 6: return i & 0xf0;
	default: return -i;
	}
}

__attribute__((noinline)) long ptail(long (*f)(long), long i)
{
	return f(i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100, s = 0;
	for (long i = 0; i < n; i++)
		s += ctail(i) + jcctail(i) + sw(i) + ptail(other, i);
	printf("%ld\n", s);
	return 0;
}
