// SPDX-License-Identifier: GPL-2.0
/* uretprobes.bpf.c - lp-record's snapshot mode (lib/capture/record/snapshot.c through
 * lib/capture/record/uretinst.c): the return addresses that pending uretprobes (lp-trace's
 * or anyone's) took from one thread.  The kernel keeps each original with
 * the stack slot it replaced with the trampoline (utask->return_instances);
 * no file in /proc and no ptrace request shows them, so a task iterator
 * writes them out, run while ptrace holds the thread (its list cannot
 * change under it then).  The iterator's link names the process; target_tid
 * picks the thread. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "uretprobes.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before each run (in .bss, mapped: no system call). */
__u32 target_tid = 0;

SEC("iter/task")
int lp_uret_dump(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct lp_uret_rec r = { .kind = LP_URET_THREAD };
	struct return_instance *ri = NULL;
	struct uprobe_task *ut;

	if (!task || BPF_CORE_READ(task, pid) != target_tid)
		return 0;
	r.tid = target_tid;
	ut = BPF_CORE_READ(task, utask);
	if (ut) {
		r.a = BPF_CORE_READ(ut, depth);
		/* Not UTASK_RUNNING: stepping a probed instruction out of
		 * line, or the step done and its trap not yet handled. */
		if (BPF_CORE_READ(ut, state) != UTASK_RUNNING)
			r.b = BPF_CORE_READ(ut, vaddr);
		ri = BPF_CORE_READ(ut, return_instances);
	}
	bpf_seq_write(seq, &r, sizeof(r));
	r.kind = LP_URET_INSTANCE;
	for (int i = 0; i < LP_URET_MAX && ri; i++) {
		r.a = BPF_CORE_READ(ri, stack);
		r.b = BPF_CORE_READ(ri, orig_ret_vaddr);
		bpf_seq_write(seq, &r, sizeof(r));
		ri = BPF_CORE_READ(ri, next);
	}
	return 0;
}
