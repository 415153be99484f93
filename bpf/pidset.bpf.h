/* pidset.bpf.h - the set of processes a producer's BPF programs watch (a
 * hash map of tgids, its size set by user space before load), kept by the
 * kernel as they fork and exit.  One copy for lp-record (profile.bpf.c) and
 * lp-trace (trace.bpf.c), so the two follow processes the same way: a child
 * the set has no room for is counted by the caller, never dropped silently,
 * and a process leaves the set with its last thread, so that a pid the
 * kernel hands out again is not taken for the process that had it. */
#ifndef LP_PIDSET_BPF_H
#define LP_PIDSET_BPF_H

/* sched_process_fork: a child of a watched process is watched from its
 * fork.  Returns 1 when the child was added, 0 when there is nothing to do
 * (a thread, or a parent not watched), -1 when the set is full. */
static __always_inline int lp_pidset_fork(void *set, struct task_struct *parent,
					  struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (ptgid == ctgid || !bpf_map_lookup_elem(set, &ptgid))
		return 0;
	/* BPF_ANY: only a full set (E2BIG) or no memory fails. */
	return bpf_map_update_elem(set, &ctgid, &one, BPF_ANY) ? -1 : 1;
}

/* sched_process_exit, for every exiting thread: the process leaves the set
 * when its last thread exits.  Not when its leader does: a main thread may
 * pthread_exit while the others run on.  do_exit() decrements signal->live
 * before this tracepoint (the tracepoint's own group_dead argument, 6.16+,
 * is that test), so live == 0 means the whole thread group is dead.
 * Returns 1 when the process left the set, 0 otherwise. */
static __always_inline int lp_pidset_exit(void *set, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	return bpf_map_delete_elem(set, &tgid) == 0;	/* 1: it was in the set */
}

#endif
