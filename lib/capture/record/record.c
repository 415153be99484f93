/* record.c - lp-record's engine: the BPF glue (open, set rodata, load, attach
 * to per-CPU perf events, poll the ring, drain, detach) and the turning of
 * each raw sample into stream records (unwinding and symbolization are
 * unwind.c's and symbolize.c's).
 *
 * Order of a run, as in bcc's libbpf-tools: open the skeleton, set the
 * `const volatile` settings and map sizes, load, fill the pid filter, open a
 * perf event per CPU and attach the program to each, then poll.  Everything
 * is owned through file descriptors, so even a SIGKILLed recorder leaves no
 * program, link or perf event behind. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
/* bpf/profile.h by path: lib/model/profile.h is another header. */
#include "bpf/profile.h"
#include "capture/bpflog.h"
#include "base/hashmap.h"
#include "capture/record/cost.h"
#include "capture/record/execmaps.h"
#include "capture/kfeatures.h"
#include "capture/record/perfrec.h"
#include "profile.skel.h"
#include "capture/python.h"
#include "capture/record/record.h"
#include "debuginfo/symbolize.h"
#include "capture/target.h"
#include "debuginfo/unwind.h"
#include "base/util.h"

_Static_assert(LP_RECORD_MAX_STACK_DEPTH == LP_MAX_STACK_DEPTH, "record.h and profile.h");

/* Frames a stack can have: kernel + user, and DWARF unwinds as deep. */
#define LP_MAX_FRAMES (2 * LP_MAX_STACK_DEPTH + 2)
#define LP_DWARF_MAX_FRAMES 1024

struct lp_ending {
	const char *module;	/* the outermost frame's (interned) */
	const char *why;	/* the last reason given, or NULL */
	uint64_t count;
};

struct lp_recorder {
	struct lp_record_opts opts;
	/* drain: when it stops reading (0: never), whether it did, samples
	 * read */
	int64_t drain_until;
	bool drain_cut;
	uint64_t drained;
	struct profile_bpf *skel;	/* NULL with --backend perf */
	struct ring_buffer *ring;
	struct lp_perfrec *perf;	/* --backend perf: the events, instead */
	int *perf_fds;
	struct bpf_link **links;
	int ncpus;
	bool cycles;			/* a hardware PMU: cycles, else cpu-clock */
	struct lp_writer *w;
	struct lp_dict *dict;
	struct lp_symbolizer *sym;
	struct lp_unwinder *unw;
	struct lp_attrs_buf attrs;
	const char *event;
	double period_ns;
	bool failed;			/* the output failed: stop writing */
	int error;			/* its errno */
	/* Counts for the lost records and the summary. */
	uint64_t ring_lost, ring_lost_written;
	uint64_t unwind_failed, truncated, kstack_failed, ustack_failed;
	uint64_t off_lost, off_lost_written;
	uint64_t off_unseen, off_unseen_written;
	uint64_t children, children_written;	/* forks the pid set had no room for */
	uint64_t outside;			/* --inside: samples and intervals not sent */
	char *gated;	/* the functions gated on so far (--inside, inside FUNC), for the summary */
	uint64_t running, blocked, runnable;	/* samples written, by state */
	/* Stacks made, those reaching their thread's outermost frame, and the
	 * others by the module they end in (lp_ending), for the summary. */
	uint64_t stacks, whole;
	/* User frames a stack may have: --stack-depth, else as many as DWARF
	 * unwinding may find. */
	size_t max_user_frames;
	struct lp_hashmap endings;
	uint64_t last_time;
	int64_t reaped_ns;
	int64_t stop_ns;		/* when the off-CPU intervals were stopped */
	/* Targets that just exec'd: their mappings are read again a few
	 * milliseconds later, when ld.so has mapped their libraries. */
	struct { pid_t pid; int64_t due_ns; } pending[64];
	size_t npending;
	struct lp_execmaps *execmaps;	/* their maps, read at once */
	const struct lp_frame **frames;
	uint64_t *pcs;
	unsigned char *ret;
	/* What a sample and a blocked interval cost (lib/capture/record/cost.h), measured in
	 * lp_recorder__open: while calibrating, no sample is written, and the
	 * spinning thread's sample times are kept in cal_times. */
	bool calibrating;
	pid_t cal_tid;
	uint64_t *cal_times;
	size_t ncal, cal_cap;
	struct lp_cost_stats sample_cost, block_cost;
	bool have_sample_cost, have_block_cost;
	int64_t cal_time_ns;		/* when it ended */
	pid_t self;			/* lp-record's pid: its calibration threads' */
	/* CPython processes (lib/capture/python.h): each thread's last Python
	 * record (struct lp_py_event), for its sample, which follows it. */
	struct lp_python *py;
	struct lp_hashmap py_ev;
	const struct lp_frame **py_frames;	/* the stack being rebuilt */
};

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int open_events(struct lp_recorder *r)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.freq = 1,
		.sample_freq = r->opts.freq,
		.disabled = 1,
	};
	int opened = 0;

	r->cycles = true;
	for (int cpu = 0; cpu < r->ncpus; cpu++) {
		int fd = perf_open(&attr, cpu);

		if (fd < 0 && r->cycles && (errno == ENOENT || errno == EOPNOTSUPP ||
					    errno == ENODEV || errno == EINVAL) && !opened) {
			/* No hardware PMU (a VM): the software clock. */
			r->cycles = false;
			attr.type = PERF_TYPE_SOFTWARE;
			attr.config = PERF_COUNT_SW_CPU_CLOCK;
			fd = perf_open(&attr, cpu);
		}
		if (fd < 0) {
			if (errno == ENODEV)	/* an offline CPU */
				continue;
			if (errno == EACCES || errno == EPERM)
				lp_error_errno("cannot open perf events (root, or CAP_PERFMON "
					       "and kernel.perf_event_paranoid <= 2)");
			else
				lp_error_errno("cannot open a perf event on cpu %d", cpu);
			return -1;
		}
		r->perf_fds[cpu] = fd;
		r->links[cpu] = bpf_program__attach_perf_event(r->skel->progs.lp_rec_sample, fd);
		if (!r->links[cpu]) {
			lp_error_errno("cannot attach the sampler to cpu %d", cpu);
			return -1;
		}
		opened++;
	}
	if (!opened) {
		lp_error("no CPU to sample on");
		return -1;
	}
	r->event = r->cycles ? "cycles" : "cpu-clock";
	return 0;
}

static int write_failed(struct lp_recorder *r)
{
	if (!r->failed) {
		r->failed = true;
		r->error = errno;
	}
	errno = r->error;
	return -1;
}

static const char *mode_name(enum lp_record_mode m)
{
	return m == LP_RECORD_OFF ? "off" : m == LP_RECORD_WALL ? "wall" : "cpu";
}

static const char *call_graph_name(enum lp_call_graph g)
{
	return g == LP_CALL_GRAPH_FP ? "fp" : g == LP_CALL_GRAPH_DWARF ? "dwarf" : "auto";
}

static int write_header(struct lp_recorder *r)
{
	char buf[64];
	struct lp_attrs_buf a = { 0 };
	struct lp_header h = { .version = LP_STREAM_VERSION };
	int rc;

	lp_attrs_buf__producer_keys(&a);
	/* Off-CPU weights are nanoseconds of their own: no period. */
	if (r->opts.mode != LP_RECORD_OFF) {
		snprintf(buf, sizeof(buf), "%.0f", r->period_ns);
		lp_attrs_buf__add(&a, "period_ns", buf);
	}
	lp_attrs_buf__add(&a, "mode", mode_name(r->opts.mode));
	lp_attrs_buf__add(&a, "event", r->event);
	if (r->opts.mode != LP_RECORD_OFF) {
		snprintf(buf, sizeof(buf), "%u", r->opts.freq);
		lp_attrs_buf__add(&a, "freq_hz", buf);
	}
	if (r->opts.mode != LP_RECORD_CPU && r->opts.min_block_ns) {
		snprintf(buf, sizeof(buf), "%" PRIu64, r->opts.min_block_ns);
		lp_attrs_buf__add(&a, "min_block_ns", buf);
	}
	lp_attrs_buf__add(&a, "unwind", call_graph_name(r->opts.call_graph));
	if (r->perf) {
		lp_attrs_buf__add(&a, "backend", "perf");
		/* No sample is taken while a thread runs in the kernel. */
		if (lp_perfrec__user_only(r->perf))
			lp_attrs_buf__add(&a, "user_only", "1");
	}
	if (r->opts.inside)
		lp_attrs_buf__add(&a, "inside", r->opts.inside);
	if (r->opts.raw)
		lp_attrs_buf__add(&a, "raw", "1");
	lp_attrs_buf__add(&a, "producer", "lp-record");
	h.attrs = lp_attrs_buf__attrs(&a);
	rc = lp_writer__header(r->w, &h);
	lp_attrs_buf__free(&a);
	return rc < 0 ? write_failed(r) : 0;
}

static int write_lost(struct lp_recorder *r, const char *what, uint64_t count)
{
	struct lp_lost l = { .time_ns = r->last_time ? (int64_t)r->last_time : LP_TIME_NONE,
			     .what = what, .count = count };

	if (!count || r->failed)
		return 0;
	return lp_writer__lost(r->w, &l) < 0 ? write_failed(r) : 0;
}

/* The kernel's per-CPU counters (lp_counter), each summed over the CPUs,
 * into sums[LP_CNT_NR]: one system call for all (this runs at every poll,
 * and one lookup per counter was ~5% of lp-record's CPU under load).
 * Returns -1, sums zero, when they cannot be read. */
static int counters(struct lp_recorder *r, uint64_t *sums)
{
	int n = libbpf_num_possible_cpus();
	__u32 keys[LP_CNT_NR], count = LP_CNT_NR, batch;
	uint64_t *vals;
	int rc;

	memset(sums, 0, LP_CNT_NR * sizeof(*sums));
	if (n <= 0)
		return -1;
	vals = lp_calloc((size_t)n * LP_CNT_NR, sizeof(*vals));
	rc = bpf_map_lookup_batch(bpf_map__fd(r->skel->maps.lp_counters), NULL, &batch, keys,
				  vals, &count, NULL);
	/* ENOENT: the end of the array reached, with count entries read. */
	if (rc < 0 && errno != ENOENT)
		count = 0;
	for (__u32 i = 0; i < count; i++)
		for (int c = 0; keys[i] < LP_CNT_NR && c < n; c++)
			sums[keys[i]] += vals[(size_t)i * n + c];
	free(vals);
	return count ? 0 : -1;
}

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

/* A process exec'd or is gone: what the sampler and the resolver knew of
 * its interpreter goes. */
static void forget_python(struct lp_recorder *r, pid_t pid)
{
	__u32 key = pid;

	if (!r->py)
		return;
	lp_python__forget(r->py, pid);
	bpf_map__delete_elem(r->skel->maps.lp_py, &key, sizeof(key), 0);
}

/* The first sample of a process (since its exec): when it runs a CPython
 * lp knows, the sampler walks its Python frames from then on. */
static void check_python(struct lp_recorder *r, pid_t pid)
{
	struct lp_py_proc proc;
	__u32 key = pid;

	if (!r->py || !lp_python__check(r->py, pid, &proc))
		return;
	if (bpf_map__update_elem(r->skel->maps.lp_py, &key, sizeof(key), &proc, sizeof(proc),
				 BPF_ANY) < 0)
		lp_error_errno("pid %d: cannot have its Python frames walked", (int)pid);
}

/* Every few seconds: Python processes that have exited leave the map. */
static void reap_python(struct lp_recorder *r)
{
	size_t n;
	const pid_t *pids = r->py ? lp_python__pids(r->py, &n) : NULL;

	for (size_t i = n; pids && i-- > 0;)
		if (kill(pids[i], 0) < 0 && errno == ESRCH)
			forget_python(r, pids[i]);
}

/* A thread's Python record, kept for its sample (one buffer a thread,
 * reused). */
static void keep_python(struct lp_recorder *r, const struct lp_py_event *pe, size_t size)
{
	uint64_t key = lp_hashmap__key((uint64_t)pe->tid + 1);
	struct lp_py_event *kept = lp_hashmap__get(&r->py_ev, key);

	if (!kept) {
		kept = lp_malloc(sizeof(*kept));
		lp_hashmap__put(&r->py_ev, key, kept);
	}
	memcpy(kept, pe, size < sizeof(*kept) ? size : sizeof(*kept));
}

/* The Python record sent just before this sample of its thread, with its
 * time, if any: taken, so it serves one sample. */
static const struct lp_py_event *python_of(struct lp_recorder *r, const struct lp_sample_event *ev)
{
	struct lp_py_event *pe = r->py ? lp_hashmap__get(&r->py_ev, lp_hashmap__key((uint64_t)ev->tid + 1))
				       : NULL;

	if (!pe || pe->time_ns != ev->time_ns || !(pe->flags & LP_EV_PYTHON))
		return NULL;
	pe->flags = 0;
	return pe;
}

/* The user frames r->frames[0, *n) of a sample whose Python frames are
 * pe's, with the Python frames in (lib/capture/python.h). */
static void python_frames(struct lp_recorder *r, const struct lp_sample_event *ev,
			  const struct lp_py_event *pe, size_t *n)
{
	*n = lp_python__merge(r->py, ev->pid, pe, r->frames, *n, r->py_frames);
	memcpy(r->frames, r->py_frames, *n * sizeof(*r->frames));
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
		const struct lp_py_event *pe = python_of(r, ev);

		if (pe) {
			python_frames(r, ev, pe, &n);
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
	lp_attrs_buf__add(&r->attrs, "unwind", call_graph_name(r->opts.call_graph));
	if (gil)
		lp_attrs_buf__add(&r->attrs, "gil", gil);
	if (truncated) {
		lp_attrs_buf__add(&r->attrs, "truncated", "1");
		if (why && *why)
			lp_attrs_buf__add(&r->attrs, "why", why);
	}
	return n;
}

static void run_pending(struct lp_recorder *r, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < r->npending; i++) {
		if (r->pending[i].due_ns <= now) {
			lp_symbolizer__prepare(r->sym, r->pending[i].pid);
			/* Its interpreter, if it runs one, looked for again
			 * (a libpython is mapped by now), before its script
			 * starts: CPython takes ~20 ms to start. */
			forget_python(r, r->pending[i].pid);
			check_python(r, r->pending[i].pid);
		} else
			r->pending[k++] = r->pending[i];
	}
	r->npending = k;
}

static int read_sample(struct lp_recorder *r, void *data, size_t size)
{
	const struct lp_sample_event *ev = data;
	char comm[LP_COMM_LEN + 1];

	if (r->failed)
		return -1;	/* stops ring_buffer__consume */
	if (size >= sizeof(struct lp_exec_event) && (ev->flags & LP_EV_EXEC)) {
		lp_symbolizer__forget(r->sym, ev->pid);
		lp_unwinder__forget(r->unw, ev->pid);
		forget_python(r, ev->pid);
		/* A target's new program: its modules are read now, while it
		 * runs (by now ld.so has mapped its libraries), not when its
		 * first sample is symbolized and it may have exited.  Not with
		 * -a: every exec on the system would cost a Dwfl. */
		if (r->opts.npids) {
			lp_symbolizer__prepare(r->sym, ev->pid);
			if (r->npending == sizeof(r->pending) / sizeof(r->pending[0]))
				run_pending(r, INT64_MAX);
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
			keep_python(r, pe, size);
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
	 * sampled on its way out after calibrate() joined it (with -a every
	 * thread is sampled; cost.bats saw lp-calibrate in a recording). */
	if ((int64_t)ev->time_ns < r->cal_time_ns ||
	    (ev->pid == (__u32)r->self && !strcmp(comm, LP_CAL_THREAD_NAME)))
		return 0;
	if (!(ev->flags & LP_EV_KERNEL_THREAD))
		check_python(r, ev->pid);

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
		return write_failed(r);
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

/* Threads already off the CPU get their interval from now (lp_rec_seed):
 * run the task iterator once, reading it to its end. */
static int seed_intervals(struct lp_recorder *r)
{
	struct bpf_link *link = bpf_program__attach_iter(r->skel->progs.lp_rec_seed, NULL);
	int fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	char buf[64];
	ssize_t n = 0;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (fd < 0 || n < 0) {
		lp_error_errno("cannot run the BPF task iterator");
		if (fd >= 0)
			close(fd);
		bpf_link__destroy(link);
		return -1;
	}
	close(fd);
	bpf_link__destroy(link);
	return 0;
}

/* The Python frames of the threads seeded asleep (lp_rec_seed, which reads
 * another task's memory only as a sleepable program, where the kernel's
 * walk does not run): walked from here, while they sleep, for their
 * intervals.  A thread that switched since has its own, which stays; one
 * woken meanwhile leaves an entry its next switch replaces. */
static void seed_python(struct lp_recorder *r)
{
	int fd = bpf_map__fd(r->skel->maps.lp_off), pyfd = bpf_map__fd(r->skel->maps.lp_py_off);
	struct lp_off_sample *o;
	struct lp_py_event *pe;
	__u32 key, next, *prev = NULL;

	if (!r->py)
		return;
	o = lp_malloc(sizeof(*o));
	pe = lp_malloc(sizeof(*pe));
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, o) < 0 || (o->ev.flags & LP_EV_KERNEL_THREAD))
			continue;
		check_python(r, o->ev.pid);
		if (lp_python__walk(r->py, o->ev.pid, key, pe) == 0)
			bpf_map_update_elem(pyfd, &key, pe, BPF_NOEXIST);
	}
	free(o);
	free(pe);
}

static void set_events(struct lp_recorder *r, bool on)
{
	if (r->perf) {
		lp_perfrec__enable(r->perf, on);
		return;
	}
	for (int i = 0; r->perf_fds && i < r->ncpus; i++)
		if (r->perf_fds[i] >= 0)
			ioctl(r->perf_fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* --mode off and wall: the scheduler's tracepoints, wakeup first (a switch
 * out then always finds its wakeup reported). */
static int attach_sched(struct lp_recorder *r)
{
	r->skel->links.lp_rec_wakeup = bpf_program__attach(r->skel->progs.lp_rec_wakeup);
	if (r->skel->links.lp_rec_wakeup)
		r->skel->links.lp_rec_switch = bpf_program__attach(r->skel->progs.lp_rec_switch);
	if (!r->skel->links.lp_rec_wakeup || !r->skel->links.lp_rec_switch) {
		lp_error_errno("cannot attach to sched_switch and sched_wakeup");
		return -1;
	}
	return 0;
}

/* How long one drain of the BPF ring may read: samples may come faster
 * than they are read (lp-record -a on a busy machine), and
 * ring_buffer__consume reads until the ring is empty, which it then never
 * is: lp-record would never see its stop, at 100% of a CPU. */
#define LP_DRAIN_NS 100000000LL

/* How often exited processes are looked for (lp_recorder__poll). */
#define LP_REAP_NS 500000000LL

static int handle_sample(void *ctx, void *data, size_t size)
{
	struct lp_recorder *r = ctx;
	int rc = read_sample(r, data, size);

	if (rc == 0 && r->drain_until && (++r->drained & 63) == 0 &&
	    lp_monotonic_ns() >= r->drain_until) {
		r->drain_cut = true;
		return -EAGAIN;	/* this one is read: the rest at the next drain */
	}
	return rc;
}

static void detach_sched(struct lp_recorder *r)
{
	bpf_link__destroy(r->skel->links.lp_rec_switch);
	bpf_link__destroy(r->skel->links.lp_rec_wakeup);
	r->skel->links.lp_rec_switch = r->skel->links.lp_rec_wakeup = NULL;
}

/* Waits up to timeout_ms for samples, then reads what there is, for at
 * most LP_DRAIN_NS: true when it stopped there, with more to read.  (The
 * calibration's samples and intervals are read and dropped as they come,
 * or after each of its phases, so the ring never fills for them.)
 * libperf's rings are read up to where they were when the read began:
 * bounded already. */
static bool drain(struct lp_recorder *r, int timeout_ms)
{
	if (r->perf) {
		lp_perfrec__poll(r->perf, timeout_ms);
		return false;
	}
	r->drain_cut = false;
	r->drain_until = lp_monotonic_ns() + (int64_t)timeout_ms * 1000000 + LP_DRAIN_NS;
	ring_buffer__poll(r->ring, timeout_ms);
	if (!r->drain_cut && !r->failed)
		ring_buffer__consume(r->ring);
	r->drain_until = 0;
	return r->drain_cut;
}

/* --backend perf: events on the targets (tid 0), or on one thread of
 * lp-record's own (the calibration's).  NULL after a message. */
static struct lp_perfrec *open_perf(struct lp_recorder *r, pid_t tid)
{
	struct lp_perfrec_opts po = {
		.pids = tid ? NULL : r->opts.pids, .npids = tid ? 0 : r->opts.npids, .tid = tid,
		.follow = r->opts.follow, .freq = r->opts.freq, .kernel = r->opts.kernel,
		.stack_bytes = r->opts.dwarf_bytes, .stack_depth = r->opts.stack_depth,
		.ring_bytes = r->opts.ring_bytes, .verbose = r->opts.verbose,
	};

	return lp_perfrec__open(&po, handle_sample, r);
}

/* The cost of a sample: the spinning thread of lib/capture/record/cost.c sampled by the
 * same program and perf events, at the same frequency, with the same
 * unwinding (its stack has dwarf_bytes to copy above the spinning frame). */
static int calibrate_samples(struct lp_recorder *r, int64_t ns)
{
	struct lp_spin *s = lp_spin__start(ns, r->opts.dwarf_bytes);

	if (!s) {
		lp_error_errno("cannot start the calibration thread");
		return -1;
	}
	r->cal_tid = lp_spin__tid(s);
	r->ncal = 0;
	/* perf events: the spinning thread's own, while it spins (the
	 * targets' stay disabled). */
	struct lp_perfrec *targets = r->perf;
	if (targets && !(r->perf = open_perf(r, r->cal_tid))) {
		r->perf = targets;
		lp_spin__join(s);
		lp_spin__free(s);
		return -1;
	}
	set_events(r, true);
	while (!lp_spin__done(s))
		drain(r, 10);
	set_events(r, false);
	lp_spin__join(s);
	drain(r, 0);
	if (targets) {
		lp_perfrec__free(r->perf);
		r->perf = targets;
	}
	r->have_sample_cost = lp_spin__cost(s, r->cal_times, r->ncal, &r->sample_cost) == 0;
	if (!r->have_sample_cost)
		lp_error("no sample of the calibration thread in %.0f ms: the cost of a sample "
			 "is unknown (a longer --calibrate?)", ns / 1e6);
	lp_spin__free(s);
	return 0;
}

/* Round trips per phase: a few ms, short enough to alternate many times
 * within the calibration, so a change of the machine's load falls on both
 * sides alike. */
#define LP_CAL_ROUNDS 200
#define LP_CAL_MIN_ROUNDS 50

/* Round trips in a phase: as many as keep a phase's intervals below
 * wakeup_bytes in the ring, for when no one reads it during the phase.
 * Past there every interval sent forces a wakeup of the reader, an
 * interrupt on the sending CPU, which a target whose recorder keeps up
 * never pays.  A round trip sends at most two intervals (each thread
 * blocks once), in wall mode four (each switch-in a blocked and a runnable
 * part), each at most the event, the stack copy and the ring's header. */
static size_t phase_rounds(const struct lp_recorder *r)
{
	const struct profile_bpf__rodata *ro = r->skel->rodata;
	size_t per_round = ro->runnable_intervals ? 4 : 2;
	size_t n = ro->wakeup_bytes /
		   (per_round * (sizeof(struct lp_sample_event) + ro->off_copy + BPF_RINGBUF_HDR_SZ));

	return n < LP_CAL_MIN_ROUNDS ? LP_CAL_MIN_ROUNDS : n > LP_CAL_ROUNDS ? LP_CAL_ROUNDS : n;
}

/* Times one phase of `rounds` round trips into out; returns how many times
 * the threads blocked.  lp-record's reader stays off the ping-pong's CPU
 * while they run: on another CPU it drains as it does while recording
 * (`away`), else it sleeps until the phase is over and drains after.  On
 * their CPU its timer wakeups, its reading and its own traced switches
 * would land inside the round trips, more of them in the longer, traced
 * phase: a cost no target on another CPU pays. */
static size_t run_phase(struct lp_recorder *r, struct lp_pingpong *p, size_t rounds, int64_t *out,
			bool away)
{
	size_t blocks;

	lp_pingpong__run(p, rounds, out);
	if (away) {
		while (!lp_pingpong__done(p))
			drain(r, 1);
	} else {
		lp_pingpong__wait(p);
	}
	blocks = lp_pingpong__blocks(p);
	drain(r, 0);
	return blocks;
}

/* Moves the calling thread (the reader) off `cpu`, if it may run on
 * another: true when it did, with its affinity in *saved to restore. */
static bool move_off(int cpu, cpu_set_t *saved)
{
	cpu_set_t away;

	if (cpu < 0 || sched_getaffinity(0, sizeof(*saved), saved) < 0)
		return false;
	away = *saved;
	CPU_CLR(cpu, &away);
	return CPU_COUNT(&away) > 0 && sched_setaffinity(0, sizeof(away), &away) == 0;
}

/* The cost of a blocked interval: the ping-pong's round trips with the
 * scheduler programs attached, against without, in alternate phases. */
static int calibrate_blocks(struct lp_recorder *r, int64_t ns)
{
	struct lp_pingpong *p = lp_pingpong__new();
	int64_t **off = NULL, **on = NULL;
	size_t *blocks = NULL, rounds = phase_rounds(r);
	int64_t end = lp_monotonic_ns() + ns;
	size_t pairs = 0, cap = 0;
	cpu_set_t saved;
	bool away;
	int rc = 0;

	if (!p) {
		lp_error_errno("cannot start the calibration threads");
		return -1;
	}
	away = move_off(lp_pingpong__cpu(p), &saved);
	while (pairs < 2 || lp_monotonic_ns() < end) {
		if (pairs == cap) {
			cap = cap ? 2 * cap : 32;
			off = lp_reallocarray(off, cap, sizeof(*off));
			on = lp_reallocarray(on, cap, sizeof(*on));
			blocks = lp_reallocarray(blocks, cap, sizeof(*blocks));
		}
		off[pairs] = lp_calloc(rounds, sizeof(**off));
		on[pairs] = lp_calloc(rounds, sizeof(**on));
		pairs++;
		run_phase(r, p, rounds, off[pairs - 1], away);
		if (attach_sched(r) < 0) {
			rc = -1;
			break;
		}
		blocks[pairs - 1] = run_phase(r, p, rounds, on[pairs - 1], away);
		detach_sched(r);
	}
	lp_pingpong__free(p);
	if (away)
		sched_setaffinity(0, sizeof(saved), &saved);
	if (rc == 0)
		r->have_block_cost = lp_cost__from_round_trips(off, on, blocks, pairs, rounds,
							       &r->block_cost) == 0;
	for (size_t i = 0; i < pairs; i++) {
		free(off[i]);
		free(on[i]);
	}
	free(off);
	free(on);
	free(blocks);
	return rc;
}

/* Before recording: lp-record's own process joins the pid set for as long
 * as it calibrates (its samples and intervals are dropped in handle_sample);
 * afterwards the intervals it left in lp_off and the counters it moved are
 * cleared, so the recording starts clean. */
static int calibrate(struct lp_recorder *r)
{
	bool sample = r->opts.mode != LP_RECORD_OFF, block = r->opts.mode != LP_RECORD_CPU;
	int64_t each = r->opts.calibrate_ns / (sample + block);
	__u32 self = (__u32)getpid(), key;
	__u8 one = 1;
	int rc = 0, fd;

	if (r->opts.npids &&
	    bpf_map__update_elem(r->skel->maps.lp_pids, &self, sizeof(self), &one, sizeof(one),
				 BPF_ANY) < 0) {
		lp_error_errno("cannot add lp-record to the pid filter to calibrate");
		return -1;
	}
	r->calibrating = true;
	if (sample)
		rc = calibrate_samples(r, each);
	if (rc == 0 && block)
		rc = calibrate_blocks(r, each);
	/* What the last phase sent after its last drain (the scheduler
	 * programs ran until detach_sched) is the calibration's too: read and
	 * dropped now, or the recording would write it (lp-calibrate's
	 * intervals, and with -a every thread's of the last phase). */
	ring_buffer__consume(r->ring);
	r->calibrating = false;
	if (r->opts.npids)
		bpf_map__delete_elem(r->skel->maps.lp_pids, &self, sizeof(self), 0);
	fd = bpf_map__fd(r->skel->maps.lp_off);
	while (bpf_map_get_next_key(fd, NULL, &key) == 0 && bpf_map_delete_elem(fd, &key) == 0)
		;
	int n = libbpf_num_possible_cpus();
	uint64_t *zero = lp_calloc(n > 0 ? n : 1, sizeof(*zero));
	for (key = 0; n > 0 && key < LP_CNT_NR; key++)
		bpf_map__update_elem(r->skel->maps.lp_counters, &key, sizeof(key), zero,
				     n * sizeof(*zero), BPF_ANY);
	free(zero);
	r->cal_time_ns = lp_monotonic_ns();
	r->self = (pid_t)self;
	return rc;
}

static int write_costs(struct lp_recorder *r)
{
	struct lp_attrs_buf a = { 0 };
	char buf[64];
	int rc = 0;

	if (r->have_sample_cost) {
		struct lp_cost c = { .time_ns = r->cal_time_ns, .what = "sample",
				     .ns = round(r->sample_cost.ns) };

		lp_attrs_buf__add(&a, "unwind", call_graph_name(r->opts.call_graph));
		snprintf(buf, sizeof(buf), "%u", r->opts.freq);
		lp_attrs_buf__add(&a, "freq_hz", buf);
		snprintf(buf, sizeof(buf), "%.0f", round(r->sample_cost.sd_ns));
		lp_attrs_buf__add(&a, "sd_ns", buf);
		snprintf(buf, sizeof(buf), "%zu", r->sample_cost.n);
		lp_attrs_buf__add(&a, "n", buf);
		c.attrs = lp_attrs_buf__attrs(&a);
		rc = lp_writer__cost(r->w, &c);
	}
	if (rc == 0 && r->have_block_cost) {
		struct lp_cost c = { .time_ns = r->cal_time_ns, .what = "block",
				     .ns = round(r->block_cost.ns) };

		lp_attrs_buf__reset(&a);
		snprintf(buf, sizeof(buf), "%.0f", round(r->block_cost.sd_ns));
		lp_attrs_buf__add(&a, "sd_ns", buf);
		snprintf(buf, sizeof(buf), "%zu", r->block_cost.n);
		lp_attrs_buf__add(&a, "n", buf);
		lp_attrs_buf__add(&a, "how", "clock");
		c.attrs = lp_attrs_buf__attrs(&a);
		rc = lp_writer__cost(r->w, &c);
	}
	lp_attrs_buf__free(&a);
	return rc < 0 ? write_failed(r) : 0;
}

/* The recorder's options settled, its buffers, the symbolizer and the
 * unwinder: everything but BPF.  -1 after a message. */
static int recorder_init(struct lp_recorder *r, const struct lp_record_opts *opts)
{
	r->opts = *opts;
	lp_hashmap__init(&r->endings);
	r->max_user_frames = opts->stack_depth && opts->stack_depth < LP_DWARF_MAX_FRAMES
			     ? opts->stack_depth : LP_DWARF_MAX_FRAMES;
	if (!r->opts.max_pids)
		r->opts.max_pids = LP_TARGET_MAX_PIDS;
	if (!r->opts.stack_depth || r->opts.stack_depth > LP_MAX_STACK_DEPTH)
		r->opts.stack_depth = LP_MAX_STACK_DEPTH;
	if (!r->opts.stack_memory)
		r->opts.stack_memory = LP_STACK_MEMORY;
	/* perf events cannot grow one thread's copy as the BPF sampler does:
	 * one size for all, twice the BPF sampler's first. */
	if (opts->call_graph == LP_CALL_GRAPH_AUTO && !opts->dwarf_bytes)
		r->opts.dwarf_bytes = opts->backend == LP_BACKEND_PERF ? 2 * LP_AUTO_STACK_COPY
								  : LP_AUTO_STACK_COPY;
	if (opts->call_graph == LP_CALL_GRAPH_FP)
		r->opts.dwarf_bytes = 0;
	opts = &r->opts;
	/* One Dwfl per sampled process keeps its binaries open: with -a, many
	 * files.  The soft limit of open files up to the hard one. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	lp_bpflog__init(opts->verbose);
	r->ncpus = libbpf_num_possible_cpus();
	if (r->ncpus <= 0) {
		lp_error("cannot count the CPUs: %s", strerror(-r->ncpus));
		return -1;
	}
	r->perf_fds = lp_calloc(r->ncpus, sizeof(*r->perf_fds));
	for (int i = 0; i < r->ncpus; i++)
		r->perf_fds[i] = -1;
	r->links = lp_calloc(r->ncpus, sizeof(*r->links));
	r->period_ns = 1e9 / opts->freq;
	/* Every user address may expand into inlined frames. */
	r->frames = lp_calloc((LP_DWARF_MAX_FRAMES + LP_MAX_FRAMES) * (1 + LP_SYM_MAX_INLINE),
			      sizeof(*r->frames));
	r->pcs = lp_calloc(LP_DWARF_MAX_FRAMES, sizeof(*r->pcs));
	r->ret = lp_calloc(LP_DWARF_MAX_FRAMES, 1);
	r->dict = lp_dict__new();
	r->sym = lp_symbolizer__new(r->dict);
	lp_symbolizer__set_options(r->sym, opts->inlines, opts->srclines);
	lp_symbolizer__set_raw(r->sym, opts->raw);
	lp_symbolizer__set_demangle(r->sym, !opts->no_demangle);
	/* Before sampling starts: loading it at the first kernel frame would
	 * keep the reader away from the ring, and from the maps of processes
	 * that start and end meanwhile. */
	if (opts->kernel)
		lp_symbolizer__load_kernel(r->sym);
	r->unw = lp_unwinder__new(r->sym);
	/* Python frames need the symbols (CPython's interpreter frames are
	 * found by name) and live processes: not with --raw; and the BPF
	 * sampler, which walks them at the sample. */
	if (!opts->no_python && !opts->raw && opts->backend == LP_BACKEND_BPF) {
		r->py = lp_python__new(r->dict, r->sym);
		lp_hashmap__init(&r->py_ev);
		r->py_frames = lp_calloc((LP_DWARF_MAX_FRAMES + LP_MAX_FRAMES) * (1 + LP_SYM_MAX_INLINE) +
					 LP_PY_MAX_FRAMES, sizeof(*r->py_frames));
	}
	return 0;
}

/* The BPF program opened, set for the options (constants, map sizes, the
 * programs the mode needs) and loaded, with its ring.  -1 after a
 * message. */
static char *saved_maps(void *arg, pid_t pid)
{
	return lp_execmaps__get(arg, pid);
}

static int load_bpf(struct lp_recorder *r)
{
	const struct lp_record_opts *opts = &r->opts;
	static const enum lp_kfeature needed[] = { LP_KF_BTF, LP_KF_RINGBUF, LP_KF_TP_BTF,
						   LP_KF_TASK_REGS, LP_KF_LOOP, LP_KF_COPY_TASK };
	if (lp_kfeatures__require(needed, sizeof(needed) / sizeof(needed[0]), "sample", "lp-record") < 0)
		return -1;
	if (opts->mode != LP_RECORD_CPU && !lp_kfeature__has(LP_KF_TASK_ITER)) {
		lp_error("cannot record blocked threads on this kernel: off and wall need %s (lp-record --features)",
			 lp_kfeature__what(LP_KF_TASK_ITER));
		return -1;
	}
	r->skel = profile_bpf__open();
	if (!r->skel) {
		lp_error_errno("cannot open the BPF program");
		return -1;
	}
	struct profile_bpf__rodata *ro = r->skel->rodata;
	ro->filter_pids = opts->npids > 0;
	ro->follow_forks = opts->follow;
	ro->kernel_stacks = opts->kernel;
	ro->user_stacks = true;
	ro->stack_copy = opts->dwarf_bytes;
	ro->fp_chain = opts->call_graph != LP_CALL_GRAPH_DWARF;
	/* A blocked thread's copy is kept until it runs again: at most
	 * LP_OFF_STACK_COPY; the wrapper's frames only with frame pointers. */
	ro->off_copy = !opts->dwarf_bytes ? LP_OFF_FP_COPY
		       : opts->dwarf_bytes < LP_OFF_STACK_COPY ? opts->dwarf_bytes
		       : LP_OFF_STACK_COPY;
	ro->min_block_ns = opts->min_block_ns;
	ro->runnable_intervals = opts->mode == LP_RECORD_WALL;
	ro->stack_depth = opts->stack_depth;
	ro->ri_pool = lp_kfeature__has(LP_KF_RI_POOL);
	bpf_map__set_max_entries(r->skel->maps.lp_pids, opts->max_pids);
	if (opts->mode == LP_RECORD_OFF)
		bpf_program__set_autoload(r->skel->progs.lp_rec_sample, false);
	if (opts->mode == LP_RECORD_CPU) {
		bpf_program__set_autoload(r->skel->progs.lp_rec_switch, false);
		bpf_program__set_autoload(r->skel->progs.lp_rec_wakeup, false);
		bpf_program__set_autoload(r->skel->progs.lp_rec_seed, false);
	}
	/* Samples with copies are big: a bigger ring, so a slow writer loses
	 * less. */
	size_t ring = opts->ring_bytes ? opts->ring_bytes : opts->dwarf_bytes ? 32u << 20 : 4u << 20;
	ro->wakeup_bytes = ring / 4;
	bpf_map__set_max_entries(r->skel->maps.lp_ring, ring);
	bpf_map__set_max_entries(r->skel->maps.lp_scratch, r->ncpus + 1);
	ro->seed_slot = r->ncpus;
	/* With -a too: its forks are announced to the symbolizer. */
	if (opts->npids && !opts->follow)
		bpf_program__set_autoload(r->skel->progs.lp_rec_fork, false);
	/* Exits leave the pid set, and forget Python thread states. */
	if (opts->npids == 0 && !r->py)
		bpf_program__set_autoload(r->skel->progs.lp_rec_exit, false);

	/* --inside: the gate's open calls, in lp-trace's map. */
	if (opts->inside && bpf_map__reuse_fd(r->skel->maps.lp_gate, opts->gate_fd) < 0) {
		lp_error_errno("cannot share the map of the --inside probes");
		return -1;
	}
	int err = profile_bpf__load(r->skel);
	if (err) {
		errno = -err;
		lp_error_errno("cannot load the BPF program%s",
			       opts->verbose ? "" : " (-v shows the verifier log)");
		return -1;
	}
	r->ring = ring_buffer__new(bpf_map__fd(r->skel->maps.lp_ring), handle_sample, r, NULL);
	if (!r->ring) {
		lp_error_errno("cannot open the ring buffer");
		return -1;
	}
	/* Targets' children may exec, run and end while the reader is
	 * behind: their maps are read by a thread of their own at the exec
	 * (not with -a, where every exec would be read). */
	if (opts->npids) {
		if (!(r->execmaps = lp_execmaps__new(bpf_map__fd(r->skel->maps.lp_execs)))) {
			lp_error_errno("cannot start the thread that reads new programs' maps");
			return -1;
		}
		lp_symbolizer__set_saved_maps(r->sym, saved_maps, r->execmaps);
	}
	return 0;
}

static int attach_task_event(struct bpf_program *prog, struct bpf_link **link, const char *tp)
{
	*link = bpf_program__attach(prog);
	if (!*link) {
		lp_error_errno("cannot attach to %s", tp);
		return -1;
	}
	return 0;
}

/* The processes' execs, forks (when children are followed, or with -a,
 * whose forks are announced to the symbolizer) and exits (with -p: a
 * target that exits frees its pid, which the kernel may give to a process
 * not ours). */
static int attach_tasks(struct lp_recorder *r)
{
	const struct lp_record_opts *opts = &r->opts;
	if (attach_task_event(r->skel->progs.lp_rec_exec, &r->skel->links.lp_rec_exec,
			      "sched_process_exec") < 0)
		return -1;
	if ((!opts->npids || opts->follow) &&
	    attach_task_event(r->skel->progs.lp_rec_fork, &r->skel->links.lp_rec_fork,
			      "sched_process_fork") < 0)
		return -1;
	if ((opts->npids || r->py) &&
	    attach_task_event(r->skel->progs.lp_rec_exit, &r->skel->links.lp_rec_exit,
			      "sched_process_exit") < 0)
		return -1;
	return 0;
}

/* --backend perf: the targets' events opened (disabled), the cost of a
 * sample measured on events of its own, the header, then sampling.  -1
 * after a message. */
static int open_perf_backend(struct lp_recorder *r)
{
	if (r->opts.mode != LP_RECORD_CPU || r->opts.inside) {
		lp_error("--backend perf: %s needs the BPF backend (root, or CAP_BPF and "
			 "CAP_PERFMON)", r->opts.inside ? "--inside" : "--mode off and wall");
		return -1;
	}
	if (!(r->perf = open_perf(r, 0)))
		return -1;
	r->event = lp_perfrec__event(r->perf);
	if (r->opts.calibrate_ns > 0) {
		r->calibrating = true;
		int rc = calibrate_samples(r, r->opts.calibrate_ns);
		r->calibrating = false;
		r->cal_time_ns = lp_monotonic_ns();
		if (rc < 0)
			return -1;
	}
	if (write_header(r) < 0 || write_costs(r) < 0) {
		if (errno != EPIPE)
			lp_error_errno("cannot write the output");
		return -1;
	}
	set_events(r, true);
	return 0;
}

struct lp_recorder *lp_recorder__open(const struct lp_record_opts *opts, struct lp_writer *w)
{
	struct lp_recorder *r = lp_calloc(1, sizeof(*r));
	r->w = w;
	if (recorder_init(r, opts) < 0)
		goto fail;
	if (r->opts.backend == LP_BACKEND_PERF) {
		if (open_perf_backend(r) < 0)
			goto fail;
		return r;
	}
	if (load_bpf(r) < 0)
		goto fail;
	opts = &r->opts;
	if (opts->mode != LP_RECORD_OFF && open_events(r) < 0)
		goto fail;
	/* Before the targets join the pid set: none of their samples is
	 * taken and dropped. */
	if (opts->calibrate_ns > 0 && calibrate(r) < 0)
		goto fail;
	/* Gated only now: the calibration's samples are lp-record's own. */
	if (opts->inside)
		lp_recorder__gate(r, opts->inside);
	for (size_t i = 0; i < opts->npids; i++)
		if (lp_recorder__add_pid(r, opts->pids[i]) < 0)
			goto fail;
	if (attach_tasks(r) < 0)
		goto fail;
	if (opts->mode == LP_RECORD_OFF)
		r->event = "offcpu";
	else if (opts->mode == LP_RECORD_WALL)
		/* One event for every sample: lp-collapse and lp-diff keep one
		 * event per input, and a wall profile is one whole. */
		r->event = "wall";
	if (write_header(r) < 0 || write_costs(r) < 0) {
		if (errno != EPIPE)
			lp_error_errno("cannot write the output");
		goto fail;
	}
	/* Sampling starts only now, with everything in place. */
	if (opts->mode != LP_RECORD_CPU && (attach_sched(r) < 0 || seed_intervals(r) < 0))
		goto fail;
	if (opts->mode != LP_RECORD_CPU)
		seed_python(r);
	set_events(r, true);
	return r;
fail:
	lp_recorder__free(r);
	return NULL;
}

int lp_recorder__add_pid(struct lp_recorder *r, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map__update_elem(r->skel->maps.lp_pids, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY) < 0) {
		if (errno == E2BIG)
			lp_error("cannot add pid %d to the filter: more targets than --max-pids %u",
				 (int)pid, (unsigned)r->opts.max_pids);
		else
			lp_error_errno("cannot add pid %d to the filter", (int)pid);
		return -1;
	}
	/* A Python process's frames from its first sample on. */
	check_python(r, pid);
	return 0;
}

/* Writes a lost record for what a kernel counter (now lost) gained since
 * the last one written; *seen keeps its latest value for the summary. */
static int flush_counter(struct lp_recorder *r, uint64_t lost, const char *kind, uint64_t *seen,
			 uint64_t *written)
{
	*seen = lost;
	if (lost <= *written)
		return 0;
	if (write_lost(r, kind, lost - *written) < 0)
		return -1;
	*written = lost;
	return 0;
}

static int flush_lost(struct lp_recorder *r)
{
	uint64_t c[LP_CNT_NR] = { 0 };

	if (r->perf)
		c[LP_CNT_RING_FULL] = lp_perfrec__lost(r->perf);
	else
		counters(r, c);
	if (flush_counter(r, c[LP_CNT_RING_FULL], "ring", &r->ring_lost, &r->ring_lost_written) < 0 ||
	    flush_counter(r, c[LP_CNT_OFF_FULL], "offcpu-map", &r->off_lost,
			  &r->off_lost_written) < 0 ||
	    flush_counter(r, c[LP_CNT_OFF_UNSEEN], "offcpu-unseen", &r->off_unseen,
			  &r->off_unseen_written) < 0 ||
	    flush_counter(r, c[LP_CNT_CHILDREN], "children", &r->children,
			  &r->children_written) < 0)
		return -1;
	r->outside = c[LP_CNT_OUTSIDE];
	return 0;
}

int lp_recorder__poll(struct lp_recorder *r, int timeout_ms)
{
	if (r->failed)
		return write_failed(r);
	/* Samples arrive without a wakeup (see wakeup_bytes): sleep, then take
	 * whatever is there.  An exec wakes us; a pending re-read of a new
	 * program's mappings shortens the sleep. */
	int64_t now = lp_monotonic_ns();
	for (size_t i = 0; i < r->npending; i++) {
		int64_t left = r->pending[i].due_ns - now;
		int ms = left <= 0 ? 0 : (int)(left / 1000000) + 1;

		if (ms < timeout_ms)
			timeout_ms = ms;
	}
	bool behind = drain(r, timeout_ms);
	run_pending(r, lp_monotonic_ns());
	if (r->failed)
		return write_failed(r);
	if (flush_lost(r) < 0)
		return -1;
	/* Twice a second: forget processes that have exited.  Often: each
	 * process's modules take some 0.4 MB of libdw's, and with processes
	 * coming and going (-a) that is what lp-record's memory is.  After a
	 * drain that emptied the ring, so a process seen gone by one reap
	 * and freed by the next has had every sample read; while lp-record
	 * is behind, every 2 s all the same, or a recorder that never
	 * catches up would keep every process it ever saw. */
	now = lp_monotonic_ns();
	if (now - r->reaped_ns > (behind ? 4 * LP_REAP_NS : LP_REAP_NS)) {
		/* glibc keeps what is freed in the heap, between blocks
		 * still in use: given back now, or the resident memory stays
		 * at its peak (here, after processes came and went for 20 s:
		 * 240 MB resident, 51 MB of it in use; 2 to 13 ms a call). */
		if (lp_symbolizer__reap(r->sym))
			malloc_trim(0);
		reap_python(r);
		r->reaped_ns = now;
	}
	return 0;
}

void lp_recorder__stop(struct lp_recorder *r)
{
	if (r)
		set_events(r, false);
	if (r && r->skel && r->skel->links.lp_rec_switch) {
		/* No interval starts or ends after this: the ones still open
		 * are closed now by lp_recorder__finish. */
		bpf_link__destroy(r->skel->links.lp_rec_switch);
		r->skel->links.lp_rec_switch = NULL;
		r->stop_ns = lp_monotonic_ns();
	}
}

int lp_recorder__pause(struct lp_recorder *r, bool paused)
{
	if (r->opts.mode != LP_RECORD_CPU) {
		lp_error("control: %s: only in --mode cpu (an off-CPU interval would span the pause)",
			 paused ? "pause" : "resume");
		return -1;
	}
	set_events(r, !paused);
	return 0;
}

int lp_recorder__gate_fd(const struct lp_recorder *r)
{
	return r->skel ? bpf_map__fd(r->skel->maps.lp_gate) : -1;
}

void lp_recorder__gate(struct lp_recorder *r, const char *names)
{
	if (!r->skel)
		return;
	r->skel->bss->gate_on = names != NULL;
	if (!names)
		return;
	/* The summary names every function gated on in the run, once. */
	size_t len = r->gated ? strlen(r->gated) : 0, n = strlen(names);
	for (const char *g = r->gated; g; g = strchr(g, ',') ? strchr(g, ',') + 1 : NULL)
		if (!strncmp(g, names, n) && (g[n] == ',' || !g[n]))
			return;
	r->gated = lp_reallocarray(r->gated, len + n + 2, 1);
	snprintf(r->gated + len, n + 2, "%s%s", len ? "," : "", names);
}

void lp_recorder__gate_clear(struct lp_recorder *r)
{
	int fd = lp_recorder__gate_fd(r);
	uint64_t key;

	while (bpf_map_get_next_key(fd, NULL, &key) == 0)
		bpf_map_delete_elem(fd, &key);
}

/* Threads still off the CPU when recording stopped: their intervals end at
 * the stop, so a thread asleep all along still has its wall time. */
/* One interval closed at the stop, with its Python frames (pe, or NULL:
 * none), dated as the kernel would have sent them. */
static void close_interval(struct lp_recorder *r, struct lp_off_sample *o, struct lp_py_event *pe)
{
	if (pe) {
		pe->time_ns = o->ev.time_ns;
		pe->flags = LP_EV_PYTHON;
		keep_python(r, pe, sizeof(*pe));
	}
	handle_sample(r, o, sizeof(o->ev) + o->ev.stack_bytes);
}

static void close_intervals(struct lp_recorder *r)
{
	struct lp_off_sample *o = lp_malloc(sizeof(*o));
	struct lp_sample_event *v = &o->ev;
	struct lp_py_event *pe = lp_malloc(sizeof(*pe));
	int fd = bpf_map__fd(r->skel->maps.lp_off), pyfd = bpf_map__fd(r->skel->maps.lp_py_off);
	__u32 key, next, *prev = NULL;

	while (!r->failed && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, o) < 0 || v->time_ns >= (__u64)r->stop_ns)
			continue;
		bool py = r->py && bpf_map_lookup_elem(pyfd, &key, pe) == 0;
		uint64_t end = (uint64_t)r->stop_ns, wake = v->wake_ns;

		if (v->state == LP_STATE_BLOCKED) {
			uint64_t bend = wake && wake < end ? wake : end;

			if (bend - v->time_ns >= r->opts.min_block_ns) {
				v->weight_ns = bend - v->time_ns;
				close_interval(r, o, py ? pe : NULL);
			}
			if (r->opts.mode == LP_RECORD_WALL && wake && wake < end) {
				v->state = LP_STATE_RUNNABLE;
				v->time_ns = wake;
				v->weight_ns = end - wake;
				close_interval(r, o, py ? pe : NULL);
			}
		} else if (r->opts.mode == LP_RECORD_WALL) {
			v->weight_ns = end - v->time_ns;
			close_interval(r, o, py ? pe : NULL);
		}
	}
	free(o);
	free(pe);
}

int lp_recorder__finish(struct lp_recorder *r)
{
	lp_recorder__stop(r);
	/* Every sample taken before the stop: nothing comes after it. */
	while (!r->failed && drain(r, 0))
		;
	if (!r->failed && r->opts.mode != LP_RECORD_CPU)
		close_intervals(r);
	if (r->failed)
		return write_failed(r);
	if (flush_lost(r) < 0)
		return -1;
	if (write_lost(r, "unwind", r->unwind_failed + r->ustack_failed) < 0 ||
	    write_lost(r, "truncated", r->truncated) < 0)
		return -1;
	return 0;
}

void lp_recorder__counts(const struct lp_recorder *r, char *buf, size_t size)
{
	struct lp_symbolizer_stats st;
	char children[64] = "", outside[320] = "";

	lp_symbolizer__stats(r->sym, &st);
	if (r->children)
		snprintf(children, sizeof(children), ", %" PRIu64 " children not followed (pid set full)",
			 r->children);
	/* --inside: what the gate kept out, after the counts of what is in. */
	if (r->gated)
		snprintf(outside, sizeof(outside), ", %" PRIu64 " outside %.200s (not written)",
			 r->outside, r->gated);
	if (r->opts.mode == LP_RECORD_OFF) {
		snprintf(buf, size, "%" PRIu64 " off-CPU intervals, %" PRIu64 " lost (ring full), %" PRIu64
			 " lost (map full), %" PRIu64 " lost (end unreported), %" PRIu64
			 " unwinds failed, %" PRIu64 " truncated%s%s; %" PRIu64 " processes, %" PRIu64
			 " modules symbolized",
			 r->blocked + r->runnable, r->ring_lost, r->off_lost, r->off_unseen,
			 r->unwind_failed + r->ustack_failed, r->truncated, children, outside, st.procs,
			 st.modules);
		return;
	}
	if (r->opts.mode == LP_RECORD_WALL) {
		/* Every sample the stream holds, then by state. */
		snprintf(buf, size, "%" PRIu64 " samples (wall: %" PRIu64 " running at %u Hz, %" PRIu64
			 " blocked, %" PRIu64 " runnable; %s), %" PRIu64
			 " lost (ring full), %" PRIu64 " lost (map full), %" PRIu64
			 " lost (end unreported), %" PRIu64 " unwinds failed, %" PRIu64
			 " truncated%s%s; %" PRIu64 " processes, %" PRIu64 " modules symbolized",
			 r->running + r->blocked + r->runnable, r->running, r->opts.freq, r->blocked,
			 r->runnable, call_graph_name(r->opts.call_graph), r->ring_lost, r->off_lost, r->off_unseen,
			 r->unwind_failed + r->ustack_failed, r->truncated, children, outside, st.procs,
			 st.modules);
		return;
	}
	snprintf(buf, size, "%" PRIu64 " samples (%s at %u Hz, %s), %" PRIu64 " lost (ring full), %" PRIu64
		 " unwinds failed, %" PRIu64 " truncated%s%s; %" PRIu64 " processes, %" PRIu64
		 " modules symbolized",
		 r->running, r->event ? r->event : "-", r->opts.freq,
		 call_graph_name(r->opts.call_graph), r->ring_lost,
		 r->unwind_failed + r->ustack_failed, r->truncated, children, outside, st.procs, st.modules);
}

/* Microseconds of the whole nanoseconds the cost record holds, so that the
 * summary says what the stream says (14,749.6 ns is 14.7 us, its record's
 * 14750 ns 14.8). */
static double record_us(double ns)
{
	return round(ns) / 1e3;
}

/* What lp-record cost the threads it sampled, after the summary line. */
static void cost_summary(const struct lp_recorder *r)
{
	if (r->have_sample_cost)
		lp_error("each sample cost the sampled thread ~%.1f us (sd %.1f us, %s, %u Hz, "
			 "calibrated on %zu samples)",
			 record_us(r->sample_cost.ns), record_us(r->sample_cost.sd_ns),
			 call_graph_name(r->opts.call_graph), r->opts.freq, r->sample_cost.n);
	if (r->have_block_cost)
		lp_error("each blocked interval cost its thread ~%.1f us (sd %.1f us, calibrated "
			 "on %zu intervals)",
			 record_us(r->block_cost.ns), record_us(r->block_cost.sd_ns), r->block_cost.n);
}

static int ending_cmp(const void *a, const void *b)
{
	const struct lp_ending *x = *(const struct lp_ending *const *)a;
	const struct lp_ending *y = *(const struct lp_ending *const *)b;
	int c = (y->count > x->count) - (y->count < x->count);

	return c ? c : strcmp(x->module, y->module);
}

/* What a stack ending early in a module says of it, and what to do: by
 * the reason its unwinding gave (libdw's own messages as they are). */
static const char *remedy(const char *why)
{
	static const struct {
		const char *why, *remedy;
	} remedies[] = {
		{ "broken-chain", "built without frame pointers: the default --call-graph auto "
				  "unwinds it" },
		{ "end-of-copy", "deeper than the stack copy (with --call-graph auto it grows to "
				 "64 KiB per thread)" },
		{ "end-of-chain", "the frame-pointer chain ends in a function that keeps none, "
				  "past the stack copy" },
		{ "max-frames", "more frames than --stack-depth" },
		{ "uretprobe", "the uretprobe trampoline, the real return address "
				       "not held where the kernel keeps it (a tick while a return "
				       "probe was being set up: the probe's own time)" },
		{ "no-user-stack", "the kernel gave no user stack" },
	};

	if (!why)
		return "no CFI to go on from there (a module without unwind tables, or JIT code "
		       "without frame pointers)";
	for (size_t i = 0; i < sizeof(remedies) / sizeof(remedies[0]); i++)
		if (!strcmp(why, remedies[i].why))
			return remedies[i].remedy;
	return why;
}

/* How many stacks are whole, and where the others end: the three modules
 * most of them end in, with what to do about it. */
static void stacks_summary(const struct lp_recorder *r)
{
	struct lp_ending **v;
	size_t n = 0;

	if (!r->stacks)
		return;
	v = lp_calloc(r->endings.count + 1, sizeof(*v));
	for (size_t i = 0; i < r->endings.cap; i++)
		if (r->endings.keys[i])
			v[n++] = r->endings.values[i];
	qsort(v, n, sizeof(*v), ending_cmp);
	lp_error("%.1f%% of %" PRIu64 " user stacks whole (reach their thread's start)%s",
		 100.0 * r->whole / r->stacks, r->stacks, n ? "; the others end in:" : "");
	for (size_t i = 0; i < n && i < 3; i++)
		lp_error("  %.1f%% in %s: %s", 100.0 * v[i]->count / r->stacks, v[i]->module,
			 remedy(v[i]->why));
	free(v);
}

/* --backend perf: what its events could not see. */
static void perf_notes(const struct lp_recorder *r)
{
	if (!r->perf)
		return;
	if (lp_perfrec__user_only(r->perf))
		lp_error("perf events as an ordinary user: no sample while a thread ran in the "
			 "kernel (system calls, page faults); root or CAP_PERFMON sees those too");
	if (lp_perfrec__throttled(r->perf))
		lp_error("the kernel throttled sampling %" PRIu64 " times "
			 "(kernel.perf_event_max_sample_rate): a lower -F", lp_perfrec__throttled(r->perf));
}

void lp_recorder__notes(const struct lp_recorder *r)
{
	perf_notes(r);
	stacks_summary(r);
	lp_writer__stacks_note(r->w);
	lp_python__notes(r->py);
	cost_summary(r);
}

/* A map whose values are malloc'd, and they, freed. */
static void free_values(struct lp_hashmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			free(m->values[i]);
	lp_hashmap__fini(m);
}

void lp_recorder__free(struct lp_recorder *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ncpus; i++) {
		bpf_link__destroy(r->links[i]);
		if (r->perf_fds[i] >= 0)
			close(r->perf_fds[i]);
	}
	ring_buffer__free(r->ring);
	lp_execmaps__free(r->execmaps);
	profile_bpf__destroy(r->skel);
	lp_perfrec__free(r->perf);
	lp_unwinder__free(r->unw);
	if (r->py)
		free_values(&r->py_ev);
	lp_python__free(r->py);
	free(r->py_frames);
	lp_symbolizer__free(r->sym);
	free_values(&r->endings);
	lp_dict__free(r->dict);
	lp_attrs_buf__free(&r->attrs);
	free(r->perf_fds);
	free(r->links);
	free(r->frames);
	free(r->pcs);
	free(r->ret);
	free(r->cal_times);
	free(r->gated);
	free(r);
}
