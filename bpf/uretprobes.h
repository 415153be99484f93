/* uretprobes.h - what bpf/uretprobes.bpf.c and lib/capture/record/uretinst.c share: the
 * records the task iterator writes for one thread.  Fixed-width fields, no
 * pointers. */
#ifndef LP_BPF_URETPROBES_H
#define LP_BPF_URETPROBES_H

/* The kernel keeps at most this many pending return instances per thread
 * (MAX_URETPROBE_DEPTH, kernel/events/uprobes.c): all of them are read. */
#define LP_URET_MAX 64

/* lp_uret_rec.kind */
#define LP_URET_THREAD 1	/* first: a = pending instances (utask->depth),
				 * b = the probed instruction it is
				 * single-stepping out of line, 0: none */
#define LP_URET_INSTANCE 2	/* then each, the most recent first: a = the
				 * stack slot whose return address was replaced
				 * with the trampoline, b = the original */

struct lp_uret_rec {
	__u32 tid;
	__u32 kind;
	__u64 a, b;
};

#endif
