/* profile.h - what bpf/profile.bpf.c and lib/capture/record/record*.c share: the record one
 * sample puts into the ring buffer.  Fixed-width fields, no pointers. */
#ifndef LP_BPF_PROFILE_H
#define LP_BPF_PROFILE_H

#include "pygil.h"

/* Frames per stack: the sample's arrays, the most --stack-depth may ask,
 * and the kernel's default kernel.perf_event_max_stack, past which
 * bpf_get_stack takes no more frames anyway. */
#define LP_MAX_STACK_DEPTH 127
#define LP_COMM_LEN 16
/* DWARF mode copies the user stack in chunks, so a stack shallower than the
 * requested size (the main thread near the top of its stack) still gives
 * every byte that exists. */
#define LP_STACK_CHUNK 512
#define LP_PAGE 4096
#define LP_MAX_STACK_COPY 65536	/* --call-graph dwarf,BYTES upper bound */
/* --call-graph auto copies this much of a thread's stack at first, and twice
 * as much (up to LP_MAX_STACK_COPY) once the copy turned out too short for
 * one of its stacks (the per-thread sizes are in lp_copy). */
#define LP_AUTO_STACK_COPY 8192
/* Pending uretprobes looked at per sample (profile.bpf.c fix_uretprobes):
 * the kernel keeps up to 64 per thread, but only those whose return address
 * lies in the copy matter, and they are the most recent. */
#define LP_MAX_URETPROBES 8

/* lp_sample_event.flags */
#define LP_EV_KERNEL_THREAD 1	/* no user stack to take */
#define LP_EV_EXEC 2		/* not a sample: pid exec'd (struct lp_exec_event) */
#define LP_EV_FORK 4		/* not a sample: pid was forked (struct lp_fork_event) */
#define LP_EV_CHAIN 8		/* the frame-pointer chain was taken (ustack) */
#define LP_EV_PYTHON 16		/* not a sample: its Python frames (struct lp_py_event) */
/* The thread ran in the uprobes page (a probed instruction stepped out of
 * line, the uretprobe trampoline): regs[] are where it is in its own code,
 * uprobes_ip where it was in the page. */
#define LP_EV_UPROBES 32

/* A thread's lp_copy value (--call-graph auto), set by user space for the
 * threads whose stacks the default copy did not hold: the bytes of stack to
 * copy; whether to take the frame-pointer chain too (only for threads whose
 * stacks a copy did not hold, or whose code has no CFI: a chain is ~3 us a
 * sample, the copy alone is enough for the others); and the top of the
 * thread's stack mapping, so the copy goes through pages never touched
 * (zeros) and stops at the top without a fault past it. */
struct lp_copy_val {
	__u32 bytes;
	__u32 chain;
	__u64 top;	/* 0: unknown */
};

/* A process replaced its program: the symbolizer forgets what it knew of the
 * pid.  In the ring in order with the samples, so samples taken before the
 * exec are still symbolized with the old program. */
struct lp_exec_event {
	__u64 time_ns;
	__u32 pid, tid, cpu, flags;
};

/* A process forked a child (a new tgid, not a thread): the child runs the
 * parent's program, mapped as the parent's was, until it execs; one that
 * exits before its own maps are read is symbolized with its parent's
 * modules.  In the ring before any of the child's samples. */
struct lp_fork_event {
	__u64 time_ns;
	__u32 pid, tid, cpu, flags;	/* pid, tid: the child's */
	__u32 ppid, pad;		/* the parent's tgid */
};

struct lp_sample_event {
	__u64 time_ns;		/* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u32 pid, tid, cpu, flags;
	char comm[LP_COMM_LEN];
	__s32 kstack_bytes;	/* >= 0: bytes of kstack; < 0: -errno */
	__s32 ustack_bytes;	/* same for ustack (frame pointers) */
	__u64 regs[3];		/* user ip, sp, bp (DWARF mode) */
	__u32 stack_bytes;	/* bytes of stack[] copied from the user sp */
	__u32 state;		/* LP_STATE_*: an on-CPU sample or an off-CPU interval */
	__u32 stack_want;	/* bytes of stack the copy was to take */
	__u32 uretprobes;	/* return addresses put back in the copy (fix_uretprobes) */
	__u64 uprobes_ip;	/* LP_EV_UPROBES: the user ip, in the uprobes page */
	__u64 weight_ns;	/* off-CPU: the interval's nanoseconds */
	__u64 wake_ns;		/* off-CPU, in the kernel: when the blocked thread was woken */
	__u64 kstack[LP_MAX_STACK_DEPTH];
	__u64 ustack[LP_MAX_STACK_DEPTH];
	/* DWARF mode: stack_bytes of the user stack follow the struct. */
};

/* CPython: where a process's interpreter keeps what the sampler walks, by
 * address and offset (lib/capture/python.c fills it per process from its
 * table for the interpreter's version, checked against the binary).  A
 * process without an entry in lp_py is walked no further than a lookup.
 * Offsets in bytes; the frame's fields all lie within LP_PY_FRAME_READ
 * bytes of its start, read at once. */
#define LP_PY_MAX_FRAMES 64	/* Python frames walked per sample */
/* Thread states looked at for the sampled thread's (the newest first): a
 * thread further down the interpreter's list has no Python frames. */
#define LP_PY_MAX_THREADS 4096
#define LP_PY_FRAME_READ 128
struct lp_py_proc {
	__u64 runtime;		/* run-time address of _PyRuntime */
	__u16 interp_head;	/* _PyRuntime.interpreters.head */
	/* The GIL's holder: 3.11, _PyRuntime.gilstate.tstate_current (at
	 * gil_tstate; gil_base LP_PY_GIL_RUNTIME); 3.12, the interpreter's
	 * GIL (a pointer at gil_interp; LP_PY_GIL_POINTER) holds it while
	 * locked (an int at gil_locked), and last_holder (at gil_tstate) says
	 * by whom; 3.13, the same within the interpreter (LP_PY_GIL_INTERP). */
	__u16 gil_tstate;
	__u16 gil_interp;
	__u16 gil_locked;
	__u16 gil_base;
	__u16 tstate_head;	/* PyInterpreterState's first thread state */
	__u16 tstate_next;	/* PyThreadState.next */
	__u16 tstate_tid;	/* PyThreadState.native_thread_id */
	/* The current frame: tstate->cframe->current_frame (3.11, 3.12), or
	 * with frame_direct tstate->current_frame (3.13, at tstate_cframe). */
	__u16 tstate_cframe;
	__u16 cframe_frame;
	__u16 frame_direct;
	__u16 frame_code;	/* _PyInterpreterFrame.f_code */
	__u16 frame_previous;	/* .previous */
	__u16 frame_instr;	/* .prev_instr: the instruction last begun */
	/* Where a C call of the eval loop began: 3.11 marks its first
	 * frame (.is_entry, a bool at frame_entry); 3.12 puts a frame of its
	 * own before it, owned by the C stack (.owner, a char at frame_owner,
	 * is owner_shim), which is no Python frame.  0: not this way. */
	__u16 frame_entry;
	__u16 frame_owner;
	__u16 owner_shim;
	__u16 code_first;	/* PyCodeObject.co_firstlineno */
	__u16 code_adaptive;	/* PyCodeObject.co_code_adaptive: the instructions */
	__u16 frame_size;	/* bytes of a frame to read: past its last field above */
};


/* One Python frame, innermost first: its code object, the index of its
 * instruction (2-byte code units from co_code_adaptive; -1 before the
 * first), and the code's first line (read with the pointer, so user space
 * can tell a code object freed and another made at its address). */
#define LP_PY_ENTRY 1		/* lp_py_frame.flags: is_entry */
struct lp_py_frame {
	__u64 code;
	__s32 lasti;
	__s32 first;
	__u32 flags, pad;
};

/* Sent just before the sample it belongs to, on the same CPU with the same
 * time and tid: a sample of a thread running a Python interpreter. */
#define LP_PY_GIL 1		/* lp_py_event.pyflags: the thread held the GIL */
#define LP_PY_MORE 2		/* more frames than LP_PY_MAX_FRAMES */
struct lp_py_event {
	__u64 time_ns;
	__u32 pid, tid, cpu, flags;	/* flags: LP_EV_PYTHON */
	__u32 nframes, pyflags;
	struct lp_py_frame frames[LP_PY_MAX_FRAMES];
};

/* lp_sample_event.state: what the thread did.  An on-CPU sample is taken by
 * the tick; the others are intervals off the CPU (--mode off and wall),
 * measured from sched_switch to sched_switch, timestamped at their start. */
#define LP_STATE_RUNNING 0	/* on the CPU (a tick's sample) */
#define LP_STATE_BLOCKED 1	/* switched out asleep (I/O, locks, sleeps) */
#define LP_STATE_RUNNABLE 2	/* ready, waiting for a CPU (preempted or woken) */

/* An off-CPU interval keeps the registers at the block and the top of the
 * stack (at most this many bytes, a multiple of LP_STACK_CHUNK) with its
 * frame-pointer chain, to be unwound like a sample's (lib/capture/record/record-stack.c): a
 * thread blocks in a system call wrapper of libc, built without frame
 * pointers, and in programs built without them too.  With --call-graph fp
 * only LP_OFF_FP_COPY of it is copied, for the wrapper's frames. */
#define LP_OFF_STACK_COPY 8192
#define LP_OFF_FP_COPY 1024

struct lp_off_sample {
	struct lp_sample_event ev;
	__u8 stack[LP_OFF_STACK_COPY];
};

/* Index into the per-CPU counters array. */
enum lp_counter {
	LP_CNT_RING_FULL,	/* samples lost: ring buffer full */
	LP_CNT_SAMPLES,		/* samples taken */
	LP_CNT_OFF_FULL,	/* off-CPU intervals lost: the per-thread map full */
	LP_CNT_OFF_UNSEEN,	/* off-CPU intervals whose end no tracepoint reported */
	LP_CNT_CHILDREN,	/* forked children not followed: the pid set full */
	LP_CNT_OUTSIDE,		/* --inside: samples and intervals outside, not sent */
	LP_CNT_NR,
};

#endif
