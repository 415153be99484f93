/* uretinst.h - the return addresses that pending uretprobes took from a
 * thread, read from the kernel (utask->return_instances) with a BPF task
 * iterator (bpf/uretprobes.bpf.c), for lp-record's snapshot mode: a function
 * with a return probe returns to the kernel's trampoline, which the kernel
 * wrote over its return address on the stack, and a stack copied through
 * ptrace must have the originals put back to unwind past it.  Needs what
 * loading BPF needs (root, or CAP_BPF and CAP_PERFMON).
 *
 *	u = lp_uretinst__open(verbose);		(loads the program; NULL: errno)
 *	lp_uretinst__target(u, pid);		(once per process)
 *	for each thread:
 *		lp_uretinst__arm(u);		(before holding it)
 *		lp_uretinst__read(u, tid, &t);	(while ptrace holds it, if needed)
 *	lp_uretinst__free(u); */
#ifndef LP_URETINST_H
#define LP_URETINST_H

#include <stdint.h>
#include <sys/types.h>

/* The kernel's limit per thread (MAX_URETPROBE_DEPTH): all are read. */
#define LP_URETINST_MAX 64

struct lp_uret_thread {
	uint64_t step;		/* the probed instruction it is single-stepping
				 * out of line (in the uprobes page); 0: none */
	uint32_t depth;		/* pending instances, by the kernel's count */
	uint32_t n;		/* of which read, the most recent first: */
	uint64_t slot[LP_URETINST_MAX];	/* the stack slot the trampoline took */
	uint64_t orig[LP_URETINST_MAX];	/* the return address it held */
};

struct lp_uretinst;

/* NULL, errno set (EPERM: not privileged); libbpf's messages on stderr
 * only with verbose (lp_bpflog__init). */
struct lp_uretinst *lp_uretinst__open(int verbose);
void lp_uretinst__free(struct lp_uretinst *u);

/* The process the next reads are of: an iterator over its threads (0, or
 * -1 with errno: it is gone). */
int lp_uretinst__target(struct lp_uretinst *u, pid_t pid);

/* An iterator ready for one read (0, or -1 with errno), made before a
 * thread is held: the hold then pays only for the read.  One not read yet
 * is kept for the next; a read one is closed and made anew.  disarm closes
 * it (free and target do). */
int lp_uretinst__arm(struct lp_uretinst *u);
void lp_uretinst__disarm(struct lp_uretinst *u);

/* The pending return instances of thread tid of the target process, into
 * *t, from the armed iterator (one read each).  0; -1 with errno (ESRCH: no
 * such thread in the target; EBADF: not armed). */
int lp_uretinst__read(struct lp_uretinst *u, pid_t tid, struct lp_uret_thread *t);

#endif
