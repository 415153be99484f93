/* tracer.c - loads bpf/trace.bpf.c, attaches probes, writes what they see.
 * This file: the tracer's life (new, the pid filter, poll, finish, free),
 * the ring's events dispatched, the lost counts, detaching.  Its other
 * pieces, tracer-*.c, share tracer-internal.h. */
#include "capture/trace/tracer.h"
#include "capture/trace/tracer-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <event-parse.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "capture/target.h"
#include "capture/bpflog.h"
#include "capture/counters.h"
#include "capture/kfeatures.h"
#include "capture/trace/pyprobe.h"
#include "capture/trace/dlgate.h"
#include "trace.skel.h"
#include "base/digits.h"
#include "base/util.h"

/* At most this many of its programs lp-trace loads without. */
#define LP_TRACE_OPTIONAL_PROGS 8

static int handle_event(void *ctx, void *data, size_t size);

/* Exited processes leave the filter, in the kernel (pidset.bpf.h).  The
 * programs on one tracepoint run in the order they were attached, and a
 * tp:sched:sched_process_exit probe must still find the exiting process in
 * the filter: so this is attached again after each tracepoint probe, to
 * run last.  (Probes are attached before any child is followed: a target
 * exiting in between stays in the filter, harmlessly but for its pid.) */
int lp_tracer_attach_exit(struct lp_tracer *t)
{
	bpf_link__destroy(t->skel->links.lp_exit);
	t->skel->links.lp_exit = bpf_program__attach(t->skel->progs.lp_exit);
	if (!t->skel->links.lp_exit) {
		lp_error_errno("cannot attach to sched_process_exit");
		return -1;
	}
	return 0;
}

/* The programs lp-trace cannot do without (the others each serve one
 * kind of probe, refused alone when the kernel cannot load its program). */
static const enum lp_kfeature needed[] = { LP_KF_BTF, LP_KF_RINGBUF, LP_KF_TP_BTF, LP_KF_COOKIE };

static bool optional_prog(const struct bpf_program *prog)
{
	static const char *const names[] = { "lp_py", "lp_pywatch", "lp_usdt", "lp_catch", "lp_tp",
					     "lp_sys_enter", "lp_sys_exit", "lp_session", "lp_dl" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(bpf_program__name(prog), names[i]))
			return true;
	return false;
}

/* The skeleton opened, set for opts and loaded, without the programs in
 * off (their names), which the kernel refused before.  0; 1 when the
 * kernel refused another optional program (its name added to off, to try
 * again); -1 after saying why not. */
static int load(struct lp_tracer *t, const struct lp_tracer_opts *opts, char off[][32], size_t noff)
{
	trace_bpf__destroy(t->skel);
	t->skel = trace_bpf__open();
	if (!t->skel) {
		lp_error_errno("cannot open the BPF programs");
		return -1;
	}
	t->skel->rodata->min_duration_ns = (uint64_t)opts->min_duration_ns;
	t->skel->rodata->wakeup_bytes = t->ring_bytes / 8;
	/* Only for lp's tests (bpf/trace.bpf.c, dear_trap_ns). */
	const char *dear = getenv("LP_TRACE_DEAR_TRAP_NS");
	if (dear && *dear)
		t->skel->rodata->dear_trap_ns = strtoull(dear, NULL, 10);
	bpf_map__set_max_entries(t->skel->maps.events, (uint32_t)t->ring_bytes);
	bpf_map__set_max_entries(t->skel->maps.tgids, t->max_pids);
	if (opts->share_stacks && bpf_map__reuse_fd(t->skel->maps.stacks, opts->stacks_fd) < 0) {
		lp_error_errno("cannot share the sampler's map of open calls");
		return -1;
	}
	if (!lp_kfeature__has(LP_KF_LOOP))
		bpf_program__set_autoload(t->skel->progs.lp_py, false);
	if (!lp_kfeature__has(LP_KF_LOOP) || !lp_kfeature__has(LP_KF_HW_WATCH))
		bpf_program__set_autoload(t->skel->progs.lp_pywatch, false);
	/* A session program's attach type is fixed at load; its kfuncs are
	 * refused to any other. */
	if (lp_kfeature__has(LP_KF_UPROBE_SESSION) && lp_kfeature__has(LP_KF_UPROBE_MULTI))
		bpf_program__set_expected_attach_type(t->skel->progs.lp_session,
						      (enum bpf_attach_type)LP_BPF_TRACE_UPROBE_SESSION);
	else
		bpf_program__set_autoload(t->skel->progs.lp_session, false);
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, t->skel->obj)
		for (size_t i = 0; i < noff; i++)
			if (!strcmp(bpf_program__name(prog), off[i]))
				bpf_program__set_autoload(prog, false);
	lp_bpflog__forget();
	int err = trace_bpf__load(t->skel);
	if (!err)
		return 0;
	errno = -err;
	/* EACCES is also the verifier refusing a program. */
	if (errno == EPERM || (errno == EACCES && geteuid() != 0)) {
		lp_error("loading BPF programs needs root (or CAP_BPF and CAP_PERFMON): %s",
			 strerror(errno));
		return -1;
	}
	const char *refused = lp_bpflog__refused();
	prog = *refused ? bpf_object__find_program_by_name(t->skel->obj, refused) : NULL;
	if (prog && optional_prog(prog) && noff < LP_TRACE_OPTIONAL_PROGS) {
		if (t->verbose)
			lp_error("note: the kernel refused %s: its probes cannot be traced here", refused);
		snprintf(off[noff], sizeof(off[noff]), "%s", refused);
		return 1;
	}
	if (*refused)
		lp_error_errno("cannot load the BPF programs: the kernel refused %s (-v shows the verifier's log)",
			       refused);
	else
		lp_error_errno("cannot load the BPF programs (-v shows the verifier's log)");
	return -1;
}

struct lp_tracer *lp_tracer__new(const struct lp_tracer_opts *opts)
{
	lp_bpflog__init(opts->verbose);
	if (lp_kfeatures__require(needed, sizeof(needed) / sizeof(needed[0]), "trace", "lp-trace") < 0)
		return NULL;
	struct lp_tracer *t = lp_calloc(1, sizeof(*t));
	t->cur = -1;
	lp_hashmap__init(&t->nspids);
	lp_hashmap__init(&t->pycodes);
	t->verbose = opts->verbose;
	t->gate = opts->gate;
	t->keyed = opts->keyed;
	t->ncpus = libbpf_num_possible_cpus();
	/* Two descriptors per function probe and process, children included. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	t->ring_bytes = opts->ring_bytes ? opts->ring_bytes : 8u << 20;
	t->max_pids = opts->max_pids ? opts->max_pids : LP_TARGET_MAX_PIDS;
	char off[LP_TRACE_OPTIONAL_PROGS][32];
	size_t noff = 0;
	int r;
	while ((r = load(t, opts, off, noff)) == 1)
		noff++;
	if (r < 0)
		goto fail;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), handle_event, t, NULL);
	if (!t->rb) {
		lp_error_errno("cannot open the BPF ring buffer");
		goto fail;
	}
	if (lp_tracer_attach_exit(t) < 0)
		goto fail;
	return t;
fail:
	lp_tracer__free(t);
	return NULL;
}

int lp_tracer__add_pid(struct lp_tracer *t, pid_t pid)
{
	uint32_t k = (uint32_t)pid;
	uint8_t one = 1;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tgids), &k, &one, BPF_ANY) < 0) {
		if (errno == E2BIG)
			lp_error("cannot add pid %d to the filter: more targets than --max-pids %u",
				 (int)pid, (unsigned)t->max_pids);
		else
			lp_error_errno("cannot add pid %d to the filter", (int)pid);
		return -1;
	}
	t->targets = lp_reallocarray(t->targets, t->ntargets + 1, sizeof(*t->targets));
	t->targets_covered = lp_reallocarray(t->targets_covered, t->ntargets + 1,
					     sizeof(*t->targets_covered));
	t->targets[t->ntargets] = pid;
	t->targets_covered[t->ntargets++] = 0;
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct lp_tracer *t = ctx;
	const struct lp_trace_event *ev = data;
	if (size < sizeof(*ev))
		return 0;
	if (ev->type == LP_EV_FORKED) {
		lp_tracer_on_fork_record(t, ev);
		return 0;
	}
	if (ev->type == LP_EV_DL) {
		if (!t->dlgate)
			t->dlgate = lp_dlgate__new();
		lp_dlgate__dirty(t->dlgate, (pid_t)ev->pid);
		return 0;
	}
	if (ev->type == LP_EV_EXIT) {
		struct kid *k = lp_tracer_find_kid(t, (pid_t)ev->pid);
		if (k)
			lp_tracer_forget_kid(t, (size_t)(k - t->kids));
		return 0;
	}
	if (ev->type == LP_EV_PYQUICK) {
		lp_tracer_py_requicken(t, ev);
		return 0;
	}
	if (ev->type == LP_EV_PYCODE) {
		if (size >= offsetof(struct lp_trace_event_py, chars))
			lp_tracer_on_pycode(t, data, size);
		return 0;
	}
	if (ev->probe >= t->nprobes || t->werr)
		return 0;
	struct pinfo *pi = &t->probes[ev->probe];
	if (pi->cal) {
		lp_tracer_keep_cal_span(t, ev);
		return 0;
	}
	/* A call open when its probe went (counted then, in open=), left
	 * behind by an outer probe's return. */
	if (pi->removed)
		return 0;
	if (pi->job) {
		int64_t gone = __atomic_load_n(&pi->job->gone_ns, __ATOMIC_ACQUIRE);
		if (gone && (int64_t)ev->end > gone) {
			pi->late++;
			return 0;
		}
	}
	pi->hits++;
	lp_attrs_buf__reset(&t->attrs);
	char buf[64];
	switch (ev->type) {
	case LP_EV_SPAN:
	case LP_EV_POINT:
		if (pi->kind == LP_PROBE_PY) {
			lp_tracer_py_attrs(t, ev);
			break;
		}
		lp_tracer_probe_attrs(t, pi, ev, data, size);
		break;
	case LP_EV_SYSCALL:
		if (ev->start < t->start_ns)
			return 0;
		lp_tracer_syscall_attrs(t, pi, ev->vals);
		lp_digits_i64(buf, (int64_t)ev->ret);
		lp_attrs_buf__add(&t->attrs, "ret", buf);
		/* No uprobe fires inside a system call; the raw tracepoints'
		 * programs run before its start and after its end. */
		if (t->calibrated)
			lp_attrs_buf__add(&t->attrs, "lp_ns", "0");
		break;
	case LP_EV_TP:
		if (pi->tep_event && size >= sizeof(struct lp_trace_event) + ev->size)
			lp_tracer_tp_attrs(t, pi, ((const struct lp_trace_event_tp *)data)->data,
					   ev->size);
		break;
	default:
		return 0;
	}
	return lp_tracer_write_event(t, pi, ev);
}

/* The kernel's counters now, each summed over the CPUs: 0, or -1 (all
 * zero) when they cannot be read. */
static int read_counters(const struct lp_tracer *t, uint64_t sums[LP_NCOUNTERS])
{
	return lp_counters__read(bpf_map__fd(t->skel->maps.lp_counters), LP_NCOUNTERS, sums);
}

uint64_t lp_tracer__python_hits(const struct lp_tracer *t, double *ns_each)
{
	*ns_each = 0;
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->kind == LP_PROBE_PY && !pi->cal && t->calibrated && pi->insn != LP_INSN_NONE)
			*ns_each = t->costs[pi->insn].point;
	}
	return lp_tracer_counter(t, LP_COUNT_PY_HITS);
}

uint64_t lp_tracer_counter(const struct lp_tracer *t, int which)
{
	uint64_t sums[LP_NCOUNTERS];
	read_counters(t, sums);
	return sums[which];
}

/* The kernel's loss counters now: what write_lost counts from. */
void lp_tracer_lost_baseline(struct lp_tracer *t)
{
	uint64_t sums[LP_NCOUNTERS];
	if (read_counters(t, sums) == 0)
		for (int c = 0; c < LP_NLOST; c++)
			t->lost_seen[c] = sums[c];
}

/* Writes a lost record for each counter that grew since the last call. */
static int write_lost(struct lp_tracer *t, struct lp_writer *w)
{
	static const char *const what[LP_NLOST] = { "ring", "depth", "threads", "unreturned", "children",
								"unchecked", "unwatched" };
	uint64_t sums[LP_NCOUNTERS];
	int ret = 0;
	if (read_counters(t, sums) < 0)
		return 0;
	for (int c = 0; c < LP_NLOST; c++) {
		uint64_t sum = sums[c];
		if (c == LP_LOST_CHILDREN)
			sum += t->children_unfollowed;
		if (sum <= t->lost_seen[c])
			continue;
		struct lp_lost l = { lp_monotonic_ns(), what[c], sum - t->lost_seen[c] };
		t->lost_seen[c] = sum;
		t->lost_total += l.count;
		if (lp_writer__lost(w, &l) < 0)
			ret = -1;
	}
	return ret;
}

/* Threads keep their (empty) stack between calls; those of threads that
 * have exited are dropped now and then, so a target that creates threads
 * all day does not fill the map. */
static void prune_stacks(struct lp_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.stacks);
	struct lp_trace_stack *st = lp_malloc(sizeof(*st));
	uint64_t key, next, *prev = NULL;
	uint64_t *dead = NULL;
	size_t ndead = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, st) != 0 || st->depth != 0)
			continue;
		/* A goroutine's, once its process has gone (a goroutine may
		 * start a call any time: its stack is never taken from under
		 * it). */
		char path[64];
		if (key & LP_KEY_G)
			snprintf(path, sizeof(path), "/proc/%u", st->tgid);
		else
			snprintf(path, sizeof(path), "/proc/%u/task/%u", st->tgid, (uint32_t)key);
		if (access(path, F_OK) == 0)
			continue;
		dead = lp_reallocarray(dead, ndead + 1, sizeof(*dead));
		dead[ndead++] = key;
	}
	for (size_t i = 0; i < ndead; i++)
		bpf_map_delete_elem(fd, &dead[i]);
	free(dead);
	free(st);
}

int lp_tracer__poll(struct lp_tracer *t, struct lp_writer *w, int timeout_ms)
{
	if (++t->polls % 64 == 0) {
		prune_stacks(t);
		lp_tracer_forget_exited(t);
	}
	uint64_t before = t->count;
	t->w = w;
	/* A python: probe's code being watched: looked at again soon, so
	 * that every call stops trapping as soon as it can. */
	if (t->pywatch && !t->py_watch_only && !t->py_unwatchable && timeout_ms > 5)
		timeout_ms = 5;
	int r = ring_buffer__poll(t->rb, timeout_ms);
	/* Records submitted without a wakeup are only seen by a consume. */
	if (r >= 0 || r == -EINTR) {
		int c = ring_buffer__consume(t->rb);
		if (c < 0 && !t->werr)
			r = c;
	}
	if (t->werr) {
		errno = t->werr;
		return -1;
	}
	if (r < 0 && r != -EINTR) {
		errno = -r;
		lp_error_errno("reading the BPF ring buffer");
		return -2;
	}
	if (t->ngated && !t->dl_insn)
		lp_tracer_dl_check(t);
	lp_tracer_py_tick(t);
	if (write_lost(t, w) < 0 || lp_tracer_end_removals(t, w, false) < 0)
		return -1;
	return (int)(t->count - before);
}

/* Links destroyed by several threads at once: each destruction of a uprobe
 * link waits for RCU grace periods, which concurrent waiters share (3,000
 * links one after the other kept lp-trace in uninterruptible sleep for
 * minutes).  Perf-event uprobes still close partly one after the other
 * (the kernel's event_mutex): 8 function probes on PostgreSQL under
 * pgbench -C, 16 links, took 3.6 s one by one, 1.3 s so. */
#define DETACH_THREADS 16

struct detach_job {
	struct bpf_link **links;
	const int *fds;		/* after the links: uprobe-multi links */
	size_t nlinks, n, next;
	pthread_mutex_t mu;
};

static void *detach_main(void *arg)
{
	struct detach_job *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t i = j->next < j->n ? j->next++ : j->n;
		pthread_mutex_unlock(&j->mu);
		if (i == j->n)
			return NULL;
		if (i < j->nlinks)
			bpf_link__destroy(j->links[i]);
		else
			close(j->fds[i - j->nlinks]);
	}
}

static void destroy_links(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
{
	size_t n = nlinks + nfds;
	struct detach_job j = { .links = links, .fds = fds, .nlinks = nlinks, .n = n };
	pthread_t th[DETACH_THREADS];
	size_t nth = 0;
	pthread_mutex_init(&j.mu, NULL);
	if (n > 1) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);	/* signals are the main thread's */
		while (nth < DETACH_THREADS && nth + 1 < n &&
		       pthread_create(&th[nth], NULL, detach_main, &j) == 0)
			nth++;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	detach_main(&j);
	for (size_t i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.mu);
}

static void detach(struct lp_tracer *t)
{
	/* Watched returns first: their watchpoints cost the target most. */
	lp_tracer_py_forget(t);
	/* The links first: closing the perf events that carry a program is
	 * cheap while other perf events name their processes (the inherited
	 * ones, lp_tracer_close_tfs). */
	destroy_links(t->links, t->nlinks, t->mfds, t->nmfds);
	t->nlinks = 0;
	t->nmfds = 0;
	/* No thread left to a process lp_tracer_close_tfs forks. */
	lp_tracer_cal_join(t);
	lp_tracer_close_tfs(t);
	bpf_link__destroy(t->skel->links.lp_fork);
	t->skel->links.lp_fork = NULL;
	bpf_link__destroy(t->skel->links.lp_exit);
	t->skel->links.lp_exit = NULL;
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(t->sys_links[i]);
		t->sys_links[i] = NULL;
	}
	t->detached = true;
}

int lp_tracer__finish(struct lp_tracer *t, struct lp_writer *w)
{
	/* Removals under way end first: their detach records are before
	 * what the end writes. */
	if (lp_tracer_end_removals(t, w, true) < 0)
		return -1;
	t->stop_ns = (uint64_t)lp_monotonic_ns();
	t->skel->bss->stopped = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	detach(t);
	t->w = w;
	ring_buffer__consume(t->rb);
	if (t->werr) {
		errno = t->werr;
		return -1;
	}
	if (lp_tracer_write_unfinished(t, w) < 0)
		return -1;
	for (size_t i = 0; i < t->nprobes && !t->py_matched; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->kind != LP_PROBE_PY || pi->cal)
			continue;
		if (!pi->module) {
			lp_error("probe '%s': no Python function of that name ran (a qualified name, "
				 "as co_qualname: Shop.checkout, main.<locals>.inner; generators and "
				 "coroutines are not traced)", pi->name);
			break;
		}
		char *where = lp_pyprobe__module_where(pi->module);
		if (t->py_elsewhere)
			lp_error("probe '%s': no Python function of that name ran in module %s "
				 "(its code in %s); one ran in %s", pi->name, pi->module, where,
				 t->py_elsewhere);
		else
			lp_error("probe '%s': no Python function of that name ran in module %s "
				 "(its code in %s; a qualified name, as co_qualname: Shop.checkout, "
				 "main.<locals>.inner; generators and coroutines are not traced)",
				 pi->name, pi->module, where);
		free(where);
		break;
	}
	return write_lost(t, w);
}

void lp_tracer__set_start(struct lp_tracer *t)
{
	t->start_ns = (uint64_t)lp_monotonic_ns();
}

int lp_tracer__stacks_fd(const struct lp_tracer *t)
{
	return bpf_map__fd(t->skel->maps.stacks);
}

uint64_t lp_tracer__count(const struct lp_tracer *t)
{
	return t->count;
}

uint64_t lp_tracer__lost(const struct lp_tracer *t)
{
	return t->lost_total;
}

void lp_tracer__free(struct lp_tracer *t)
{
	if (!t)
		return;
	lp_tracer_cal_join(t);
	for (size_t i = 0; i < t->ncal_links; i++)
		bpf_link__destroy(t->cal_links[i]);
	free(t->cal_links);
	for (size_t i = 0; i < t->nremovals; i++) {
		lp_tracer_free_removal_job(&t->removals[i]);
		free(t->removals[i].ids);
	}
	free(t->removals);
	detach(t);
	free(t->links);
	free(t->link_owner);
	free(t->mfd_owner);
	free(t->tfd_owner);
	free(t->mfds);
	free(t->tfds);
	free(t->tevs);
	free(t->targets_covered);
	for (int i = 0; i < MULTI_N; i++)
		if (t->mprog[i] > 0 && multi_copied(i))
			close(t->mprog[i]);
	free(t->kids);
	free(t->pfiles);
	free(t->targets);
	ring_buffer__free(t->rb);
	trace_bpf__destroy(t->pyskel);
	trace_bpf__destroy(t->skel);
	for (size_t i = 0; i < t->nprobes; i++) {
		free(t->probes[i].name);
		free(t->probes[i].spec);
		free(t->probes[i].module);
		free(t->probes[i].copy);
		free(t->probes[i].rets);
		free(t->probes[i].path);
		for (size_t k = 0; k < t->probes[i].nvals; k++)
			free(t->probes[i].vals[k].name);
	}
	free(t->probes);
	free(t->cal_spans);
	if (t->tep)
		tep_free(t->tep);
	lp_attrs_buf__free(&t->attrs);
	lp_hashmap__fini(&t->nspids);
	for (size_t i = 0; i < t->pycodes.cap; i++) {
		struct pycode *c = t->pycodes.keys[i] ? t->pycodes.values[i] : NULL;
		if (c) {
			free(c->probe);
			free(c->file);
			free(c);
		}
	}
	lp_hashmap__fini(&t->pycodes);
	free(t->py_elsewhere);
	lp_dlgate__free(t->dlgate);
	free(t->dl_read);
	free(t);
}
