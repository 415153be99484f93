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
#include "trace.h"
#include "pidset.bpf.h"
#include "stacks.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by lib/capture/record/record.c before load; constant to the verifier afterwards. */
const volatile bool filter_pids = false;	/* only tgids in lp_pids */
const volatile bool follow_forks = true;	/* children of targets too */
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
/* Bytes of user stack to copy for DWARF unwinding (0: none), unless the
 * thread has a size of its own in lp_copy; a blocked thread's copy takes at
 * most off_copy of them. */
const volatile __u32 stack_copy = 0;
const volatile __u32 off_copy = LP_OFF_FP_COPY;
/* The frame-pointer chain too (bpf_get_stack), beside a copy, for the
 * threads whose lp_copy value says LP_COPY_CHAIN: --call-graph auto joins
 * it to the DWARF frames where the copy ends.  Off the CPU, always. */
const volatile bool fp_chain = true;
/* The task's pool of free return instances may be read (kernels since
 * 6.14 keep one; user space clears this to test the fallback). */
const volatile bool ri_pool = true;
/* Samples go in without waking the reader, who polls on a timer, unless the
 * ring holds more than this: thousands of wakeups a second cost more than
 * the samples. */
const volatile __u64 wakeup_bytes = 1 << 20;
/* --mode off and wall: blocked intervals shorter than this are not sent. */
const volatile __u64 min_block_ns = 0;
/* --mode wall: time runnable but waiting for a CPU is sent too. */
const volatile bool runnable_intervals = false;
/* lp_scratch's slot for lp_rec_seed: the one past the CPUs'. */
const volatile __u32 seed_slot = 0;
/* --stack-depth: frames taken of each stack, kernel and user (at most
 * LP_MAX_STACK_DEPTH, the size of the sample's arrays). */
const volatile __u32 stack_depth = LP_MAX_STACK_DEPTH;

/* --inside (lib/capture/trace/gate.c): set by user space once it has calibrated
 * (its own samples are not gated), or when --control's inside FUNC has
 * attached a gate, and cleared by inside off; while set, a thread is
 * sampled only while it is inside a gate function. */
volatile __u32 gate_on = 0;

/* --inside: each thread's open calls of the gate functions, kept by
 * lp-trace's programs (bpf/trace.bpf.c: this map is its "stacks", shared
 * by user space before load, one way for --inside, the other for a gate
 * attached live; stacks.bpf.h). */
LP_OPEN_CALLS_MAP(lp_gate);

/* The target processes and their followed children (pidset.bpf.h);
 * max_entries is --max-pids, set by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
} lp_pids SEC(".maps");

/* --call-graph auto: threads whose stacks were deeper than the default
 * copy, and the bytes to copy of theirs (set by user space, lib/capture/record/record-stack.c).
 * LRU: a thread that is gone leaves room for others. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);	/* tid */
	__type(value, struct lp_copy_val);
} lp_copy SEC(".maps");

/* Processes running CPython, with where their interpreter keeps its
 * threads and frames (profile.h, struct lp_py_proc), set by user space
 * (lib/capture/python.c) once it has checked the interpreter's version. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);	/* tgid */
	__type(value, struct lp_py_proc);
} lp_py SEC(".maps");

/* --mode off and wall: the Python frames of target threads now off the CPU,
 * taken when they were switched out, sent before their interval's sample
 * (the same time and tid).  Only Python threads have one. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tid */
	__type(value, struct lp_py_event);
} lp_py_off SEC(".maps");

/* Each Python thread's state, once found in its interpreter's list (a walk
 * of one read per thread state before it), checked at each use by the
 * native thread id it holds; forgotten when the thread exits or execs, so
 * a tid the kernel gives again never finds a dead thread's state. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);	/* tid */
	__type(value, __u64);	/* its PyThreadState's address */
} lp_py_tstate SEC(".maps");

/* A sample's Python frames are gathered here (a per-CPU slot: 1.5 KiB,
 * more than the BPF stack holds), then sent with their true size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_py_event);
} lp_py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* resized by user space */
} lp_ring SEC(".maps");

/* The targets' execs again, a pid each, for the thread of lp-record's that
 * reads their maps at once (lib/capture/record/execmaps.c): the reader of
 * lp_ring may be behind by more than a short-lived child's life. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} lp_execs SEC(".maps");

#define LP_COUNTERS_N LP_CNT_NR
#include "counters.bpf.h"

/* Threads of targets now off the CPU: the sample their interval becomes,
 * stacks taken when they were switched out.  Not preallocated: only threads
 * asleep at this moment hold an entry, and each is 2 KiB. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tid */
	__type(value, struct lp_off_sample);
} lp_off SEC(".maps");

/* One sample is built here, then copied into the ring with its true size:
 * bpf_ringbuf_reserve wants a size the verifier knows, and a DWARF sample's
 * size depends on how much stack there was to copy.  An array, not a per-CPU
 * array: per-CPU values are limited to 32 KiB.  Indexed by CPU; max_entries
 * is set to the number of possible CPUs by user space. */
struct lp_scratch {
	struct lp_sample_event ev;
	/* A page more: copy_page's reads, bounded for the verifier by where
	 * they start and their size, not by where the copy ends. */
	__u8 stack[LP_MAX_STACK_COPY + LP_PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_scratch);
} lp_scratch SEC(".maps");


/* --inside: whether thread tid of process tgid (task: the current task, or
 * with other another one, from a sleepable program) is outside every gate
 * function; counted then.  Inside means an open call of one (nesting and
 * recursion are frames of their own) whose frame is still the thread's:
 * its stack pointer at or below the one the entry saw, and the return
 * address slot there holding the return address the entry saw (or the
 * uretprobe trampoline the kernel put there).  A call left without its
 * return seen (an exception, longjmp) fails one or the other as soon as
 * the thread is above it or has called anything from there: out, before
 * the next probe hit pops the call (trace.bpf.c's stack-pointer checks,
 * its catch probe).  The outermost call that holds decides: a stale frame
 * below a live one (longjmp out, then a new call deeper) does not. */
static __always_inline bool gated_out(__u32 tgid, __u32 tid, struct task_struct *task, bool other)
{
	if (!gate_on)
		return false;
	__u64 key = tid;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&lp_gate, &key);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (st && regs && st->tgid == tgid && st->depth > 0) {
		__u64 sp = BPF_CORE_READ(regs, sp);
		__u64 tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);

		for (int i = 0; i < LP_TRACE_MAX_DEPTH; i++) {
			if (i >= st->depth)
				break;
			struct lp_trace_frame *f = &st->frames[i];
			__u64 slot = 0;
			long err = sp > f->sp ? -1 :
				   other ? bpf_copy_from_user_task(&slot, sizeof(slot), (void *)f->sp, task, 0)
					 : bpf_probe_read_user(&slot, sizeof(slot), (void *)f->sp);

			if (!err && (slot == f->ret || (tramp && slot == tramp)))
				return false;
		}
	}
	count(LP_CNT_OUTSIDE);
	return true;
}

/* Bytes of frames bpf_get_stack may write: stack_depth of them, bounded
 * for the verifier by the arrays' size. */
static __always_inline __u32 frames_size(void)
{
	__u32 n = stack_depth * sizeof(__u64);

	return n > LP_MAX_STACK_DEPTH * sizeof(__u64) ? LP_MAX_STACK_DEPTH * sizeof(__u64) : n;
}

/* Thread tid's lp_copy value, or the default: stack_copy bytes, no chain,
 * its top unknown; bytes at most most. */
static __always_inline struct lp_copy_val thread_copy(__u32 tid, __u32 most)
{
	struct lp_copy_val *v = bpf_map_lookup_elem(&lp_copy, &tid);
	struct lp_copy_val c = { .bytes = stack_copy };

	if (v)
		c = *v;
	if (c.bytes > most)
		c.bytes = most;
	return c;
}

/* copy_stack's state: one page (or what is left of one) per step of
 * bpf_loop. */
struct stack_copy {
	__u8 *dst;		/* a scratch slot's stack[] */
	__u64 sp, top;		/* top: of the stack mapping, 0 when unknown */
	__u32 want;
	__u32 off;		/* bytes copied */
};

static long copy_page(__u32 i, void *arg)
{
	struct stack_copy *c = arg;
	__u32 off = c->off, size;

	if (off >= c->want || off >= LP_MAX_STACK_COPY)
		return 1;
	/* To the end of this page, or of the copy: 1..LP_PAGE bytes. */
	size = LP_PAGE - ((c->sp + off) & (LP_PAGE - 1));
	if (size > c->want - off)
		size = c->want - off;
	size = ((size - 1) & (LP_PAGE - 1)) + 1;
	if (bpf_probe_read_user(c->dst + off, size, (void *)(c->sp + off)) && !c->top)
		return 1;	/* the end of the mapping, as far as is known */
	/* Read, or a page of the stack never touched (a big local buffer:
	 * memcached's is 16 KiB) below the known top, which the helper left
	 * as zeros: what it holds indeed, and the stack goes on past it. */
	c->off = off + size;
	return 0;
}

/* Copies want bytes (at most cap) of the current task's stack from sp into
 * dst, a scratch slot's stack[], a page at a time: up to the top of the
 * stack mapping when it is known (and through pages never touched), else
 * to the first page that cannot be read (the main thread near its top:
 * reads past the mapping fault, several microseconds each in a VM).  In
 * bpf_loop: the verifier checks one step; a loop against a size known
 * only at run time took it a second.  Returns the bytes. */
static __always_inline __u32 copy_stack(__u8 *dst, __u64 sp, __u32 want, __u32 cap, __u64 top)
{
	struct stack_copy c = { .dst = dst, .sp = sp, .top = top,
				.want = want < cap ? want : cap };

	if (top > sp && top - sp < c.want)
		c.want = top - sp;
	bpf_loop(LP_MAX_STACK_COPY / LP_PAGE + 1, copy_page, &c, 0);
	return c.off;
}

/* A function with a pending uretprobe (lp-trace's or anyone's) returns to
 * the kernel's trampoline: its return address on the stack was replaced
 * when it was entered, and an unwinder that finds the trampoline there
 * cannot go on (it is in no module and has no CFI).  The kernel keeps the
 * originals per task, with the stack slot each one was taken from: put them
 * back in the copy, so the copy reads as if there were no probe.  (The
 * frame-pointer chain of bpf_get_stack is fixed up by the kernel itself,
 * since 6.12.)  Returns how many were put back. */
static __always_inline __u32 fix_uretprobes(struct task_struct *task, __u8 *dst, __u64 sp,
					    __u32 len, __u32 cap)
{
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u32 fixed = 0;

	for (int i = 0; i < LP_MAX_URETPROBES && ri; i++) {
		__u64 slot = BPF_CORE_READ(ri, stack);
		__u64 orig = BPF_CORE_READ(ri, orig_ret_vaddr);
		__u64 off = slot - sp;

		ri = BPF_CORE_READ(ri, next);
		if (slot < sp || off + 8 > len || (slot & 7))
			continue;
		/* Bounded for the verifier; a no-op, as off + 8 <= len <= cap. */
		off &= (cap - 1) & ~7ULL;
		*(__u64 *)(dst + off) = orig;
		fixed++;
	}
	return fixed;
}

/* A frame-pointer chain read while uretprobes are pending holds the
 * trampoline where each probed call's return address was; kernels before
 * 6.12 leave it there, later ones put the task's return instances'
 * originals back, innermost first, one per trampoline.  Both miss when
 * the innermost instance's slot is not in the chain (a function sampled
 * before it saved bp: at its entry, while the probe's trap is handled):
 * the chain's first return address is read at bp + 8.  Here each
 * trampoline gets the original of the instance its slot holds, and where
 * the kernel gave every replaced one the original of the instance inside
 * it, each gets its own (a chained instance, pushed by a call in tail
 * position of a probed one, shares the next one's slot and original). */
struct chain_fix {
	__u64 *ips;
	struct return_instance *ri;	/* the next trampoline's */
	struct return_instance *head;	/* shifted: the one the kernel gave it */
	__u64 tramp;
	__u32 n;
	bool shifted, found;
};

/* fix_chain_uretprobes's step: frame i + 1 (bpf_loop keeps the verifier
 * to one step). */
static long chain_fix_step(__u32 i, void *arg)
{
	struct chain_fix *c = arg;
	struct return_instance *ri = c->ri, *head = c->head;
	/* Masked for the verifier: n <= LP_MAX_STACK_DEPTH (frames_size). */
	__u32 at = (i + 1) & 127;

	if (at == 0 || at >= c->n || !ri)
		return 1;
	__u64 v = c->ips[at];

	if (c->shifted) {
		if (!head || v != BPF_CORE_READ(head, orig_ret_vaddr))
			return 0;
		c->ips[at] = BPF_CORE_READ(ri, orig_ret_vaddr);
		c->head = BPF_CORE_READ(head, next);
		c->ri = BPF_CORE_READ(ri, next);
		return 0;
	}
	if (v != c->tramp)
		return 0;
	c->found = true;
	c->ips[at] = BPF_CORE_READ(ri, orig_ret_vaddr);
	for (int k = 0; k < LP_MAX_URETPROBES && ri && BPF_CORE_READ(ri, chained); k++)
		ri = BPF_CORE_READ(ri, next);
	c->ri = ri ? BPF_CORE_READ(ri, next) : NULL;
	return 0;
}

static __always_inline void fix_chain_uretprobes(struct task_struct *task, __u64 *ips, long bytes)
{
	struct chain_fix c = {
		.ips = ips,
		.tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr),
		.n = (__u64)bytes >> 3,
	};
	struct return_instance *ri;
	__u32 skipped = 0;

	if (!c.tramp || c.n < 2)
		return;
	ri = BPF_CORE_READ(task, utask, return_instances);
	if (!ri)
		return;
	c.head = ri;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 sp = regs ? BPF_CORE_READ(regs, sp) : 0, bp = regs ? BPF_CORE_READ(regs, bp) : 0;

	for (int k = 0; k < LP_MAX_URETPROBES && ri && bp >= sp && bp - sp < (1 << 20); k++) {
		if (BPF_CORE_READ(ri, stack) >= bp + 8)
			break;
		ri = BPF_CORE_READ(ri, next);
		skipped++;
	}
	struct return_instance *first = ri;

	c.ri = ri;

	bpf_loop(LP_MAX_STACK_DEPTH, chain_fix_step, &c, 0);
	if (c.found || !skipped)
		return;
	/* No trampoline left: the kernel's repair (6.12+) took head's for
	 * the first, and so on. */
	c.ri = first;
	c.shifted = true;
	bpf_loop(LP_MAX_STACK_DEPTH, chain_fix_step, &c, 0);
}

/* Whether the return instance ri is the one whose return the thread is in
 * the middle of, at stack pointer sp in the trampoline: its slot (where
 * the return address was; sp was just past it when the function returned)
 * is at most 3 pushes below sp's (the system-call trampoline saves rax,
 * rcx and r11, and pops them again after the call). */
static __always_inline bool returning_through(struct return_instance *ri, __u64 sp)
{
	__u64 slot = BPF_CORE_READ(ri, stack);

	return slot + 8 >= sp && slot <= sp + 16;
}

/* The tick came while the thread ran in the uprobes page: in the uretprobe
 * trampoline (the probed function has returned to it: its real return
 * address and the stack pointer after the return are in its return
 * instance), or single-stepping a probed instruction out of line (its
 * address is in the uprobe task).  The registers are set to where the
 * thread is in its own code, before the stack is copied from sp.
 *
 * The return's instance is the most recent pending one until the kernel's
 * handling of the return takes it off; from then until the trampoline's
 * last instruction (the system call's end, the pops after it) it is the
 * first of the task's pool of free instances (kernels since 6.14 keep
 * one), its fields intact.  Any other instance is another call's: no
 * instance fits, and the stack is left to end in the trampoline.
 *
 * Returns whether the registers were moved: the sample is then the probe's
 * time (lp's), though no frame of its stack is in the page any more. */
static __always_inline bool fix_uprobe_ip(struct task_struct *task, __u64 *ip, __u64 *sp)
{
	struct uprobe_task *ut = BPF_CORE_READ(task, utask);
	__u64 page = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	struct return_instance *ri;

	if (!ut || !page || *ip < page || *ip >= page + 4096)
		return false;
	/* Stepping, or the step done and its trap not yet handled. */
	if (BPF_CORE_READ(ut, state) != UTASK_RUNNING) {
		*ip = BPF_CORE_READ(ut, vaddr);
		return true;
	}
	ri = BPF_CORE_READ(ut, return_instances);
	if (!ri || !returning_through(ri, *sp)) {
		ri = NULL;
		if (ri_pool && bpf_core_field_exists(ut->ri_pool))
			ri = BPF_CORE_READ(ut, ri_pool);
		if (ri && !returning_through(ri, *sp))
			ri = NULL;
	}
	if (!ri)
		return false;
	*ip = BPF_CORE_READ(ri, orig_ret_vaddr);
	*sp = BPF_CORE_READ(ri, stack) + 8;
	return true;
}

/* py_frame's state: one Python frame per step of bpf_loop. */
struct py_walk {
	const struct lp_py_proc *py;
	struct lp_py_event *e;
	__u64 frame;		/* the next frame to read, 0 at the end */
};

/* The 8-byte-aligned word at off of the frame read into buf: off is the
 * table's, bounded for the verifier (LP_PY_FRAME_READ is a power of two;
 * the table's pointer fields are aligned and lie below frame_size <=
 * LP_PY_FRAME_READ, so the mask changes nothing). */
static __always_inline __u64 py_field(const __u8 *buf, __u32 off)
{
	return *(const __u64 *)(buf + (off & (LP_PY_FRAME_READ - 8)));
}

/* The byte at off of the frame read into buf. */
static __always_inline __u8 py_byte(const __u8 *buf, __u32 off)
{
	return py_field(buf, off & ~7u) >> ((off & 7) * 8);
}

static long py_frame(__u32 i, void *arg)
{
	struct py_walk *w = arg;
	const struct lp_py_proc *py = w->py;
	__u8 buf[LP_PY_FRAME_READ] = {};
	__u32 n = w->e->nframes;
	__u32 size = py->frame_size;

	if (!w->frame)
		return 1;
	if (n >= LP_PY_MAX_FRAMES) {
		w->e->pyflags |= LP_PY_MORE;
		return 1;
	}
	if (size > LP_PY_FRAME_READ || size < 8 ||
	    bpf_probe_read_user(buf, size, (void *)w->frame))
		return 1;
	/* 3.12's frame of the C stack: the frame before it (the one read
	 * last) is the first of its C call; itself no Python frame. */
	if (py->owner_shim && py_byte(buf, py->frame_owner) == py->owner_shim) {
		if (n > 0)
			w->e->frames[(n - 1) & (LP_PY_MAX_FRAMES - 1)].flags |= LP_PY_ENTRY;
		w->frame = py_field(buf, py->frame_previous);
		return 0;
	}
	__u64 code = py_field(buf, py->frame_code);
	__u64 instr = py_field(buf, py->frame_instr);
	__u64 start = code + py->code_adaptive;
	struct lp_py_frame *f = &w->e->frames[n & (LP_PY_MAX_FRAMES - 1)];

	f->code = code;
	/* prev_instr is one code unit before the first until it starts. */
	f->lasti = instr >= start && instr - start < (1u << 30) ? (__s32)((instr - start) / 2) : -1;
	f->first = 0;
	bpf_probe_read_user(&f->first, sizeof(f->first), (void *)(code + py->code_first));
	f->flags = py->frame_entry && py_byte(buf, py->frame_entry) ? LP_PY_ENTRY : 0;
	f->pad = 0;
	w->e->nframes = n + 1;
	w->frame = py_field(buf, py->frame_previous);
	return 0;
}

/* Whether thread state ts holds its interpreter's GIL (struct lp_py_proc). */
static __always_inline bool py_holds_gil(const struct lp_py_proc *py, __u64 interp, __u64 ts)
{
	__u64 base = py->runtime, holder = 0;
	__u32 locked = 1;

	if (py->gil_base == LP_PY_GIL_POINTER) {
		base = 0;
		if (bpf_probe_read_user(&base, sizeof(base), (void *)(interp + py->gil_interp)) || !base)
			return false;
	} else if (py->gil_base == LP_PY_GIL_INTERP) {
		base = interp;
	}
	if (py->gil_base != LP_PY_GIL_RUNTIME &&
	    bpf_probe_read_user(&locked, sizeof(locked), (void *)(base + py->gil_locked)))
		return false;
	return locked && !bpf_probe_read_user(&holder, sizeof(holder), (void *)(base + py->gil_tstate)) &&
	       holder == ts;
}

/* py_thread's state: one thread state per step of bpf_loop. */
struct py_find {
	const struct lp_py_proc *py;
	__u64 ts;		/* the one to look at; 0: none left, or unreadable */
	__u32 tid;
	bool found;		/* ts is tid's */
};

static long py_thread(__u32 i, void *arg)
{
	struct py_find *f = arg;
	__u64 ntid = 0;

	if (!f->ts)
		return 1;
	if (bpf_probe_read_user(&ntid, sizeof(ntid), (void *)(f->ts + f->py->tstate_tid))) {
		f->ts = 0;
		return 1;
	}
	if (ntid == f->tid) {
		f->found = true;
		return 1;
	}
	if (bpf_probe_read_user(&f->ts, sizeof(f->ts), (void *)(f->ts + f->py->tstate_next)))
		f->ts = 0;
	return 0;
}

/* The current thread's Python frames, when its process runs CPython (an
 * entry in lp_py), into the CPU's lp_py_scratch slot: its thread state found
 * by its native thread id among the interpreter's, then the chain of
 * frames from the current one.  NULL when the thread has no thread state
 * (not a Python thread) or the interpreter is not up yet. */
static __always_inline struct lp_py_event *py_walk(__u32 tgid, __u32 tid, __u32 cpu, __u64 time)
{
	const struct lp_py_proc *py = bpf_map_lookup_elem(&lp_py, &tgid);
	__u32 zero = 0;
	__u64 interp = 0, ts = 0, cframe = 0;

	if (!py)
		return NULL;
	if (bpf_probe_read_user(&interp, sizeof(interp), (void *)(py->runtime + py->interp_head)) ||
	    !interp ||
	    bpf_probe_read_user(&ts, sizeof(ts), (void *)(interp + py->tstate_head)))
		return NULL;
	__u64 *known = bpf_map_lookup_elem(&lp_py_tstate, &tid);
	__u64 ntid = 0;

	if (known && !bpf_probe_read_user(&ntid, sizeof(ntid), (void *)(*known + py->tstate_tid)) &&
	    ntid == tid) {
		ts = *known;
	} else {
		struct py_find find = { .py = py, .ts = ts, .tid = tid };

		bpf_loop(LP_PY_MAX_THREADS, py_thread, &find, 0);
		if (!find.found)
			return NULL;
		ts = find.ts;
		bpf_map_update_elem(&lp_py_tstate, &tid, &ts, BPF_ANY);
	}
	struct lp_py_event *e = bpf_map_lookup_elem(&lp_py_scratch, &zero);

	if (!e)
		return NULL;
	e->time_ns = time;
	e->pid = tgid;
	e->tid = tid;
	e->cpu = cpu;
	e->flags = LP_EV_PYTHON;
	e->nframes = 0;
	e->pyflags = 0;
	/* Whether this thread holds the GIL: another may take it or let it
	 * go meanwhile, never this one, which is running this. */
	if (py_holds_gil(py, interp, ts))
		e->pyflags |= LP_PY_GIL;

	struct py_walk w = { .py = py, .e = e };

	if (py->frame_direct)
		bpf_probe_read_user(&w.frame, sizeof(w.frame), (void *)(ts + py->tstate_cframe));
	else if (!bpf_probe_read_user(&cframe, sizeof(cframe), (void *)(ts + py->tstate_cframe)) &&
		 cframe)
		bpf_probe_read_user(&w.frame, sizeof(w.frame), (void *)(cframe + py->cframe_frame));
	/* Twice: 3.12's frames of the C stack take a step each. */
	bpf_loop(2 * LP_PY_MAX_FRAMES + 1, py_frame, &w, 0);
	return e;
}

/* Sends e with its true size, before the sample it belongs to. */
static __always_inline void py_send(struct lp_py_event *e)
{
	__u64 size = __builtin_offsetof(struct lp_py_event, frames) +
		     (__u64)(e->nframes & (2 * LP_PY_MAX_FRAMES - 1)) * sizeof(struct lp_py_frame);

	if (size > sizeof(*e))
		size = sizeof(*e);
	if (bpf_ringbuf_output(&lp_ring, e, size, BPF_RB_NO_WAKEUP))
		count(LP_CNT_RING_FULL);
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
	if (gated_out(tgid, tid, bpf_get_current_task_btf(), false))
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
	s->ev.state = LP_STATE_RUNNING;
	s->ev.stack_want = 0;
	s->ev.uretprobes = 0;
	s->ev.uprobes_ip = 0;
	s->ev.weight_ns = 0;
	s->ev.wake_ns = 0;
	s->ev.regs[0] = s->ev.regs[1] = s->ev.regs[2] = 0;
	bpf_get_current_comm(s->ev.comm, sizeof(s->ev.comm));

	s->ev.kstack_bytes = 0;
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, s->ev.kstack, frames_size(), 0);
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
	struct lp_copy_val tc = thread_copy(tid, LP_MAX_STACK_COPY);

	if (!stack_copy || (fp_chain && tc.chain)) {
		n = bpf_get_stack(ctx, s->ev.ustack, frames_size(), BPF_F_USER_STACK);
		s->ev.ustack_bytes = n;
		s->ev.flags |= LP_EV_CHAIN;
		fix_chain_uretprobes(task, s->ev.ustack, n);
	}
	if (!stack_copy)
		goto out;

	/* DWARF and auto: the user registers (from the task's pt_regs, which
	 * are right also when the tick interrupted the kernel) and the stack
	 * above sp. */
	{
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
		__u64 sp;

		if (!regs)
			goto out;
		__u64 ip = BPF_CORE_READ(regs, ip), at = ip;

		sp = BPF_CORE_READ(regs, sp);
		if (fix_uprobe_ip(task, &ip, &sp)) {
			s->ev.flags |= LP_EV_UPROBES;
			s->ev.uprobes_ip = at;
		}
		s->ev.regs[0] = ip;
		s->ev.regs[1] = sp;
		s->ev.regs[2] = BPF_CORE_READ(regs, bp);
		s->ev.stack_want = tc.bytes;
		s->ev.stack_bytes = copy_stack(s->stack, sp, tc.bytes, LP_MAX_STACK_COPY, tc.top);
		s->ev.uretprobes = fix_uretprobes(task, s->stack, sp, s->ev.stack_bytes,
						  LP_MAX_STACK_COPY);
	}
out:
	if (!(s->ev.flags & LP_EV_KERNEL_THREAD)) {
		struct lp_py_event *pe = py_walk(tgid, tid, cpu, s->ev.time_ns);

		if (pe)
			py_send(pe);
	}
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
	/* The thread that exec'd has a new program: no thread state of the
	 * old one's. */
	bpf_map_delete_elem(&lp_py_tstate, &ev.tid);
	/* Wake the reader at once: it reads the new program's mappings while
	 * the process is surely there (lib/capture/record/record-stack.c), and
	 * lp_execs wakes the thread that reads them at once (execmaps.c). */
	if (bpf_ringbuf_output(&lp_ring, &ev, sizeof(ev), BPF_RB_FORCE_WAKEUP))
		count(LP_CNT_RING_FULL);
	/* A full lp_execs costs nothing but the early read: the reader
	 * still reads the maps at the exec record, if the process is there. */
	if (filter_pids)
		bpf_ringbuf_output(&lp_execs, &tgid, sizeof(tgid), BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* Children of a target become targets: a forked process gets its own tgid.
 * One the set has no room for is not sampled, and counted.  A child that is
 * sampled is announced to user space (struct lp_fork_event), so that one
 * gone before its maps are read is symbolized with its parent's: with -a,
 * every fork on the system (a few dozen bytes each, no wakeup). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lp_rec_fork, struct task_struct *parent, struct task_struct *child)
{
	struct lp_fork_event ev;

	if (filter_pids) {
		if (!follow_forks)
			return 0;
		int added = lp_pidset_fork(&lp_pids, parent, child);
		if (added < 0)
			count(LP_CNT_CHILDREN);
		if (added <= 0)
			return 0;
	} else if (parent->tgid == child->tgid) {
		return 0;	/* a thread: its process's mappings */
	}
	ev.time_ns = bpf_ktime_get_ns();
	ev.pid = child->tgid;
	ev.tid = child->pid;
	ev.cpu = bpf_get_smp_processor_id();
	ev.flags = LP_EV_FORK;
	ev.ppid = parent->tgid;
	ev.pad = 0;
	if (bpf_ringbuf_output(&lp_ring, &ev, sizeof(ev), BPF_RB_NO_WAKEUP))
		count(LP_CNT_RING_FULL);
	return 0;
}

/* A thread exits: its Python thread state is no longer its.  A target's
 * last thread exits: its pid leaves the set (pidset.bpf.h). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lp_rec_exit, struct task_struct *p)
{
	__u32 tid = p->pid;

	bpf_map_delete_elem(&lp_py_tstate, &tid);
	if (filter_pids)
		lp_pidset_exit(&lp_pids, p);
	return 0;
}

#define LP_TASK_DEAD 0x80	/* TASK_DEAD: its last switch, nothing to wait for */

static __always_inline void send(struct lp_off_sample *v)
{
	__u32 tid = v->ev.tid;
	struct lp_py_event *pe = bpf_map_lookup_elem(&lp_py_off, &tid);

	/* Its Python frames first, dated as the interval. */
	if (pe) {
		pe->time_ns = v->ev.time_ns;
		pe->cpu = v->ev.cpu;
		py_send(pe);
	}
	__u64 flags = bpf_ringbuf_query(&lp_ring, BPF_RB_AVAIL_DATA) > wakeup_bytes ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	__u64 size = sizeof(v->ev) + v->ev.stack_bytes;

	if (size > sizeof(*v))
		size = sizeof(*v);
	if (bpf_ringbuf_output(&lp_ring, v, size, flags))
		count(LP_CNT_RING_FULL);
}

/* An off-CPU interval of task t, from now, before its stacks are taken. */
static __always_inline void off_start(struct lp_sample_event *ev, struct task_struct *t,
				      __u64 now, __u32 cpu, bool blocked)
{
	ev->time_ns = now;
	ev->wake_ns = 0;
	ev->weight_ns = 0;
	ev->pid = t->tgid;
	ev->tid = t->pid;
	ev->cpu = cpu;
	ev->flags = 0;
	ev->state = blocked ? LP_STATE_BLOCKED : LP_STATE_RUNNABLE;
	ev->stack_bytes = 0;
	ev->stack_want = 0;
	ev->uretprobes = 0;
	ev->uprobes_ip = 0;
	ev->regs[0] = ev->regs[1] = ev->regs[2] = 0;
	bpf_probe_read_kernel_str(ev->comm, sizeof(ev->comm), t->comm);
	ev->kstack_bytes = 0;
	ev->ustack_bytes = 0;
}

/* --mode off and wall.  A target thread switched out: its stacks now (it is
 * current until the switch is done, so bpf_get_stack sees its kernel stack
 * in schedule() and its user stack through its saved registers), kept by tid
 * until it is switched in again; then the interval, weighted by its
 * nanoseconds and timestamped at its start, goes into the ring with the
 * on-CPU samples.  An asleep thread's interval is blocked until its wakeup,
 * runnable from there to its switch-in; a preempted one's is runnable. */
SEC("tp_btf/sched_switch")
int BPF_PROG(lp_rec_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = next->pid;
	struct lp_off_sample *v;

	/* Switch-in first: the thread coming onto the CPU. */
	v = tid ? bpf_map_lookup_elem(&lp_off, &tid) : NULL;
	if (v) {
		__u64 start = v->ev.time_ns, wake = v->ev.wake_ns;

		if (v->ev.state == LP_STATE_BLOCKED) {
			__u64 end = wake && wake < now ? wake : now;

			if (end - start >= min_block_ns) {
				v->ev.weight_ns = end - start;
				send(v);
			}
			if (runnable_intervals && wake && wake < now) {
				v->ev.state = LP_STATE_RUNNABLE;
				v->ev.time_ns = wake;
				v->ev.weight_ns = now - wake;
				send(v);
			}
		} else if (runnable_intervals) {
			v->ev.weight_ns = now - start;
			send(v);
		}
		bpf_map_delete_elem(&lp_off, &tid);
		bpf_map_delete_elem(&lp_py_off, &tid);
	}

	/* Then the thread going off it. */
	__u32 ptid = prev->pid, ptgid = prev->tgid;
	bool blocked = !preempt && prev_state != 0;

	if (!ptid || (prev_state & LP_TASK_DEAD) || (!blocked && !runnable_intervals))
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&lp_pids, &ptgid))
		return 0;
	if (prev->flags & 0x00200000 /* PF_KTHREAD */ && filter_pids)
		return 0;
	/* prev is still the current task. */
	if (gated_out(ptgid, ptid, bpf_get_current_task_btf(), false))
		return 0;

	/* Its previous interval still kept: it came back onto a CPU without a
	 * switch event naming it.  Seen on 6.18 about once in 500 blocks,
	 * with the wakeup unreported too, by bpftrace on the same tracepoints
	 * as well.  When the wakeup was seen, it ended the blocked part: send
	 * that; otherwise the interval's length is unknown: count it, so the
	 * loss is said, never silent. */
	v = bpf_map_lookup_elem(&lp_off, &ptid);
	if (v) {
		if (v->ev.state == LP_STATE_BLOCKED && v->ev.wake_ns > v->ev.time_ns) {
			if (v->ev.wake_ns - v->ev.time_ns >= min_block_ns) {
				v->ev.weight_ns = v->ev.wake_ns - v->ev.time_ns;
				send(v);
			}
		} else {
			count(LP_CNT_OFF_UNSEEN);
		}
	}

	__u32 cpu = bpf_get_smp_processor_id();
	struct lp_scratch *s = bpf_map_lookup_elem(&lp_scratch, &cpu);
	long n;

	if (!s)
		return 0;
	off_start(&s->ev, prev, now, cpu, blocked);
	if (kernel_stacks) {
		/* Skips the two leaf frames that are the tracing itself (the BPF
		 * program and bpf_trace_run4): the stack ends in __schedule. */
		n = bpf_get_stack(ctx, s->ev.kstack, frames_size(), 2 & BPF_F_SKIP_FIELD_MASK);
		s->ev.kstack_bytes = n;
	}
	if (prev->flags & 0x00200000 /* PF_KTHREAD */) {
		s->ev.flags |= LP_EV_KERNEL_THREAD;
	} else if (user_stacks) {
		n = bpf_get_stack(ctx, s->ev.ustack, frames_size(), BPF_F_USER_STACK);
		s->ev.ustack_bytes = n;
		s->ev.flags |= LP_EV_CHAIN;
		fix_chain_uretprobes(prev, s->ev.ustack, n);
		/* The registers at the system call and the top of the stack,
		 * for the frames the frame-pointer walk skips (profile.h). */
		struct task_struct *cur = bpf_get_current_task_btf();
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
		__u64 sp;

		if (regs) {
			__u64 ip = BPF_CORE_READ(regs, ip), at = ip;

			sp = BPF_CORE_READ(regs, sp);
			/* Preempted in the uprobes page (wall mode). */
			if (fix_uprobe_ip(cur, &ip, &sp)) {
				s->ev.flags |= LP_EV_UPROBES;
				s->ev.uprobes_ip = at;
			}
			s->ev.regs[0] = ip;
			s->ev.regs[1] = sp;
			s->ev.regs[2] = BPF_CORE_READ(regs, bp);
			struct lp_copy_val tc = thread_copy(ptid, off_copy);

			s->ev.stack_want = tc.bytes;
			s->ev.stack_bytes = copy_stack(s->stack, sp, tc.bytes, LP_OFF_STACK_COPY,
						       tc.top);
			s->ev.uretprobes = fix_uretprobes(cur, s->stack, sp, s->ev.stack_bytes,
							  LP_OFF_STACK_COPY);
		}
	}
	if (bpf_map_update_elem(&lp_off, &ptid, s, BPF_ANY)) {
		count(LP_CNT_OFF_FULL);
		return 0;
	}
	/* And its Python frames, when it runs Python (it is still the
	 * current task: its memory is the one read). */
	struct lp_py_event *pe = (prev->flags & 0x00200000 /* PF_KTHREAD */) || !user_stacks ? NULL :
				 py_walk(ptgid, ptid, cpu, now);

	if (pe)
		bpf_map_update_elem(&lp_py_off, &ptid, pe, BPF_ANY);
	else
		bpf_map_delete_elem(&lp_py_off, &ptid);
	return 0;
}

/* A blocked target thread is woken: from here it waits for a CPU. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(lp_rec_wakeup, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct lp_off_sample *v = bpf_map_lookup_elem(&lp_off, &tid);

	if (v && v->ev.state == LP_STATE_BLOCKED && !v->ev.wake_ns)
		v->ev.wake_ns = bpf_ktime_get_ns();
	return 0;
}

/* --mode off and wall, once at the start: target threads already off the
 * CPU get the interval a switch-out would have given them, so a thread
 * asleep since before the recording (a worker waiting on a queue, a lock
 * held for seconds) is seen from the start, and all along if it never
 * wakes.  Sleepable, to read another process's stack; a task iterator
 * visits every thread.  Its stacks: the kernel's as the scheduler left it,
 * the user's walked by frame pointers from the registers saved at the
 * system call, and the top of it copied, as lp_rec_switch does. */
SEC("iter.s/task")
int lp_rec_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (!task)
		return 0;
	__u32 tid = task->pid, tgid = task->tgid;
	bool blocked = task->__state != 0;

	if (!tid || task->on_cpu || (task->__state & LP_TASK_DEAD) ||
	    (!blocked && !runnable_intervals))
		return 0;
	if (filter_pids && (!bpf_map_lookup_elem(&lp_pids, &tgid) ||
			    task->flags & 0x00200000 /* PF_KTHREAD */))
		return 0;
	if (gated_out(tgid, tid, task, true))
		return 0;
	/* Its own slot past the CPUs': this program may sleep, and the
	 * switch handler of its CPU then runs with that CPU's slot. */
	__u32 slot = seed_slot;
	struct lp_scratch *s = bpf_map_lookup_elem(&lp_scratch, &slot);

	if (!s)
		return 0;
	off_start(&s->ev, task, bpf_ktime_get_ns(), task->thread_info.cpu, blocked);
	if (kernel_stacks)
		s->ev.kstack_bytes = bpf_get_task_stack(task, s->ev.kstack, frames_size(), 0);
	if (task->flags & 0x00200000 /* PF_KTHREAD */) {
		s->ev.flags |= LP_EV_KERNEL_THREAD;
	} else if (user_stacks) {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

		if (!regs)
			goto out;
		__u64 ip = regs->ip, sp = regs->sp, bp = regs->bp;

		s->ev.regs[0] = ip;
		s->ev.regs[1] = sp;
		s->ev.regs[2] = bp;
		/* What bpf_get_stack gives for the current task, which it
		 * will not do for another: the ip, then each frame's return
		 * address, following the saved frame pointers. */
		s->ev.ustack[0] = ip;
		__u32 n = 1;

		for (int i = 1; i < LP_MAX_STACK_DEPTH; i++) {
			__u64 frame[2];

			if (i >= stack_depth || !bp || bp & 7 ||
			    bpf_copy_from_user_task(frame, sizeof(frame), (void *)bp, task, 0) ||
			    !frame[1])
				break;
			s->ev.ustack[i] = frame[1];
			n = i + 1;
			if (frame[0] <= bp)	/* frames go up the stack */
				break;
			bp = frame[0];
		}
		s->ev.ustack_bytes = n * sizeof(__u64);
		s->ev.flags |= LP_EV_CHAIN;
		s->ev.stack_want = thread_copy(tid, off_copy).bytes;
		for (int i = 0; i < LP_OFF_STACK_COPY / LP_STACK_CHUNK; i++) {
			if (s->ev.stack_bytes >= s->ev.stack_want ||
			    bpf_copy_from_user_task(s->stack + i * LP_STACK_CHUNK, LP_STACK_CHUNK,
						    (void *)(sp + i * LP_STACK_CHUNK), task, 0))
				break;
			s->ev.stack_bytes += LP_STACK_CHUNK;
		}
		s->ev.uretprobes = fix_uretprobes(task, s->stack, sp, s->ev.stack_bytes,
						  LP_OFF_STACK_COPY);
	}
out:;
	/* A thread that switched out since the switch handler was attached
	 * has its own entry, which stays. */
	long err = bpf_map_update_elem(&lp_off, &tid, s, BPF_NOEXIST);

	if (err && err != -17 /* EEXIST */)
		count(LP_CNT_OFF_FULL);
	return 0;
}
