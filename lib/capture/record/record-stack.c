/* record-stack.c - what the ring's events become: execs and forks told to
 * the symbolizer, Python records kept, and each sample's stack (its user
 * stack unwound, by the copy's CFI and the frame-pointer chain, symbolized,
 * the kernel's frames after it, how it ended counted) written with its
 * sample record. */
#include "capture/record/record.h"
#include "capture/record/record-internal.h"

#include <bpf/libbpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/types.h>
/* bpf/profile.h by path: lib/model/profile.h is another header. */
#include "bpf/profile.h"
#include "base/hashmap.h"
#include "capture/record/cost.h"
#include "capture/record/execmaps.h"
#include "profile.skel.h"
#include "debuginfo/symbolize.h"
#include "debuginfo/unwind.h"
#include "base/util.h"

/* Where the DWARF frames of a copy (d, nd of them, leaf first) meet the
 * frame-pointer chain f (nf): the chain lacks a frame after each function
 * that keeps no frame pointer (a libc system call wrapper, a leaf) but has
 * the frames past the end of the copy.  The deepest DWARF return address
 * found in the chain, the m-th time it occurs in both (recursion repeats
 * an address).  Returns k + 1 where d[k] == f[*j]; 0 when they do not meet. */
static size_t join_chain(const uint64_t *d, const unsigned char *dret, size_t nd,
			 const __u64 *f, size_t nf, size_t *j)
{
	for (size_t k = nd; k-- > 1;) {
		size_t m = 0;

		if (!dret[k])
			continue;
		for (size_t i = 1; i <= k; i++)
			m += d[i] == d[k];
		for (size_t i = 1; i < nf; i++)
			if (f[i] == d[k] && --m == 0) {
				*j = i;
				return k + 1;
			}
	}
	return 0;
}

/* The user stack of a sample, leaf first, into r->pcs and r->ret: the copy
 * unwound with DWARF CFI when there is one, then the frame-pointer chain
 * past the copy's end (or alone, with --call-graph fp), cut where it leaves
 * mapped code.  *why says why it is incomplete, when it is; *whole that it
 * reaches the thread's outermost frame. */
static size_t user_stack(struct lp_recorder *r, const struct lp_sample_event *ev, size_t size,
			 bool *truncated, const char **why, bool *whole, enum lp_unwind_end *dwarf)
{
	size_t nf = ev->ustack_bytes > 0 ? ev->ustack_bytes / sizeof(__u64) : 0, n = 0, j = 0;
	const __u64 *f = ev->ustack;

	*whole = false;
	*dwarf = LP_UNWIND_COMPLETE;
	/* The kernel took at most --stack-depth frames (profile.bpf.c): as
	 * many means there may have been more. */
	if (nf > LP_MAX_STACK_DEPTH)
		nf = LP_MAX_STACK_DEPTH;
	if (ev->regs[0] && (ev->stack_bytes || !nf)) {
		struct lp_unwind_regs regs = { ev->regs[0], ev->regs[1], ev->regs[2] };
		size_t have = size - sizeof(*ev);
		size_t len = ev->stack_bytes < have ? ev->stack_bytes : have;
		enum lp_unwind_end end;
		uint32_t reports = lp_symbolizer__reports(r->sym, ev->pid);

		n = lp_unwinder__unwind(r->unw, ev->pid, ev->tid, &regs,
					(const unsigned char *)ev + sizeof(*ev), len, r->pcs,
					r->ret, r->max_user_frames, &end, why);
		/* Stopped at a pc in a library the process mapped after its maps
		 * were read (at the exec, before ld.so mapped libc: the first
		 * sample in main ended at __libc_start_call_main, end-of-copy),
		 * and they have been read again since (a miss rereads them, the
		 * unwinder's own included): unwind once more. */
		if (end != LP_UNWIND_COMPLETE && n &&
		    lp_symbolizer__mapped(r->sym, ev->pid, r->pcs[n - 1] - r->ret[n - 1]) &&
		    lp_symbolizer__reports(r->sym, ev->pid) != reports)
			n = lp_unwinder__unwind(r->unw, ev->pid, ev->tid, &regs,
						(const unsigned char *)ev + sizeof(*ev), len,
						r->pcs, r->ret, r->max_user_frames, &end, why);
		/* What tune_copy goes by: a copy too short, or no CFI. */
		*dwarf = end == LP_UNWIND_TRUNCATED && strcmp(*why, "end-of-copy")
			 ? LP_UNWIND_COMPLETE : end;
		if (end == LP_UNWIND_COMPLETE) {
			*whole = true;
			return n;
		}
		if (n && lp_symbolizer__in_uprobes(r->sym, ev->pid, r->pcs[n - 1])) {
			/* A return address that is still the uretprobe
			 * trampoline: the tick came while the kernel set up a
			 * return probe, after it replaced the return address
			 * and before it recorded the original (fix_uretprobes
			 * has nothing to put back), or with more return probes
			 * pending than it looks at.  No copy is too short, and
			 * no chain goes past it: the stack ends there. */
			*truncated = true;
			*why = "uretprobe";
			*dwarf = LP_UNWIND_COMPLETE;
			r->truncated++;
			return n;
		}
		size_t k = nf ? join_chain(r->pcs, r->ret, n, f, nf, &j) : 0;
		if (!k && end == LP_UNWIND_FAILED && nf > n) {
			/* No CFI where the copy's unwinding stopped (JIT code,
			 * which keeps frame pointers): the chain alone. */
			n = 0;
		} else if (!k) {
			/* The copy ended, or the CFI did, before the chain's
			 * frames: this much is known. */
			*truncated = true;
			if (end == LP_UNWIND_FAILED)
				r->unwind_failed++;
			else
				r->truncated++;
			return n;
		} else {
			n = k;
			j++;
		}
		*why = NULL;
	} else if (!nf) {
		*truncated = true;
		r->ustack_failed++;
		*why = "no-user-stack";
		return 0;
	}
	/* The chain from f[j]: each address must be code the process has
	 * mapped; one that is not means the walk went through a function that
	 * keeps no frame pointer and read garbage from there on. */
	for (; j < nf && n < r->max_user_frames; j++) {
		if (!lp_symbolizer__mapped(r->sym, ev->pid, f[j])) {
			*truncated = true;
			*why = "broken-chain";
			r->truncated++;
			return n;
		}
		r->pcs[n] = f[j];
		r->ret[n] = n > 0;
		n++;
	}
	if (nf >= r->opts.stack_depth || n >= r->max_user_frames) {
		*truncated = true;
		*why = "max-frames";
		r->truncated++;
		return n;
	}
	*whole = n > 0 && lp_unwinder__outermost(r->unw, ev->pid, r->pcs[n - 1], r->ret[n - 1]);
	if (!*whole)
		*why = "end-of-chain";
	return n;
}

/* The end of pid's mapping that holds addr (a thread's stack), 0 when
 * none does or the process is gone. */
static uint64_t mapping_end(pid_t pid, uint64_t addr)
{
	struct lp_maps m;
	uint64_t end = 0;

	if (lp_maps__open(&m, pid) < 0)
		return 0;
	while (!end && lp_maps__next(&m))
		if (addr >= m.lo && addr < m.hi)
			end = m.hi;
	lp_maps__close(&m);
	return end;
}

/* --call-graph auto, a running thread's stack not whole: when the copy was
 * too short (the stack goes on past it, or past a page never touched: the
 * copy stops at the first page it cannot read until the top of the
 * thread's stack is known), a copy four times as big from its next sample
 * on, up to what a sample can take (8, 32, then 64 KiB: two steps, each
 * lagging by the samples already in the ring), with the top of its stack
 * mapping; when it is as big as it gets, or its code has no CFI (JIT code,
 * which keeps frame pointers), its frame-pointer chain too. */
static void tune_copy(struct lp_recorder *r, const struct lp_sample_event *ev,
		      enum lp_unwind_end end)
{
	__u32 tid = ev->tid;
	struct lp_copy_val v = { .bytes = ev->stack_want, .chain = !!(ev->flags & LP_EV_CHAIN) };
	struct lp_copy_val now;

	/* perf events copy as much of every thread's stack. */
	if (!r->skel || r->opts.call_graph != LP_CALL_GRAPH_AUTO || ev->state != LP_STATE_RUNNING ||
	    !ev->stack_want || end == LP_UNWIND_COMPLETE)
		return;
	if (end == LP_UNWIND_TRUNCATED && v.bytes < LP_MAX_STACK_COPY)
		v.bytes = v.bytes * 4 < LP_MAX_STACK_COPY ? v.bytes * 4 : LP_MAX_STACK_COPY;
	else if (!v.chain)
		v.chain = 1;
	else
		return;
	/* The samples taken before the change, still in the ring, ask for it
	 * again: the maps are read once. */
	if (bpf_map__lookup_elem(r->skel->maps.lp_copy, &tid, sizeof(tid), &now, sizeof(now),
				 0) == 0 && now.bytes >= v.bytes && now.chain >= v.chain)
		return;
	v.top = mapping_end(ev->pid, ev->regs[1]);
	bpf_map__update_elem(r->skel->maps.lp_copy, &tid, sizeof(tid), &v, sizeof(v), BPF_ANY);
}

/* Counts a stack for the summary: whole, or ending early in the module of
 * its outermost frame (and why). */
static void count_ending(struct lp_recorder *r, bool whole, const struct lp_frame *outer,
			 const char *why)
{
	r->stacks++;
	if (whole) {
		r->whole++;
		return;
	}
	const char *module = outer && outer->module[0] ? outer->module : "[unknown]";
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, module, strlen(module)));
	struct lp_ending *e = lp_hashmap__get(&r->endings, key);

	if (!e) {
		e = lp_calloc(1, sizeof(*e));
		e->module = module;
		lp_hashmap__put(&r->endings, key, e);
	}
	e->count++;
	if (why && *why)
		e->why = why;
}

/* A kernel frame of the tracing that took an off-CPU stack: the tracepoint's
 * iterator, which bpf_get_stack's skip count does not always leave out (a
 * program calling bpf_loop runs one frame deeper). */
static bool in_tracing(const struct lp_frame *f)
{
	return !strncmp(f->symbol, "__traceiter_", 12) || !strncmp(f->symbol, "bpf_trace_run", 13) ||
	       !strncmp(f->symbol, "bpf_prog_", 9);
}

/* Returns the stack's frames, root first, in r->frames; sets the attrs. */
static size_t build_stack(struct lp_recorder *r, const struct lp_sample_event *ev,
			  size_t size)
{
	size_t n = 0;
	bool truncated = false;
	const char *why = NULL, *gil = NULL;

	lp_attrs_buf__reset(&r->attrs);
	/* User frames, outermost first. */
	if (!(ev->flags & LP_EV_KERNEL_THREAD)) {
		bool whole;
		enum lp_unwind_end dwarf;
		size_t nu = user_stack(r, ev, size, &truncated, &why, &whole, &dwarf);

		for (size_t i = nu; i-- > 0;)
			n += lp_symbolizer__user_frames(r->sym, ev->pid, r->pcs[i], r->ret[i],
							r->frames + n);
		count_ending(r, whole, n ? r->frames[0] : NULL, why);
		const struct lp_py_event *pe = lp_recorder_python_of(r, ev);

		if (pe) {
			lp_recorder_python_frames(r, ev, pe, &n);
			gil = pe->pyflags & LP_PY_GIL ? "1" : "0";
		}
		/* A thread in the uprobes page, unwound from where it is in its
		 * own code (profile.bpf.c fix_uprobe_ip): the page's frame on
		 * top of the frame it stands for, so the sample is lp's, as its
		 * time is (the step, the trap after it, the trampoline).  Not
		 * twice: the frame-pointer chain alone starts at the page. */
		if ((ev->flags & LP_EV_UPROBES) && !(nu && r->pcs[0] == ev->uprobes_ip))
			r->frames[n++] = lp_symbolizer__uprobes_frame(r->sym, ev->uprobes_ip);
		if (!whole)
			tune_copy(r, ev, dwarf);
	}
	if (r->opts.kernel && ev->kstack_bytes < 0)
		r->kstack_failed++;
	if (r->opts.kernel && ev->kstack_bytes > 0) {
		size_t nk = ev->kstack_bytes / sizeof(__u64);

		size_t leaf = 0;

		if (nk > LP_MAX_STACK_DEPTH)
			nk = LP_MAX_STACK_DEPTH;
		if (nk >= r->opts.stack_depth && !truncated) {
			truncated = true;
			r->truncated++;
			why = "max-frames";
		}
		/* Off the CPU, every stack ends in the scheduler, and one taken
		 * of a thread asleep before recording began (lp_rec_seed) has
		 * those frames left out by the kernel: leave them out of all,
		 * so one place of blocking is one stack, ending where the
		 * thread chose to block. */
		while (ev->state != LP_STATE_RUNNING && leaf < nk &&
		       (lp_symbolizer__in_scheduler(r->sym, ev->kstack[leaf] - (leaf > 0)) ||
			in_tracing(lp_symbolizer__kernel(r->sym, ev->kstack[leaf], leaf > 0))))
			leaf++;
		for (size_t i = nk; i-- > leaf;)
			r->frames[n++] = lp_symbolizer__kernel(r->sym, ev->kstack[i], i > 0);
	}
	lp_attrs_buf__add(&r->attrs, "unwind", lp_recorder_call_graph_name(r->opts.call_graph));
	if (gil)
		lp_attrs_buf__add(&r->attrs, "gil", gil);
	if (truncated) {
		lp_attrs_buf__add(&r->attrs, "truncated", "1");
		if (why && *why)
			lp_attrs_buf__add(&r->attrs, "why", why);
	}
	return n;
}

void lp_recorder_run_pending(struct lp_recorder *r, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < r->npending; i++) {
		if (r->pending[i].due_ns <= now) {
			lp_symbolizer__prepare(r->sym, r->pending[i].pid);
			/* Its interpreter, if it runs one, looked for again
			 * (a libpython is mapped by now), before its script
			 * starts: CPython takes ~20 ms to start. */
			lp_recorder_forget_python(r, r->pending[i].pid);
			lp_recorder_check_python(r, r->pending[i].pid);
		} else
			r->pending[k++] = r->pending[i];
	}
	r->npending = k;
}

int lp_recorder_read_sample(struct lp_recorder *r, void *data, size_t size)
{
	const struct lp_sample_event *ev = data;
	char comm[LP_COMM_LEN + 1];

	if (r->failed)
		return -1;	/* stops ring_buffer__consume */
	if (size >= sizeof(struct lp_exec_event) && (ev->flags & LP_EV_EXEC)) {
		lp_symbolizer__forget(r->sym, ev->pid);
		lp_unwinder__forget(r->unw, ev->pid);
		lp_recorder_forget_python(r, ev->pid);
		/* A target's new program: its modules are read now, while it
		 * runs (by now ld.so has mapped its libraries), not when its
		 * first sample is symbolized and it may have exited.  Not with
		 * -a: every exec on the system would cost a Dwfl. */
		if (r->opts.npids) {
			lp_symbolizer__prepare(r->sym, ev->pid);
			if (r->npending == sizeof(r->pending) / sizeof(r->pending[0]))
				lp_recorder_run_pending(r, INT64_MAX);
			r->pending[r->npending].pid = ev->pid;
			r->pending[r->npending].due_ns = (int64_t)ev->time_ns + LP_EXEC_SETTLE_NS;
			r->npending++;
		}
		return 0;
	}
	if (size >= sizeof(struct lp_fork_event) && (ev->flags & LP_EV_FORK)) {
		const struct lp_fork_event *f = data;

		/* Nothing read now: the child's maps when its first sample
		 * is symbolized, its parent's if it is gone by then. */
		lp_symbolizer__fork(r->sym, f->pid, f->ppid);
		return 0;
	}
	if (size >= offsetof(struct lp_py_event, frames) && (ev->flags & LP_EV_PYTHON)) {
		const struct lp_py_event *pe = data;

		if (r->py && pe->nframes <= LP_PY_MAX_FRAMES &&
		    size >= offsetof(struct lp_py_event, frames) +
			    pe->nframes * sizeof(pe->frames[0]))
			lp_recorder_keep_python(r, pe, size);
		return 0;
	}
	if (size < sizeof(*ev))
		return 0;
	if (r->calibrating) {
		/* Not the targets': none is written (lp-record's own threads
		 * are in the pid set for now, and with -a every thread is). */
		if (ev->tid == (__u32)r->cal_tid && ev->state == LP_STATE_RUNNING) {
			if (r->ncal == r->cal_cap) {
				r->cal_cap = r->cal_cap ? 2 * r->cal_cap : 1024;
				r->cal_times = lp_reallocarray(r->cal_times, r->cal_cap,
							       sizeof(*r->cal_times));
			}
			r->cal_times[r->ncal++] = ev->time_ns;
		}
		return 0;
	}
	memcpy(comm, ev->comm, LP_COMM_LEN);
	comm[LP_COMM_LEN] = 0;
	/* The calibration's too, read late: taken before it ended but sent
	 * by another CPU after its last drain, or one of its threads
	 * sampled on its way out after lp_recorder_calibrate() joined it (with -a every
	 * thread is sampled; cost.bats saw lp-calibrate in a recording). */
	if ((int64_t)ev->time_ns < r->cal_time_ns ||
	    (ev->pid == (__u32)r->self && !strcmp(comm, LP_CAL_THREAD_NAME)))
		return 0;
	if (!(ev->flags & LP_EV_KERNEL_THREAD))
		lp_recorder_check_python(r, ev->pid);

	size_t n = build_stack(r, ev, size);
	/* Off-CPU intervals weigh their nanoseconds; in wall mode a tick's
	 * sample stands for a period of running. */
	if (ev->state == LP_STATE_BLOCKED)
		lp_attrs_buf__add(&r->attrs, "state", "blocked");
	else if (ev->state == LP_STATE_RUNNABLE)
		lp_attrs_buf__add(&r->attrs, "state", "runnable");
	else if (r->opts.mode == LP_RECORD_WALL)
		lp_attrs_buf__add(&r->attrs, "state", "running");
	/* A process in a pid namespace of its own (a container): its pid
	 * there beside the host's. */
	pid_t nspid = ev->flags & LP_EV_KERNEL_THREAD ? 0 : lp_symbolizer__nspid(r->sym, ev->pid);
	if (nspid && nspid != (pid_t)ev->pid) {
		char nsbuf[16];

		snprintf(nsbuf, sizeof(nsbuf), "%d", (int)nspid);
		lp_attrs_buf__add(&r->attrs, "nspid", nsbuf);
	}
	struct lp_sample s = {
		.time_ns = (int64_t)ev->time_ns,
		.pid = ev->pid,
		.tid = ev->tid,
		.cpu = ev->cpu,
		.comm = comm,
		.event = r->event,
		.weight = ev->state ? (double)ev->weight_ns : r->period_ns,
		.stack = lp_dict__stack(r->dict, r->frames, n),
		.attrs = lp_attrs_buf__attrs(&r->attrs),
	};
	r->last_time = ev->time_ns;
	if (lp_writer__sample(r->w, &s) < 0)
		return lp_recorder_write_failed(r);
	lp_writer__bound_stacks(r->w, r->dict, r->opts.stack_memory);
	/* Counted once written: the summary says what the stream holds. */
	if (ev->state == LP_STATE_BLOCKED)
		r->blocked++;
	else if (ev->state == LP_STATE_RUNNABLE)
		r->runnable++;
	else
		r->running++;
	return 0;
}
