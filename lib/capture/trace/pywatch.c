/* pywatch.c - python:NAME at the cost of NAME's calls alone (pywatch.h).
 *
 * CPython's eval loop has no per-function hook: the breakpoints at its
 * RESUME handlers and returns (pyprobe.c) trap on every Python call, which
 * leaves a busy interpreter a few percent of its speed.
 * Once the kernel has matched a code object there, two things of its own
 * carry its calls instead:
 *  - its start.  Its RESUME instruction is written back un-specialized:
 *    RESUME, the instruction the compiler made, in place of RESUME_QUICK,
 *    which the interpreter put there after the code's first calls.  Their
 *    code differs by one step, _PyCode_Warmup, which does nothing more
 *    once a code object is quickened (its warm-up counter stays spent).
 *    RESUME's handler, which otherwise runs only for code not yet
 *    quickened, keeps its breakpoint, and now sees this function's calls.
 *    Where RESUME's code joins RESUME_QUICK's (one site for both:
 *    pyprobe.c) this cannot be, and nothing is watched.
 *  - its returns.  A hardware watchpoint (perf_event_open's
 *    PERF_TYPE_BREAKPOINT, reads and writes of the opcode's byte) on each of its
 *    RETURN_VALUE instructions, in every thread of the process and the
 *    threads they start, runs lp_pywatch (bpf/trace-python.bpf.h) as the eval
 *    loop reads the instruction it is about to run.  An x86 thread has
 *    four debug registers: a code object with more returns than are left
 *    is not watched.
 * From 3.12 on a RESUME written back does not stay (3.12 has no form to
 * write back over, 3.13 specializes it again at its next call), so the
 * start is watched too: a watchpoint on the RESUME instruction, which the
 * eval loop reads as the frame starts, takes a debug register, leaving
 * three for returns (RETURN_VALUE and RETURN_CONST).
 * Nothing else is written into the target (from 3.12 on, nothing at
 * all): in 3.11 one byte, in a code object
 * checked just before against the name object and first line the kernel
 * matched; RESUME is what the code held before it was quickened, so it is
 * left there when lp-trace goes.  The interpreter may quicken the code
 * again (it rewrites RESUME when a code object first warms up): the
 * kernel sees it at the next watched return and asks, and it is written
 * back (the calls between are counted lost, "unwatched"). */
#include "capture/trace/pywatch.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define MAX_UNITS 32768		/* instructions of a code object read: 64 KiB */
#define DEBUG_REGS 4		/* x86's DR0-DR3, each thread's */

/* The inline cache entries after each opcode, a specialized one's as its
 * base instruction's (opcode._inline_cache_entries through the
 * specializations' families, dis's numbering of the specialized ones):
 * instructions are found by stepping over them.  3.11, 3.12, 3.13. */
static const unsigned char caches311[256] = {
	0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0,
	1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 0, 0, 0, 5,
	5, 0, 0, 0, 0, 0, 0, 5, 10, 10, 10, 10, 1, 0, 10, 10,
	1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1,
	1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2, 0, 0, 0, 0,
	0, 1, 0, 0, 5, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 0, 0, 0, 4, 4,
	10, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 4, 0, 0, 0, 0,
	0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static const unsigned char caches312[256] = {
	0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0,
	1, 0, 1, 1, 1, 1, 1, 3, 3, 1, 0, 0, 3, 3, 0, 0,
	0, 0, 3, 0, 0, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 0, 0, 0, 0, 0, 0, 0, 3, 1, 1, 1, 1, 0, 1, 1,
	1, 1, 1, 1, 0, 0, 9, 0, 9, 9, 0, 0, 9, 9, 9, 9,
	9, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 4,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 1, 0, 0, 0, 4,
	4, 4, 0, 0, 4, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
	0, 0, 0, 0, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 1,
	1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 3, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static const unsigned char caches313[256] = {
	0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0, 0, 1, 0, 0,
	0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0,
	0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0,
	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0,
	0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9,
	9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 4, 4, 1, 1, 0,
	1, 4, 4, 4, 1, 1, 3, 3, 3, 3, 3, 3, 1, 1, 1, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Each version's opcodes that pywatch looks for (Lib/opcode.py): a
 * function starts at RESUME, or at its specialized form (3.11's
 * RESUME_QUICK, 3.13's RESUME_CHECK), after any MAKE_CELL and
 * COPY_FREE_VARS; it returns at RETURN_VALUE, or from 3.12 on
 * RETURN_CONST.  0: none. */
static const struct code_ops {
	unsigned minor;
	unsigned char resume, resume_spec, return_value, return_const, make_cell, copy_free_vars;
	const unsigned char *caches;
} code_ops[] = {
	{ 11, 151, 150, 83, 0, 135, 149, caches311 },
	{ 12, 151, 0, 83, 121, 135, 149, caches312 },
	{ 13, 149, 207, 36, 103, 94, 62, caches313 },
};

/* A code object watched in a process. */
struct watch {
	pid_t pid;
	uint64_t code;
	uint64_t entry;		/* its RESUME's address */
	unsigned nsites;	/* its returns: debug registers it takes a thread */
	int64_t armed_ns;
	/* Its RESUME found quickened and written back: from then on it stays
	 * RESUME (3.11 quickens a code object once). */
	bool settled;
	int *fds;		/* a perf event per thread and return */
	size_t nfds;
};

struct lp_pywatch {
	int prog_fd, pycodes_fd;
	struct lp_trace_py conf;
	const struct code_ops *ops;
	struct watch *w;
	size_t n;
};

struct lp_pywatch *lp_pywatch__new(int prog_fd, int pycodes_fd, const struct lp_trace_py *conf)
{
	const struct code_ops *ops = NULL;
	for (size_t i = 0; i < sizeof(code_ops) / sizeof(code_ops[0]); i++)
		if (code_ops[i].minor == conf->minor)
			ops = &code_ops[i];
	if (!ops)
		return NULL;
	struct lp_pywatch *w = lp_calloc(1, sizeof(*w));
	w->ops = ops;
	w->prog_fd = prog_fd;
	w->pycodes_fd = pycodes_fd;
	w->conf = *conf;
	return w;
}

static void close_watch(struct watch *x)
{
	for (size_t i = 0; i < x->nfds; i++)
		close(x->fds[i]);
	free(x->fds);
	x->fds = NULL;
	x->nfds = 0;
}

void lp_pywatch__free(struct lp_pywatch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		close_watch(&w->w[i]);
	free(w->w);
	free(w);
}

size_t lp_pywatch__armed(const struct lp_pywatch *w)
{
	return w ? w->n : 0;
}

size_t lp_pywatch__armed_in(const struct lp_pywatch *w, pid_t pid)
{
	size_t n = 0;
	for (size_t i = 0; w && i < w->n; i++)
		n += w->w[i].pid == pid;
	return n;
}

static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* A watchpoint on the byte at addr (an instruction's opcode: 3.12's eval
 * loop reads the oparg after it apart, which on both bytes trapped twice)
 * in thread tid and the threads it starts, running prog_fd: its
 * descriptor, or -1 with errno. */
static int open_watch(pid_t tid, uint64_t addr, int prog_fd)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT, .size = sizeof(a),
		.bp_type = HW_BREAKPOINT_RW, .bp_addr = addr, .bp_len = HW_BREAKPOINT_LEN_1,
		.sample_period = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.inherit = 1, .inherit_thread = 1, .disabled = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The kernel's entry for (pid, code), when it is a match. */
static int entry_of(const struct lp_pywatch *w, pid_t pid, uint64_t code, struct lp_trace_pycode *v)
{
	struct lp_trace_pycode_key k = { .tgid = (unsigned)pid, .code = code };
	return bpf_map_lookup_elem(w->pycodes_fd, &k, v) == 0 && v->matched ? 0 : -1;
}

/* Whether code is still the code object the kernel matched (its name
 * object and first line); its RESUME's unit in *unit.  0, or -1. */
static int same_code(const struct lp_pywatch *w, pid_t pid, uint64_t code, uint64_t entry,
		     const struct lp_trace_pycode *v, uint16_t *unit)
{
	uint64_t qualname = 0;
	int32_t first = 0;
	*unit = 0;
	return peek(pid, code + w->conf.code_qualname, &qualname, sizeof(qualname)) < 0 ||
	       peek(pid, code + w->conf.code_first, &first, sizeof(first)) < 0 ||
	       qualname != v->qualname || first != v->first || peek(pid, entry, unit, sizeof(*unit)) < 0
		? -1 : 0;
}

/* Whether code is still the code object the kernel matched, and its
 * RESUME is RESUME_QUICK: then RESUME is written there (*wrote).  0, or
 * -1 when not the same. */
static int unquicken(const struct lp_pywatch *w, pid_t pid, uint64_t code, uint64_t entry,
		     const struct lp_trace_pycode *v, bool *wrote)
{
	*wrote = false;
	uint16_t unit;
	if (same_code(w, pid, code, entry, v, &unit) < 0)
		return -1;
	if ((unit & 0xff) != w->ops->resume_spec)
		return 0;
	uint8_t op = w->ops->resume;
	struct iovec l = { &op, 1 }, r = { (void *)(uintptr_t)entry, 1 };
	*wrote = process_vm_writev(pid, &l, 1, &r, 1, 0) == 1;
	return *wrote ? 0 : -1;
}

/* Where code's instructions start, and its RESUME and returns among them
 * (at most DEBUG_REGS + 1 returns kept): 0; 1 with *why; 2 when the
 * process is gone. */
static int read_code(const struct lp_pywatch *w, pid_t pid, uint64_t code, uint64_t *entry,
		     uint64_t *rets, unsigned *nrets, const char **why)
{
	int64_t n = 0;
	if (peek(pid, code + w->conf.code_units, &n, sizeof(n)) < 0 || n <= 0) {
		*why = "its code object cannot be read";
		return errno == ESRCH ? 2 : 1;
	}
	if (n > MAX_UNITS) {
		*why = "it has more than 32768 instructions";
		return 1;
	}
	uint64_t base = code + w->conf.code_adaptive;
	uint16_t *units = lp_malloc((size_t)n * sizeof(*units));
	int r = 1;
	if (peek(pid, base, units, (size_t)n * sizeof(*units)) < 0) {
		*why = "its instructions cannot be read";
		goto out;
	}
	const struct code_ops *o = w->ops;
	int64_t i = 0;
	while (i < n && ((units[i] & 0xff) == o->make_cell || (units[i] & 0xff) == o->copy_free_vars))
		i++;
	unsigned op = i < n ? units[i] & 0xff : 0;
	if (i == n || (op != o->resume && (!o->resume_spec || op != o->resume_spec)) || units[i] >> 8) {
		*why = "it does not start with RESUME";
		goto out;
	}
	*entry = base + 2 * (uint64_t)i;
	*nrets = 0;
	for (; i < n; i += 1 + o->caches[units[i] & 0xff]) {
		op = units[i] & 0xff;
		if ((op == o->return_value || (o->return_const && op == o->return_const)) &&
		    (*nrets)++ < DEBUG_REGS + 1)
			rets[*nrets - 1] = base + 2 * (uint64_t)i;
	}
	r = 0;
out:
	free(units);
	return r;
}

/* Debug registers pid's threads give to the code objects watched now. */
static unsigned used(const struct lp_pywatch *w, pid_t pid)
{
	unsigned u = 0;
	for (size_t i = 0; i < w->n; i++)
		if (w->w[i].pid == pid)
			u += w->w[i].nsites;
	return u;
}

static bool has_fd_for(const pid_t *done, size_t ndone, pid_t tid)
{
	for (size_t i = 0; i < ndone; i++)
		if (done[i] == tid)
			return true;
	return false;
}

/* x's watchpoints in each of pid's threads (listed twice: a thread
 * started meanwhile by one not yet given them would have none).  0, or -1
 * with errno. */
static int watch_threads(const struct lp_pywatch *w, struct watch *x, const uint64_t *sites)
{
	char dir[64];
	pid_t *done = NULL;
	size_t ndone = 0;
	int r = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)x->pid);
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		DIR *d = opendir(dir);
		if (!d)
			return -1;
		struct dirent *e;
		while (r == 0 && (e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0 || has_fd_for(done, ndone, tid))
				continue;
			for (unsigned s = 0; s < x->nsites && r == 0; s++) {
				int fd = open_watch(tid, sites[s], w->prog_fd);
				if (fd < 0) {
					/* A thread gone meanwhile has no registers to give. */
					if (errno != ESRCH)
						r = -1;
					break;
				}
				x->fds = lp_reallocarray(x->fds, x->nfds + 1, sizeof(*x->fds));
				x->fds[x->nfds++] = fd;
			}
			done = lp_reallocarray(done, ndone + 1, sizeof(*done));
			done[ndone++] = tid;
		}
		closedir(d);
	}
	free(done);
	return r;
}

int lp_pywatch__arm(struct lp_pywatch *w, pid_t pid, uint64_t code, const char **why)
{
	struct lp_trace_pycode v;
	if (entry_of(w, pid, code, &v) < 0) {
		*why = "the kernel no longer holds its match";
		return 1;
	}
	for (size_t i = 0; i < w->n; i++)
		if (w->w[i].pid == pid && w->w[i].code == code)
			return 0;
	/* From 3.12 on its start is watched too, first. */
	bool start = w->conf.pops;
	uint64_t sites[DEBUG_REGS + 2];
	unsigned nrets = 0;
	struct watch x = { .pid = pid, .code = code };
	int r = read_code(w, pid, code, &x.entry, sites + 1, &nrets, why);
	if (r)
		return r;
	sites[0] = x.entry;
	x.nsites = nrets + start;
	static char buf[128];
	unsigned u = used(w, pid);
	if (u + x.nsites > DEBUG_REGS) {
		snprintf(buf, sizeof(buf), "its %s%u returns need as many of a thread's debug registers, "
			 "%u are free", start ? "start and " : "", nrets, DEBUG_REGS - u);
		*why = buf;
		return 1;
	}
	if (watch_threads(w, &x, start ? sites : sites + 1) < 0) {
		snprintf(buf, sizeof(buf), "a watchpoint on its %s: %s", start ? "start or returns" : "returns",
			 strerror(errno));
		*why = buf;
		close_watch(&x);
		return 1;
	}
	/* Armed before its RESUME is written (3.11): a call seen starting
	 * there has its return watched. */
	struct lp_trace_pycode_key k = { .tgid = (unsigned)pid, .code = code };
	uint16_t unit = 0;
	v.entry = x.entry;
	v.entry_unit = w->ops->resume;
	v.armed = 1;
	v.asked = 0;
	x.armed_ns = lp_monotonic_ns();
	x.settled = start;
	if (bpf_map_update_elem(w->pycodes_fd, &k, &v, BPF_EXIST) < 0 ||
	    (start ? same_code(w, pid, code, x.entry, &v, &unit)
		   : unquicken(w, pid, code, x.entry, &v, &x.settled)) < 0) {
		*why = "it was freed meanwhile";
		close_watch(&x);
		v.armed = 0;
		bpf_map_update_elem(w->pycodes_fd, &k, &v, BPF_EXIST);
		return 1;
	}
	w->w = lp_reallocarray(w->w, w->n + 1, sizeof(*w->w));
	w->w[w->n++] = x;
	return 0;
}

int lp_pywatch__requicken(struct lp_pywatch *w, pid_t pid, uint64_t code)
{
	struct lp_trace_pycode v;
	for (size_t i = 0; i < w->n; i++) {
		struct watch *x = &w->w[i];
		if (x->pid != pid || x->code != code)
			continue;
		bool wrote;
		if (entry_of(w, pid, code, &v) < 0 || !v.armed ||
		    unquicken(w, pid, code, x->entry, &v, &wrote) < 0)
			return -1;
		x->settled |= wrote;
		struct lp_trace_pycode_key k = { .tgid = (unsigned)pid, .code = code };
		v.asked = 0;
		return bpf_map_update_elem(w->pycodes_fd, &k, &v, BPF_EXIST);
	}
	return -1;
}

bool lp_pywatch__settle(struct lp_pywatch *w, int64_t wait_ns)
{
	int64_t now = lp_monotonic_ns();
	bool all = true;
	for (size_t i = 0; i < w->n; i++) {
		struct watch *x = &w->w[i];
		struct lp_trace_pycode v;
		bool wrote;
		if (!x->settled && entry_of(w, x->pid, x->code, &v) == 0 &&
		    unquicken(w, x->pid, x->code, x->entry, &v, &wrote) == 0)
			x->settled = wrote;
		all &= x->settled || (x->nsites && now - x->armed_ns >= wait_ns);
	}
	return all;
}

static int64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile uint16_t calvar[4];

/* ns the thread spends reading calvar[1] n times. */
static int64_t reads(int n)
{
	int64_t t = thread_ns();
	unsigned s = 0;
	for (int i = 0; i < n; i++)
		s += calvar[1];
	(void)s;
	return thread_ns() - t;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t lp_pywatch__calibrate(int prog_fd, volatile unsigned int *cal_tgid, volatile unsigned long long *cal_ts,
			      int64_t *inside)
{
	enum { ROUNDS = 7, N = LP_PYWATCH_CAL_HITS / 7 };
	*cal_tgid = (uint32_t)getpid();
	int fd = open_watch((pid_t)syscall(SYS_gettid), (uint64_t)(uintptr_t)&calvar[1], prog_fd);
	if (fd < 0) {
		*cal_tgid = 0;
		return -1;
	}
	int64_t each[ROUNDS], *in = lp_calloc(N, sizeof(*in));
	for (int r = 0; r < ROUNDS; r++)
		each[r] = reads(N);
	/* From just before a read to the program's first clock read. */
	for (int i = 0; i < N; i++) {
		int64_t t0 = lp_monotonic_ns();
		(void)calvar[1];
		in[i] = (int64_t)*cal_ts - t0;
	}
	close(fd);
	*cal_tgid = 0;
	int64_t plain = reads(N);
	qsort(each, ROUNDS, sizeof(each[0]), by_value);
	qsort(in, N, sizeof(in[0]), by_value);
	int64_t ns = (each[ROUNDS / 2] - plain) / N;
	ns = ns > 0 ? ns : 0;
	*inside = in[N / 2] < 0 ? 0 : in[N / 2] > ns ? ns : in[N / 2];
	free(in);
	return ns;
}
