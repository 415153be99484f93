// SPDX-License-Identifier: GPL-2.0
/* trace.bpf.c - lp-trace's kernel side: uprobe/uretprobe pairs as spans with
 * a per-thread stack of open calls, point events at any address, system
 * calls as spans, tracepoint records copied raw for libtraceevent; and
 * python:NAME probes, in trace-python.bpf.h.
 *
 * One program of each kind, attached once per probe with the probe's index
 * as the BPF cookie; the index selects the probe's settings in "probes". */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "trace.h"
#include "pidset.bpf.h"
#include "stacks.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Calls shorter than this produce no span (funcslower's filter). */
const volatile __u64 min_duration_ns = 0;
/* Wake the reader only once this much is waiting: a wakeup per record
 * (an irq_work) costs more than the rest of a return probe.  The reader
 * also drains on a timer, so nothing waits longer than its poll period. */
const volatile __u64 wakeup_bytes = 0;
/* Set by the tracer when it stops: every program returns at once, so the
 * open calls it then reads are those of the moment it stopped, neither
 * popped nor pushed while the probes are being detached. */
volatile __u32 stopped = 0;

/* For lp's tests (LP_TRACE_DEAR_TRAP_NS, lib/capture/trace/tracer.c): every hit
 * that came through a breakpoint (an int3 at the probed instruction: not
 * an optimised nop's or a uretprobe's system call) spins this long, half
 * before the program's work and half after, as on a machine whose
 * exceptions are that much dearer (a virtual machine whose host handles
 * them): lp's own-cost measurement is tested against that case anywhere.
 * 0: nothing, and the verifier drops the code. */
const volatile __u64 dear_trap_ns = 0;

static long dear_spin(__u64 i, void *end)
{
	return bpf_ktime_get_ns() >= *(__u64 *)end;
}

static __always_inline void dear_trap(struct pt_regs *ctx)
{
	unsigned char insn = 0;
	if (!dear_trap_ns || bpf_probe_read_user(&insn, 1, (void *)ctx->ip) || insn != 0xcc)
		return;
	__u64 end = bpf_ktime_get_ns() + dear_trap_ns / 2;
	bpf_loop(1 << 20, dear_spin, &end, 0);
}

/* A uprobe program: body between the two halves of dear_trap. */
#define DEAR_TRAP_PROG(name, body)					\
	int name(struct pt_regs *ctx)					\
	{								\
		dear_trap(ctx);						\
		int r = body(ctx);					\
		dear_trap(ctx);						\
		return r;						\
	}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);	/* set by user space */
} events SEC(".maps");

static __always_inline void submit(void *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_TRACE_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct lp_trace_probe);
} probes SEC(".maps");

/* Open calls per thread (stacks.bpf.h).  Entries stay when a thread's
 * depth returns to zero, so a steady state does no allocation. */
LP_OPEN_CALLS_MAP(stacks);

/* Open USDT pairs per thread (LP_PROBE_F_OPEN): kept apart from "stacks",
 * whose frames are matched by stack pointer, which a pair's halves (in
 * one interpreter loop, say) need not differ by.  Only ts, lp0, probe,
 * vals and strs of a frame are used.  Key: a thread id. */
LP_OPEN_CALLS_MAP(ustacks);

/* A USDT hit's values, read before the event they go in is known (too
 * large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_trace_event_strs);
} uvals SEC(".maps");

/* A zeroed stack to insert from (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_trace_stack);
} zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct lp_trace_sysin);
} sysin SEC(".maps");

/* Traced processes (syscalls and tracepoints are system-wide otherwise):
 * the targets and their followed children (pidset.bpf.h); max_entries is
 * --max-pids, set by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

/* Syscall number -> 1 + probe index, 0 when not traced. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_TRACE_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, __u32);
} sysnrs SEC(".maps");

#define LP_COUNTERS_N LP_NCOUNTERS
#include "counters.bpf.h"

/* A record of size bytes in the ring, or NULL with the loss counted (a
 * lost record of user space's, "ring"). */
static __always_inline void *reserve(__u64 size)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec)
		count(LP_LOST_RING);
	return rec;
}

static __always_inline int traced(__u64 pt)
{
	__u32 tgid = pt >> 32;
	return bpf_map_lookup_elem(&tgids, &tgid) != 0;
}

/* A probe attached for every process mapping its file: is this hit one of
 * the traced processes'?  Children are in the set from their fork on
 * (lp_fork, run in the parent before the child runs): they are traced from
 * their first instruction. */
static __always_inline int foreign(const struct lp_trace_probe *p, __u64 pt)
{
	return (p->flags & LP_PROBE_F_FILTER) && !traced(pt);
}

/* The registers in DWARF x86-64 numbering.  Copied out of the context one
 * by one: the verifier refuses a load through a computed context pointer,
 * which is what a switch over the fields compiles to. */
struct regs {
	__u64 r[17];
};

static __always_inline void snapshot(struct pt_regs *c, struct regs *r)
{
	r->r[0] = c->ax;
	r->r[1] = c->dx;
	r->r[2] = c->cx;
	r->r[3] = c->bx;
	r->r[4] = c->si;
	r->r[5] = c->di;
	r->r[6] = c->bp;
	r->r[7] = c->sp;
	r->r[8] = c->r8;
	r->r[9] = c->r9;
	r->r[10] = c->r10;
	r->r[11] = c->r11;
	r->r[12] = c->r12;
	r->r[13] = c->r13;
	r->r[14] = c->r14;
	r->r[15] = c->r15;
	r->r[16] = c->ip;
}

static __always_inline __u64 reg_value(const struct regs *r, unsigned int n)
{
	if (n > 16)
		return 0;
	return r->r[n];
}

/* The C string v points to, into string slot `slot` (1 or 2; else none):
 * a string on a page not faulted in yet cannot be read from here, and the
 * slot's last byte says so (a read string ends earlier). */
static __always_inline void read_str(char (*strs)[LP_TRACE_STR_MAX], unsigned char slot, __u64 v)
{
	if (slot != 1 && slot != 2)
		return;
	char *dst = strs[(slot - 1) & 1];
	long r = bpf_probe_read_user_str(dst, LP_TRACE_STR_MAX, (void *)v);
	if (r < 0)
		dst[LP_TRACE_STR_MAX - 1] = 1;
	else if (r < LP_TRACE_STR_MAX)
		dst[LP_TRACE_STR_MAX - 1] = 0;
}

/* size (1, 2, 4, else 8) bytes of user memory at a; 0 when unreadable. */
static __always_inline __u64 read_value(__u64 a, unsigned int size)
{
	__u64 v = 0;
	if (size == 1)
		bpf_probe_read_user(&v, 1, (void *)a);
	else if (size == 2)
		bpf_probe_read_user(&v, 2, (void *)a);
	else if (size == 4)
		bpf_probe_read_user(&v, 4, (void *)a);
	else
		bpf_probe_read_user(&v, 8, (void *)a);
	return v;
}

static __always_inline void capture(struct pt_regs *ctx, const struct lp_trace_probe *p,
				    __u64 *vals, char (*strs)[LP_TRACE_STR_MAX])
{
	unsigned int n = p->ncaps;
	struct regs regs;
	snapshot(ctx, &regs);
	for (unsigned int i = 0; i < LP_TRACE_MAX_CAPS; i++) {
		if (i >= n)
			break;
		const struct lp_trace_cap *c = &p->caps[i];
		__u64 v = 0, base;
		if (c->reg == LP_REG_NONE)
			base = regs.r[16] - p->vaddr;	/* the load bias */
		else if (c->reg == LP_REG_CFA)
			base = reg_value(&regs, p->cfa_reg) + p->cfa_off;
		else
			base = reg_value(&regs, c->reg);
		unsigned int nderef = c->nderef;
		if (c->kind == LP_CAP_REG)
			v = base;
		else
			v = read_value(base + c->off, nderef ? 8 : c->size);
		for (unsigned int k = 0; k < LP_CAP_MAX_DEREF; k++) {
			if (k >= nderef)
				break;
			/* A null pointer on the way: the value is 0, not
			 * what lies at a small address. */
			v = v ? read_value(v + c->deref[k], k + 1 < nderef ? 8 : c->size) : 0;
		}
		vals[i] = v;
		read_str(strs, c->str, v);
	}
}

/* Where a probe's open calls are kept, and where in that stack the probe
 * hit is: the thread and its stack pointer, or for Go the goroutine (r14)
 * and the stack pointer's distance from its stack's top (LP_PROBE_F_GO). */
static __always_inline int stack_key(struct pt_regs *ctx, const struct lp_trace_probe *p, __u32 tid,
				     __u64 sp, __u64 *key, __u64 *pos)
{
	if (!(p->flags & LP_PROBE_F_GO)) {
		*key = tid;
		*pos = sp;
		return 0;
	}
	__u64 g = ctx->r14, hi = 0;
	if (!g || bpf_probe_read_user(&hi, sizeof(hi), (void *)(g + LP_G_STACK_HI)) < 0 || hi < sp)
		return -1;
	*key = g | LP_KEY_G;
	*pos = sp - hi + LP_GO_POS_BASE;
	return 0;
}

/* Writes the span of frame f ended at end: how (depth | LP_SPAN_F_* << 16),
 * acc the stack's lp_ns before this hit's own cost plus the part of that
 * cost inside the span (five arguments at most). */
static __noinline int emit_span(struct lp_trace_frame *f, __u32 how, __u64 end, __u64 acc,
				__u64 ret)
{
	if (!f)
		return 0;
	__u32 depth = how & 0xffff, flags = how >> 16;
	__u32 id = f->probe;
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	if (!p)
		return 0;
	if ((end - f->ts < min_duration_ns && !(p->flags & LP_PROBE_F_CAL)) ||
	    (p->flags & LP_PROBE_F_GATE))
		return 0;
	__u64 lp_ns = acc - f->lp0 + p->hit_inside_ns;
	struct lp_trace_event *ev;
	int strs = 0;
	for (unsigned int i = 0; i < LP_TRACE_MAX_CAPS; i++)
		if (i < p->ncaps && p->caps[i].str)
			strs = 1;
	if (strs) {
		struct lp_trace_event_strs *es = reserve(sizeof(*es));
		if (!es)
			return 0;
		__builtin_memcpy(es->strs, f->strs, sizeof(es->strs));
		ev = &es->ev;
	} else {
		ev = reserve(sizeof(*ev));
		if (!ev)
			return 0;
	}
	__u64 pt = bpf_get_current_pid_tgid();
	ev->type = LP_EV_SPAN;
	ev->probe = id;
	ev->pid = pt >> 32;
	ev->tid = (__u32)pt;
	ev->start = f->ts;
	ev->end = end;
	ev->depth = depth;
	ev->size = 0;
	ev->ret = ret;
	ev->lp_ns = lp_ns;
	ev->flags = flags;
	ev->pad = 0;
	__builtin_memcpy(ev->vals, f->vals, sizeof(ev->vals));
	submit(ev);
	return 0;
}

/* Pops the open calls of st left without returning, as spans ended now
 * and marked unwound: those below pos (deeper), and those at pos too when
 * at is UNWIND_AT, or when at is UNWIND_AT_RET and their return address is
 * ret.  Returns the new depth. */
enum { UNWIND_BELOW, UNWIND_AT, UNWIND_AT_RET };

static __noinline __u32 unwind_below(struct lp_trace_stack *st, __u64 pos, __u64 ret, int at,
				     __u64 now)
{
	if (!st)
		return 0;
	__u32 d = st->depth;
	for (int i = 0; i < LP_TRACE_MAX_DEPTH; i++) {
		if (d == 0 || d > LP_TRACE_MAX_DEPTH)
			break;
		struct lp_trace_frame *top = &st->frames[(d - 1) & (LP_TRACE_MAX_DEPTH - 1)];
		if (top->sp > pos)
			break;
		if (top->sp == pos && !(at == UNWIND_AT || (at == UNWIND_AT_RET && top->ret == ret)))
			break;
		d--;
		emit_span(top, d | LP_SPAN_F_UNWOUND << 16, now, st->lp_ns, 0);
	}
	st->depth = d;
	return d;
}

/* The stack of key in map (stacks or ustacks), a zeroed one made when there
 * is none yet (its tgid 0: the caller's check of tgid sets it); NULL when
 * there is no room, counted. */
static __always_inline struct lp_trace_stack *get_stack(void *map, __u64 *key)
{
	struct lp_trace_stack *st = bpf_map_lookup_elem(map, key);
	if (st)
		return st;
	__u32 k = 0;
	struct lp_trace_stack *z = bpf_map_lookup_elem(&zero, &k);
	if (!z)
		return NULL;
	bpf_map_update_elem(map, key, z, BPF_NOEXIST);
	st = bpf_map_lookup_elem(map, key);
	if (!st)
		count(LP_LOST_STACKS);
	return st;
}

/* What this hit's program ran (from t0 to now) beyond the calibration's
 * mean run of it (prog_ns; less when it ran shorter, never below the
 * hit's calibrated full cost `full`): added to its thread's total, so
 * that the spans around it count the program as it ran in this target.
 * A calibration probe sums its run times instead. */
static __always_inline __s64 prog_extra(struct lp_trace_probe *p, int half, __u64 t0, __u64 now,
					__u32 full)
{
	__u64 ran = now - t0;
	if (p->flags & LP_PROBE_F_CAL) {
		__sync_fetch_and_add(&p->prog_sum[half & 1], ran < LP_PROG_CAP_NS ? ran : LP_PROG_CAP_NS);
		__sync_fetch_and_add(&p->prog_runs[half & 1], 1);
		return 0;
	}
	__u32 cal = p->prog_ns[half & 1];
	if (!cal)
		return 0;
	__s64 extra = (__s64)ran - (__s64)cal;
	return extra < -(__s64)full ? -(__s64)full : extra;
}

/* An entry: 1 when it pushed a frame for its return to pop. */
static __always_inline int entry_push(struct pt_regs *ctx)
{
	if (stopped)
		return 0;
	__u64 t0 = bpf_ktime_get_ns();
	__u32 id = bpf_get_attach_cookie(ctx);
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	if (!p)
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	if (foreign(p, pt))
		return 0;
	__u32 tid = (__u32)pt, tgid = pt >> 32;
	__u64 key, pos;
	if (stack_key(ctx, p, tid, ctx->sp, &key, &pos) < 0)
		return 0;
	struct lp_trace_stack *st = get_stack(&stacks, &key);
	if (!st)
		return 0;
	if (st->tgid != tgid) {	/* a thread id reused by another process */
		st->tgid = tgid;
		st->depth = 0;
	}
	st->tid = tid;
	/* This hit's cost, even when it pushes nothing (too deep). */
	st->lp_ns += p->hit_ns;
	/* The stack grows down: a recorded call below this entry's stack
	 * pointer has returned without its return probe firing (longjmp, an
	 * exception, a uretprobe the kernel did not install), and so has one
	 * at the same stack pointer and return address: each is a span
	 * marked unwound, ended now.  A tail call has the same stack pointer
	 * too, but under a uretprobe its return address is already the
	 * kernel's return trampoline: that frame stays (with return
	 * instructions probed, the jmp ended it).  In Go, the same call at
	 * the same place is the function starting over after its stack grew
	 * (morestack): the call goes on. */
	__u64 ret = 0;
	bpf_probe_read_user(&ret, sizeof(ret), (void *)ctx->sp);
	__u32 d = st->depth;
	if (d > 0 && d <= LP_TRACE_MAX_DEPTH) {
		struct lp_trace_frame *top = &st->frames[(d - 1) & (LP_TRACE_MAX_DEPTH - 1)];
		if ((p->flags & LP_PROBE_F_GO) && top->sp == pos && top->ret == ret && top->probe == id)
			return 0;
		d = unwind_below(st, pos, ret, UNWIND_AT_RET, bpf_ktime_get_ns());
	}
	if (d >= LP_TRACE_MAX_DEPTH) {
		count(LP_LOST_DEPTH);
		return 0;
	}
	struct lp_trace_frame *f = &st->frames[d & (LP_TRACE_MAX_DEPTH - 1)];
	f->sp = pos;
	f->ret = ret;
	f->probe = id;
	f->lp0 = st->lp_ns;
	if (p->ncaps)
		capture(ctx, p, f->vals, f->strs);
	st->depth = d + 1;
	/* Last, so the capture's cost is not in the span; the program's
	 * run is the enclosing spans', not this one's. */
	__u64 now = bpf_ktime_get_ns();
	__s64 extra = prog_extra(p, 0, t0, now, p->hit_ns);
	st->lp_ns += extra;
	f->lp0 += extra;
	f->ts = now;
	return 1;
}

/* A uprobe program's return value is the kernel's to read (a uprobe-multi
 * link's 1, before Linux 6.13, takes the breakpoint out of the process):
 * 0 always. */
static __always_inline int entry_hit(struct pt_regs *ctx)
{
	entry_push(ctx);
	return 0;
}

SEC("uprobe")
DEAR_TRAP_PROG(lp_entry, entry_hit)

/* Whether a jcc of condition cc (the low nibble of its opcode) jumps,
 * given eflags. */
static __always_inline int cc_taken(__u64 fl, unsigned int cc)
{
	int cf = fl & 1, pf = (fl >> 2) & 1, zf = (fl >> 6) & 1, sf = (fl >> 7) & 1,
	    of = (fl >> 11) & 1, t;
	switch (cc >> 1) {
	case 0: t = of; break;
	case 1: t = cf; break;
	case 2: t = zf; break;
	case 3: t = cf | zf; break;
	case 4: t = sf; break;
	case 5: t = pf; break;
	case 6: t = sf != of; break;
	default: t = zf | (sf != of); break;
	}
	return t ^ (cc & 1);
}

/* A return: a uretprobe, or a uprobe on an instruction that leaves the
 * function (the cookie says which, LP_RET_COOKIE). */
static __always_inline int return_hit(struct pt_regs *ctx)
{
	if (stopped)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 id = cookie & 0xffff, kind = (cookie >> 16) & 0xf;
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	if (!p)
		return 0;
	if (kind == LP_RET_TAIL_REG) {
		/* jmp *reg: a tail call only when it leaves the function (a
		 * switch's jump table stays in it). */
		struct regs regs;
		snapshot(ctx, &regs);
		__u64 bias = ctx->ip - (p->func_lo + (cookie >> 32));
		__u64 to = reg_value(&regs, (cookie >> 20) & 0xff) - bias;
		if (to >= p->func_lo && to < p->func_hi)
			return 0;
	}
	if (kind == LP_RET_TAIL_CC && !cc_taken(ctx->flags, (cookie >> 20) & 0xf))
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	if (foreign(p, pt))
		return 0;
	__u32 tid = (__u32)pt;
	/* A uretprobe fires after `ret` popped the return address the entry
	 * saw at the stack top; a probed ret or jmp before. */
	__u64 key, sp = kind == LP_RET_URETPROBE ? ctx->sp - 8 : ctx->sp;
	if (stack_key(ctx, p, tid, sp, &key, &sp) < 0)
		return 0;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&stacks, &key);
	if (!st)
		return 0;
	/* lp's cost inside the span: the nested hits in full (the growth of
	 * the thread's total since this call's entry), and the parts of its
	 * own entry and return that fall between its two timestamps. */
	__u64 acc = st->lp_ns;
	st->lp_ns = acc + p->ret_ns;
	/* Deeper calls that never returned (longjmp, an exception, a
	 * uretprobe the kernel did not install) are spans marked unwound. */
	__u32 d = unwind_below(st, sp, 0, UNWIND_BELOW, now);
	if (d == 0 || d > LP_TRACE_MAX_DEPTH)
		return 0;
	struct lp_trace_frame *f = &st->frames[(d - 1) & (LP_TRACE_MAX_DEPTH - 1)];
	/* An outer call: this return's entry was never pushed. */
	if (f->sp != sp || f->probe != id)
		return 0;
	st->depth = d - 1;
	__u32 flags = kind >= LP_RET_TAIL ? LP_SPAN_F_TAIL : 0;
	emit_span(f, (d - 1) | flags << 16, now, acc + p->ret_inside_ns, ctx->ax);
	/* After the span's end: the enclosing spans' */
	st->lp_ns += prog_extra(p, 1, now, bpf_ktime_get_ns(), p->ret_ns);
	return 0;
}

SEC("uprobe")
DEAR_TRAP_PROG(lp_return, return_hit)

/* Returns armed per call (a uprobe session, Linux 6.13): for a function
 * whose program may load a library that throws through a uretprobe
 * (dlopen; lib/capture/trace/dlgate.c).  Until such a library is loaded, each
 * call gets a uretprobe (the session's return, as cheap); once the program
 * has loaded one, none does (an exception could cross it) and the
 * tracer probes the function's return instructions instead (dl_insn).
 * dl_gen counts the libraries the traced processes loaded or unloaded
 * (lp_dl, synchronously: before the library's code can run); dl_ok is
 * the count up to which the tracer has read them all and found none that
 * can throw.  While they differ, calls are not traced (counted): the
 * tracer reads a new library within milliseconds. */
extern bool bpf_session_is_return(void) __ksym __weak;
volatile __u64 dl_gen = 0, dl_ok = 0;
volatile __u32 dl_insn = 0, dl_unseen = 0;

/* The session program's entry returns 0 to have its return run, else 1. */
static __always_inline int session_hit(struct pt_regs *ctx)
{
	if (bpf_session_is_return()) {
		return_hit(ctx);	/* its cookie's kind: LP_RET_URETPROBE */
		return 0;
	}
	if (dl_gen == dl_ok)
		return entry_push(ctx) ? 0 : 1;
	if (dl_insn) {
		entry_push(ctx);
		return 1;
	}
	__u32 id = bpf_get_attach_cookie(ctx);
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	if (p && !stopped && !foreign(p, bpf_get_current_pid_tgid()))
		count(LP_LOST_UNCHECKED);
	return 1;
}

SEC("uprobe")
DEAR_TRAP_PROG(lp_session, session_hit)


/* C++ catches an exception (__cxa_begin_catch, called from the catching
 * frame's landing pad): the traced calls below the catcher were left by
 * it, and end here. */
SEC("uprobe")
int lp_catch(struct pt_regs *ctx)
{
	if (stopped)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 key = (__u32)bpf_get_current_pid_tgid();
	struct lp_trace_stack *st = bpf_map_lookup_elem(&stacks, &key);
	if (!st || !st->depth)
		return 0;
	/* The catcher's own frame is above its call of __cxa_begin_catch:
	 * its stack pointer there is the one the calls it made saw. */
	unwind_below(st, ctx->sp, 0, UNWIND_AT, now);
	return 0;
}

/* A point event's fields but its values. */
static __always_inline void point_event(struct lp_trace_event *ev, __u32 id, __u64 pt, __u64 now)
{
	ev->type = LP_EV_POINT;
	ev->probe = id;
	ev->pid = pt >> 32;
	ev->tid = (__u32)pt;
	ev->start = ev->end = now;
	ev->depth = 0;
	ev->size = 0;
	ev->ret = 0;
	ev->lp_ns = 0;
	ev->flags = ev->pad = 0;
}

/* ld.so's _dl_debug_state, called when a library is about to be mapped
 * and again once it is (before its initialisers run), and as much when
 * one is unloaded: the next sessions arm no uretprobe until the tracer
 * has read it.  The record first, then the count: a count the tracer
 * reads has its record in the ring already (or dl_unseen says it was
 * lost). */
SEC("uprobe")
int lp_dl(struct pt_regs *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid();
	if (stopped || !traced(pt))
		return 0;
	struct lp_trace_event *ev = reserve(sizeof(*ev));
	if (ev) {
		point_event(ev, bpf_get_attach_cookie(ctx), pt, bpf_ktime_get_ns());
		ev->type = LP_EV_DL;
		__builtin_memset(ev->vals, 0, sizeof(ev->vals));
		bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	} else {
		dl_unseen = 1;
	}
	__sync_fetch_and_add(&dl_gen, 1);
	return 0;
}

static __always_inline int point_hit(struct pt_regs *ctx)
{
	if (stopped)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 id = bpf_get_attach_cookie(ctx);
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	if (!p)
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	if (foreign(p, pt))
		return 0;
	/* Its cost, for the spans open on this thread (none: no stack). */
	__u64 tid = (__u32)pt;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&stacks, &tid);
	if (st)
		st->lp_ns += p->hit_ns;
	struct lp_trace_event_strs *es = reserve(sizeof(*es));
	if (!es)
		return 0;
	struct lp_trace_event *ev = &es->ev;
	point_event(ev, id, pt, now);
	__builtin_memset(ev->vals, 0, sizeof(ev->vals));
	__builtin_memset(es->strs, 0, sizeof(es->strs));
	capture(ctx, p, ev->vals, es->strs);
	submit(es);
	__s64 extra = prog_extra(p, 0, now, bpf_ktime_get_ns(), p->hit_ns);
	if (st)
		st->lp_ns += extra;
	return 0;
}

SEC("uprobe")
DEAR_TRAP_PROG(lp_point, point_hit)

/* A USDT pair's first half: a frame on this thread's open pairs.  Their
 * stack's lp_ns counts the USDT hits alone (hit_ns each, this one's before
 * its frame's lp0: a pair's own halves are outside its lp_ns). */
static __noinline int usdt_open(__u32 id, __u64 pt, const struct lp_trace_event_strs *vals, __u64 hit_ns)
{
	__u64 key = (__u32)pt;
	struct lp_trace_stack *st = get_stack(&ustacks, &key);
	if (!st)
		return 0;
	if (st->tgid != pt >> 32) {	/* a thread id reused by another process */
		st->tgid = pt >> 32;
		st->depth = 0;
	}
	st->lp_ns += hit_ns;
	__u32 d = st->depth;
	if (d >= LP_TRACE_MAX_DEPTH) {
		count(LP_LOST_DEPTH);
		return 0;
	}
	struct lp_trace_frame *f = &st->frames[d & (LP_TRACE_MAX_DEPTH - 1)];
	f->probe = id;
	f->lp0 = st->lp_ns;
	__builtin_memcpy(f->vals, vals->ev.vals, sizeof(f->vals));
	__builtin_memcpy(f->strs, vals->strs, sizeof(f->strs));
	st->depth = d + 1;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

/* A USDT pair's second half: the span of this thread's innermost open pair
 * when it is the first half's (open: its id); else its first half was
 * before the probes were attached, and nothing is open for it. */
static __noinline int usdt_close(__u32 open, __u64 pt, __u64 now, __u64 hit_ns)
{
	__u64 key = (__u32)pt;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&ustacks, &key);
	if (!st || st->tgid != pt >> 32)
		return 0;
	__u64 lp_ns = st->lp_ns;
	st->lp_ns = lp_ns + hit_ns;
	__u32 d = st->depth;
	if (d == 0 || d > LP_TRACE_MAX_DEPTH)
		return 0;
	struct lp_trace_frame *f = &st->frames[(d - 1) & (LP_TRACE_MAX_DEPTH - 1)];
	if (f->probe != open)
		return 0;
	st->depth = d - 1;
	if (now - f->ts < min_duration_ns)
		return 0;
	struct lp_trace_event_strs *es = reserve(sizeof(*es));
	if (!es)
		return 0;
	struct lp_trace_event *ev = &es->ev;
	point_event(ev, open, pt, now);
	ev->type = LP_EV_SPAN;
	ev->start = f->ts;
	ev->depth = d - 1;
	ev->lp_ns = lp_ns - f->lp0;
	__builtin_memcpy(ev->vals, f->vals, sizeof(ev->vals));
	__builtin_memcpy(es->strs, f->strs, sizeof(es->strs));
	submit(es);
	return 0;
}

/* A USDT probe (libbpf's usdt: it decodes the argument spec and sets the
 * semaphore).  lp's probe id is the USDT cookie (libbpf keeps the BPF
 * cookie for its own spec id).  Attached per process, never for every one. */
static __always_inline int usdt_hit(struct pt_regs *ctx)
{
	if (stopped)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 id = (__u32)bpf_usdt_cookie(ctx);
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	if (!p)
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	/* Its cost, for the function spans open on this thread. */
	__u64 tid = (__u32)pt;
	struct lp_trace_stack *fst = bpf_map_lookup_elem(&stacks, &tid);
	if (fst)
		fst->lp_ns += p->hit_ns;
	if (p->flags & LP_PROBE_F_CLOSE)
		return usdt_close(id - 1, pt, now, p->hit_ns);
	__u32 zero_key = 0;
	struct lp_trace_event_strs *uv = bpf_map_lookup_elem(&uvals, &zero_key);
	if (!uv)
		return 0;
	/* The arguments asked for (caps[i].off: which), C strings read
	 * into their slots as a function's are. */
	__builtin_memset(uv, 0, sizeof(*uv));
	unsigned int n = p->ncaps;
	for (unsigned int i = 0; i < LP_TRACE_MAX_CAPS; i++) {
		if (i >= n)
			break;
		long v = 0;
		if (bpf_usdt_arg(ctx, (__u64)p->caps[i].off, &v) < 0)
			v = 0;
		uv->ev.vals[i] = (__u64)v;
		read_str(uv->strs, p->caps[i].str, (__u64)v);
	}
	if (p->flags & LP_PROBE_F_OPEN)
		return usdt_open(id, pt, uv, p->hit_ns);
	struct lp_trace_stack *ust = bpf_map_lookup_elem(&ustacks, &tid);
	if (ust && ust->tgid == pt >> 32)
		ust->lp_ns += p->hit_ns;
	struct lp_trace_event_strs *es = reserve(sizeof(*es));
	if (!es)
		return 0;
	point_event(&es->ev, id, pt, now);
	__builtin_memcpy(es->ev.vals, uv->ev.vals, sizeof(es->ev.vals));
	__builtin_memcpy(es->strs, uv->strs, sizeof(es->strs));
	submit(es);
	return 0;
}

SEC("usdt")
DEAR_TRAP_PROG(lp_usdt, usdt_hit)

SEC("raw_tp/sys_enter")
int lp_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	if (stopped)
		return 0;
	__u64 pt = bpf_get_current_pid_tgid();
	if (!traced(pt))
		return 0;
	long nr = (long)ctx->args[1];
	__u32 k = (__u32)nr;
	if (nr < 0 || nr >= LP_TRACE_MAX_SYSCALLS)
		return 0;
	__u32 *idx = bpf_map_lookup_elem(&sysnrs, &k);
	if (!idx || !*idx)
		return 0;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	struct lp_trace_sysin in = {};
	in.nr = nr;
	in.tgid = pt >> 32;
	in.probe = *idx - 1;
	/* The system call ABI: rdi rsi rdx r10 r8 r9. */
	in.args[0] = BPF_CORE_READ(regs, di);
	in.args[1] = BPF_CORE_READ(regs, si);
	in.args[2] = BPF_CORE_READ(regs, dx);
	in.args[3] = BPF_CORE_READ(regs, r10);
	in.args[4] = BPF_CORE_READ(regs, r8);
	in.args[5] = BPF_CORE_READ(regs, r9);
	__u32 tid = (__u32)pt;
	in.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&sysin, &tid, &in, BPF_ANY);
	return 0;
}

SEC("raw_tp/sys_exit")
int lp_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	if (stopped)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt;
	struct lp_trace_sysin *in = bpf_map_lookup_elem(&sysin, &tid);
	if (!in)
		return 0;
	struct lp_trace_sysin copy = *in;
	bpf_map_delete_elem(&sysin, &tid);
	if (now - copy.ts < min_duration_ns)
		return 0;
	__u32 k = (__u32)copy.nr;
	__u32 *idx = bpf_map_lookup_elem(&sysnrs, &k);
	if (!idx || !*idx)
		return 0;
	struct lp_trace_event *ev = reserve(sizeof(*ev));
	if (!ev)
		return 0;
	ev->type = LP_EV_SYSCALL;
	ev->probe = *idx - 1;
	ev->pid = pt >> 32;
	ev->tid = tid;
	ev->start = copy.ts;
	ev->end = now;
	ev->depth = 0;
	ev->size = 0;
	ev->ret = (__u64)ctx->args[1];
	ev->lp_ns = 0;
	ev->flags = ev->pad = 0;
	for (int i = 0; i < 6; i++)
		ev->vals[i] = copy.args[i];
	submit(ev);
	return 0;
}

SEC("tracepoint")
int lp_tp(void *ctx)
{
	if (stopped)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 pt = bpf_get_current_pid_tgid();
	if (!traced(pt))
		return 0;
	__u32 id = bpf_get_attach_cookie(ctx);
	struct lp_trace_probe *p = bpf_map_lookup_elem(&probes, &id);
	if (!p)
		return 0;
	/* Its cost, for the spans open on this thread. */
	__u64 tid = (__u32)pt;
	struct lp_trace_stack *st = bpf_map_lookup_elem(&stacks, &tid);
	if (st)
		st->lp_ns += p->hit_ns;
	struct lp_trace_event_tp *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->ev.type = LP_EV_TP;
	e->ev.probe = id;
	e->ev.pid = pt >> 32;
	e->ev.tid = (__u32)pt;
	e->ev.start = e->ev.end = now;
	e->ev.depth = 0;
	e->ev.ret = 0;
	e->ev.lp_ns = 0;
	e->ev.flags = e->ev.pad = 0;
	__builtin_memset(e->ev.vals, 0, sizeof(e->ev.vals));
	__u32 size = p->tp_size;
	if (size > LP_TRACE_TP_MAX)
		size = LP_TRACE_TP_MAX;
	e->ev.size = size;
	if (bpf_probe_read_kernel(e->data, size, ctx) < 0)
		e->ev.size = 0;
	submit(e);
	__s64 extra = prog_extra(p, 0, now, bpf_ktime_get_ns(), p->hit_ns);
	if (st)
		st->lp_ns += extra;
	return 0;
}

/* A traced process forked: the child is in the set before it runs (this
 * runs in the parent, inside fork), so the probes attached once for every
 * process (LP_PROBE_F_FILTER) see its first call, and so do the syscall and
 * tracepoint programs (those in files others map follow it in the kernel:
 * perf events inherited, lib/capture/trace/tracer-tfs.c); user space is told, to
 * give those to a child forked before its parent had them. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lp_fork, struct task_struct *parent, struct task_struct *child)
{
	if (stopped)
		return 0;
	int added = lp_pidset_fork(&tgids, parent, child);

	if (added < 0)
		count(LP_LOST_CHILDREN);
	if (added <= 0)
		return 0;
	struct lp_trace_event *ev = reserve(sizeof(*ev));
	if (!ev)
		return 0;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = LP_EV_FORKED;
	ev->pid = child->tgid;
	ev->tid = parent->tgid;
	ev->start = ev->end = bpf_ktime_get_ns();
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* A traced process's last thread exits: its pid leaves the filter, so the
 * kernel may give it to another process (pidset.bpf.h), and user space is
 * told, to forget it.  No record
 * when the ring is full: user space also looks for exited processes now
 * and then (lib/capture/trace/tracer-attach.c, forget_exited). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lp_exit, struct task_struct *p)
{
	if (!lp_pidset_exit(&tgids, p) || stopped)
		return 0;
	struct lp_trace_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return 0;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = LP_EV_EXIT;
	ev->pid = p->tgid;
	ev->start = ev->end = bpf_ktime_get_ns();
	submit(ev);
	return 0;
}

/* python:NAME: the second half, in a file of its own. */
#include "trace-python.bpf.h"
