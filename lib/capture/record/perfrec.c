/* perfrec.c - the perf-event backend of lp-record (perfrec.h): libperf's
 * event lists, thread and CPU maps and ring reader; the parsing of each
 * sample (libperf leaves that to its user) into bpf/profile.h's form.
 *
 * Events: one per CPU per thread of the targets (the kernel maps no ring of
 * an inherited per-thread event without a CPU), inherited by the threads
 * and, when children are followed, the processes they start; as perf
 * record does, a sample of the user registers and of the top of the user
 * stack for DWARF unwinding, and the callchain, whose user part is the
 * frame-pointer chain.  Times are CLOCK_MONOTONIC, as bpf_ktime_get_ns's,
 * so lp-trace's spans and these samples share one clock. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include "bpf/profile.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "capture/record/perfrec.h"

/* The registers taken at a sample, in the order the kernel writes them (by
 * bit number): bp, sp, ip. */
#define LP_REGS_MASK ((1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) | \
		      (1ULL << PERF_REG_X86_IP))
#define LP_SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | \
			PERF_SAMPLE_REGS_USER)
/* A sample record's size is 16 bits: what a copy may be, with room for
 * the rest of the record (a whole callchain and the registers). */
#define LP_PERF_MAX_COPY (65536 - 2048)

struct lp_perfrec {
	struct perf_evlist *evlist;
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	lp_perfrec_fn fn;
	void *ctx;
	bool cycles, user_only, copy, kernel;
	uint32_t stack_depth;
	uint64_t lost, throttled;
	struct lp_hashmap comms;	/* tid + 1 -> char[LP_COMM_LEN] */
	unsigned char *buf;		/* the event handed on, with its copy */
};

static int verbose_level;

__attribute__((format(printf, 2, 0)))
static int libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	if (level > LIBPERF_WARN && verbose_level < 2)
		return 0;
	if (!verbose_level)
		return 0;
	fputs("lp-record: libperf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/* Every thread of the processes, as a libperf thread map (NULL after a
 * message: a process gone). */
static struct perf_thread_map *process_threads(const pid_t *pids, size_t npids)
{
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < npids; i++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pids[i]);
		if (!(d = opendir(path))) {
			lp_error_errno("pid %d", (int)pids[i]);
			free(tids);
			return NULL;
		}
		while ((de = readdir(d))) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				tids = lp_reallocarray(tids, cap, sizeof(*tids));
			}
			tids[n++] = (pid_t)atoi(de->d_name);
		}
		closedir(d);
	}
	struct perf_thread_map *m = perf_thread_map__new_array((int)n, tids);
	free(tids);
	return m;
}

/* The event list gone, with its event: libperf 6.12's perf_evsel__delete
 * frees the event but not its references to the maps the list gave it. */
static void evlist_delete(struct perf_evlist *evlist)
{
	struct perf_evsel *evsel;

	perf_evlist__for_each_evsel(evlist, evsel) {
		perf_cpu_map__put(perf_evsel__cpus(evsel));
		perf_thread_map__put(perf_evsel__threads(evsel));
	}
	perf_evlist__delete(evlist);
}

static int perf_open_events(struct lp_perfrec *p, struct perf_event_attr *attr)
{
	struct perf_evsel *evsel = perf_evsel__new(attr);
	int err;

	p->evlist = perf_evlist__new();
	perf_evlist__add(p->evlist, evsel);
	perf_evlist__set_maps(p->evlist, p->cpus, p->threads);
	err = perf_evlist__open(p->evlist);
	if (err < 0) {
		evlist_delete(p->evlist);
		p->evlist = NULL;
		errno = -err;
	}
	return err;
}

/* The events opened, each fallback tried as perf record does: without a
 * hardware PMU (a VM) the software clock; without the privilege to sample
 * the kernel, user space only. */
static int open_events(struct lp_perfrec *p, const struct lp_perfrec_opts *o)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.freq = 1,
		.sample_freq = o->freq,
		.sample_type = LP_SAMPLE_TYPE,
		.sample_regs_user = LP_REGS_MASK,
		.sample_max_stack = (__u16)o->stack_depth,
		.exclude_callchain_kernel = !o->kernel,
		.exclude_hv = 1,
		.disabled = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
	};

	if (o->stack_bytes) {
		attr.sample_type |= PERF_SAMPLE_STACK_USER;
		attr.sample_stack_user = o->stack_bytes;
	}
	/* The threads' new threads; their new processes when followed. */
	if (!o->tid) {
		attr.inherit = 1;
		attr.inherit_thread = !o->follow;
	}
	size_t ring = o->ring_bytes ? o->ring_bytes : o->stack_bytes ? 8u << 20 : 1u << 20;
	attr.wakeup_watermark = (__u32)(ring / 4);
	p->cycles = true;
	for (;;) {
		if (perf_open_events(p, &attr) == 0)
			return 0;
		if (p->cycles && (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV ||
				  errno == EINVAL)) {
			p->cycles = false;
			attr.type = PERF_TYPE_SOFTWARE;
			attr.config = PERF_COUNT_SW_CPU_CLOCK;
		} else if ((errno == EACCES || errno == EPERM) && !attr.exclude_kernel) {
			/* kernel.perf_event_paranoid 2: user space only. */
			attr.exclude_kernel = 1;
			attr.exclude_callchain_kernel = 1;
			p->user_only = true;
		} else {
			return -1;
		}
	}
}

/* The ring's pages: a power of two, per CPU. */
static int ring_pages(const struct lp_perfrec_opts *o)
{
	size_t bytes = o->ring_bytes ? o->ring_bytes : o->stack_bytes ? 8u << 20 : 1u << 20;
	long page = sysconf(_SC_PAGESIZE);
	int pages = 1;

	while ((size_t)pages * 2 * (size_t)page <= bytes)
		pages *= 2;
	return pages;
}

/* Why the kernel refused, in one line, with what to do. */
static void refused(const struct lp_perfrec_opts *o)
{
	int e = errno;
	long paranoid = -1;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (f) {
		if (fscanf(f, "%ld", &paranoid) != 1)
			paranoid = -1;
		fclose(f);
	}
	errno = e;
	if (e != EACCES && e != EPERM) {
		lp_error_errno("cannot open perf events");
	} else if (!o->npids && !o->tid) {
		lp_error("cannot sample the whole system: the kernel allows it to root, "
			 "CAP_PERFMON, or everyone only with kernel.perf_event_paranoid <= 0 (it is %ld)",
			 paranoid);
	} else if (paranoid > 2) {
		lp_error("the kernel forbids perf events to ordinary users "
			 "(kernel.perf_event_paranoid = %ld): as root, sysctl "
			 "kernel.perf_event_paranoid=2, or run lp-record as root", paranoid);
	} else {
		lp_error("the kernel refused perf events on the targets (%s; "
			 "kernel.perf_event_paranoid = %ld): an ordinary user may sample only "
			 "processes they could ptrace (their own, not setuid)",
			 strerror(e), paranoid);
	}
	errno = e;
}

struct lp_perfrec *lp_perfrec__open(const struct lp_perfrec_opts *o, lp_perfrec_fn fn, void *ctx)
{
	struct lp_perfrec *p = lp_calloc(1, sizeof(*p));
	uint32_t copy = o->stack_bytes > LP_PERF_MAX_COPY ? LP_PERF_MAX_COPY : o->stack_bytes;
	struct lp_perfrec_opts opts = *o;

	opts.stack_bytes = copy & ~7u;
	verbose_level = o->verbose;
	libperf_init(libperf_print);
	p->fn = fn;
	p->ctx = ctx;
	p->copy = opts.stack_bytes > 0;
	p->kernel = o->kernel;
	p->stack_depth = o->stack_depth;
	lp_hashmap__init(&p->comms);
	p->buf = lp_malloc(sizeof(struct lp_sample_event) + LP_MAX_STACK_COPY);
	if (o->tid) {
		p->threads = perf_thread_map__new_dummy();
		perf_thread_map__set_pid(p->threads, 0, o->tid);
		p->cpus = perf_cpu_map__new_any_cpu();
	} else {
		p->threads = o->npids ? process_threads(o->pids, o->npids) : perf_thread_map__new_dummy();
		p->cpus = perf_cpu_map__new_online_cpus();
	}
	if (!p->threads || !p->cpus) {
		if (p->threads)
			lp_error("cannot read the online CPUs");
		lp_perfrec__free(p);
		return NULL;
	}
	/* An ordinary user may lock kernel.perf_event_mlock_kb per CPU, and
	 * RLIMIT_MEMLOCK more: rings as big as asked for, else as big as that
	 * allows (a failed map leaves libperf's poll set stale: the events
	 * are opened again). */
	for (int pages = ring_pages(&opts);; pages /= 2) {
		if (open_events(p, &opts) < 0) {
			refused(&opts);
			lp_perfrec__free(p);
			return NULL;
		}
		if (perf_evlist__mmap(p->evlist, pages) == 0) {
			if (o->verbose && pages < ring_pages(&opts))
				lp_error("perf events: rings of %d pages per CPU, as many as "
					 "may be locked", pages);
			return p;
		}
		int e = errno;
		perf_evlist__close(p->evlist);
		evlist_delete(p->evlist);
		p->evlist = NULL;
		if (e != EPERM || pages <= 2) {
			errno = e;
			lp_error_errno("cannot map the perf events' rings (a bigger "
				       "kernel.perf_event_mlock_kb or ulimit -l)");
			lp_perfrec__free(p);
			return NULL;
		}
	}
}

const char *lp_perfrec__event(const struct lp_perfrec *p)
{
	return p->cycles ? "cycles" : "cpu-clock";
}

bool lp_perfrec__user_only(const struct lp_perfrec *p)
{
	return p->user_only;
}

void lp_perfrec__enable(struct lp_perfrec *p, bool on)
{
	if (on)
		perf_evlist__enable(p->evlist);
	else
		perf_evlist__disable(p->evlist);
}

/* A thread's name: from its COMM records, else read once from /proc. */
static const char *comm_of(struct lp_perfrec *p, pid_t pid, pid_t tid)
{
	uint64_t key = lp_hashmap__key((uint64_t)tid + 1);
	char *c = lp_hashmap__get(&p->comms, key);

	if (!c) {
		char path[64];
		FILE *f;

		c = lp_calloc(1, LP_COMM_LEN);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		if ((f = fopen(path, "r"))) {
			if (fgets(c, LP_COMM_LEN, f))
				c[strcspn(c, "\n")] = 0;
			fclose(f);
		}
		lp_hashmap__put(&p->comms, key, c);
	}
	return c;
}

static void set_comm(struct lp_perfrec *p, pid_t tid, const char *comm)
{
	uint64_t key = lp_hashmap__key((uint64_t)tid + 1);
	char *c = lp_hashmap__get(&p->comms, key);

	if (!c) {
		c = lp_calloc(1, LP_COMM_LEN);
		lp_hashmap__put(&p->comms, key, c);
	}
	snprintf(c, LP_COMM_LEN, "%s", comm);
}

/* A cursor over a sample record's u64 words. */
struct words {
	const __u64 *w, *end;
};

static bool take(struct words *c, __u64 *v)
{
	if (c->w >= c->end)
		return false;
	*v = *c->w++;
	return true;
}

/* One PERF_RECORD_SAMPLE into p->buf as the BPF sampler's event; its size,
 * 0 for a sample to skip (the idle task, a malformed record). */
static size_t parse_sample(struct lp_perfrec *p, const union perf_event *e)
{
	struct lp_sample_event *ev = (struct lp_sample_event *)p->buf;
	struct words c = { e->sample.array, (const __u64 *)((const char *)e + e->header.size) };
	__u64 ip, v, nr, abi;

	memset(ev, 0, offsetof(struct lp_sample_event, kstack));
	if (!take(&c, &ip) || !take(&c, &v))
		return 0;
	ev->pid = (__u32)v;
	ev->tid = (__u32)(v >> 32);
	if (!take(&c, &ev->time_ns) || !take(&c, &v) || !take(&c, &v) || !take(&c, &nr))
		return 0;
	ev->cpu = (__u32)v;
	if (!ev->pid)
		return 0;	/* idle */
	/* The callchain: context markers, kernel entries, then user ones. */
	__u64 ctx = 0;
	size_t nk = 0, nu = 0;
	for (__u64 i = 0; i < nr; i++) {
		if (!take(&c, &v))
			return 0;
		if (v >= (__u64)PERF_CONTEXT_MAX) {
			ctx = v;
			continue;
		}
		if (ctx == (__u64)PERF_CONTEXT_KERNEL && nk < LP_MAX_STACK_DEPTH)
			ev->kstack[nk++] = v;
		else if (ctx == (__u64)PERF_CONTEXT_USER && nu < LP_MAX_STACK_DEPTH)
			ev->ustack[nu++] = v;
	}
	ev->kstack_bytes = p->kernel ? (__s32)(nk * sizeof(__u64)) : 0;
	ev->ustack_bytes = (__s32)(nu * sizeof(__u64));
	if (!take(&c, &abi))
		return 0;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		__u64 bp, sp;

		if (!take(&c, &bp) || !take(&c, &sp) || !take(&c, &ip))
			return 0;
		ev->regs[0] = ip;
		ev->regs[1] = sp;
		ev->regs[2] = bp;
	} else if (!nu) {
		ev->flags |= LP_EV_KERNEL_THREAD;
	}
	memcpy(ev->comm, comm_of(p, (pid_t)ev->pid, (pid_t)ev->tid), LP_COMM_LEN);
	if (!p->copy)
		return sizeof(*ev);
	/* The copy: its size, the bytes, then how many of them hold data. */
	__u64 size, dyn = 0;
	if (!take(&c, &size))
		return sizeof(*ev);
	const unsigned char *data = (const unsigned char *)c.w;
	if (size && (size_t)((const char *)c.end - (const char *)c.w) >= size + sizeof(__u64)) {
		memcpy(&dyn, data + size, sizeof(dyn));
		if (dyn > size)
			dyn = size;
		memcpy(p->buf + sizeof(*ev), data, dyn);
	}
	ev->stack_bytes = (__u32)dyn;
	ev->stack_want = (__u32)size;
	if (!dyn)
		ev->regs[0] = 0;	/* no copy to unwind: the chain alone */
	return sizeof(*ev) + dyn;
}

/* Forks and execs, as the BPF sampler sends them; names kept. */
static int task_event(struct lp_perfrec *p, const union perf_event *e)
{
	if (e->header.type == PERF_RECORD_COMM) {
		set_comm(p, (pid_t)e->comm.tid, e->comm.comm);
		if (!(e->header.misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		struct lp_exec_event x = { .pid = e->comm.pid, .tid = e->comm.tid,
					   .flags = LP_EV_EXEC };
		/* sample_id_all: pid, tid, then the time. */
		const __u64 *id = (const __u64 *)((const char *)e + e->header.size) - 3;
		x.time_ns = id[1];
		return p->fn(p->ctx, &x, sizeof(x));
	}
	if (e->header.type == PERF_RECORD_FORK && e->fork.pid != e->fork.ppid) {
		struct lp_fork_event f = { .time_ns = e->fork.time, .pid = e->fork.pid,
					   .tid = e->fork.tid, .flags = LP_EV_FORK,
					   .ppid = e->fork.ppid };

		return p->fn(p->ctx, &f, sizeof(f));
	}
	if (e->header.type == PERF_RECORD_EXIT) {
		free(lp_hashmap__del(&p->comms, lp_hashmap__key((uint64_t)e->fork.tid + 1)));
	}
	return 0;
}

static int read_ring(struct lp_perfrec *p, struct perf_mmap *map)
{
	union perf_event *e;
	int rc = 0;

	if (perf_mmap__read_init(map) < 0)
		return 0;
	while (rc >= 0 && (e = perf_mmap__read_event(map))) {
		switch (e->header.type) {
		case PERF_RECORD_SAMPLE: {
			size_t n = parse_sample(p, e);

			if (n)
				rc = p->fn(p->ctx, p->buf, n);
			break;
		}
		case PERF_RECORD_LOST:
			p->lost += e->lost.lost;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			p->lost += e->lost_samples.lost;
			break;
		case PERF_RECORD_THROTTLE:
			p->throttled++;
			break;
		default:
			rc = task_event(p, e);
		}
		perf_mmap__consume(map);
	}
	perf_mmap__read_done(map);
	return rc;
}

int lp_perfrec__poll(struct lp_perfrec *p, int timeout_ms)
{
	struct perf_mmap *map;
	int rc = 0;

	if (timeout_ms > 0 && perf_evlist__poll(p->evlist, timeout_ms) > 0)
		/* The rings of threads gone would wake every poll. */
		perf_evlist__filter_pollfd(p->evlist, POLLERR | POLLHUP);
	perf_evlist__for_each_mmap(p->evlist, map, false)
		if (rc >= 0)
			rc = read_ring(p, map);
	return rc < 0 ? rc : 0;
}

uint64_t lp_perfrec__lost(const struct lp_perfrec *p)
{
	return p->lost;
}

uint64_t lp_perfrec__throttled(const struct lp_perfrec *p)
{
	return p->throttled;
}

void lp_perfrec__free(struct lp_perfrec *p)
{
	if (!p)
		return;
	if (p->evlist) {
		perf_evlist__disable(p->evlist);
		perf_evlist__munmap(p->evlist);
		perf_evlist__close(p->evlist);
		evlist_delete(p->evlist);
	}
	perf_cpu_map__put(p->cpus);
	perf_thread_map__put(p->threads);
	for (size_t i = 0; i < p->comms.cap; i++)
		if (p->comms.keys[i])
			free(p->comms.values[i]);
	lp_hashmap__fini(&p->comms);
	free(p->buf);
	free(p);
}
