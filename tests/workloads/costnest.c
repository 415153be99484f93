/* cflags: -fcf-protection=full -fno-shrink-wrap */
/* costnest - calls whose cost is known, for lp-trace's own-cost tests.
 *
 *   costnest nest CALLS K N    CALLS calls of parent(K, N): K calls of
 *                              child(N), which calls leaf(N), a loop of N
 *                              additions
 *   costnest leaf CALLS K N    parent_leaf(K, N): K calls of leaf(N) itself
 *   costnest nop CALLS K N     parent_nop(K, N): K calls of nopchild(N),
 *                              a 5-byte nop and a jump to leaf(N)
 *   costnest sys CALLS K N     parent_sys(K, N): K getppid(2) and leaf(N)
 *   costnest loop CALLS K N    CALLS calls of looper(K, N): K iterations of
 *                              leaf(N) and the lines marked LOOP and STEP
 *
 * Built with -fcf-protection as distributions build: every function opens
 * with endbr64.  child, parent, parent_leaf and looper then push %rbp
 * (lp-trace probes the push: emulated); leaf, a leaf function, keeps no
 * frame, so its endbr64 is followed by another instruction and is probed
 * itself (single-stepped).  Prints on stderr the median duration of the calls as
 * the program's own clock sees them ("costnest: nest 200 calls median 1234
 * ns"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile long sink;

/* A leaf: no frame, so it opens with endbr64 and a test (stepped). */
__attribute__((noinline)) void leaf(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

/* Calls: a frame, so endbr64 and push %rbp (emulated at +4). */
__attribute__((noinline)) void child(long n)
{
	leaf(n);
}

/* nopchild(n) opens with the 5-byte nop that -fpatchable-function-entry
 * or -mnop-mcount put there (the kernel optimises a uprobe on it), then
 * jumps to leaf(n). */
void nopchild(long n);
__asm__(".text\n"
	".globl nopchild\n"
	".type nopchild, @function\n"
	"nopchild:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0x0(%rax,%rax,1): as does not keep the 0 */
	"	jmp leaf\n"
	".size nopchild, .-nopchild\n");

__attribute__((noinline)) void parent_nop(int k, long n)
{
	for (int i = 0; i < k; i++)
		nopchild(n);
}

/* K system calls, each followed by leaf(n): the tracepoint
 * syscalls:sys_enter_getppid fires K times inside. */
__attribute__((noinline)) void parent_sys(int k, long n)
{
	for (int i = 0; i < k; i++) {
		syscall(SYS_getppid);
		leaf(n);
	}
}

__attribute__((noinline)) void parent(int k, long n)
{
	for (int i = 0; i < k; i++)
		child(n);
}

__attribute__((noinline)) void parent_leaf(int k, long n)
{
	for (int i = 0; i < k; i++)
		leaf(n);
}

__attribute__((noinline)) void tick(void)
{
	sink++;
}

/* The line marked LOOP opens with the call (emulated), STEP with a load
 * of sink (single-stepped). */
__attribute__((noinline)) long looper(int k, long n)
{
	long acc = 0;
	for (int i = 0; i < k; i++) {
		leaf(n);
		tick(); /* LOOP */
		acc += sink; /* STEP */
	}
	return acc;
}

static long now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: costnest nest|leaf|nop|sys|loop CALLS K N\n");
		return 2;
	}
	const char *mode = argv[1];
	int calls = atoi(argv[2]), k = atoi(argv[3]);
	long n = atol(argv[4]);
	long *d = calloc(calls > 0 ? (size_t)calls : 1, sizeof(*d));
	for (int c = 0; c < calls; c++) {
		long t0 = now();
		if (!strcmp(mode, "nest"))
			parent(k, n);
		else if (!strcmp(mode, "leaf"))
			parent_leaf(k, n);
		else if (!strcmp(mode, "nop"))
			parent_nop(k, n);
		else if (!strcmp(mode, "sys"))
			parent_sys(k, n);
		else
			looper(k, n);
		d[c] = now() - t0;
	}
	qsort(d, (size_t)calls, sizeof(*d), cmp);
	fprintf(stderr, "costnest: %s %d calls median %ld ns\n", mode, calls, calls ? d[calls / 2] : 0);
	free(d);
	return 0;
}
