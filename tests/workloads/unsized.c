/* cflags: -O2 -fomit-frame-pointer */
/* unsized - a function symbol without a size (hand-written assembly often
 * has no .size), hot_a, followed by a function the symbol table does not
 * name as one: hot_b is a plain label (a NOTYPE symbol, not a function), but
 * has an FDE of its own.  A symbolizer that lets hot_a's symbol run to the
 * next function symbol gives hot_b's samples to hot_a (tests/names.bats).
 * hot_a and hot_b do the same work: each about half of the samples.  Runs
 * argv[1] seconds (default 10). */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__asm__(".text\n"
	".globl hot_a\n"
	".type hot_a, @function\n"
	"hot_a:\n"
	".cfi_startproc\n"
	"1:	addq $3, sink(%rip)\n"
	"	subq $1, %rdi\n"
	"	jnz 1b\n"
	"	ret\n"
	".cfi_endproc\n"
	".p2align 4\n"
	"hot_b:\n"
	".cfi_startproc\n"
	"2:	addq $7, sink(%rip)\n"
	"	subq $1, %rdi\n"
	"	jnz 2b\n"
	"	ret\n"
	".cfi_endproc\n");

void hot_a(long n);
void hot_b(long n);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);

	while (now() < end) {
		hot_a(100000);
		hot_b(100000);
	}
	return 0;
}
