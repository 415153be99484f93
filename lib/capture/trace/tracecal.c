/* tracecal.c - instruction classes and calibration functions for lp-trace's
 * measurement of its own cost (lib/capture/trace/tracer-cal.c does the measuring). */
#include "capture/trace/tracecal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

enum lp_insn lp_insn__classify(const unsigned char *b, size_t n)
{
	if (n == 0)
		return LP_INSN_STEPPED;
	/* The 5-byte nop compilers put at function starts (-fpatchable-
	 * function-entry, -pg -mnop-mcount): 6.18 turns its uprobe into a
	 * call to a trampoline, no breakpoint trap after the first hit. */
	static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	if (n >= 5 && !memcmp(b, nop5, 5))
		return LP_INSN_NOP;
	/* Shorter nops (a USDT probe's 1-byte nop) are emulated as a jump to
	 * the next instruction is, after the trap: 750-950 ns a hit here,
	 * twice the 5-byte nop's 370-445 ns, as a push's 600-1070 ns. */
	if (b[0] == 0x90 || (n >= 2 && b[0] == 0x66 && b[1] == 0x90))
		return LP_INSN_EMULATED;
	/* push reg (with REX.B for r8-r15), jmp, call, jcc rel: emulated by
	 * the kernel's uprobe handler without leaving it. */
	if (b[0] >= 0x50 && b[0] <= 0x57)
		return LP_INSN_EMULATED;
	if (n >= 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return LP_INSN_EMULATED;
	if (b[0] == 0xe8)
		return LP_INSN_CALL;
	if (b[0] == 0xeb || b[0] == 0xe9 || (b[0] >= 0x70 && b[0] <= 0x7f))
		return LP_INSN_EMULATED;
	if (n >= 2 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f)
		return LP_INSN_EMULATED;
	return LP_INSN_STEPPED;
}

const char *lp_insn__name(enum lp_insn c)
{
	switch (c) {
	case LP_INSN_NOP: return "nop";
	case LP_INSN_EMULATED: return "emulated";
	case LP_INSN_CALL: return "call";
	case LP_INSN_STEPPED: return "stepped";
	default: return "";
	}
}

/* The clock a calibration function read last; written by the function
 * the calibration functions call (not static: the assembly names it). */
volatile int64_t lp_tracecal_stamp_ns;

/* What the call class's functions call first: nothing. */
__attribute__((visibility("hidden"), used, noinline)) void lp_tracecal_nothing(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((visibility("hidden"), used, noinline)) void lp_tracecal_stamp(void)
{
	lp_tracecal_stamp_ns = lp_monotonic_ns();
}

/* The calibration functions, in assembly so that their first instruction
 * is exactly the class's: a compiler would choose it (and endbr64 depends
 * on -fcf-protection).  Each sets up a frame, as a compiled function with
 * frame pointers does, and calls lp_tracecal_stamp.  LP_CAL_COPIES copies
 * of each, one per kind of run, so that every run's probes stay attached
 * from the start of the calibration to its end: detaching a uprobe waits
 * for a grace period (~110 ms each here). */
#define CAL_FN(cls, k) "lp_tracecal_" #cls "_" #k
#define CAL_DEF(cls, first, k)						\
	".p2align 4\n"							\
	".globl " CAL_FN(cls, k) "\n"					\
	".hidden " CAL_FN(cls, k) "\n"					\
	".type " CAL_FN(cls, k) ", @function\n"				\
	CAL_FN(cls, k) ":\n"						\
	first								\
	"	push %rbp\n"						\
	"	mov %rsp, %rbp\n"					\
	"	call lp_tracecal_stamp\n"				\
	"	pop %rbp\n"						\
	".globl " CAL_FN(cls, k) "_ret\n"				\
	".hidden " CAL_FN(cls, k) "_ret\n"				\
	CAL_FN(cls, k) "_ret:\n"					\
	"	ret\n"							\
	".size " CAL_FN(cls, k) ", .-" CAL_FN(cls, k) "\n"
#define CAL_CLASS(cls, first)						\
	CAL_DEF(cls, first, 0) CAL_DEF(cls, first, 1)			\
	CAL_DEF(cls, first, 2) CAL_DEF(cls, first, 3)
__asm__(".text\n"
	CAL_CLASS(nop, "	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n")
	CAL_CLASS(push, "")
	CAL_CLASS(call, "	call lp_tracecal_nothing\n")
	CAL_CLASS(step, "	endbr64\n"));

#define CAL_DECL(cls)							\
	void lp_tracecal_##cls##_0(void), lp_tracecal_##cls##_1(void),	\
		lp_tracecal_##cls##_2(void), lp_tracecal_##cls##_3(void);	\
	extern const char lp_tracecal_##cls##_0_ret[], lp_tracecal_##cls##_1_ret[], \
		lp_tracecal_##cls##_2_ret[], lp_tracecal_##cls##_3_ret[];
CAL_DECL(nop)
CAL_DECL(push)
CAL_DECL(call)
CAL_DECL(step)

__attribute__((noinline)) void lp_tracecal__empty(void)
{
	__asm__ volatile("" ::: "memory");
}

void lp_tracecal__getppid(void)
{
	syscall(SYS_getppid);
}

lp_tracecal_fn lp_tracecal__fn(enum lp_insn c, int copy)
{
	static const lp_tracecal_fn fns[LP_INSN_N][LP_CAL_COPIES] = {
		[LP_INSN_NOP] = { lp_tracecal_nop_0, lp_tracecal_nop_1, lp_tracecal_nop_2,
				  lp_tracecal_nop_3 },
		[LP_INSN_EMULATED] = { lp_tracecal_push_0, lp_tracecal_push_1, lp_tracecal_push_2,
				       lp_tracecal_push_3 },
		[LP_INSN_CALL] = { lp_tracecal_call_0, lp_tracecal_call_1, lp_tracecal_call_2,
				   lp_tracecal_call_3 },
		[LP_INSN_STEPPED] = { lp_tracecal_step_0, lp_tracecal_step_1, lp_tracecal_step_2,
				      lp_tracecal_step_3 },
	};
	if (c <= LP_INSN_NONE || c >= LP_INSN_N || copy < 0 || copy >= LP_CAL_COPIES)
		return NULL;
	return fns[c][copy];
}

const void *lp_tracecal__ret(enum lp_insn c, int copy)
{
	static const char *const rets[LP_INSN_N][LP_CAL_COPIES] = {
		[LP_INSN_NOP] = { lp_tracecal_nop_0_ret, lp_tracecal_nop_1_ret,
				  lp_tracecal_nop_2_ret, lp_tracecal_nop_3_ret },
		[LP_INSN_EMULATED] = { lp_tracecal_push_0_ret, lp_tracecal_push_1_ret,
				       lp_tracecal_push_2_ret, lp_tracecal_push_3_ret },
		[LP_INSN_CALL] = { lp_tracecal_call_0_ret, lp_tracecal_call_1_ret,
				   lp_tracecal_call_2_ret, lp_tracecal_call_3_ret },
		[LP_INSN_STEPPED] = { lp_tracecal_step_0_ret, lp_tracecal_step_1_ret,
				      lp_tracecal_step_2_ret, lp_tracecal_step_3_ret },
	};
	if (c <= LP_INSN_NONE || c >= LP_INSN_N || copy < 0 || copy >= LP_CAL_COPIES)
		return NULL;
	return rets[c][copy];
}

int lp_tracecal__locate(const void *code, char *path, size_t size, uint64_t *off)
{
	struct lp_maps m;
	uintptr_t a = (uintptr_t)code;
	int ret = -1;

	if (lp_maps__open(&m, 0) < 0)
		return -1;
	while (lp_maps__next(&m)) {
		if (a < m.lo || a >= m.hi)
			continue;
		if (m.name[0] == '/' && strlen(m.name) < size) {
			strcpy(path, m.name);
			*off = a - m.lo + m.pgoff;
			ret = 0;
		}
		break;
	}
	lp_maps__close(&m);
	return ret;
}

/* Touched between calls: hits with warm caches cost ~7% less than in a
 * program that does work between them (measured with tests/workloads/
 * costnest.c), so the calibration evicts L1d-sized data as such work would. */
static char between[32 << 10];

void lp_tracecal__time(lp_tracecal_fn fn, size_t n, int64_t *dur, int64_t *pre, int64_t *stamp)
{
	for (size_t i = 0; i < n; i++) {
		memset(between, (int)i, sizeof(between));
		__asm__ volatile("" ::: "memory");
		int64_t t0 = lp_monotonic_ns();
		fn();
		int64_t t1 = lp_monotonic_ns();
		dur[i] = t1 - t0;
		if (pre)
			pre[i] = lp_tracecal_stamp_ns - t0;
		if (stamp)
			stamp[i] = lp_tracecal_stamp_ns;
	}
}

int64_t lp_tracecal__median(int64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), lp_cmp_i64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Hits cost more than their median on average where some are much
 * dearer: here 5% of point hits took 9-13 us more than the others, and a
 * loop of 100 of them cost 400-500 ns a hit more than the median said. */
int64_t lp_tracecal__mean(int64_t *v, size_t n)
{
	int64_t cap = lp_tracecal__median(v, n) + LP_CAL_CAP_NS;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (double)(v[i] < cap ? v[i] : cap);
	return n ? (int64_t)(sum / (double)n + (sum >= 0 ? 0.5 : -0.5)) : 0;
}

int64_t lp_tracecal__sd(int64_t *v, size_t n)
{
	lp_tracecal__median(v, n);	/* sorts */
	size_t lo = n / 20, hi = n - n / 20;
	if (hi <= lo)
		return 0;
	double sum = 0, sq = 0;
	for (size_t i = lo; i < hi; i++)
		sum += (double)v[i];
	double mean = sum / (double)(hi - lo);
	for (size_t i = lo; i < hi; i++)
		sq += ((double)v[i] - mean) * ((double)v[i] - mean);
	return (int64_t)(sqrt(sq / (double)(hi - lo)) + 0.5);
}
