/* tracecal.h - what lp-trace needs to calibrate its own probes' cost
 * (formats/lp-stream.md, "What lp costs"): the class of a probed
 * instruction, calibration functions that open with an instruction of each
 * class, and the timing of calls to them.  No libbpf here: lib/capture/trace/tracer-cal.c
 * attaches the probes and measures. */
#ifndef LP_TRACECAL_H
#define LP_TRACECAL_H

#include <stddef.h>
#include <stdint.h>

/* A uprobe's cost depends on the instruction it replaces (PERF-NOTES.md):
 * the kernel optimises a 5-byte nop into a call to a trampoline, emulates
 * pushes, jumps and calls after the breakpoint, and single-steps anything
 * else out of line (ten to thirty times slower).  An emulated call is a
 * class of its own: its hit costs 100-250 ns more than a push's here,
 * which calibrated as a push left a line in a loop under-corrected by
 * that much on every pass.  Cheapest first. */
enum lp_insn {
	LP_INSN_NONE,		/* not a uprobe (system calls, tracepoints) */
	LP_INSN_NOP,
	LP_INSN_EMULATED,	/* push, jumps, 1- and 2-byte nops */
	LP_INSN_CALL,		/* an emulated call */
	LP_INSN_STEPPED,
	LP_INSN_N,
};

/* The class of the instruction starting at b (n bytes readable). */
enum lp_insn lp_insn__classify(const unsigned char *b, size_t n);
/* "nop", "emulated", "call", "stepped"; "" for LP_INSN_NONE. */
const char *lp_insn__name(enum lp_insn c);

/* A calibration function whose first instruction is of class c: each
 * reads the clock once inside (lp_tracecal__time's stamp), so that a span
 * of a probe on it is split at a known moment.  Copies 0 to
 * LP_CAL_COPIES - 1 are alike, to be probed differently at once.
 * lp_tracecal__ret: the address of the copy's one ret instruction.
 * lp_tracecal__empty returns at once. */
#define LP_CAL_COPIES 4
typedef void (*lp_tracecal_fn)(void);
lp_tracecal_fn lp_tracecal__fn(enum lp_insn c, int copy);
const void *lp_tracecal__ret(enum lp_insn c, int copy);
void lp_tracecal__empty(void);
/* A getppid(2): the tracepoint syscalls:sys_enter_getppid fires in it. */
void lp_tracecal__getppid(void);

/* Where code (a calibration function or its ret) is: the file mapped
 * there and the file offset (for a uprobe on this process).  -1 when
 * /proc/self/maps does not say. */
int lp_tracecal__locate(const void *code, char *path, size_t size, uint64_t *off);

/* Calls fn n times, each between two CLOCK_MONOTONIC reads: dur[i] is the
 * call's duration as its caller sees it; when not NULL, pre[i] the part of
 * it before the clock read inside the calibration function, stamp[i] that
 * read. */
void lp_tracecal__time(lp_tracecal_fn fn, size_t n, int64_t *dur, int64_t *pre, int64_t *stamp);

/* The median of v[0..n) (sorts v); 0 when n is 0. */
int64_t lp_tracecal__median(int64_t *v, size_t n);
/* What a probe hit costs on average, for spans that sum their hits: the
 * mean of v[0..n), each value counted at most LP_CAL_CAP_NS above the
 * median (a call that much longer was preempted, not probed).  Sorts v;
 * 0 when n is 0. */
#define LP_CAL_CAP_NS 50000
int64_t lp_tracecal__mean(int64_t *v, size_t n);
/* A standard deviation robust to preemption: that of the middle 90% of
 * v (sorts v). */
int64_t lp_tracecal__sd(int64_t *v, size_t n);

#endif
