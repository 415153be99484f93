/* profile.h - what bpf/profile.bpf.c and lib/record.c share: the record one
 * sample puts into the ring buffer.  Fixed-width fields, no pointers. */
#ifndef LP_BPF_PROFILE_H
#define LP_BPF_PROFILE_H

#define LP_MAX_STACK_DEPTH 127	/* bpf_get_stack's frames per stack */
#define LP_COMM_LEN 16
/* DWARF mode copies the user stack in chunks, so a stack shallower than the
 * requested size (the main thread near the top of its stack) still gives
 * every byte that exists. */
#define LP_STACK_CHUNK 512
#define LP_MAX_STACK_COPY 65536	/* --call-graph dwarf,BYTES upper bound */

/* lp_sample_event.flags */
#define LP_EV_KERNEL_THREAD 1	/* no user stack to take */
#define LP_EV_EXEC 2		/* not a sample: pid exec'd (struct lp_exec_event) */

/* A process replaced its program: the symbolizer forgets what it knew of the
 * pid.  In the ring in order with the samples, so samples taken before the
 * exec are still symbolized with the old program. */
struct lp_exec_event {
	__u64 time_ns;
	__u32 pid, tid, cpu, flags;
};

struct lp_sample_event {
	__u64 time_ns;		/* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u32 pid, tid, cpu, flags;
	char comm[LP_COMM_LEN];
	__s32 kstack_bytes;	/* >= 0: bytes of kstack; < 0: -errno */
	__s32 ustack_bytes;	/* same for ustack (frame pointers) */
	__u64 regs[3];		/* user ip, sp, bp (DWARF mode) */
	__u32 stack_bytes;	/* bytes of stack[] copied from the user sp */
	__u32 pad;
	__u64 kstack[LP_MAX_STACK_DEPTH];
	__u64 ustack[LP_MAX_STACK_DEPTH];
	/* DWARF mode: stack_bytes of the user stack follow the struct. */
};

/* Index into the per-CPU counters array. */
enum lp_counter {
	LP_CNT_RING_FULL,	/* samples lost: ring buffer full */
	LP_CNT_SAMPLES,		/* samples taken */
	LP_CNT_NR,
};

#endif
