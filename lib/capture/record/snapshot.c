/* snapshot.c - all-thread stack snapshots through ptrace.
 *
 * A thread is held only for what must happen while it stands still: from
 * PTRACE_INTERRUPT to PTRACE_DETACH it gets one waitpid, one PTRACE_GETREGS
 * and one process_vm_readv of the top of its stack.  Seizing (PTRACE_SEIZE
 * does not stop the thread), reading its comm, unwinding and symbolizing all
 * happen while it runs.  One thread at a time, so the process as a whole is
 * never stopped: its other threads keep running while one is copied.
 *
 * Why not keep the threads attached between snapshots: a traced thread stops
 * for every signal it receives until its tracer resumes it, and the tracer
 * sleeps between snapshots; detaching leaves the target as it was.
 *
 * A thread interrupted in a sleeping system call has it restarted on release
 * (restart_syscall keeps an absolute expiry), so its timers are not moved;
 * only the held time delays it.
 *
 * A function with a pending uretprobe (lp-trace's or anyone's) returns to
 * the kernel's trampoline, written over its return address on the stack;
 * the kernel keeps the originals, which only BPF can read (lib/capture/record/uretinst.h).
 * A thread whose copy shows the trampoline has them read while it is still
 * held (once released its list changes with every call and return), and
 * put back in the copy before it is unwound.  Without the privileges to
 * load BPF, its stack is cut at the trampoline and says so. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/record/snapshot.h"
#include "capture/producer.h"
#include "capture/python.h"
#include "debuginfo/symbolize.h"
#include "base/syscalls.h"
#include "capture/target.h"
#include "debuginfo/unwind.h"
#include "capture/record/uretinst.h"
#include "base/util.h"

#define MAX_FRAMES 512
/* Above ordinary real-time work, below the kernel's own threads' range top. */
#define LP_SNAPSHOT_RT_PRIORITY 50
#define HELD_BUCKETS 100000	/* 1 us each: up to 100 ms */

struct capture {
	pid_t tid;
	int64_t time;		/* CLOCK_MONOTONIC when it was interrupted */
	int64_t held;		/* ns from PTRACE_INTERRUPT to PTRACE_DETACH */
	int64_t wait;		/* of which, until it stopped (it had to be
				 * scheduled to reach its stop) */
	struct lp_unwind_regs regs;
	unsigned char *stack;	/* stack_bytes */
	size_t len;
	char comm[64];
	char state;		/* /proc's letter just before the stop */
	int64_t syscall;	/* the system call it stopped in, or -1 */
	int32_t cpu;		/* the CPU it last ran on */
	/* Its pending uretprobes, read while held when its copy or its ip
	 * was in the uprobes page: 0 read; else why not (an errno); -1 not
	 * looked for. */
	int uret;
	struct lp_uret_thread rets;
	/* Its Python frames, walked while held (lib/capture/python.h), when
	 * it runs Python. */
	struct lp_py_event *py;
	bool has_py;
};

struct lp_snapshotter {
	struct lp_snapshot_opts o;
	struct lp_writer *w;
	struct lp_dict *dict;
	struct lp_symbolizer *sym;
	struct lp_unwinder *unw;
	bool *alive;		/* per target */
	char **exe;		/* per target: /proc/PID/exe at the last snapshot */
	struct capture *caps;
	size_t ncaps_alloc;
	uint64_t pcs[MAX_FRAMES];
	unsigned char ret[MAX_FRAMES];
	const struct lp_frame *frames[MAX_FRAMES * (1 + LP_SYM_MAX_INLINE)];
	/* The stack with its Python frames in (NULL: --no-python, --raw). */
	const struct lp_frame **py_frames;
	struct lp_python *py;
	struct lp_attrs_buf attrs;
	long page;
	/* Counts. */
	uint64_t snapshots, stacks, incomplete, truncated, unstoppable, vanished;
	uint64_t held_hist[HELD_BUCKETS];
	int64_t held_max, held_sum;
	int64_t stopped_max, stopped_sum;	/* held less the wait to stop */
	int64_t last_time;
	int64_t next;		/* when the next snapshot is due (CLOCK_MONOTONIC) */
	int seize_errno;	/* why the last PTRACE_SEIZE failed */
	bool failed;
	/* Uretprobes: the current target's uprobes page, read once per
	 * snapshot ([0, 0): none, no probe was ever hit in it); the BPF
	 * reader, loaded when a target first has one (NULL: not yet, or it
	 * could not be: uret_errno). */
	uint64_t uprobes_lo, uprobes_hi;
	struct lp_uretinst *uret;
	bool uret_tried;
	int uret_errno;		/* why it cannot read the current target's */
	uint64_t uret_fixed;	/* return addresses put back */
	uint64_t uret_cut;	/* stacks cut at the trampoline */
	int cut_errno;		/* why the last one was: an errno, 0 none */
};

static int write_header(struct lp_snapshotter *s)
{
	char buf[64];
	struct lp_attrs_buf a = { 0 };
	struct lp_header h = { .version = LP_STREAM_VERSION };
	int rc;

	lp_attrs_buf__producer_keys(&a);
	lp_attrs_buf__add(&a, "mode", "snapshot");
	lp_attrs_buf__add(&a, "event", "snapshot");
	snprintf(buf, sizeof(buf), "%" PRId64, s->o.interval_ns);
	lp_attrs_buf__add(&a, "interval_ns", buf);
	snprintf(buf, sizeof(buf), "%u", s->o.stack_bytes);
	lp_attrs_buf__add(&a, "stack_bytes", buf);
	lp_attrs_buf__add(&a, "unwind", "dwarf");
	if (s->o.raw)
		lp_attrs_buf__add(&a, "raw", "1");
	lp_attrs_buf__add(&a, "producer", "lp-record");
	h.attrs = lp_attrs_buf__attrs(&a);
	rc = lp_writer__header(s->w, &h);
	lp_attrs_buf__free(&a);
	return rc;
}

struct lp_snapshotter *lp_snapshotter__open(const struct lp_snapshot_opts *opts,
					    struct lp_writer *w)
{
	struct lp_snapshotter *s = lp_calloc(1, sizeof(*s));

	s->o = *opts;
	if (!s->o.stack_memory)
		s->o.stack_memory = LP_STACK_MEMORY;
	if (!s->o.stack_bytes)
		s->o.stack_bytes = LP_SNAPSHOT_STACK_BYTES;
	s->w = w;
	s->page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	s->alive = lp_calloc(s->o.npids ? s->o.npids : 1, sizeof(*s->alive));
	s->exe = lp_calloc(s->o.npids ? s->o.npids : 1, sizeof(*s->exe));
	for (size_t i = 0; i < s->o.npids; i++)
		s->alive[i] = true;
	s->dict = lp_dict__new();
	s->sym = lp_symbolizer__new(s->dict);
	lp_symbolizer__set_options(s->sym, s->o.inlines, s->o.srclines);
	lp_symbolizer__set_raw(s->sym, s->o.raw);
	lp_symbolizer__set_demangle(s->sym, !s->o.no_demangle);
	s->unw = lp_unwinder__new(s->sym);
	/* As in the other modes (lib/capture/record/record.c): by name, live. */
	if (!s->o.no_python && !s->o.raw) {
		s->py = lp_python__new(s->dict, s->sym);
		s->py_frames = lp_calloc(MAX_FRAMES * (1 + LP_SYM_MAX_INLINE) + LP_PY_MAX_FRAMES,
					 sizeof(*s->py_frames));
	}
	if (write_header(s) < 0) {
		int err = errno;
		lp_snapshotter__free(s);
		errno = err;
		return NULL;
	}
	return s;
}

void lp_snapshotter__free(struct lp_snapshotter *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncaps_alloc; i++) {
		free(s->caps[i].stack);
		free(s->caps[i].py);
	}
	free(s->caps);
	free(s->alive);
	for (size_t i = 0; s->exe && i < s->o.npids; i++)
		free(s->exe[i]);
	free(s->exe);
	lp_attrs_buf__free(&s->attrs);
	lp_uretinst__free(s->uret);
	lp_unwinder__free(s->unw);
	lp_python__free(s->py);
	free(s->py_frames);
	lp_symbolizer__free(s->sym);
	lp_dict__free(s->dict);
	free(s);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The threads of pid, sorted; NULL (errno) when the process is gone. */
static pid_t *list_threads(pid_t pid, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *tids = NULL;
	size_t cap = 0;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return NULL;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			tids = lp_reallocarray(tids, cap, sizeof(*tids));
		}
		tids[(*n)++] = (pid_t)tid;
	}
	closedir(d);
	if (tids)
		qsort(tids, *n, sizeof(*tids), cmp_pid);
	else
		tids = lp_calloc(1, sizeof(*tids));
	return tids;
}

/* The thread's comm, scheduler state and last CPU from /proc/PID/task/TID/
 * stat, read just before it is stopped: "TID (COMM) S ... CPU ...", the
 * comm possibly holding spaces and parentheses (so: the last ')'). */
static void read_stat(pid_t pid, pid_t tid, struct capture *c)
{
	char path[64], buf[1024];
	int fd;
	ssize_t n;

	c->comm[0] = 0;
	c->state = '?';
	c->cpu = LP_ID_NONE;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return;
	size_t len = close_paren - open_paren - 1;
	if (len >= sizeof(c->comm))
		len = sizeof(c->comm) - 1;
	memcpy(c->comm, open_paren + 1, len);
	c->comm[len] = 0;
	char *f = close_paren + 1;
	for (int field = 3; *f; field++) {
		while (*f == ' ')
			f++;
		if (field == 3)
			c->state = *f;
		if (field == 39) {
			c->cpu = (int32_t)strtol(f, NULL, 10);
			break;
		}
		while (*f && *f != ' ')
			f++;
	}
}

static const char *syscall_name(int64_t nr)
{
	for (size_t i = 0; nr >= 0 && i < sizeof(lp_syscalls) / sizeof(lp_syscalls[0]); i++)
		if (lp_syscalls[i].nr == nr)
			return lp_syscalls[i].name;
	return NULL;
}

/* The kernel's letter as the stream's state= word. */
static const char *state_name(char state)
{
	switch (state) {
	case 'R':
		return "running";	/* or runnable: /proc does not tell */
	case 'S':
	case 'D':
		return "blocked";
	case 't':
	case 'T':
		return "stopped";
	default:
		return NULL;
	}
}

/* Copies [sp, sp + want) page by page, so a stack that ends before want
 * still gives what is mapped (process_vm_readv never splits one iovec). */
static size_t copy_stack(struct lp_snapshotter *s, pid_t tid, uint64_t sp, unsigned char *dst,
			 size_t want)
{
	struct iovec local[1 + 65536 / 512], remote[1 + 65536 / 512];
	size_t n = 0, off = 0;

	while (off < want && n < sizeof(remote) / sizeof(remote[0])) {
		uint64_t addr = sp + off;
		size_t chunk = s->page - (addr & (s->page - 1));
		if (chunk > want - off)
			chunk = want - off;
		local[n] = (struct iovec){ dst + off, chunk };
		remote[n] = (struct iovec){ (void *)(uintptr_t)addr, chunk };
		n++;
		off += chunk;
	}
	ssize_t got = process_vm_readv(tid, local, n, remote, n, 0);
	return got > 0 ? (size_t)got : 0;
}

static bool in_uprobes_page(const struct lp_snapshotter *s, uint64_t addr)
{
	return addr >= s->uprobes_lo && addr < s->uprobes_hi;
}

/* Whether the copy holds an address in the uprobes page (an aligned word:
 * the trampoline as a return address), or the thread is stopped there. */
static bool shows_trampoline(const struct lp_snapshotter *s, const struct capture *c)
{
	if (in_uprobes_page(s, c->regs.ip))
		return true;
	for (size_t off = (8 - (c->regs.sp & 7)) & 7; off + 8 <= c->len; off += 8) {
		uint64_t v;
		memcpy(&v, c->stack + off, sizeof(v));
		if (in_uprobes_page(s, v))
			return true;
	}
	return false;
}

/* Stops tid, copies its registers and stack top into c, releases it.
 * 1: captured; 0: the thread is gone or could not be stopped. */
static int capture_thread(struct lp_snapshotter *s, pid_t pid, pid_t tid, struct capture *c)
{
	struct user_regs_struct regs;
	int status, sig = 0;
	bool ok = false;
	/* Ready to read its pending uretprobes, should its copy need them:
	 * 0, or why they cannot be read. */
	int armed = !s->uprobes_hi ? 0 : s->uret_errno ? s->uret_errno
		    : lp_uretinst__arm(s->uret) < 0 ? errno : 0;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		if (errno == ESRCH) {
			s->vanished++;
		} else {
			s->unstoppable++;
			s->seize_errno = errno;
		}
		return 0;
	}
	int64_t t0 = lp_monotonic_ns();
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		s->vanished++;
		return 0;
	}
	while (waitpid(tid, &status, __WALL) < 0) {
		if (errno != EINTR) {
			s->vanished++;
			return 0;
		}
	}
	if (!WIFSTOPPED(status)) {
		s->vanished++;	/* it exited while we asked it to stop */
		return 0;
	}
	int64_t ts = lp_monotonic_ns();
	/* A signal-delivery stop (no event in the high bits) took the place
	 * of our interrupt: the signal goes back to the thread on release. */
	if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
		sig = WSTOPSIG(status);
	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0) {
		c->regs = (struct lp_unwind_regs){ regs.rip, regs.rsp, regs.rbp };
		/* Stopped on its way out of a system call (a sleeping one is
		 * interrupted, to be restarted on release): orig_rax holds its
		 * number; -1 when it was stopped running user code. */
		c->syscall = (int64_t)regs.orig_rax;
		c->len = copy_stack(s, tid, regs.rsp, c->stack, s->o.stack_bytes);
		c->uret = -1;
		if (s->uprobes_hi && shows_trampoline(s, c))
			c->uret = armed ? armed : lp_uretinst__read(s->uret, tid, &c->rets) < 0
						  ? errno : 0;
		/* Its Python frames change as soon as it runs again. */
		c->has_py = s->py && lp_python__walk(s->py, pid, tid, c->py) == 0;
		ok = true;
	}
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)sig);
	int64_t t1 = lp_monotonic_ns();

	c->tid = tid;
	c->time = t0;
	c->held = t1 - t0;
	c->wait = ts - t0;
	if (!ok) {
		s->unstoppable++;
		return 0;
	}
	int64_t us = c->held / 1000;
	s->held_hist[us < HELD_BUCKETS ? us : HELD_BUCKETS - 1]++;
	s->held_sum += c->held;
	if (c->held > s->held_max)
		s->held_max = c->held;
	s->stopped_sum += c->held - c->wait;
	if (c->held - c->wait > s->stopped_max)
		s->stopped_max = c->held - c->wait;
	return 1;
}

static int write_failed(struct lp_snapshotter *s)
{
	s->failed = true;
	return -1;
}

/* The return addresses c's pending uretprobes took, put back in its copy
 * where it holds the trampoline. */
static void put_back(struct lp_snapshotter *s, struct capture *c)
{
	const struct lp_uret_thread *t = &c->rets;
	uint64_t sp = c->regs.sp;

	for (uint32_t i = 0; i < t->n; i++) {
		uint64_t off = t->slot[i] - sp, v;
		if (t->slot[i] < sp || (t->slot[i] & 7) || off > c->len || c->len - off < 8)
			continue;
		memcpy(&v, c->stack + off, sizeof(v));
		if (!in_uprobes_page(s, v))
			continue;	/* a chained one's slot, already done */
		memcpy(c->stack + off, &t->orig[i], sizeof(v));
		s->uret_fixed++;
	}
}

/* The uretprobe trampoline, at the start of the uprobes page (x86-64 since
 * Linux 6.11, arch/x86/kernel/uprobes.c): push %rax; push %rcx; push %r11;
 * mov $__NR_uretprobe, %rax; syscall; pop %r11; pop %rcx; ret.  The system
 * call takes the return instance off the thread's list and writes the
 * original return address where %rax was pushed: after it, the return
 * address is on the stack, 16, 8 or 0 bytes above sp by the pops left.  A
 * ptrace stop comes on the way out of a system call, so this is where a
 * thread is most often found in the page (1 in 5 snapshots of a function
 * called in a loop).  Before it, the most recent return instance has it. */
#define TRAMP_SYSCALL_END 13
static const struct {
	uint64_t at, ra;	/* ip - page start, return address - sp */
} tramp_tail[] = { { 13, 16 }, { 15, 8 }, { 16, 0 } };

/* A thread stopped in the uprobes page, placed where it is in its own code
 * (as bpf/profile.bpf.c places a tick there): stepping a probed
 * instruction out of line, at that instruction; in the trampoline, at the
 * return address it is about to return to, with sp past it.  *skip: the
 * bytes of copy below the new sp.  Left as it is when it cannot be placed
 * (cut_at_trampoline ends its stack there).  Whether it was placed. */
static bool place_in_code(struct lp_snapshotter *s, pid_t pid, const struct capture *c,
			  struct lp_unwind_regs *regs, size_t *skip)
{
	const struct lp_uret_thread *t = &c->rets;
	uint64_t sp = c->regs.sp, at = regs->ip - s->uprobes_lo, ra;

	*skip = 0;
	if (!in_uprobes_page(s, regs->ip))
		return false;
	if (c->uret == 0 && t->step) {
		regs->ip = t->step;
		return true;
	}
	for (size_t i = 0; i < sizeof(tramp_tail) / sizeof(tramp_tail[0]); i++) {
		if (at != tramp_tail[i].at || tramp_tail[i].ra + 8 > c->len)
			continue;
		memcpy(&ra, c->stack + tramp_tail[i].ra, sizeof(ra));
		/* Not code: not the trampoline this was written for. */
		if (!lp_symbolizer__mapped(s->sym, pid, ra))
			return false;
		*skip = tramp_tail[i].ra + 8;
		regs->ip = ra;
		regs->sp = sp + *skip;
		return true;
	}
	if (at < TRAMP_SYSCALL_END && c->uret == 0 && t->n && t->slot[0] + 8 >= sp &&
	    t->slot[0] + 8 - sp <= c->len) {
		*skip = t->slot[0] + 8 - sp;
		regs->ip = t->orig[0];
		regs->sp = t->slot[0] + 8;
		return true;
	}
	return false;
}

/* A stack through the trampoline that put_back could not mend: unwinding
 * past it reads garbage (it is in no module), so it ends there, the
 * trampoline its last frame ([uprobes]).  Whether it was cut. */
static bool cut_at_trampoline(struct lp_snapshotter *s, const struct capture *c, size_t *n)
{
	for (size_t i = 0; s->uprobes_hi && i < *n; i++)
		if (in_uprobes_page(s, s->pcs[i])) {
			*n = i + 1;
			s->uret_cut++;
			s->cut_errno = c->uret > 0 ? c->uret : 0;
			return true;
		}
	return false;
}

/* *retried: whether this snapshot of pid already had its modules read
 * again after a failed unwind (once per snapshot at most). */
static int emit(struct lp_snapshotter *s, pid_t pid, struct capture *c, bool *retried)
{
	enum lp_unwind_end end;
	const char *why = "";
	size_t n, nf = 0, skip = 0;
	char buf[32];
	struct lp_unwind_regs regs = c->regs;

	if (c->uret == 0)
		put_back(s, c);
	bool placed = place_in_code(s, pid, c, &regs, &skip);
	n = lp_unwinder__unwind(s->unw, pid, c->tid, &regs, c->stack + skip, c->len - skip,
				s->pcs, s->ret, MAX_FRAMES, &end, &why);
	if (end == LP_UNWIND_FAILED && !*retried) {
		/* The symbolizer reads a process's modules again at most every
		 * 100 ms; a command just started (ld.so mapping its libraries)
		 * or one that loaded a library since then fails to unwind
		 * until it does.  A snapshot is rare enough to ask at once. */
		*retried = true;
		lp_symbolizer__forget(s->sym, pid);
		n = lp_unwinder__unwind(s->unw, pid, c->tid, &regs, c->stack + skip, c->len - skip,
					s->pcs, s->ret, MAX_FRAMES, &end, &why);
	}
	if (cut_at_trampoline(s, c, &n)) {
		end = LP_UNWIND_TRUNCATED;
		why = "uretprobe";
	}
	for (size_t i = n; i-- > 0;)
		nf += lp_symbolizer__user_frames(s->sym, pid, s->pcs[i], s->ret[i], s->frames + nf);
	lp_attrs_buf__reset(&s->attrs);
	const struct lp_frame **stack = s->frames;

	if (c->has_py) {
		nf = lp_python__merge(s->py, pid, c->py, s->frames, nf, s->py_frames);
		stack = s->py_frames;
		lp_attrs_buf__add(&s->attrs, "gil", c->py->pyflags & LP_PY_GIL ? "1" : "0");
	}
	/* Stopped in the uprobes page, unwound from its own code: the page's
	 * frame on top (the probe's time, lp's, as lp-record's samples). */
	if (placed && nf < sizeof(s->frames) / sizeof(s->frames[0]))
		stack[nf++] = lp_symbolizer__uprobes_frame(s->sym, c->regs.ip);
	snprintf(buf, sizeof(buf), "%" PRId64, c->held);
	lp_attrs_buf__add(&s->attrs, "held_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRId64, c->wait);
	lp_attrs_buf__add(&s->attrs, "stop_wait_ns", buf);
	if (state_name(c->state))
		lp_attrs_buf__add(&s->attrs, "state", state_name(c->state));
	if (syscall_name(c->syscall))
		lp_attrs_buf__add(&s->attrs, "syscall", syscall_name(c->syscall));
	lp_attrs_buf__add(&s->attrs, "unwind", "dwarf");
	/* A process in a pid namespace of its own (a container): its pid
	 * there beside the host's, as in the other modes. */
	pid_t nspid = lp_symbolizer__nspid(s->sym, pid);
	if (nspid && nspid != pid) {
		snprintf(buf, sizeof(buf), "%d", (int)nspid);
		lp_attrs_buf__add(&s->attrs, "nspid", buf);
	}
	if (end != LP_UNWIND_COMPLETE) {
		if (end == LP_UNWIND_TRUNCATED)
			s->truncated++;
		else
			s->incomplete++;
		lp_attrs_buf__add(&s->attrs, "truncated", "1");
		if (why && *why)
			lp_attrs_buf__add(&s->attrs, "why", why);
	}
	struct lp_sample smp = {
		.time_ns = c->time,
		.pid = pid,
		.tid = c->tid,
		.cpu = c->cpu,
		.comm = c->comm,
		.event = "snapshot",
		.weight = 1,
		.stack = lp_dict__stack(s->dict, stack, nf),
		.attrs = lp_attrs_buf__attrs(&s->attrs),
	};
	s->stacks++;
	if (c->time > s->last_time)
		s->last_time = c->time;
	if (lp_writer__sample(s->w, &smp) < 0)
		return write_failed(s);
	lp_writer__bound_stacks(s->w, s->dict, s->o.stack_memory);
	return 0;
}

/* A target that exec'd another program since the last snapshot: its old
 * modules would give wrong names, so the symbolizer forgets them. */
static void exe_check(struct lp_snapshotter *s, size_t p)
{
	char path[64], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)s->o.pids[p]);
	if ((n = readlink(path, buf, sizeof(buf) - 1)) < 0)
		return;
	buf[n] = 0;
	if (s->exe[p] && strcmp(s->exe[p], buf)) {
		lp_symbolizer__forget(s->sym, s->o.pids[p]);
		if (s->py)
			lp_python__forget(s->py, s->o.pids[p]);
	}
	free(s->exe[p]);
	s->exe[p] = lp_strdup(buf);
}

/* Before pid's threads are held: its uprobes page, and when it has one
 * (a probe was hit in it), the reader of return instances, loaded the
 * first time, aimed at pid. */
static void uret_prepare(struct lp_snapshotter *s, pid_t pid)
{
	lp_maps__uprobes(pid, &s->uprobes_lo, &s->uprobes_hi);
	if (!s->uprobes_hi)
		return;
	if (!s->uret_tried) {
		s->uret_tried = true;
		s->uret = lp_uretinst__open(s->o.verbose);
		s->uret_errno = s->uret ? 0 : errno ? errno : EPERM;
	}
	if (s->uret)
		s->uret_errno = lp_uretinst__target(s->uret, pid) < 0 ? errno ? errno : ESRCH : 0;
}

/* While a thread is held, nothing may make us wait for a CPU: a tracer
 * preempted between PTRACE_INTERRUPT and PTRACE_DETACH holds the thread for a
 * whole time slice of whatever ran instead (measured: 3-13 ms on a loaded
 * 2-CPU machine, against ~30 us otherwise).  So the capture loop runs
 * SCHED_FIFO when allowed; unwinding and symbolizing do not.  Returns
 * whether the policy was changed. */
static bool boost(bool on)
{
	static struct sched_param saved;
	static int saved_policy;

	if (on) {
		struct sched_param sp = { .sched_priority = LP_SNAPSHOT_RT_PRIORITY };
		saved_policy = sched_getscheduler(0);
		if (saved_policy < 0 || saved_policy == SCHED_FIFO || saved_policy == SCHED_RR ||
		    sched_getparam(0, &saved) < 0)
			return false;
		return sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
	}
	sched_setscheduler(0, saved_policy, &saved);
	return false;
}

int lp_snapshotter__take(struct lp_snapshotter *s)
{
	int alive = 0;

	if (s->failed)
		return -1;
	s->snapshots++;
	for (size_t p = 0; p < s->o.npids; p++) {
		pid_t pid = s->o.pids[p];
		size_t ntids, ncap = 0;
		pid_t *tids;

		if (!s->alive[p])
			continue;
		if (!(tids = list_threads(pid, &ntids)) || !ntids) {
			s->alive[p] = false;
			free(tids);
			continue;
		}
		alive++;
		if (ntids > s->ncaps_alloc) {
			s->caps = lp_reallocarray(s->caps, ntids, sizeof(*s->caps));
			for (size_t i = s->ncaps_alloc; i < ntids; i++) {
				memset(&s->caps[i], 0, sizeof(s->caps[i]));
				/* Touched now: a page fault while a thread
				 * is held would be charged to it. */
				s->caps[i].stack = lp_calloc(1, s->o.stack_bytes);
				memset(s->caps[i].stack, 0, s->o.stack_bytes);
				s->caps[i].py = lp_calloc(1, sizeof(*s->caps[i].py));
				memset(s->caps[i].py, 0, sizeof(*s->caps[i].py));
			}
			s->ncaps_alloc = ntids;
		}
		uret_prepare(s, pid);
		if (s->py) {
			struct lp_py_proc proc;

			lp_python__check(s->py, pid, &proc);
		}
		/* Every thread first, one at a time; the slow part after. */
		bool boosted = boost(true);
		for (size_t i = 0; i < ntids; i++) {
			struct capture *c = &s->caps[ncap];
			read_stat(pid, tids[i], c);
			ncap += capture_thread(s, pid, tids[i], c);
		}
		if (boosted)
			boost(false);
		free(tids);
		exe_check(s, p);
		bool retried = false;
		for (size_t i = 0; i < ncap; i++)
			if (emit(s, pid, &s->caps[i], &retried) < 0)
				return -1;
	}
	return alive;
}

static int write_lost(struct lp_snapshotter *s, const char *what, uint64_t count)
{
	struct lp_lost l = { .time_ns = s->last_time ? s->last_time : LP_TIME_NONE,
			     .what = what, .count = count };

	if (!count || s->failed)
		return 0;
	return lp_writer__lost(s->w, &l) < 0 ? write_failed(s) : 0;
}

int lp_snapshotter__finish(struct lp_snapshotter *s)
{
	if (s->failed)
		return -1;
	if (write_lost(s, "unwind", s->incomplete) < 0 ||
	    write_lost(s, "truncated", s->truncated) < 0 ||
	    write_lost(s, "unstoppable", s->unstoppable) < 0)
		return -1;
	return 0;
}

static double held_quantile(const struct lp_snapshotter *s, double q)
{
	uint64_t n = 0, seen = 0;

	for (size_t i = 0; i < HELD_BUCKETS; i++)
		n += s->held_hist[i];
	for (size_t i = 0; i < HELD_BUCKETS; i++) {
		seen += s->held_hist[i];
		if (n && seen >= q * n)
			return i + 1;	/* upper bound of the 1 us bucket */
	}
	return 0;
}

void lp_snapshotter__counts(const struct lp_snapshotter *s, char *buf, size_t size)
{
	uint64_t held = 0;

	for (size_t i = 0; i < HELD_BUCKETS; i++)
		held += s->held_hist[i];
	snprintf(buf, size, "%" PRIu64 " snapshots, %" PRIu64 " stacks; each thread held %.1f us on average"
		 " (p50 <= %.0f us, p99 <= %.0f us, max %.1f us; once stopped: %.1f us on average,"
		 " max %.1f us); %" PRIu64 " unwinds failed, %" PRIu64 " truncated, %" PRIu64
		 " threads could not be stopped",
		 s->snapshots, s->stacks, held ? s->held_sum / 1e3 / held : 0.0,
		 held_quantile(s, 0.5), held_quantile(s, 0.99), s->held_max / 1e3,
		 held ? s->stopped_sum / 1e3 / held : 0.0, s->stopped_max / 1e3,
		 s->incomplete, s->truncated, s->unstoppable);
}

void lp_snapshotter__notes(const struct lp_snapshotter *s)
{
	lp_python__notes(s->py);
	lp_writer__stacks_note(s->w);
	if (s->uret_fixed)
		lp_error("%" PRIu64 " return addresses that uretprobes had taken put back in the"
			 " stacks (read from the kernel with BPF)", s->uret_fixed);
	if (!s->uret_cut)
		return;
	if (s->cut_errno == EPERM || s->cut_errno == EACCES)
		lp_error("%" PRIu64 " stacks end at the uretprobe trampoline ([uprobes]):"
			 " the return addresses it took are read with BPF, which needs root"
			 " (or CAP_BPF and CAP_PERFMON)", s->uret_cut);
	else if (s->cut_errno)
		lp_error("%" PRIu64 " stacks end at the uretprobe trampoline ([uprobes]): cannot"
			 " read the return addresses it took: %s", s->uret_cut,
			 strerror(s->cut_errno));
	else
		lp_error("%" PRIu64 " stacks end at the uretprobe trampoline ([uprobes]): the kernel"
			 " held no return address for it", s->uret_cut);
}

int lp_snapshotter__poll(struct lp_snapshotter *s, int timeout_ms)
{
	int64_t now = lp_monotonic_ns();

	if (s->snapshots) {
		if (now < s->next) {
			/* Until the next is due, or the producer's next look at
			 * its stop flag; a signal ends the sleep. */
			int64_t until = now + (int64_t)timeout_ms * 1000000;
			struct timespec ts;
			if (until > s->next)
				until = s->next;
			ts.tv_sec = until / 1000000000LL;
			ts.tv_nsec = until % 1000000000LL;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			if (lp_monotonic_ns() < s->next)
				return 0;
		}
		s->next += s->o.interval_ns;
	} else {
		s->next = now + s->o.interval_ns;
	}
	int alive = lp_snapshotter__take(s);
	if (alive < 0)
		return -1;
	if (s->snapshots == 1 && !s->stacks) {
		/* Nothing could be read at all: say why, once. */
		if (s->seize_errno)
			lp_error("cannot stop the threads of process %d: %s", (int)s->o.pids[0],
				 strerror(s->seize_errno));
		else
			lp_error("no thread of the target could be read");
		return -2;
	}
	/* Every target gone: the producer sees it too ("target exited"). */
	if (alive && s->o.count && s->snapshots >= s->o.count)
		return LP_PRODUCER_DONE;
	return 0;
}
