/* record.c - lp-record's engine, its lifecycle: the BPF glue (open, set
 * rodata, load, attach to per-CPU perf events, poll the ring, drain,
 * detach), or --backend perf's events instead, with the header and the
 * lost records; what each raw sample becomes is record-stack.c's, and the
 * other pieces, record-*.c, share record-internal.h.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/types.h>
/* bpf/profile.h by path: lib/model/profile.h is another header. */
#include "bpf/profile.h"
#include "capture/bpflog.h"
#include "capture/counters.h"
#include "base/hashmap.h"
#include "capture/record/execmaps.h"
#include "capture/kfeatures.h"
#include "capture/record/perfrec.h"
#include "profile.skel.h"
#include "capture/python.h"
#include "capture/record/record.h"
#include "capture/record/record-internal.h"
#include "debuginfo/symbolize.h"
#include "capture/target.h"
#include "debuginfo/unwind.h"
#include "base/util.h"

_Static_assert(LP_RECORD_MAX_STACK_DEPTH == LP_MAX_STACK_DEPTH, "record.h and profile.h");

/* Frames a stack can have: kernel + user, and DWARF unwinds as deep. */
#define LP_MAX_FRAMES (2 * LP_MAX_STACK_DEPTH + 2)
#define LP_DWARF_MAX_FRAMES 1024

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

int lp_recorder_write_failed(struct lp_recorder *r)
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

const char *lp_recorder_call_graph_name(enum lp_call_graph g)
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
	lp_attrs_buf__add(&a, "unwind", lp_recorder_call_graph_name(r->opts.call_graph));
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
	return rc < 0 ? lp_recorder_write_failed(r) : 0;
}

static int write_lost(struct lp_recorder *r, const char *what, uint64_t count)
{
	struct lp_lost l = { .time_ns = r->last_time ? (int64_t)r->last_time : LP_TIME_NONE,
			     .what = what, .count = count };

	if (!count || r->failed)
		return 0;
	return lp_writer__lost(r->w, &l) < 0 ? lp_recorder_write_failed(r) : 0;
}

/* The kernel's per-CPU counters (lp_counters), each summed over the CPUs,
 * into sums[LP_CNT_NR]: one system call for all (this runs at every poll,
 * and one lookup per counter was ~5% of lp-record's CPU under load).
 * Returns -1, sums zero, when they cannot be read. */
static int counters(struct lp_recorder *r, uint64_t *sums)
{
	return lp_counters__read(bpf_map__fd(r->skel->maps.lp_counters), LP_CNT_NR, sums);
}

void lp_recorder_set_events(struct lp_recorder *r, bool on)
{
	if (r->perf) {
		lp_perfrec__enable(r->perf, on);
		return;
	}
	for (int i = 0; r->perf_fds && i < r->ncpus; i++)
		if (r->perf_fds[i] >= 0)
			ioctl(r->perf_fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* How long one drain of the BPF ring may read: samples may come faster
 * than they are read (lp-record -a on a busy machine), and
 * ring_buffer__consume reads until the ring is empty, which it then never
 * is: lp-record would never see its stop, at 100% of a CPU. */
#define LP_DRAIN_NS 100000000LL

/* How often exited processes are looked for (lp_recorder__poll). */
#define LP_REAP_NS 500000000LL

int lp_recorder_handle_sample(void *ctx, void *data, size_t size)
{
	struct lp_recorder *r = ctx;
	int rc = lp_recorder_read_sample(r, data, size);

	if (rc == 0 && r->drain_until && (++r->drained & 63) == 0 &&
	    lp_monotonic_ns() >= r->drain_until) {
		r->drain_cut = true;
		return -EAGAIN;	/* this one is read: the rest at the next drain */
	}
	return rc;
}

/* Waits up to timeout_ms for samples, then reads what there is, for at
 * most LP_DRAIN_NS: true when it stopped there, with more to read.  (The
 * calibration's samples and intervals are read and dropped as they come,
 * or after each of its phases, so the ring never fills for them.)
 * libperf's rings are read up to where they were when the read began:
 * bounded already. */
bool lp_recorder_drain(struct lp_recorder *r, int timeout_ms)
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
struct lp_perfrec *lp_recorder_open_perf(struct lp_recorder *r, pid_t tid)
{
	struct lp_perfrec_opts po = {
		.pids = tid ? NULL : r->opts.pids, .npids = tid ? 0 : r->opts.npids, .tid = tid,
		.follow = r->opts.follow, .freq = r->opts.freq, .kernel = r->opts.kernel,
		.stack_bytes = r->opts.dwarf_bytes, .stack_depth = r->opts.stack_depth,
		.ring_bytes = r->opts.ring_bytes, .verbose = r->opts.verbose,
	};

	return lp_perfrec__open(&po, lp_recorder_handle_sample, r);
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

/* The maps of a process gone before its samples were read (execmaps.h). */
static char *saved_maps(void *arg, pid_t pid)
{
	return lp_execmaps__get(arg, pid);
}

/* The BPF program opened, set for the options (constants, map sizes, the
 * programs the mode needs) and loaded, with its ring.  -1 after a
 * message. */
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
	r->ring = ring_buffer__new(bpf_map__fd(r->skel->maps.lp_ring), lp_recorder_handle_sample, r,
				   NULL);
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
	if (!(r->perf = lp_recorder_open_perf(r, 0)))
		return -1;
	r->event = lp_perfrec__event(r->perf);
	if (r->opts.calibrate_ns > 0) {
		r->calibrating = true;
		int rc = lp_recorder_calibrate_samples(r, r->opts.calibrate_ns);
		r->calibrating = false;
		r->cal_time_ns = lp_monotonic_ns();
		if (rc < 0)
			return -1;
	}
	if (write_header(r) < 0 || lp_recorder_write_costs(r) < 0) {
		if (errno != EPIPE)
			lp_error_errno("cannot write the output");
		return -1;
	}
	lp_recorder_set_events(r, true);
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
	if (opts->calibrate_ns > 0 && lp_recorder_calibrate(r) < 0)
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
	if (write_header(r) < 0 || lp_recorder_write_costs(r) < 0) {
		if (errno != EPIPE)
			lp_error_errno("cannot write the output");
		goto fail;
	}
	/* Sampling starts only now, with everything in place. */
	if (opts->mode != LP_RECORD_CPU &&
	    (lp_recorder_attach_sched(r) < 0 || lp_recorder_seed_intervals(r) < 0))
		goto fail;
	if (opts->mode != LP_RECORD_CPU)
		lp_recorder_seed_python(r);
	lp_recorder_set_events(r, true);
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
	lp_recorder_check_python(r, pid);
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
		return lp_recorder_write_failed(r);
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
	bool behind = lp_recorder_drain(r, timeout_ms);
	lp_recorder_run_pending(r, lp_monotonic_ns());
	if (r->failed)
		return lp_recorder_write_failed(r);
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
		lp_recorder_reap_python(r);
		r->reaped_ns = now;
	}
	return 0;
}

void lp_recorder__stop(struct lp_recorder *r)
{
	if (r)
		lp_recorder_set_events(r, false);
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
	lp_recorder_set_events(r, !paused);
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

int lp_recorder__finish(struct lp_recorder *r)
{
	lp_recorder__stop(r);
	/* Every sample taken before the stop: nothing comes after it. */
	while (!r->failed && lp_recorder_drain(r, 0))
		;
	if (!r->failed && r->opts.mode != LP_RECORD_CPU)
		lp_recorder_close_intervals(r);
	if (r->failed)
		return lp_recorder_write_failed(r);
	if (flush_lost(r) < 0)
		return -1;
	if (write_lost(r, "unwind", r->unwind_failed + r->ustack_failed) < 0 ||
	    write_lost(r, "truncated", r->truncated) < 0)
		return -1;
	return 0;
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
