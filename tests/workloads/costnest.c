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
 * itself (single-stepped).
 *
 * Every function has a twin (twin_parent, twin_child...), the same code
 * under another name (but getpid for getppid), never probed.  Each call of the mode's top function
 * follows a call of its twin, so that the twin's duration is the untraced
 * one at the same moment, on the same machine state: a shared machine
 * makes whole runs slower at times.  After 50 ms of warming up, prints on
 * stderr the median durations of both as the program's own clock sees them
 * ("costnest: nest 200 calls median 1234 ns twin 567 ns"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile long sink;

/* A leaf: no frame, so it opens with endbr64 and a test (stepped). */
#define LEAF(name)							\
	__attribute__((noinline)) void name(long n)			\
	{								\
		for (long i = 0; i < n; i++)				\
			sink += i;					\
	}
LEAF(leaf)
LEAF(twin_leaf)

/* Calls: a frame, so endbr64 and push %rbp (emulated at +4). */
#define CHILD(name, callee)						\
	__attribute__((noinline)) void name(long n)			\
	{								\
		callee(n);						\
	}
CHILD(child, leaf)
CHILD(twin_child, twin_leaf)

/* nopchild(n) opens with the 5-byte nop that -fpatchable-function-entry
 * or -mnop-mcount put there (the kernel optimises a uprobe on it), then
 * jumps to leaf(n).  (as writes nopl 0x0(%rax,%rax,1) in 4 bytes.) */
void nopchild(long n), twin_nopchild(long n);
#define NOPCHILD(name, callee)						\
	".globl " name "\n"						\
	".type " name ", @function\n"					\
	name ":\n"							\
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"			\
	"	jmp " callee "\n"					\
	".size " name ", .-" name "\n"
__asm__(".text\n" NOPCHILD("nopchild", "leaf") NOPCHILD("twin_nopchild", "twin_leaf"));

#define PARENT(name, callee)						\
	__attribute__((noinline)) void name(int k, long n)		\
	{								\
		for (int i = 0; i < k; i++)				\
			callee(n);					\
	}
PARENT(parent, child)
PARENT(twin_parent, twin_child)
PARENT(parent_leaf, leaf)
PARENT(twin_parent_leaf, twin_leaf)
PARENT(parent_nop, nopchild)
PARENT(twin_parent_nop, twin_nopchild)

/* K system calls, each followed by leaf(n): the tracepoint
 * syscalls:sys_enter_getppid fires K times inside.  The twin makes
 * getpid(2) calls instead, as cheap, which that tracepoint does not see. */
#define PARENT_SYS(name, callee, nr)					\
	__attribute__((noinline)) void name(int k, long n)		\
	{								\
		for (int i = 0; i < k; i++) {				\
			syscall(nr);					\
			callee(n);					\
		}							\
	}
PARENT_SYS(parent_sys, leaf, SYS_getppid)
PARENT_SYS(twin_parent_sys, twin_leaf, SYS_getpid)

#define TICK(name)							\
	__attribute__((noinline)) void name(void)			\
	{								\
		sink++;							\
	}
TICK(tick)
TICK(twin_tick)

/* Written out, not by a macro: its lines are probed.  The line marked
 * LOOP opens with the call (emulated), STEP with a load of sink
 * (single-stepped). */
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

__attribute__((noinline)) long twin_looper(int k, long n)
{
	long acc = 0;
	for (int i = 0; i < k; i++) {
		twin_leaf(n);
		twin_tick();
		acc += sink;
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

static void run(const char *mode, int twin, int k, long n)
{
	if (!strcmp(mode, "nest"))
		(twin ? twin_parent : parent)(k, n);
	else if (!strcmp(mode, "leaf"))
		(twin ? twin_parent_leaf : parent_leaf)(k, n);
	else if (!strcmp(mode, "nop"))
		(twin ? twin_parent_nop : parent_nop)(k, n);
	else if (!strcmp(mode, "sys"))
		(twin ? twin_parent_sys : parent_sys)(k, n);
	else
		(twin ? twin_looper : looper)(k, n);
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
	long *t = calloc(calls > 0 ? (size_t)calls : 1, sizeof(*t));
	/* 50 ms of spinning first, calling nothing that is probed: a short
	 * run straight from an idle CPU was 1.5 times slower here. */
	for (long t0 = now(); now() - t0 < 50000000;)
		sink++;
	for (int c = 0; c < calls; c++) {
		long t0 = now();
		run(mode, 1, k, n);
		long t1 = now();
		run(mode, 0, k, n);
		long t2 = now();
		t[c] = t1 - t0;
		d[c] = t2 - t1;
	}
	qsort(d, (size_t)calls, sizeof(*d), cmp);
	qsort(t, (size_t)calls, sizeof(*t), cmp);
	fprintf(stderr, "costnest: %s %d calls median %ld ns twin %ld ns\n", mode, calls,
		calls ? d[calls / 2] : 0, calls ? t[calls / 2] : 0);
	free(d);
	free(t);
	return 0;
}
