// SPDX-License-Identifier: GPL-2.0
/* profile.bpf.c - lp-record's kernel side: on every tick of a per-CPU perf
 * event, if the running task belongs to a target process, take its kernel
 * and user stacks (frame pointers, bpf_get_stack), optionally copy the top of
 * its user stack and registers for DWARF unwinding in user space, and send it
 * all through a ring buffer.  Samples the ring cannot take are counted. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by lib/record.c before load; constant to the verifier afterwards. */
const volatile bool filter_pids = false;	/* only tgids in lp_pids */
const volatile bool follow_forks = true;	/* children of targets too */
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile __u32 stack_copy = 0;		/* DWARF mode: bytes to copy */
/* Samples go in without waking the reader, who polls on a timer, unless the
 * ring holds more than this: thousands of wakeups a second cost more than
 * the samples. */
const volatile __u64 wakeup_bytes = 1 << 20;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
} lp_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* resized by user space */
} lp_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LP_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} lp_counters SEC(".maps");

/* One sample is built here, then copied into the ring with its true size:
 * bpf_ringbuf_reserve wants a size the verifier knows, and a DWARF sample's
 * size depends on how much stack there was to copy.  An array, not a per-CPU
 * array: per-CPU values are limited to 32 KiB.  Indexed by CPU; max_entries
 * is set to the number of possible CPUs by user space. */
struct lp_scratch {
	struct lp_sample_event ev;
	__u8 stack[LP_MAX_STACK_COPY];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_scratch);
} lp_scratch SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&lp_counters, &which);

	if (c)
		*c += 1;
}

SEC("perf_event")
int lp_rec_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u32 cpu = bpf_get_smp_processor_id();
	struct task_struct *task;
	struct lp_scratch *s;
	long n;

	if (filter_pids && !bpf_map_lookup_elem(&lp_pids, &tgid))
		return 0;
	s = bpf_map_lookup_elem(&lp_scratch, &cpu);
	if (!s)
		return 0;
	count(LP_CNT_SAMPLES);

	s->ev.time_ns = bpf_ktime_get_ns();
	s->ev.pid = tgid;
	s->ev.tid = tid;
	s->ev.cpu = cpu;
	s->ev.flags = 0;
	s->ev.stack_bytes = 0;
	s->ev.regs[0] = s->ev.regs[1] = s->ev.regs[2] = 0;
	bpf_get_current_comm(s->ev.comm, sizeof(s->ev.comm));

	s->ev.kstack_bytes = 0;
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, s->ev.kstack, sizeof(s->ev.kstack), 0);
		s->ev.kstack_bytes = n;
	}

	task = bpf_get_current_task_btf();
	s->ev.ustack_bytes = 0;
	if (!user_stacks)
		goto out;
	if (BPF_CORE_READ(task, flags) & 0x00200000 /* PF_KTHREAD */) {
		s->ev.flags |= LP_EV_KERNEL_THREAD;
		goto out;
	}
	if (!stack_copy) {
		n = bpf_get_stack(ctx, s->ev.ustack, sizeof(s->ev.ustack), BPF_F_USER_STACK);
		s->ev.ustack_bytes = n;
		goto out;
	}

	/* DWARF mode: the user registers (from the task's pt_regs, which are
	 * right also when the tick interrupted the kernel) and the stack above
	 * sp, copied chunk by chunk until the requested size or the end of the
	 * stack mapping. */
	{
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
		__u64 sp;
		__u32 off = 0;

		if (!regs)
			goto out;
		s->ev.regs[0] = BPF_CORE_READ(regs, ip);
		sp = BPF_CORE_READ(regs, sp);
		s->ev.regs[1] = sp;
		s->ev.regs[2] = BPF_CORE_READ(regs, bp);
		for (int i = 0; i < LP_MAX_STACK_COPY / LP_STACK_CHUNK; i++) {
			if (off >= stack_copy || off > LP_MAX_STACK_COPY - LP_STACK_CHUNK)
				break;
			if (bpf_probe_read_user(s->stack + off, LP_STACK_CHUNK,
						(void *)(sp + off)))
				break;
			off += LP_STACK_CHUNK;
		}
		s->ev.stack_bytes = off;
	}
out:
	{
		__u64 size = sizeof(s->ev) + s->ev.stack_bytes;

		if (size > sizeof(*s))
			size = sizeof(*s);
		__u64 flags = bpf_ringbuf_query(&lp_ring, BPF_RB_AVAIL_DATA) > wakeup_bytes ?
			BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

		if (bpf_ringbuf_output(&lp_ring, s, size, flags))
			count(LP_CNT_RING_FULL);
	}
	return 0;
}

/* A target's exec: its mappings are new. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lp_rec_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct lp_exec_event ev;

	if (filter_pids && !bpf_map_lookup_elem(&lp_pids, &tgid))
		return 0;
	ev.time_ns = bpf_ktime_get_ns();
	ev.pid = tgid;
	ev.tid = (__u32)id;
	ev.cpu = bpf_get_smp_processor_id();
	ev.flags = LP_EV_EXEC;
	/* Wake the reader at once: it reads the new program's mappings while
	 * the process is surely there (see lib/record.c). */
	if (bpf_ringbuf_output(&lp_ring, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP))
		count(LP_CNT_RING_FULL);
	return 0;
}

/* Children of a target become targets: a forked process gets its own tgid. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lp_rec_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (!filter_pids || !follow_forks || ptgid == ctgid)
		return 0;
	if (bpf_map_lookup_elem(&lp_pids, &ptgid))
		bpf_map_update_elem(&lp_pids, &ctgid, &one, BPF_ANY);
	return 0;
}
