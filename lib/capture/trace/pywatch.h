/* pywatch.h - python:NAME at the cost of NAME's calls alone: a matched
 * code object's start seen at the breakpoint of RESUME's own handler, its
 * RESUME kept un-specialized (3.11), or by a hardware watchpoint on its
 * RESUME (3.12, 3.13), and its returns by hardware watchpoints on its
 * RETURN_VALUE (and RETURN_CONST) instructions, in every thread of its
 * process (pywatch.c says why each is safe).  CPython 3.11 to 3.13,
 * x86-64. */
#ifndef LP_PYWATCH_H
#define LP_PYWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/trace.h"

struct lp_pywatch;

/* Watches made with program prog_fd (lp_pywatch, a perf_event program),
 * code objects read by conf's offsets, their state in map pycodes_fd
 * (struct lp_trace_pycode); NULL for a version it does not know. */
struct lp_pywatch *lp_pywatch__new(int prog_fd, int pycodes_fd, const struct lp_trace_py *conf);
void lp_pywatch__free(struct lp_pywatch *w);

/* Code object code of process pid, which the kernel matched: its returns
 * watched in each of pid's threads (one that always raises has none), its
 * RESUME made un-specialized, its map entry armed.  0; 1 when it cannot be
 * (why says, as "its 5 returns need as many of a thread's debug
 * registers, 4 are free"), nothing left of the attempt; 2 when the
 * process has gone. */
int lp_pywatch__arm(struct lp_pywatch *w, pid_t pid, uint64_t code, const char **why);

/* The RESUME of watched code object code of pid, specialized again by
 * the interpreter (LP_EV_PYQUICK), made un-specialized again, and the
 * kernel's question answered.  0, or -1 when the code object is not the
 * one armed any more (nothing written). */
int lp_pywatch__requicken(struct lp_pywatch *w, pid_t pid, uint64_t code);

/* Writes back the RESUME of each watched code object the interpreter has
 * quickened since (it does after a code object's first 8 calls).  Whether
 * every one is settled: quickened and written back, or watched on a
 * return for wait_ns (a return of one quickened later asks the kernel to
 * have it written back, LP_EV_PYQUICK, losing the calls between). */
bool lp_pywatch__settle(struct lp_pywatch *w, int64_t wait_ns);

/* Code objects watched, in all and in process pid. */
size_t lp_pywatch__armed(const struct lp_pywatch *w);
size_t lp_pywatch__armed_in(const struct lp_pywatch *w, pid_t pid);

/* What a watchpoint's trap costs a thread of this machine, ns, and
 * *inside the part before the program's first clock read (lp_pywatch's
 * span ends there): measured here, on a variable of lp-trace's own, with
 * prog_fd attached, which for the process cal_tgid names only stores that
 * time in cal_ts; -1 when no watchpoint can be set.  The program's own run
 * beyond that it measures as it runs. */
int64_t lp_pywatch__calibrate(int prog_fd, volatile unsigned int *cal_tgid, volatile unsigned long long *cal_ts,
			      int64_t *inside);
#define LP_PYWATCH_CAL_HITS 1400	/* the hits it times */

#endif
