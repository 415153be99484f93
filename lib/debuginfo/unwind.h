/* unwind.h - DWARF unwinding of a copied user stack: the registers and the
 * top of the stack captured at a sample, unwound after the fact with libdw
 * from the modules' .eh_frame/.debug_frame, so code built without frame
 * pointers still gives whole stacks.  Uses the symbolizer's Dwfl of the
 * process (one per process, never one per sample). */
#ifndef LP_UNWIND_H
#define LP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "debuginfo/symbolize.h"

struct lp_unwinder;

struct lp_unwinder *lp_unwinder__new(struct lp_symbolizer *sym);
/* An unwinder whose modules come from elsewhere than the symbolizer's
 * processes: modules(arg, pid, addr) gives pid's (a process that is gone,
 * its maps from a stream: lp-symbolize), NULL when there are none. */
struct lp_dwproc;
struct lp_unwinder *lp_unwinder__new_modules(struct lp_dwproc *(*modules)(void *arg, pid_t pid,
									 uint64_t addr),
					     void *arg);
void lp_unwinder__free(struct lp_unwinder *u);

enum lp_unwind_end {
	LP_UNWIND_COMPLETE,	/* reached the outermost frame */
	LP_UNWIND_TRUNCATED,	/* ran out of copied stack or of max frames */
	LP_UNWIND_FAILED,	/* no module or CFI for a pc, or no process */
};

struct lp_unwind_regs {
	uint64_t ip, sp, bp;
};

/* Unwinds tid of process pid.  Fills pcs (leaf first) and, per frame,
 * ret[i] = 1 when pcs[i] is a return address (look it up at pc - 1).
 * Returns the number of frames (at least the leaf when ip is nonzero), and
 * the way it ended in *end; *why gets a short reason for an incomplete
 * unwind (libdw's message). */
size_t lp_unwinder__unwind(struct lp_unwinder *u, pid_t pid, pid_t tid,
			   const struct lp_unwind_regs *regs, const void *stack, size_t len,
			   uint64_t *pcs, unsigned char *ret, size_t max,
			   enum lp_unwind_end *end, const char **why);

/* pc (a return address when ret: looked up at pc - 1) is in a function
 * whose CFI says its return address is undefined: the outermost frame of a
 * thread (_start, clone3), where a whole stack ends.  Cached per address. */
bool lp_unwinder__outermost(struct lp_unwinder *u, pid_t pid, uint64_t pc, bool ret);

/* pid exec'd: what is cached of its addresses is forgotten. */
void lp_unwinder__forget(struct lp_unwinder *u, pid_t pid);

#endif
