/* tracer.c - loads bpf/trace.bpf.c, attaches probes, writes what they see. */
#include "capture/trace/tracer.h"
#include "capture/trace/keyed.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <event-parse.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/target.h"
#include "capture/bpflog.h"
#include "capture/kfeatures.h"
#include "capture/trace/pyprobe.h"
#include "base/hashmap.h"
#include "debuginfo/procns.h"
#include "capture/trace/dlgate.h"
#include "capture/trace/tracecal.h"
#include "trace.skel.h"
#include "base/util.h"

struct pinfo {
	char *name;
	char *spec;		/* the probe as given (lp-trace's PROBE) */
	uint64_t hits;		/* records written */
	int64_t attached_ns;	/* when its attaching began */
	bool removing;		/* remove asked: its links going (struct removal) */
	bool removed;		/* detached: its records no longer written */
	bool marked;		/* its attach record written: its detach is too */
	struct removal_job *job;	/* while removing */
	uint64_t late;		/* calls that ended after its entry had gone */
	char *module;		/* python:MODULE:NAME's MODULE */
	char *copy;		/* a function's compiled copy (probe.h): its spans say which */
	int kind;
	bool cal;		/* a calibration probe: its records are not written */
	enum lp_insn insn;
	bool ret_insn_probed;	/* LP_PROBE_ENTRY: returns probed at instructions */
	bool gate;		/* LP_PROBE_F_GATE: its open calls are no spans */
	enum lp_insn ret_insn;	/* their class */
	bool shared;		/* attached once for every process (LP_PROBE_F_FILTER) */
	/* LP_PROBE_ENTRY under lp_session (lib/capture/trace/dlgate.h): its return
	 * instructions, probed once the program has loaded a library that
	 * can throw. */
	bool gated;
	struct lp_ret_point *rets;
	size_t nrets;
	char *path;
	struct lp_probe_value vals[LP_TRACE_MAX_CAPS];
	unsigned char str[LP_TRACE_MAX_CAPS];	/* 1 + string slot, or 0 */
	size_t nvals;
	bool has_ret;
	struct lp_probe_value ret;
	/* syscall: */
	int sysnr;
	char argnames[6][32];
	bool argptr[6], argint[6];
	int nargs;
	/* tracepoint: */
	struct tep_event *tep_event;
};

/* A function probe's calibrated costs, ns: its entry's and its return's
 * as the caller sees them, and the part of each inside the span. */
struct pair_cost {
	bool done;
	int64_t entry, entry_in, ret, ret_in;
	int64_t entry_sd, ret_sd;
	size_t n;
};

/* One instruction class's calibrated costs, ns (lp_tracer__calibrate):
 * of a function probe whose entry is of this class, with a uretprobe or
 * with its return probed at its ret (ret_in: the breakpoint's trap up to
 * the program's clock read; the entry has no return address to replace);
 * of a point probe's hit. */
struct cls_cost {
	struct pair_cost uret, insn;
	bool point_done;
	int64_t point, point_sd;
	size_t point_n;
};

/* The programs as loaded for uprobe-multi links, one each: a return
 * probed at an instruction is lp_return as a plain uprobe. */
enum { MULTI_ENTRY, MULTI_RETURN, MULTI_RET_INSN, MULTI_POINT, MULTI_CATCH, MULTI_PY, MULTI_DL,
       MULTI_SESSION, MULTI_N };

/* A code object a python: probe matched (LP_EV_PYCODE), which names its
 * spans: "python:" and its qualified name, its file and first line. */
struct pycode {
	pid_t pid;
	uint64_t code;
	char *probe, *file;
	char line[24];
};

/* A tracefs uprobe event of lp-trace's own group (lp_<its pid>), for a
 * probe in a file other processes map too (libc): one per entry, return
 * and return instruction of the probe.  Its perf events, one per process
 * of the target's family, make the kernel's filter (trace_uprobe.c): a
 * breakpoint only in the processes they name, and inherited at fork,
 * before the child runs (tfs_open). */
struct tev {
	uint32_t probe;		/* the probe's id */
	uint64_t id;		/* the tracepoint id perf_event_open takes */
	char name[32];
};

/* A probe being detached while tracing goes on (lp_tracer__remove): its
 * links destroyed by a thread of their own, each destruction waiting for
 * grace periods (~0.1 to 0.7 s), while the ring is drained. */
struct removal_job {
	/* When its links began to go (the detach record's time): a call
	 * ending later ends without its probe. */
	int64_t gone_ns;	/* __atomic; 0: not yet */
	struct bpf_link **links;
	size_t nlinks;
	int *fds;		/* uprobe-multi links, then inherited perf events */
	size_t nfds, nmfds;
	struct tev *tevs;	/* removed from uprobe_events once those are closed */
	size_t ntevs;
	char group[32];
	int done;		/* __atomic: the thread has finished */
};

struct removal {
	int *ids;
	size_t nids;
	struct removal_job *job;
	pthread_t thread;
	bool threaded;
};

struct lp_tracer {
	struct trace_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *link_owner;		/* the probe each link serves, -1: none */
	size_t nlinks;
	int cur;			/* the probe being attached, or -1 */
	struct removal *removals;	/* in progress */
	size_t nremovals;
	void (*on_fork)(void *arg, pid_t child, pid_t target);
	void *fork_arg;
	pid_t *targets;			/* lp_tracer__add_pid's */
	int64_t *targets_covered;	/* as kid.covered_ns */
	size_t ntargets;
	/* Followed processes, in the kernel's filter, and since when the
	 * processes they fork inherit their perf events (tfs_open): forked
	 * earlier (before their parent's were opened), a child is given its
	 * own (lp_tracer__attach_child). */
	struct kid {
		pid_t pid, target;
		bool adopted;	/* running when tracing began (lp_tracer__adopt) */
		bool uncovered;	/* forked before its parent was covered */
		bool refused;	/* its perf events failed: counted lost */
		int64_t covered_ns;
	} *kids;
	size_t nkids;
	int64_t forgot_ns;		/* when exited children were last forgotten */
	/* Children not traced (the filter full, or their perf events
	 * refused); the first refusal is said. */
	uint64_t children_unfollowed, children_failed;
	/* Files probed, and whether their probes are attached once for every
	 * process that maps them (no process but the traced ones does). */
	struct pfile { uint64_t dev, ino; bool shared; } *pfiles;
	size_t npfiles;
	/* Uprobe-multi copies of the programs (0: not loaded yet, -1: the
	 * kernel refused), and the links made with them. */
	int mprog[MULTI_N];
	int *mfds;
	int *mfd_owner;
	size_t nmfds;
	/* Tracefs uprobe events (struct tev), created in group tfs_group, and
	 * their inherited perf events, which carry no program (it is on a
	 * perf event of the target's that is not inherited, in links). */
	struct tev *tevs;
	size_t ntevs;
	char tfs_group[32];
	int *tfds;
	int *tfd_owner;
	size_t ntfds;
	uint64_t stop_ns;	/* when detaching began: later entries are not ours */
	uint64_t start_ns;	/* system calls starting earlier are not the target's */
	struct pinfo *probes;
	size_t nprobes;
	struct bpf_link *sys_links[2];
	struct tep_handle *tep;
	struct lp_writer *w;	/* during a poll */
	int werr;		/* errno of a failed write */
	uint64_t count;
	uint64_t polls;
	uint64_t lost_seen[LP_NLOST];	/* loss counters as last read */
	uint64_t lost_total;			/* as written in lost records */
	struct lp_attrs_buf attrs;
	struct lp_hashmap nspids;	/* pid -> 1 + its own namespace's pid (add_nspid) */
	bool verbose, detached;
	bool gate;			/* lp_tracer_opts.gate */
	struct lp_keyed *keyed;		/* lp_tracer_opts.keyed */
	bool calibrated;	/* costs[] hold figures: cost records and lp_ns= */
	struct cls_cost costs[LP_INSN_N];
	int64_t cal_time;	/* when calibration ended */
	int64_t tp_cost, tp_sd;	/* a tracepoint probe's hit */
	/* The calibration's median run of lp's programs, ns (0: unknown): an
	 * entry's, a return's, a point hit's, a tracepoint hit's (prog_of). */
	int64_t prog_entry, prog_ret, prog_point, prog_tp;
	size_t tp_n;
	bool tp_done;
	int64_t (*cal_spans)[2];	/* calibration spans read from the ring */
	size_t ncal, calcap;
	struct bpf_link **cal_links;	/* attached for the calibration */
	size_t ncal_links;
	pthread_t cal_thread;		/* destroying them (cal_release) */
	bool cal_threaded;
	int ncpus;
	uint32_t max_pids;
	size_t ring_bytes;
	struct lp_hashmap pycodes;	/* (pid, code) -> struct pycode */
	bool py_set;			/* pyconf written */
	uint64_t py_matched;		/* code objects python: probes matched */
	char *py_elsewhere;		/* the file of one whose name matched, not its module */
	/* Returns gated on the libraries loaded (lp_session): how many
	 * probes are, the verdicts, and whether their return instructions
	 * are probed now (a library that can throw was loaded). */
	size_t ngated;
	struct lp_dlgate *dlgate;
	bool dl_watch;		/* lp_dl attached (LP_PROBE_DL) */
	pid_t *dl_read;		/* the targets whose maps were read before gating */
	size_t ndl_read;
	bool dl_insn;
	bool walks_said;	/* the note on backtraces under uretprobes */
};

/* The attach types of uprobe-multi links (6.6) and uprobe sessions (6.13),
 * from the kernel's uapi: neither Debian 12's headers nor its libbpf 1.1
 * know them. */
#define LP_BPF_TRACE_UPROBE_MULTI 48
#define LP_BPF_TRACE_UPROBE_SESSION 57

/* At most this many of its programs lp-trace loads without. */
#define LP_TRACE_OPTIONAL_PROGS 8

static int handle_event(void *ctx, void *data, size_t size);
static int end_removals(struct lp_tracer *t, struct lp_writer *w, bool wait);

static uint64_t pid_key(pid_t pid)
{
	return lp_hashmap__key((uint64_t)(uint32_t)pid + 1);
}

/* A process in a pid namespace of its own (a container): its pid there,
 * nspid=, beside the host's.  Read once per pid (a forked child's again:
 * its pid may be one the kernel gave out before). */
static void add_nspid(struct lp_tracer *t, pid_t pid)
{
	uintptr_t v = (uintptr_t)lp_hashmap__get(&t->nspids, pid_key(pid));
	char buf[16];

	if (!v) {
		v = (uintptr_t)(uint32_t)lp_procns__nspid(pid) + 1;
		lp_hashmap__put(&t->nspids, pid_key(pid), (void *)v);
	}
	if (v - 1 && (pid_t)(v - 1) != pid) {
		snprintf(buf, sizeof(buf), "%d", (int)(v - 1));
		lp_attrs_buf__add(&t->attrs, "nspid", buf);
	}
}
static void lost_baseline(struct lp_tracer *t);

/* Exited processes leave the filter, in the kernel (pidset.bpf.h).  The
 * programs on one tracepoint run in the order they were attached, and a
 * tp:sched:sched_process_exit probe must still find the exiting process in
 * the filter: so this is attached again after each tracepoint probe, to
 * run last.  (Probes are attached before any child is followed: a target
 * exiting in between stays in the filter, harmlessly but for its pid.) */
static int attach_exit(struct lp_tracer *t)
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
	static const char *const names[] = { "lp_py", "lp_usdt", "lp_catch", "lp_tp",
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
	if (attach_exit(t) < 0)
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

static void add_link(struct lp_tracer *t, struct bpf_link *l)
{
	t->links = lp_reallocarray(t->links, t->nlinks + 1, sizeof(*t->links));
	t->link_owner = lp_reallocarray(t->link_owner, t->nlinks + 1, sizeof(*t->link_owner));
	t->link_owner[t->nlinks] = t->cur;
	t->links[t->nlinks++] = l;
}

/* --- one attachment per file, or a tracefs event per target ------------ */

static bool in_filter(struct lp_tracer *t, pid_t pid)
{
	uint32_t k = (uint32_t)pid;
	uint8_t v;
	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.tgids), &k, &v) == 0;
}

/* A process that maps file path (device dev, inode ino) and is not traced
 * (this one included: lp-trace maps libc too), or 0.  A uprobe attached for
 * every process puts its breakpoint in every process that maps the file,
 * now and later: a bystander would pay a trap per call. */
static pid_t bystander(struct lp_tracer *t, const char *path, uint64_t dev, uint64_t ino)
{
	DIR *d = opendir("/proc");
	if (!d)
		return getpid();
	pid_t found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || in_filter(t, (pid_t)pid))
			continue;
		struct lp_maps m;
		if (lp_maps__open(&m, (pid_t)pid) < 0)
			continue;
		/* The same inode on the same device, or under the same path
		 * (an overlay's file shows the device of the layer below). */
		while (!found && lp_maps__next(&m))
			if (m.ino == ino && m.name[0] == '/' && (m.dev == dev || !strcmp(m.name, path)))
				found = (pid_t)pid;
		lp_maps__close(&m);
	}
	closedir(d);
	return found;
}

/* Whether the probes in file path are attached once for every process that
 * maps it, filtered in the kernel by the pid set: so when no process but
 * the traced ones maps it (a server's own executable).  Children are then
 * traced from their fork on, whatever their number, and nothing is
 * attached or detached per process.  Otherwise (a shared library: libc)
 * the probes are tracefs events with perf events naming the traced
 * processes (tfs_attach).  Decided once per file. */
static bool file_shared(struct lp_tracer *t, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return false;
	for (size_t i = 0; i < t->npfiles; i++)
		if (t->pfiles[i].dev == (uint64_t)st.st_dev && t->pfiles[i].ino == (uint64_t)st.st_ino)
			return t->pfiles[i].shared;
	pid_t other = bystander(t, path, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (t->verbose) {
		if (other)
			lp_error("note: %s: attached to the traced processes alone, inherited at fork (pid %d maps it too)",
				 path, (int)other);
		else
			lp_error("note: %s: attached once for every process that maps it (only traced ones do)",
				 path);
	}
	t->pfiles = lp_reallocarray(t->pfiles, t->npfiles + 1, sizeof(*t->pfiles));
	t->pfiles[t->npfiles++] = (struct pfile){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, !other };
	return !other;
}

static struct kid *find_kid(struct lp_tracer *t, pid_t pid)
{
	for (size_t i = t->nkids; i-- > 0;)	/* the newest first: on_fork's */
		if (t->kids[i].pid == pid)
			return &t->kids[i];
	return NULL;
}


/* Child i has exited: forgotten (the kernel reuses its id; it has left the
 * kernel's filter already, lp_exit, and its inherited perf events went
 * with it: the kernel frees them at its exit, cheaply, PF_EXITING). */
static void forget_kid(struct lp_tracer *t, size_t i)
{
	t->kids[i] = t->kids[--t->nkids];
}

static int setup_tp(struct lp_tracer *t, struct pinfo *pi, const struct lp_probe_point *pt,
		    struct lp_trace_probe *cfg)
{
	const char *dir = lp_tracefs();
	if (!dir)
		return -1;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, pt->tp_subsys, pt->tp_event);
	FILE *f = fopen(path, "re");
	if (!f) {
		lp_error_errno("probe '%s': no tracepoint %s:%s (%s)", pt->name, pt->tp_subsys,
			       pt->tp_event, path);
		return -1;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	char chunk[4096];
	size_t r;
	while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, r, mem);
	fclose(f);
	fclose(mem);
	if (!t->tep)
		t->tep = tep_alloc();
	if (!t->tep || tep_parse_event(t->tep, buf, len, pt->tp_subsys) != 0) {
		free(buf);
		lp_error("probe '%s': cannot parse %s", pt->name, path);
		return -1;
	}
	free(buf);
	pi->tep_event = tep_find_event_by_name(t->tep, pt->tp_subsys, pt->tp_event);
	if (!pi->tep_event) {
		lp_error("probe '%s': cannot parse %s", pt->name, path);
		return -1;
	}
	/* The fixed part's size; dynamic fields (strings) follow it. */
	unsigned int size = 0;
	bool dynamic = false;
	for (int pass = 0; pass < 2; pass++) {
		struct tep_format_field *fl = pass ? pi->tep_event->format.fields
						   : pi->tep_event->format.common_fields;
		for (; fl; fl = fl->next) {
			if ((unsigned int)(fl->offset + fl->size) > size)
				size = (unsigned int)(fl->offset + fl->size);
			dynamic |= (fl->flags & TEP_FIELD_IS_DYNAMIC) != 0;
		}
	}
	cfg->tp_size = dynamic || size > LP_TRACE_TP_MAX ? LP_TRACE_TP_MAX : size;
	return 0;
}

/* What a return probed at an instruction of class cls costs: a uprobe hit
 * there, as a point probe's (calibrated for that class: a ret is
 * single-stepped out of line on 6.18).  Its part inside the span is the
 * breakpoint's trap up to the program's clock read, measured on a ret
 * (lp_tracer__calibrate's RUN_RET_INSN): the step out of line comes after
 * it.  It is not a uretprobe's, whose trampoline is a system call: where
 * exceptions cost more than system calls (a virtual machine whose host
 * handles them), the breakpoint's part is microseconds more. */
static void ret_insn_cost(const struct lp_tracer *t, enum lp_insn entry_cls, enum lp_insn cls,
			  int64_t *ns, int64_t *inside, int64_t *sd, int64_t *n)
{
	const struct cls_cost *c = &t->costs[cls];
	*ns = c->point_done ? c->point : 0;
	*inside = t->costs[entry_cls].insn.done ? t->costs[entry_cls].insn.ret_in : 0;
	if (*inside > *ns)
		*inside = *ns;
	if (sd)
		*sd = c->point_sd;
	if (n)
		*n = (int64_t)c->point_n;
}

/* Uprobe-multi links (6.6+), for probes attached once for every process:
 * closing one waits for one grace period, without the perf event's global
 * mutex that makes perf-event uprobes close one after the other.  Neither
 * Debian 12's headers nor its libbpf 1.1 know them: the attach type and
 * BPF_LINK_CREATE's fields for it, from the kernel's uapi. */
#define LP_BPF_F_UPROBE_MULTI_RETURN 1

union lp_uprobe_multi_attr {
	struct {
		uint32_t prog_fd, target_fd, attach_type, flags;
		uint64_t path, offsets, ref_ctr_offsets, cookies;
		uint32_t cnt, flags2, pid;
	} a;
	char size[128];
};

/* The copy of prog loaded for uprobe-multi links (the same instructions,
 * maps already in them; the attach type is fixed at load), or -1 when the
 * kernel refuses it (then perf-event uprobes are used). */
static int multi_prog(struct lp_tracer *t, struct bpf_program *prog, int slot)
{
	if (t->mprog[slot])
		return t->mprog[slot];
	/* Loaded as a session already (load): no copy. */
	if (slot == MULTI_SESSION)
		return t->mprog[slot] = bpf_program__fd(prog) >= 0 ? bpf_program__fd(prog) : -1;
	if (!lp_kfeature__has(LP_KF_UPROBE_MULTI)) {
		if (t->verbose)
			lp_error("note: no uprobe-multi links on this kernel (perf-event uprobes instead)");
		for (int i = 0; i < MULTI_N; i++)
			t->mprog[i] = -1;
		return -1;
	}
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)LP_BPF_TRACE_UPROBE_MULTI);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, bpf_program__name(prog), "GPL",
			       bpf_program__insns(prog), bpf_program__insn_cnt(prog), &o);
	if (fd < 0 && t->verbose)
		lp_error_errno("note: no uprobe-multi links (perf-event uprobes instead)");
	t->mprog[slot] = fd < 0 ? -1 : fd;
	return t->mprog[slot];
}

/* A kernel that loads the programs' copies but makes no uprobe-multi link
 * (one that knows neither, or refuses the link's fields): perf-event
 * uprobes from now on, if no link was made yet (then the refusal is
 * something else).  Whether to fall back. */
static bool no_multi_links(struct lp_tracer *t)
{
	if (t->nmfds)
		return false;
	if (t->verbose)
		lp_error_errno("note: no uprobe-multi links (perf-event uprobes instead)");
	for (int i = 0; i < MULTI_N; i++) {
		if (t->mprog[i] > 0 && i != MULTI_SESSION)
			close(t->mprog[i]);
		t->mprog[i] = -1;
	}
	return true;
}

/* One program at offset off of pt's file for every process, with cookie.
 * -1 with errno set. */
static int attach_one(struct lp_tracer *t, struct bpf_program *prog, int slot, uint64_t off,
		      uint64_t cookie, const struct lp_probe_point *pt)
{
	int pfd = multi_prog(t, prog, slot);
	if (pfd >= 0) {
		union lp_uprobe_multi_attr at;
		memset(&at, 0, sizeof(at));
		at.a.prog_fd = (uint32_t)pfd;
		at.a.attach_type = slot == MULTI_SESSION ? LP_BPF_TRACE_UPROBE_SESSION
							 : LP_BPF_TRACE_UPROBE_MULTI;
		at.a.path = (uint64_t)(uintptr_t)pt->path;
		at.a.offsets = (uint64_t)(uintptr_t)&off;
		at.a.cookies = (uint64_t)(uintptr_t)&cookie;
		at.a.cnt = 1;
		at.a.flags2 = slot == MULTI_RETURN ? LP_BPF_F_UPROBE_MULTI_RETURN : 0;
		int fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &at, sizeof(at));
		if (fd < 0 && slot == MULTI_SESSION)
			return -1;	/* the caller probes the return instructions */
		if (fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP) && no_multi_links(t))
			goto perf_event;
		if (fd < 0)
			return -1;
		t->mfds = lp_reallocarray(t->mfds, t->nmfds + 1, sizeof(*t->mfds));
		t->mfd_owner = lp_reallocarray(t->mfd_owner, t->nmfds + 1, sizeof(*t->mfd_owner));
		t->mfd_owner[t->nmfds] = t->cur;
		t->mfds[t->nmfds++] = fd;
		return 0;
	}
perf_event:;
	if (slot == MULTI_SESSION) {
		errno = EOPNOTSUPP;
		return -1;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie, .retprobe = slot == MULTI_RETURN);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, pt->path, off, &uo);
	if (!l)
		return -1;
	add_link(t, l);
	return 0;
}

/* --- probes in files others map: tracefs events, inherited ------------- */

/* Why not libbpf's uprobes (the uprobe PMU) or uprobe-multi links with a
 * pid, which lp-trace used before: a perf event of the uprobe PMU makes a
 * trace_event_call of its own, so the copies the kernel makes of it at
 * fork have no program; a link with a pid covers that process alone, so
 * each child needed one, attached by user space after the child had run
 * (its first calls missed), and each detached with a walk of every
 * process mapping the file and a grace period (~6 s for ~900 children of
 * an endless forker).  A tracefs event has one trace_event_call, whose
 * programs (prog_array, bpf_cookie included) run for every perf event on
 * it; a perf event opened on a process with inherit=1 is copied into each
 * child in copy_process (perf_event_init_task), before the child runs, and
 * the child's memory, copied, already holds the breakpoint
 * (trace_uprobe_filter_add skips uprobe_apply for event->parent); its copy
 * goes with it when it exits, cheaply (PF_EXITING in
 * trace_uprobe_filter_remove).  The filter (uprobe_perf_filter) puts
 * breakpoints only in the processes the perf events name: bystanders get
 * none. */

/* Writes cmd to uprobe_events; -1 with errno set. */
static int tfs_write(const char *cmd)
{
	const char *dir = lp_tracefs();
	if (!dir) {
		errno = ENOENT;
		return -1;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(cmd);
	ssize_t w = write(fd, cmd, n);
	int e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)n ? 0 : -1;
}

/* Removes the events of group dir/events/GROUP (event by event: a
 * wildcard is not known to every kernel), waiting up to patience_ms for
 * one still in use (EBUSY: a perf event the kernel has not freed yet). */
static void tfs_remove_group(const char *group, int patience_ms)
{
	const char *dir = lp_tracefs();
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/%s", dir ? dir : "", group);
	DIR *d = dir ? opendir(path) : NULL;
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, de->d_name);
		while (tfs_write(cmd) < 0 && errno == EBUSY && patience_ms > 0) {
			usleep(20000);
			patience_ms -= 20;
		}
	}
	closedir(d);
}

/* Groups a killed lp-trace left (lp_PID, PID dead): their events are not
 * in use, and would pile up. */
static void tfs_remove_stale(void)
{
	const char *dir = lp_tracefs();
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events", dir ? dir : "");
	DIR *d = dir ? opendir(path) : NULL;
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "lp_", 3))
			continue;
		long pid = strtol(de->d_name + 3, &end, 10);
		if (*end || pid <= 0 || pid > INT32_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		tfs_remove_group(de->d_name, 0);	/* in use: another run's closer */
	}
	closedir(d);
}

/* Creates the event "kind:group/name path:off" (kind 'p' or 'r') for
 * probe id; its index in t->tevs, or -1 after reporting why. */
static int tfs_create(struct lp_tracer *t, uint32_t id, char kind, const struct lp_probe_point *pt,
		      uint64_t off)
{
	if (!t->tfs_group[0]) {
		snprintf(t->tfs_group, sizeof(t->tfs_group), "lp_%d", (int)getpid());
		tfs_remove_stale();
	}
	struct tev ev = { .probe = id };
	size_t n = 0;
	for (size_t i = 0; i < t->ntevs; i++)
		n += t->tevs[i].probe == id;
	snprintf(ev.name, sizeof(ev.name), "p%u_%zu", (unsigned)id, n);
	if (strpbrk(pt->path, " \t\n")) {
		lp_error("cannot attach to '%s' in %s: a path with white space cannot be given to uprobe_events",
			 pt->name, pt->path);
		return -1;
	}
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof(cmd), "%c:%s/%s %s:0x%llx\n", kind, t->tfs_group, ev.name, pt->path,
		 (unsigned long long)off);
	if (tfs_write(cmd) < 0) {
		lp_error_errno("cannot attach to '%s' in %s: cannot create the uprobe event '%.*s' in %s/uprobe_events",
			       pt->name, pt->path, (int)strlen(cmd) - 1, cmd,
			       lp_tracefs() ? lp_tracefs() : "tracefs");
		return -1;
	}
	/* Listed now, so that it is removed whatever happens next. */
	t->tevs = lp_reallocarray(t->tevs, t->ntevs + 1, sizeof(*t->tevs));
	t->tevs[t->ntevs] = ev;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", lp_tracefs(), t->tfs_group, ev.name);
	FILE *f = fopen(path, "re");
	unsigned long long tpid;
	bool ok = f && fscanf(f, "%llu", &tpid) == 1;
	if (f)
		fclose(f);
	t->ntevs++;
	if (!ok) {
		lp_error("cannot attach to '%s' in %s: cannot read %s", pt->name, pt->path, path);
		return -1;
	}
	t->tevs[t->ntevs - 1].id = tpid;
	return (int)(t->ntevs - 1);
}

/* A perf event of tracefs event ev on thread tid, inherited by the
 * threads and processes it creates when inherit; -1 with errno set. */
static int tfs_open(const struct tev *ev, pid_t tid, bool inherit)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = ev->id;
	a.sample_period = 1;
	a.inherit = inherit;
	return (int)syscall(__NR_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Inherited perf events of tracefs event ev for process pid's threads (the
 * filter is by memory map, inheritance by thread: any of them may fork);
 * their fds kept in t->tfds.  -1 with errno set when none could be opened
 * on pid itself. */
static int tfs_open_threads(struct lp_tracer *t, const struct tev *ev, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *de;
	int ret = 0;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		int fd = tfs_open(ev, (pid_t)tid, true);
		if (fd < 0) {
			if (tid == pid && errno != ESRCH)
				ret = -1;
			continue;
		}
		t->tfds = lp_reallocarray(t->tfds, t->ntfds + 1, sizeof(*t->tfds));
		t->tfd_owner = lp_reallocarray(t->tfd_owner, t->ntfds + 1, sizeof(*t->tfd_owner));
		t->tfd_owner[t->ntfds] = (int)ev->probe;
		t->tfds[t->ntfds++] = fd;
	}
	int e = errno;
	closedir(d);
	errno = e;
	return ret;
}

/* Tracefs event kind:off (a new one) for probe id, its program prog with
 * cookie on a perf event of target pid (once: the programs of a
 * trace_event_call run for every perf event on it), and inherited perf
 * events without it on pid's threads.  The program's is not inherited:
 * perf_event_alloc gives an inherited event its parent's program, and its
 * free (perf_event_free_bpf_prog) takes that program out of the call's
 * prog_array, for every process (6.18: after the first child exited, no
 * child's call was seen).  -1 with errno set, or after reporting why. */
static int tfs_attach(struct lp_tracer *t, struct bpf_program *prog, char kind, uint64_t off,
		      uint64_t cookie, uint32_t id, const struct lp_probe_point *pt, pid_t pid)
{
	int i = tfs_create(t, id, kind, pt, off);
	if (i < 0)
		return -2;
	int fd = tfs_open(&t->tevs[i], pid, false);
	if (fd < 0)
		return -1;
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = cookie);
	struct bpf_link *l = bpf_program__attach_perf_event_opts(prog, fd, &po);
	if (!l) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	add_link(t, l);	/* which closes fd */
	int r = tfs_open_threads(t, &t->tevs[i], pid);
	for (size_t k = 0; k < t->ntargets; k++)
		if (t->targets[k] == pid)
			t->targets_covered[k] = lp_monotonic_ns();
	return r;
}

/* Program prog at offset off of pt's file with cookie (slot: which
 * uprobe-multi copy): for every process (pid <= 0), or in a tracefs event
 * for pid and what it forks.  -1 with errno set, -2 after reporting why. */
static int attach_at(struct lp_tracer *t, struct bpf_program *prog, int slot, uint64_t off,
		     uint64_t cookie, uint32_t id, const struct lp_probe_point *pt, pid_t pid)
{
	if (pid <= 0)
		return attach_one(t, prog, slot, off, cookie, pt);
	return tfs_attach(t, prog, slot == MULTI_RETURN ? 'r' : 'p', off, cookie, id, pt, pid);
}

/* --- returns armed per call while no library loaded can throw --------
 * (bpf/trace.bpf.c, lp_session; lib/capture/trace/dlgate.h) */

static void set_costs(const struct lp_tracer *t, const struct pinfo *pi,
		      const struct lp_probe_point *pt, struct lp_trace_probe *cfg);
static int write_probe_costs(struct lp_tracer *t, struct lp_writer *w, size_t i, int64_t time_ns);

static void dl_switch(struct lp_tracer *t, pid_t pid, const char *why);

/* Whether what target pid has loaded already lets its calls have
 * uretprobes (read once, lp_dl watching already): a process running
 * since before lp-trace may have loaded a plugin that throws, and then
 * no call of any target gets one (the gate is one for all).  A command
 * lp-trace has forked and not yet exec'd (its image is lp-trace's) has
 * loaded nothing: its dynamic linker's two notices as it loads what the
 * program links (before its first instruction) are let through. */
static bool first_check(struct lp_tracer *t, pid_t pid)
{
	for (size_t i = 0; i < t->ndl_read; i++)
		if (t->dl_read[i] == pid)
			return !t->dl_insn;
	t->dl_read = lp_reallocarray(t->dl_read, t->ndl_read + 1, sizeof(*t->dl_read));
	t->dl_read[t->ndl_read++] = pid;
	char self[PATH_MAX], exe[PATH_MAX], link[64];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t a = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ssize_t b = readlink(link, exe, sizeof(exe) - 1);
	uint64_t gen = t->skel->bss->dl_gen;
	if (a > 0 && a == b && !memcmp(self, exe, (size_t)a)) {
		if (gen == t->skel->bss->dl_ok)
			t->skel->bss->dl_ok = gen + 2;
		return true;
	}
	if (!t->dlgate)
		t->dlgate = lp_dlgate__new();
	pid_t who = 0;
	char why[320];
	lp_dlgate__dirty(t->dlgate, pid);
	int r = lp_dlgate__check(t->dlgate, &pid, 1, &who, why, sizeof(why));
	if (r > 0) {
		dl_switch(t, pid, why);
		return false;
	}
	if (t->skel->bss->dl_gen == gen && t->ngated == 0)
		t->skel->bss->dl_ok = gen;
	return true;
}

/* Whether function probe pt, whose returns would be probed at their
 * instructions only because its program may load a library that throws
 * (pt->dl_gate), can have a uretprobe armed per call instead: uprobe
 * sessions loaded, the probe attached once for every process (a
 * uprobe-multi link), a target whose loads lp_dl sees. */
static bool can_gate(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid)
{
	/* Not once a library that can throw was loaded (dl_switch). */
	return pt->cfg.kind == LP_PROBE_ENTRY && pt->dl_gate && pid > 0 && !t->dl_insn &&
	       t->dl_watch && bpf_program__fd(t->skel->progs.lp_session) >= 0 &&
	       lp_kfeature__has(LP_KF_UPROBE_MULTI) && file_shared(t, pt->path) && first_check(t, pid);
}

/* Probe id's costs in the kernel's settings as pi says its returns are
 * probed now. */
static void update_costs(struct lp_tracer *t, uint32_t id)
{
	struct pinfo *pi = &t->probes[id];
	struct lp_trace_probe cfg;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg) < 0)
		return;
	struct lp_probe_point pt = { .insn = pi->insn, .cfg.kind = (unsigned)pi->kind };
	set_costs(t, pi, &pt, &cfg);
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY);
}

/* Probe id is not gated after all (its session link refused): its
 * returns at their instructions, as probe.c chose. */
static void ungate(struct lp_tracer *t, uint32_t id)
{
	struct pinfo *pi = &t->probes[id];
	pi->gated = false;
	pi->ret_insn_probed = true;
	t->ngated--;
	update_costs(t, id);
}

/* A library that can throw was loaded (by pid: why): the gated probes'
 * returns are probed at their instructions from now on, and their entries
 * arm no uretprobe (dl_insn).  The returns first, as attach_uprobes. */
static void dl_switch(struct lp_tracer *t, pid_t pid, const char *why)
{
	char names[256] = "";
	size_t len = 0;
	for (uint32_t id = 0; id < t->nprobes; id++) {
		struct pinfo *pi = &t->probes[id];
		if (!pi->gated || pi->ret_insn_probed || pi->removing || pi->removed)
			continue;
		struct lp_probe_point pt = { .name = pi->name, .path = pi->path };
		t->cur = (int)id;
		for (size_t i = 0; i < pi->nrets; i++) {
			const struct lp_ret_point *rp = &pi->rets[i];
			if (attach_one(t, t->skel->progs.lp_return, MULTI_RET_INSN, rp->offset,
				       LP_RET_COOKIE(id, rp->kind, rp->reg, rp->off), &pt) < 0)
				lp_error_errno("cannot attach to a return of '%s' in %s", pi->name, pi->path);
		}
		t->cur = -1;
		pi->ret_insn_probed = true;
		update_costs(t, id);
		/* Its returns' cost from now on. */
		if (t->w && t->calibrated && write_probe_costs(t, t->w, id, lp_monotonic_ns()) < 0 &&
		    !t->werr)
			t->werr = errno;
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
						pi->name);
	}
	t->dl_insn = true;
	t->skel->bss->dl_insn = 1;
	if (len)
		lp_error("note: pid %d loaded a library that can throw (%s): the returns of %s are probed at their instructions from now on",
			 (int)pid, why, names);
	else if (t->verbose)
		lp_error("note: pid %d has loaded a library that can throw (%s): no uretprobe on the functions of a program that calls dlopen",
			 (int)pid, why);
}

/* While the loads counted differ from those found harmless, calls are not
 * traced: read the processes that loaded (their records are in the ring
 * before their count: lp_dl), and either let the calls have uretprobes
 * again or switch to the return instructions. */
static void dl_check(struct lp_tracer *t)
{
	uint64_t gen = t->skel->bss->dl_gen;
	if (!t->dlgate)
		t->dlgate = lp_dlgate__new();
	/* Loads let through (first_check) are read all the same. */
	if (gen == t->skel->bss->dl_ok && !lp_dlgate__pending(t->dlgate))
		return;
	if (t->skel->bss->dl_unseen) {
		t->skel->bss->dl_unseen = 0;
		lp_dlgate__all_dirty(t->dlgate);
	}
	ring_buffer__consume(t->rb);
	pid_t *pids = lp_calloc(t->ntargets + t->nkids + 1, sizeof(*pids));
	size_t n = 0;
	for (size_t i = 0; i < t->ntargets; i++)
		pids[n++] = t->targets[i];
	for (size_t i = 0; i < t->nkids; i++)
		pids[n++] = t->kids[i].pid;
	pid_t who = 0;
	char why[320];
	int r = lp_dlgate__check(t->dlgate, pids, n, &who, why, sizeof(why));
	free(pids);
	if (r > 0)
		dl_switch(t, who, why);
	else if (t->skel->bss->dl_gen == gen && gen != t->skel->bss->dl_ok)
		t->skel->bss->dl_ok = gen;
}

/* A uprobe probe's programs for every process (pid <= 0), or for pid and
 * its descendants, the probe's settings under id. */
static int attach_uprobes(struct lp_tracer *t, uint32_t id, const struct lp_probe_point *pt,
			  pid_t pid)
{
	int r;
	struct pinfo *pi = &t->probes[id];
	if (pi->gated) {
		/* Entry and return in one session link. */
		multi_prog(t, t->skel->progs.lp_session, MULTI_SESSION);
		pi->attached_ns = lp_monotonic_ns();
		if (attach_one(t, t->skel->progs.lp_session, MULTI_SESSION, pt->offset, id, pt) == 0)
			return 0;
		if (t->verbose)
			lp_error_errno("note: %s: no uprobe session (its return instructions probed instead)",
				       pt->name);
		ungate(t, id);
	}
	/* The returns first: a call entered while only the entry probe was
	 * attached would push a frame no return ever pops.  The other way
	 * round, a return whose entry was not seen finds no frame of its own
	 * and is ignored.  A uretprobe, or where one would break the program
	 * (lib/capture/trace/probe.c says why), uprobes on the instructions that leave. */
	if (pt->cfg.kind == LP_PROBE_ENTRY && !pi->ret_insn_probed &&
	    (r = attach_at(t, t->skel->progs.lp_return, MULTI_RETURN, pt->offset, id, id, pt, pid)) < 0)
		goto fail;
	for (size_t i = 0; pt->cfg.kind == LP_PROBE_ENTRY && pi->ret_insn_probed && i < pt->nrets; i++) {
		const struct lp_ret_point *rp = &pt->rets[i];
		if ((r = attach_at(t, t->skel->progs.lp_return, MULTI_RET_INSN, rp->offset,
				   LP_RET_COOKIE(id, rp->kind, rp->reg, rp->off), id, pt, pid)) < 0)
			goto fail;
	}
	struct bpf_program *prog = pt->cfg.kind == LP_PROBE_ENTRY ? t->skel->progs.lp_entry
				   : pt->cfg.kind == LP_PROBE_CATCH ? t->skel->progs.lp_catch
				   : pt->cfg.kind == LP_PROBE_PY    ? t->skel->progs.lp_py
				   : pt->cfg.kind == LP_PROBE_DL    ? t->skel->progs.lp_dl
								     : t->skel->progs.lp_point;
	int slot = pt->cfg.kind == LP_PROBE_ENTRY ? MULTI_ENTRY
		   : pt->cfg.kind == LP_PROBE_CATCH ? MULTI_CATCH
		   : pt->cfg.kind == LP_PROBE_PY    ? MULTI_PY
		   : pt->cfg.kind == LP_PROBE_DL    ? MULTI_DL : MULTI_POINT;
	/* The attach record's time: calls are seen from the entry's link on
	 * (its program copy loaded first: the verifier takes a while). */
	if (pid <= 0)
		multi_prog(t, prog, slot);
	t->probes[id].attached_ns = lp_monotonic_ns();
	if ((r = attach_at(t, prog, slot, pt->offset, id, id, pt, pid)) < 0)
		goto fail;
	return 0;
fail:
	if (r == -2)
		return -1;
	if (errno == EPERM || errno == EACCES)
		lp_error("cannot attach to '%s' in %s: needs root (or CAP_BPF and CAP_PERFMON): %s",
			 pt->name, pt->path, strerror(errno));
	else
		lp_error_errno("cannot attach to '%s' in %s at offset 0x%llx", pt->name, pt->path,
			       (unsigned long long)pt->offset);
	return -1;
}

/* A USDT probe for process pid alone: a probe for every process would
 * put breakpoints in each one running the file (libbpf's pid -1).  libbpf
 * decodes the argument spec and counts the semaphore up in pid (down when
 * the link goes). */
static int attach_usdt(struct lp_tracer *t, uint32_t id, const struct lp_probe_point *pt, pid_t pid)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = id);
	struct bpf_link *l = bpf_program__attach_usdt(t->skel->progs.lp_usdt, pid, pt->path,
						      pt->usdt_provider, pt->usdt_name, &uo);
	if (!l)
		return -1;
	add_link(t, l);
	return 0;
}

/* The calibration's median run of the program of a probe of this kind
 * (half 0: an entry or a point hit, 1: a return), which each hit replaces
 * with its own (bpf/trace.bpf.c, prog_extra); 0 for the kinds whose hits
 * count the calibrated figure alone (USDT, python:). */
static int64_t prog_of(const struct lp_tracer *t, int kind, int half)
{
	switch (kind) {
	case LP_PROBE_ENTRY: return half ? t->prog_ret : t->prog_entry;
	case LP_PROBE_POINT: return half ? 0 : t->prog_point;
	case LP_PROBE_TP: return half ? 0 : t->prog_tp;
	default: return 0;
	}
}

/* The calibrated costs of function probe pi's entry and return. */
static const struct pair_cost *pair_of(const struct lp_tracer *t, const struct pinfo *pi)
{
	const struct cls_cost *c = &t->costs[pi->insn];
	return pi->ret_insn_probed ? &c->insn : &c->uret;
}

/* The user-space record of a new probe, id t->nprobes. */
static struct pinfo *new_pinfo(struct lp_tracer *t, const struct lp_probe_point *pt)
{
	t->probes = lp_reallocarray(t->probes, t->nprobes + 1, sizeof(*t->probes));
	struct pinfo *pi = &t->probes[t->nprobes];
	memset(pi, 0, sizeof(*pi));
	pi->name = lp_strdup(pt->name);
	pi->spec = lp_strdup(pt->spec ? pt->spec->text : pt->name);
	pi->copy = pt->copy ? lp_strdup(pt->copy) : NULL;
	pi->kind = (int)pt->cfg.kind;
	if (pt->spec && pt->spec->module)
		pi->module = lp_strdup(pt->spec->module);
	pi->nvals = pt->nvals;
	for (size_t i = 0; i < pt->nvals; i++) {
		pi->vals[i] = pt->vals[i];
		pi->vals[i].name = lp_strdup(pt->vals[i].name);
		pi->str[i] = pt->cfg.caps[i].str;
	}
	pi->has_ret = pt->has_ret;
	pi->ret = pt->ret;
	pi->ret.name = NULL;
	pi->insn = pt->insn;
	pi->ret_insn_probed = pt->cfg.kind == LP_PROBE_ENTRY && pt->returns == LP_RETURNS_INSN;
	pi->ret_insn = pt->ret_insn;
	t->nprobes++;
	return pi;
}

/* The calibrated costs of its hits, in the probe's settings for BPF. */
static void set_costs(const struct lp_tracer *t, const struct pinfo *pi,
		      const struct lp_probe_point *pt, struct lp_trace_probe *cfg)
{
	if (t->calibrated && pt->insn != LP_INSN_NONE) {
		const struct cls_cost *c = &t->costs[pt->insn];
		if (pt->cfg.kind == LP_PROBE_ENTRY) {
			const struct pair_cost *pc = pair_of(t, pi);
			cfg->hit_ns = (unsigned int)pc->entry;
			cfg->hit_inside_ns = (unsigned int)pc->entry_in;
			cfg->ret_ns = (unsigned int)pc->ret;
			cfg->ret_inside_ns = (unsigned int)pc->ret_in;
			if (pi->ret_insn_probed) {
				int64_t rc, rin;
				ret_insn_cost(t, pi->insn, pi->ret_insn, &rc, &rin, NULL, NULL);
				cfg->ret_ns = (unsigned int)rc;
				cfg->ret_inside_ns = (unsigned int)rin;
			}
		} else if (pt->cfg.kind == LP_PROBE_POINT || pt->cfg.kind == LP_PROBE_USDT ||
			   pt->cfg.kind == LP_PROBE_PY) {
			/* A python: site is a point probe's hit: its span's
			 * own start and return are outside it. */
			cfg->hit_ns = (unsigned int)c->point;
		}
	}
	if (t->calibrated && pt->cfg.kind == LP_PROBE_TP)
		cfg->hit_ns = (unsigned int)t->tp_cost;
	if (t->calibrated && (pt->insn != LP_INSN_NONE || pt->cfg.kind == LP_PROBE_TP))
		for (int half = 0; half < 2; half++)
			cfg->prog_ns[half] = (unsigned int)prog_of(t, (int)pt->cfg.kind, half);
}

/* Whether the program pt's kind of probe needs was loaded (lp_tracer__new
 * goes on without one the kernel refuses); false after saying why not. */
static bool kind_loaded(struct lp_tracer *t, const struct lp_probe_point *pt)
{
	struct bpf_program *prog = pt->cfg.kind == LP_PROBE_SYSCALL ? t->skel->progs.lp_sys_exit
				   : pt->cfg.kind == LP_PROBE_TP    ? t->skel->progs.lp_tp
				   : pt->cfg.kind == LP_PROBE_USDT  ? t->skel->progs.lp_usdt
				   : pt->cfg.kind == LP_PROBE_PY    ? t->skel->progs.lp_py
				   : pt->cfg.kind == LP_PROBE_CATCH ? t->skel->progs.lp_catch
								     : NULL;
	if (pt->cfg.kind == LP_PROBE_SYSCALL && bpf_program__fd(t->skel->progs.lp_sys_enter) < 0)
		prog = t->skel->progs.lp_sys_enter;
	if (!prog || bpf_program__fd(prog) >= 0)
		return true;
	if (pt->cfg.kind == LP_PROBE_PY && !lp_kfeature__has(LP_KF_LOOP))
		lp_error("cannot trace '%s' on this kernel: python: probes need %s", pt->name,
			 lp_kfeature__what(LP_KF_LOOP));
	else
		lp_error("cannot trace '%s' on this kernel: its verifier refused lp's program %s (-v shows why)",
			 pt->name, bpf_program__name(prog));
	return false;
}

static int attach_probe(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid);

int lp_tracer__attach(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid)
{
	int cur = t->cur = (int)t->nprobes;
	int id = attach_probe(t, pt, pid);
	t->cur = -1;
	/* A probe that failed half-way: what it attached goes (quietly: no
	 * record said it came), and it is no probe lp_tracer__find finds. */
	if (id < 0 && (size_t)cur < t->nprobes)
		lp_tracer__remove(t, &cur, 1);
	return id;
}

static int attach_probe(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid)
{
	if (t->nprobes >= LP_TRACE_MAX_PROBES) {
		lp_error("too many probes (at most %d)", LP_TRACE_MAX_PROBES);
		return -1;
	}
	if (!kind_loaded(t, pt))
		return -1;
	uint32_t id = (uint32_t)t->nprobes;
	struct pinfo *pi = new_pinfo(t, pt);
	if (can_gate(t, pt, pid)) {
		pi->gated = true;
		pi->ret_insn_probed = false;
		pi->rets = lp_calloc(pt->nrets ? pt->nrets : 1, sizeof(*pi->rets));
		memcpy(pi->rets, pt->rets, pt->nrets * sizeof(*pi->rets));
		pi->nrets = pt->nrets;
		pi->path = lp_strdup(pt->path);
		t->ngated++;
		if (t->verbose)
			lp_error("%s: a uretprobe armed per call until the program loads a library that can throw, then its %zu return instruction%s (%s)",
				 pt->name, pt->nrets, pt->nrets == 1 ? "" : "s", pt->returns_why);
	} else if (pt->cfg.kind == LP_PROBE_ENTRY && pt->dl_gate && t->verbose) {
		lp_probe_point__say_returns(pt);
	}
	if (pt->cfg.kind == LP_PROBE_ENTRY && !pi->ret_insn_probed && pt->walks && !t->walks_said) {
		t->walks_said = true;
		lp_error("note: %s: a backtrace it takes during a call of %s ends at that call (a uretprobe; --returns insn keeps it whole)",
			 pt->walks, pt->name);
	}
	/* ld.so's watch (before the functions it gates), where they can be. */
	if (pt->cfg.kind == LP_PROBE_DL &&
	    (pid <= 0 || t->dl_insn || bpf_program__fd(t->skel->progs.lp_session) < 0 ||
	     bpf_program__fd(t->skel->progs.lp_dl) < 0))
		return (int)id;
	struct lp_trace_probe cfg = pt->cfg;
	set_costs(t, pi, pt, &cfg);

	if (pt->cfg.kind == LP_PROBE_SYSCALL) {
		pi->nargs = lp_syscall__args(pt->spec->name, pi->argnames, pi->argptr, pi->argint);
		pi->sysnr = pt->sysnr;
		pi->attached_ns = lp_monotonic_ns();
		uint32_t nr = (uint32_t)pt->sysnr, v = id + 1;
		if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.sysnrs), &nr, &v, BPF_ANY) < 0) {
			lp_error_errno("probe '%s': cannot enable", pt->name);
			return -1;
		}
		if (!t->sys_links[0]) {
			t->sys_links[0] = bpf_program__attach(t->skel->progs.lp_sys_enter);
			t->sys_links[1] = t->sys_links[0] ? bpf_program__attach(t->skel->progs.lp_sys_exit) : NULL;
			if (!t->sys_links[1]) {
				lp_error_errno("probe '%s': cannot attach to raw tracepoints sys_enter/sys_exit",
					       pt->name);
				return -1;
			}
		}
		return (int)id;
	}
	if (pt->cfg.kind == LP_PROBE_TP && setup_tp(t, pi, pt, &cfg) < 0)
		return -1;
	/* Once for every process, the pid set filtering in the kernel, when
	 * no other process maps the file; else for pid and its descendants
	 * (tracefs events, inherited at fork). */
	if (pt->cfg.kind == LP_PROBE_PY) {
		/* One python: probe's settings, the same at each of its sites. */
		uint32_t zero = 0;
		if (!t->py_set &&
		    bpf_map_update_elem(bpf_map__fd(t->skel->maps.pyconf), &zero, pt->py, BPF_ANY) < 0) {
			lp_error_errno("probe '%s': cannot store its settings", pt->name);
			return -1;
		}
		t->py_set = true;
	}
	if (t->gate && pt->cfg.kind == LP_PROBE_ENTRY) {
		pi->gate = true;
		cfg.flags |= LP_PROBE_F_GATE;
	}
	if ((pt->cfg.kind == LP_PROBE_ENTRY || pt->cfg.kind == LP_PROBE_POINT ||
	     pt->cfg.kind == LP_PROBE_PY) && pid > 0 && file_shared(t, pt->path)) {
		pi->shared = true;
		cfg.flags |= LP_PROBE_F_FILTER;
		pid = -1;
	}
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY) < 0) {
		lp_error_errno("probe '%s': cannot store its settings", pt->name);
		return -1;
	}
	/* Its attach record's time: just before its first link (not
	 * before file_shared's walk of /proc, which takes a while on a
	 * busy machine), so no call of it is seen earlier. */
	pi->attached_ns = lp_monotonic_ns();
	if (pt->cfg.kind == LP_PROBE_USDT) {
		/* A pair's halves are consecutive ids (LP_PROBE_F_CLOSE). */
		if ((pt->cfg.flags & LP_PROBE_F_CLOSE) && (id == 0 || t->probes[id - 1].kind != LP_PROBE_USDT)) {
			lp_error("probe '%s': its closing half not attached after its opening one", pt->name);
			return -1;
		}
		if (pid > 0 && attach_usdt(t, id, pt, pid) == 0)
			return (int)id;
		lp_error_errno("cannot attach to '%s' in %s for pid %d", pt->name, pt->path, (int)pid);
		return -1;
	}
	struct bpf_link *l;
	if (pt->cfg.kind == LP_PROBE_TP) {
		LIBBPF_OPTS(bpf_tracepoint_opts, to, .bpf_cookie = id);
		l = bpf_program__attach_tracepoint_opts(t->skel->progs.lp_tp, pt->tp_subsys,
							pt->tp_event, &to);
		if (!l) {
			lp_error_errno("probe '%s': cannot attach", pt->name);
			return -1;
		}
		add_link(t, l);
		return attach_exit(t) < 0 ? -1 : (int)id;
	}
	if (attach_uprobes(t, id, pt, pid) < 0) {
		if (pt->cfg.kind != LP_PROBE_DL)
			return -1;
		lp_error("note: the functions of a program that calls dlopen get no uretprobe: lp-trace cannot watch what it loads");
		return (int)id;
	}
	t->dl_watch |= pt->cfg.kind == LP_PROBE_DL;
	return (int)id;
}

/* Followed children that have exited and whose exit was not reported
 * (LP_EV_EXIT: the ring was full) are forgotten. */
static void forget_exited(struct lp_tracer *t)
{
	for (size_t i = 0; i < t->nkids;) {
		if (kill(t->kids[i].pid, 0) == 0 || errno != ESRCH)
			i++;
		else
			forget_kid(t, i);
	}
}

int lp_tracer__follow(struct lp_tracer *t, void (*on_fork)(void *arg, pid_t child, pid_t target),
		      void *arg)
{
	t->on_fork = on_fork;
	t->fork_arg = arg;
	t->skel->links.lp_fork = bpf_program__attach(t->skel->progs.lp_fork);
	if (!t->skel->links.lp_fork) {
		lp_error_errno("cannot attach to sched_process_fork");
		return -1;
	}
	return 0;
}

/* Not traced: a lost child, the first such failure said. */
static int child_refused(struct lp_tracer *t, struct kid *k, const struct lp_probe_point *pt)
{
	if (!t->children_failed++)
		lp_error_errno("cannot attach to '%s' in %s for child %d (more children failing are counted as lost)",
			       pt->name, pt->path, (int)k->pid);
	k->refused = true;
	t->children_unfollowed++;
	return -1;
}

/* A USDT probe is attached to each process on its own (attach_usdt): a
 * child, forked or adopted, gets its own once user space hears of it; its
 * hits before that are not seen. */
static int usdt_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt, pid_t child)
{
	struct kid *k = find_kid(t, child);
	if (id < 0 || !k || k->refused)
		return 0;
	int r = attach_usdt(t, (uint32_t)id, pt, child);
	k->covered_ns = lp_monotonic_ns();
	if (r == 0 || errno == ESRCH || errno == ENOENT)	/* gone, nothing to trace */
		return 0;
	return child_refused(t, k, pt);
}

static int attach_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			pid_t child, bool live);
static int attach_child_probe(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			      pid_t child, bool live);

int lp_tracer__attach_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			    pid_t child)
{
	return attach_child(t, id, pt, child, false);
}

/* A probe added while tracing: each process followed as target's child
 * now (forked before the probe was there: its perf events are not
 * theirs) is given it. */
void lp_tracer__attach_kids(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			    pid_t target)
{
	for (size_t i = 0; i < t->nkids; i++)
		if (t->kids[i].target == target)
			attach_child(t, id, pt, t->kids[i].pid, true);
}

/* live: the probe was added after the child was forked. */
static int attach_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			pid_t child, bool live)
{
	if (id >= 0 && (size_t)id < t->nprobes && (t->probes[id].removing || t->probes[id].removed))
		return 0;
	t->cur = id;
	int r = attach_child_probe(t, id, pt, child, live);
	t->cur = -1;
	return r;
}

static int attach_child_probe(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			      pid_t child, bool live)
{
	if (pt->cfg.kind == LP_PROBE_USDT)
		return usdt_child(t, id, pt, child);
	if (pt->cfg.kind != LP_PROBE_ENTRY && pt->cfg.kind != LP_PROBE_POINT &&
	    pt->cfg.kind != LP_PROBE_CATCH && pt->cfg.kind != LP_PROBE_DL)
		return 0;	/* system-wide events, filtered by process in the kernel */
	if (id < 0 || (size_t)id >= t->nprobes || t->probes[id].shared)
		return 0;	/* attached for every process: in the pid set from its fork */
	struct kid *k = find_kid(t, child);
	/* Gone already, or forked when its parent had the perf events
	 * already: the kernel gave it copies (tfs_open). */
	if (!k || (!k->adopted && !k->uncovered && !live) || k->refused)
		return 0;
	int r = 0;
	for (size_t i = 0; i < t->ntevs && r == 0; i++)
		if (t->tevs[i].probe == (uint32_t)id)
			r = tfs_open_threads(t, &t->tevs[i], child);
	k->covered_ns = lp_monotonic_ns();
	if (r == 0 || errno == ESRCH)	/* ESRCH: gone, nothing to trace */
		return 0;
	return child_refused(t, k, pt);
}

int lp_tracer__adopt(struct lp_tracer *t, pid_t pid, pid_t target)
{
	if (find_kid(t, pid))
		return 0;
	uint32_t k = (uint32_t)pid;
	uint8_t one = 1;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tgids), &k, &one, BPF_ANY) < 0) {
		if (errno != E2BIG) {
			lp_error_errno("cannot add pid %d to the filter", (int)pid);
			return -1;
		}
		t->children_unfollowed++;	/* no room: a lost child */
		return 0;
	}
	t->kids = lp_reallocarray(t->kids, t->nkids + 1, sizeof(*t->kids));
	t->kids[t->nkids++] = (struct kid){ .pid = pid, .target = target, .adopted = true };
	return 1;
}

/* --- records ---------------------------------------------------------- */

/* Numbers by hand: printf was most of the reader's time per record.
 * buf holds at least 24 bytes. */
static void fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

static void fmt_i64(char *buf, int64_t v)
{
	if (v < 0) {
		*buf++ = '-';
		fmt_u64(buf, -(uint64_t)v);
	} else {
		fmt_u64(buf, (uint64_t)v);
	}
}

static void fmt_hex(char *buf, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0;
	do
		tmp[n++] = digits[v & 15];
	while ((v >>= 4));
	*buf++ = '0';
	*buf++ = 'x';
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

/* buf holds LP_TRACE_STR_MAX + 32 bytes. */
static void format_value(char *buf, const struct lp_probe_value *v, uint64_t raw, const char *str)
{
	uint64_t mask = v->size >= 8 ? UINT64_MAX : (1ULL << (8 * v->size)) - 1;
	uint64_t u = raw & mask;
	switch (v->type) {
	case LP_VAL_INT:
	case LP_VAL_CHAR: {
		int64_t s = (int64_t)u;
		if (v->size < 8 && (u >> (8 * v->size - 1)) & 1)
			s = (int64_t)(u | ~mask);
		fmt_i64(buf, s);
		break;
	}
	case LP_VAL_UINT:
	case LP_VAL_BOOL:
		fmt_u64(buf, u);
		break;
	case LP_VAL_PTR:
		fmt_hex(buf, u);
		break;
	case LP_VAL_STR:
		if (!raw)
			strcpy(buf, "(null)");
		else if (str && !str[0] && str[LP_TRACE_STR_MAX - 1] == 1)
			strcpy(buf, "(unreadable)");	/* its page was not in memory */
		else
			snprintf(buf, LP_TRACE_STR_MAX + 32, "%.*s", LP_TRACE_STR_MAX - 1, str ? str : "");
		break;
	}
}

static void values_attrs(struct lp_tracer *t, const struct pinfo *pi, const unsigned long long *vals,
			 const char (*strs)[LP_TRACE_STR_MAX])
{
	char buf[LP_TRACE_STR_MAX + 32];
	for (size_t i = 0; i < pi->nvals; i++) {
		const char *s = pi->str[i] && strs ? strs[pi->str[i] - 1] : NULL;
		format_value(buf, &pi->vals[i], vals[i], s);
		lp_attrs_buf__add(&t->attrs, pi->vals[i].name, buf);
	}
}

static void tp_attrs(struct lp_tracer *t, const struct pinfo *pi, const unsigned char *data,
		     unsigned int size)
{
	char buf[LP_TRACE_TP_MAX + 32];
	for (struct tep_format_field *f = pi->tep_event->format.fields; f; f = f->next) {
		if ((unsigned int)(f->offset + f->size) > size)
			break;
		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			unsigned long long loc;
			if (tep_read_number_field(f, data, &loc) != 0)
				continue;
			unsigned int off = loc & 0xffff, len = (unsigned int)(loc >> 16) & 0xffff;
			if (f->flags & TEP_FIELD_IS_RELATIVE)
				off += (unsigned int)(f->offset + f->size);
			if (off >= size)
				len = 0;
			else if (off + len > size)
				len = size - off;
			snprintf(buf, sizeof(buf), "%.*s", (int)len, off < size ? (const char *)data + off : "");
		} else if ((f->flags & TEP_FIELD_IS_ARRAY) && strstr(f->type, "char")) {
			snprintf(buf, sizeof(buf), "%.*s", f->size, (const char *)data + f->offset);
		} else if (f->flags & TEP_FIELD_IS_ARRAY) {
			continue;
		} else {
			unsigned long long v;
			if (tep_read_number_field(f, data, &v) != 0)
				continue;
			if (f->flags & TEP_FIELD_IS_POINTER)
				snprintf(buf, sizeof(buf), "0x%llx", v);
			else if (f->flags & TEP_FIELD_IS_SIGNED) {
				long long s = (long long)v;
				if (f->size < 8 && (v >> (8 * f->size - 1)) & 1)
					s = (long long)(v | ~((1ULL << (8 * f->size)) - 1));
				snprintf(buf, sizeof(buf), "%lld", s);
			} else
				snprintf(buf, sizeof(buf), "%llu", v);
		}
		lp_attrs_buf__add(&t->attrs, f->name, buf);
	}
}

static void syscall_attrs(struct lp_tracer *t, const struct pinfo *pi,
			  const unsigned long long *vals)
{
	char buf[LP_TRACE_STR_MAX + 32];
	for (int i = 0; i < 6; i++) {
		if (pi->nargs && i >= pi->nargs)
			break;
		char key[40];
		if (pi->nargs)
			snprintf(key, sizeof(key), "%s", pi->argnames[i]);
		else
			snprintf(key, sizeof(key), "arg%d", i);
		if (!pi->nargs || pi->argptr[i])
			fmt_hex(buf, vals[i]);
		else if (pi->argint[i])	/* an int: AT_FDCWD is -100 */
			fmt_i64(buf, (int)vals[i]);
		else
			fmt_i64(buf, (int64_t)vals[i]);
		lp_attrs_buf__add(&t->attrs, key, buf);
	}
}

/* --- calibration ------------------------------------------------------ */

/* Calls per timed run at most, and at least when the budget is short. */
#define CAL_MAX_CALLS 5000
#define CAL_MIN_CALLS 200
#define CAL_BASE_CALLS 2000	/* unprobed calls per class */
#define CAL_WARM_CALLS 32	/* untimed: the first hits map pages, optimise nops */
#define CAL_ROUNDS 8		/* runs interleaved, so that a noisy moment is shared */

/* A calibration probe: an entry in the probe table whose records
 * handle_event keeps in cal_spans instead of writing. */
static uint32_t cal_probe(struct lp_tracer *t, unsigned int kind)
{
	uint32_t id = (uint32_t)t->nprobes;
	t->probes = lp_reallocarray(t->probes, t->nprobes + 1, sizeof(*t->probes));
	struct pinfo *pi = &t->probes[t->nprobes++];
	memset(pi, 0, sizeof(*pi));
	pi->name = lp_strdup("[calibration]");
	pi->kind = (int)kind;
	pi->cal = true;
	struct lp_trace_probe cfg = { .kind = kind, .flags = LP_PROBE_F_CAL };
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY);
	return id;
}

/* The mean run of calibration probe id's programs ([0] entries and point
 * hits, [1] returns), or old when they ran none.  A mean, as the hit's
 * costs: a span sums its hits. */
static int64_t cal_prog_mean(const struct lp_tracer *t, uint32_t id, int half, int64_t old)
{
	struct lp_trace_probe cfg;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg) < 0)
		return old;
	uint64_t n = cfg.prog_runs[half], sum = cfg.prog_sum[half];
	return n ? (int64_t)((double)sum / (double)n + 0.5) : old;
}

/* Calibration probe id's program runs so far forgotten (the warming
 * up's).  No hit runs meanwhile: the calibration's thread is here. */
static void cal_prog_forget(const struct lp_tracer *t, uint32_t id)
{
	struct lp_trace_probe cfg;
	int fd = bpf_map__fd(t->skel->maps.probes);
	if (bpf_map_lookup_elem(fd, &id, &cfg) < 0)
		return;
	memset(cfg.prog_sum, 0, sizeof(cfg.prog_sum));
	memset(cfg.prog_runs, 0, sizeof(cfg.prog_runs));
	bpf_map_update_elem(fd, &id, &cfg, BPF_ANY);
}

/* The kinds of timed run, one calibration function copy each: unprobed,
 * an entry and return (uretprobe) pair, a point probe, an entry and its
 * return probed at the function's ret. */
enum { RUN_BASE, RUN_PAIR, RUN_POINT, RUN_RET_INSN, NRUNS };

struct cal_run {
	lp_tracecal_fn fn;
	size_t n, done;		/* calls to time, timed */
	int64_t *dur, *pre;	/* a call, and its part before the clock read inside */
	int64_t *stamp;		/* pairs: that read */
	/* Pairs: per call of a chunk whose spans all arrived, the span, and
	 * its parts before and after the function's clock read. */
	int64_t *span, *ein, *rin;
	size_t nin;
};

/* Attaches prog at code, a calibration function or its ret, with cookie
 * (a return probe when ret). */
static int cal_attach(struct lp_tracer *t, struct bpf_program *prog, const void *code,
		      uint64_t cookie, bool ret)
{
	char path[4096];
	uint64_t off;
	if (lp_tracecal__locate(code, path, sizeof(path), &off) < 0) {
		lp_error("cannot calibrate: no file mapped at the calibration functions");
		return -1;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, getpid(), path, off, &uo);
	if (!l) {
		lp_error_errno("cannot calibrate: cannot attach to %s at offset 0x%llx", path,
			       (unsigned long long)off);
		return -1;
	}
	t->cal_links = lp_reallocarray(t->cal_links, t->ncal_links + 1, sizeof(*t->cal_links));
	t->cal_links[t->ncal_links++] = l;
	return 0;
}

/* Times m more calls of run r; a pair run's spans are read after them. */
static void cal_block(struct lp_tracer *t, struct cal_run *r, int kind, size_t m)
{
	if (r->done + m > r->n)
		m = r->n - r->done;
	if (!m)
		return;
	t->ncal = 0;
	lp_tracecal__time(r->fn, m, r->dur + r->done, r->pre + r->done,
			  r->stamp ? r->stamp + r->done : NULL);
	if (kind != RUN_BASE)
		ring_buffer__consume(t->rb);
	if (r->stamp && t->ncal == m)
		for (size_t i = 0; i < m; i++) {
			int64_t s = t->cal_spans[i][0], e = t->cal_spans[i][1];
			int64_t in = r->stamp[r->done + i];
			r->span[r->nin] = e - s;
			r->ein[r->nin] = in - s;
			r->rin[r->nin++] = e - in;
		}
	r->done += m;
}

/* The mean of v[0..n) less base, at least 0, and v's deviation. */
static int64_t cal_less(int64_t *v, size_t n, int64_t base, int64_t *sd)
{
	int64_t mean = lp_tracecal__mean(v, n);
	*sd = lp_tracecal__sd(v, n);
	return mean > base ? mean - base : 0;
}

/* Destroying a uprobe link waits for grace periods, one link after the
 * other (~0.1 to 0.7 s each here, longer while a target makes many
 * calls): the calibration's links are destroyed by a thread of their own,
 * while tracing starts; lp_tracer__free joins it. */
static void *cal_destroy(void *arg)
{
	struct lp_tracer *t = arg;
	for (size_t i = 0; i < t->ncal_links; i++)
		bpf_link__destroy(t->cal_links[i]);
	return NULL;
}

static void cal_release(struct lp_tracer *t)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* signals are the main thread's */
	if (pthread_create(&t->cal_thread, NULL, cal_destroy, t) == 0) {
		t->cal_threaded = true;
	} else {
		cal_destroy(t);
		t->ncal_links = 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A tracepoint probe's hit: lp_tp on syscalls:sys_enter_getppid, this
 * process in the filter so that it does all its work (a record of the
 * largest size it copies), around getppid(2) calls timed against as many
 * unprobed ones before and after.  Within budget_ns. */
static int cal_tracepoint(struct lp_tracer *t, int64_t budget_ns)
{
	int64_t t0 = lp_monotonic_ns();
	uint32_t id = cal_probe(t, LP_PROBE_TP);
	struct lp_trace_probe cfg = { .kind = LP_PROBE_TP, .flags = LP_PROBE_F_CAL,
				      .tp_size = LP_TRACE_TP_MAX };
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.probes), &id, &cfg, BPF_ANY);
	size_t n = CAL_MAX_CALLS;
	int64_t *base = lp_calloc(2 * n, sizeof(*base)), *dur = lp_calloc(n, sizeof(*dur));
	lp_tracecal__time(lp_tracecal__getppid, n, base, NULL, NULL);
	uint32_t self = (uint32_t)getpid();
	uint8_t one = 1;
	int ret = -1;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tgids), &self, &one, BPF_ANY) < 0) {
		lp_error_errno("cannot calibrate tracepoints: cannot add lp-trace to the filter");
		goto out;
	}
	LIBBPF_OPTS(bpf_tracepoint_opts, to, .bpf_cookie = id);
	struct bpf_link *l = bpf_program__attach_tracepoint_opts(t->skel->progs.lp_tp, "syscalls",
								 "sys_enter_getppid", &to);
	if (!l) {
		lp_error_errno("cannot calibrate tracepoints: cannot attach to syscalls:sys_enter_getppid");
		bpf_map_delete_elem(bpf_map__fd(t->skel->maps.tgids), &self);
		goto out;
	}
	size_t done = 0, chunk = t->ring_bytes / 4 / (sizeof(struct lp_trace_event_tp) + 8);
	while (done < n && (done == 0 || lp_monotonic_ns() - t0 < budget_ns)) {
		size_t m = n - done < chunk ? n - done : chunk;
		lp_tracecal__time(lp_tracecal__getppid, m, dur + done, NULL, NULL);
		ring_buffer__consume(t->rb);
		done += m;
	}
	bpf_link__destroy(l);
	bpf_map_delete_elem(bpf_map__fd(t->skel->maps.tgids), &self);
	t->prog_tp = cal_prog_mean(t, id, 0, t->prog_tp);
	lp_tracecal__time(lp_tracecal__getppid, n, base + n, NULL, NULL);
	int64_t sd;
	t->tp_cost = cal_less(dur, done, lp_tracecal__mean(base, 2 * n), &sd);
	t->tp_sd = sd;
	t->tp_n = done;
	t->tp_done = true;
	ret = 0;
out:
	free(base);
	free(dur);
	return ret;
}

/* The calibration's probes on the functions of the classes asked for: a
 * pair (the return first, as attach_uprobes does), a point probe, and a
 * pair whose return is probed at the function's ret. */
static int cal_attach_runs(struct lp_tracer *t, struct cal_run (*runs)[NRUNS],
			   const struct lp_cal_needs *need, uint32_t entry_id, uint32_t point_id)
{
	for (int k = LP_INSN_NOP; k < LP_INSN_N; k++) {
		bool entry = need->entry & (1u << k), point = need->point & (1u << k);
		bool ret_insn = need->ret_insn & (1u << k);
		if (!entry && !point && !ret_insn)
			continue;
		for (int r = 0; r < NRUNS; r++)
			runs[k][r].fn = lp_tracecal__fn((enum lp_insn)k, r);
		runs[k][RUN_BASE].n = CAL_BASE_CALLS;
		struct cal_run *pair = &runs[k][RUN_PAIR], *ri = &runs[k][RUN_RET_INSN];
		if (entry && (cal_attach(t, t->skel->progs.lp_return, (const void *)pair->fn, entry_id, true) < 0 ||
			      cal_attach(t, t->skel->progs.lp_entry, (const void *)pair->fn, entry_id, false) < 0))
			return -1;
		if (point && cal_attach(t, t->skel->progs.lp_point, (const void *)runs[k][RUN_POINT].fn,
					point_id, false) < 0)
			return -1;
		const char *ret = lp_tracecal__ret((enum lp_insn)k, RUN_RET_INSN);
		uint64_t cookie = LP_RET_COOKIE(entry_id, LP_RET_INSN, 0, ret - (const char *)(const void *)ri->fn);
		if (ret_insn && (cal_attach(t, t->skel->progs.lp_return, ret, cookie, false) < 0 ||
				 cal_attach(t, t->skel->progs.lp_entry, (const void *)ri->fn, entry_id, false) < 0))
			return -1;
		pair->n = entry;
		runs[k][RUN_POINT].n = point;
		ri->n = ret_insn;
	}
	return 0;
}

/* Warms each function up, then sizes the runs by what their calls cost:
 * the nruns runs together within what is left of the budget. */
static void cal_size_runs(struct lp_tracer *t, struct cal_run (*runs)[NRUNS], int nruns,
			  int64_t t0, int64_t budget_ns)
{
	int64_t scratch[CAL_WARM_CALLS];
	int64_t per[LP_INSN_N][NRUNS] = { { 0 } };
	for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
		for (int r = 0; r < NRUNS; r++)
			if (runs[k][r].n) {
				lp_tracecal__time(runs[k][r].fn, CAL_WARM_CALLS, scratch, NULL, NULL);
				int64_t w0 = lp_monotonic_ns();
				lp_tracecal__time(runs[k][r].fn, CAL_WARM_CALLS, scratch, NULL, NULL);
				per[k][r] = (lp_monotonic_ns() - w0) / CAL_WARM_CALLS;
			}
	ring_buffer__consume(t->rb);
	int64_t share = (budget_ns - (lp_monotonic_ns() - t0)) / nruns;
	for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
		for (int r = 0; r < NRUNS; r++) {
			struct cal_run *run = &runs[k][r];
			if (!run->n)
				continue;
			if (r != RUN_BASE) {
				int64_t n = per[k][r] > 0 ? share / per[k][r] : CAL_MAX_CALLS;
				run->n = (size_t)(n < CAL_MIN_CALLS ? CAL_MIN_CALLS
					       : n > CAL_MAX_CALLS ? CAL_MAX_CALLS : n);
			}
			run->dur = lp_calloc(run->n, sizeof(*run->dur));
			run->pre = lp_calloc(run->n, sizeof(*run->pre));
			if (r == RUN_PAIR || r == RUN_RET_INSN) {
				run->stamp = lp_calloc(run->n, sizeof(*run->stamp));
				run->span = lp_calloc(3 * run->n, sizeof(*run->span));
				run->ein = run->span + run->n;
				run->rin = run->span + 2 * run->n;
			}
		}
}

/* Interleaved rounds; a pair round in chunks the ring holds (a chunk that
 * lost a span is not used for the inside: its spans no longer match the
 * calls in order).  The calls were sized by what they cost warm and alone;
 * a busy machine stretches them (other processes' time slices count in a
 * run's length, not in its median): the rounds stop at the budget. */
static void cal_rounds(struct lp_tracer *t, struct cal_run (*runs)[NRUNS], int64_t t0,
		       int64_t budget_ns)
{
	size_t chunk = t->ring_bytes / 4 / 128;
	for (int round = 0; round < CAL_ROUNDS; round++) {
		if (round > 0 && lp_monotonic_ns() - t0 > budget_ns)
			break;
		for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
			for (int r = 0; r < NRUNS; r++) {
				struct cal_run *run = &runs[k][r];
				size_t m = (run->n + CAL_ROUNDS - 1) / CAL_ROUNDS;
				while (run->n && m > 0) {
					size_t c = run->stamp && chunk && m > chunk ? chunk : m;
					cal_block(t, run, r, c);
					m -= c;
				}
			}
	}
}

/* A pair run's figures: an entry and a return as the caller sees them,
 * and the part of each inside the span.  base_pre, base_post: the
 * unprobed call's parts before and after its clock read; body: what a
 * span of it holds besides the probes. */
static void cal_pair_costs(struct pair_cost *c, struct cal_run *p, int64_t base_pre,
			   int64_t base_post, int64_t body)
{
	int64_t sd;
	/* The entry hit delays the function's clock read as its caller sees
	 * it, the return hit the caller's read after the call. */
	for (size_t i = 0; i < p->done; i++)
		p->dur[i] -= p->pre[i];	/* before cal_less sorts p->pre */
	c->entry = cal_less(p->pre, p->done, base_pre, &c->entry_sd);
	c->ret = cal_less(p->dur, p->done, base_post, &sd);
	c->ret_sd = sd;
	c->n = p->done;
	c->done = true;
	if (!p->nin)
		return;
	/* An empty function's span is what the probes put inside it: the
	 * span less the function's body (the clock read).  The read splits it
	 * between entry and return, in proportion. */
	int64_t inside = lp_tracecal__median(p->span, p->nin) - body;
	int64_t e = lp_tracecal__median(p->ein, p->nin), r = lp_tracecal__median(p->rin, p->nin);
	if (inside < 0)
		inside = 0;
	c->entry_in = e + r > 0 ? (int64_t)((double)inside * (double)e / (double)(e + r) + 0.5) : 0;
	c->ret_in = inside - c->entry_in;
	if (c->entry_in > c->entry)
		c->entry_in = c->entry;
	if (c->ret_in > c->ret)
		c->ret_in = c->ret;
}

/* One class's costs from its runs.  `empty`: an empty function's call. */
static void cal_class_costs(struct cls_cost *c, struct cal_run *run, int64_t empty)
{
	struct cal_run *b = &run[RUN_BASE];
	if (!b->n)
		return;
	/* The function's call, and its parts before and after its clock
	 * read, on average as the costs are; its body as a span's median
	 * holds it.  A mean or median sorts its array: each call's parts are
	 * paired before any is taken. */
	int64_t *post = lp_calloc(b->done ? b->done : 1, sizeof(*post));
	for (size_t i = 0; i < b->done; i++)
		post[i] = b->dur[i] - b->pre[i];
	int64_t base_post = lp_tracecal__mean(post, b->done);
	free(post);
	int64_t base_pre = lp_tracecal__mean(b->pre, b->done);
	int64_t base = lp_tracecal__mean(b->dur, b->done);
	int64_t base_median = lp_tracecal__median(b->dur, b->done);
	int64_t body = base_median > empty ? base_median - empty : 0;
	if (run[RUN_POINT].n) {
		c->point = cal_less(run[RUN_POINT].dur, run[RUN_POINT].done, base, &c->point_sd);
		c->point_n = run[RUN_POINT].done;
		c->point_done = true;
	}
	if (run[RUN_PAIR].n)
		cal_pair_costs(&c->uret, &run[RUN_PAIR], base_pre, base_post, body);
	if (run[RUN_RET_INSN].n)
		cal_pair_costs(&c->insn, &run[RUN_RET_INSN], base_pre, base_post, body);
}

bool lp_tracer__uncalibrated(const struct lp_tracer *t, struct lp_cal_needs *need)
{
	for (int k = 0; k < LP_INSN_N; k++) {
		if (t->costs[k].uret.done)
			need->entry &= ~(1u << k);
		if (t->costs[k].point_done)
			need->point &= ~(1u << k);
		if (t->costs[k].insn.done)
			need->ret_insn &= ~(1u << k);
	}
	if (t->tp_done)
		need->tracepoints = false;
	return need->entry || need->point || need->ret_insn || need->tracepoints;
}

int lp_tracer__calibrate(struct lp_tracer *t, const struct lp_cal_needs *need, int64_t budget_ns)
{
	/* Again while tracing (a probe of a class not measured yet): the
	 * last calibration's links gone first. */
	if (t->cal_threaded) {
		pthread_join(t->cal_thread, NULL);
		t->cal_threaded = false;
	}
	free(t->cal_links);
	t->cal_links = NULL;
	t->ncal_links = 0;
	int64_t t0 = lp_monotonic_ns();
	int nruns = 0;
	for (int c = LP_INSN_NOP; c < LP_INSN_N; c++) {
		nruns += !!(need->entry & (1u << c)) + !!(need->point & (1u << c)) +
			 !!(need->ret_insn & (1u << c));
	}
	if ((!nruns && !need->tracepoints) || budget_ns <= 0)
		return 0;
	if (need->tracepoints) {
		/* Its share of the budget, as one run of the others. */
		int64_t share = budget_ns / (nruns + 1);
		if (cal_tracepoint(t, share) < 0)
			return -1;
		budget_ns -= lp_monotonic_ns() - t0;
		t0 = lp_monotonic_ns();
		if (!nruns) {
			t->calibrated = true;
			t->cal_time = t0;
			return 0;
		}
	}
	struct cal_run runs[LP_INSN_N][NRUNS];
	memset(runs, 0, sizeof(runs));
	int ret = -1;
	uint32_t entry_id = cal_probe(t, LP_PROBE_ENTRY), point_id = cal_probe(t, LP_PROBE_POINT);
	if (cal_attach_runs(t, runs, need, entry_id, point_id) == 0) {
		cal_size_runs(t, runs, nruns, t0, budget_ns);
		cal_prog_forget(t, entry_id);
		cal_prog_forget(t, point_id);
		cal_rounds(t, runs, t0, budget_ns);
		t->prog_entry = cal_prog_mean(t, entry_id, 0, t->prog_entry);
		t->prog_ret = cal_prog_mean(t, entry_id, 1, t->prog_ret);
		t->prog_point = cal_prog_mean(t, point_id, 0, t->prog_point);
		/* The function's body: what a span of it holds besides the
		 * probes. */
		int64_t *tmp = lp_calloc(CAL_BASE_CALLS, sizeof(*tmp));
		lp_tracecal__time(lp_tracecal__empty, CAL_BASE_CALLS, tmp, NULL, NULL);
		int64_t empty = lp_tracecal__median(tmp, CAL_BASE_CALLS);
		free(tmp);
		for (int k = LP_INSN_NOP; k < LP_INSN_N; k++)
			cal_class_costs(&t->costs[k], runs[k], empty);
		t->calibrated = true;
		t->cal_time = lp_monotonic_ns();
		ret = 0;
		if (t->verbose)
			lp_error("calibrated in %.1f ms", (double)(t->cal_time - t0) / 1e6);
	}
	cal_release(t);
	ring_buffer__consume(t->rb);
	/* This thread's calls are not the target's: its stack goes, and the
	 * lost counts restart here. */
	uint64_t tid = (uint32_t)syscall(SYS_gettid);
	bpf_map_delete_elem(bpf_map__fd(t->skel->maps.stacks), &tid);
	/* While tracing, the counts go on (the runs are sized to fit the
	 * ring: the target's losses are the only ones). */
	if (!t->w)
		lost_baseline(t);
	for (int k = 0; k < LP_INSN_N; k++)
		for (int r = 0; r < NRUNS; r++) {
			free(runs[k][r].dur);
			free(runs[k][r].pre);
			free(runs[k][r].stamp);
			free(runs[k][r].span);
		}
	return ret;
}

void lp_tracer__classes(const struct lp_probe_point *points, size_t n, struct lp_cal_needs *need)
{
	for (size_t i = 0; i < n; i++) {
		const struct lp_probe_point *pt = &points[i];
		/* A return probed at an instruction costs a point probe's hit
		 * of that instruction's class. */
		if (pt->cfg.kind == LP_PROBE_ENTRY && pt->returns == LP_RETURNS_INSN) {
			need->ret_insn |= 1u << pt->insn;
			if (pt->ret_insn != LP_INSN_NONE)
				need->point |= 1u << pt->ret_insn;
			/* A uretprobe per call until its program loads a
			 * library that can throw (lib/capture/trace/dlgate.h). */
			if (pt->dl_gate)
				need->entry |= 1u << pt->insn;
		} else if (pt->cfg.kind == LP_PROBE_ENTRY)
			need->entry |= 1u << pt->insn;
		else if (pt->cfg.kind == LP_PROBE_POINT || pt->cfg.kind == LP_PROBE_USDT ||
			   pt->cfg.kind == LP_PROBE_PY)
			need->point |= 1u << pt->insn;
		else if (pt->cfg.kind == LP_PROBE_TP)
			need->tracepoints = true;
	}
}

/* Records of the probes' costs: a function probe's entry and return, a
 * point probe's hit, once per name and class. */
int lp_tracer__write_costs(struct lp_tracer *t, struct lp_writer *w)
{
	return lp_tracer__write_costs_from(t, w, 0);
}

/* Probe i's cost records (an entry and a return, or a hit), at time_ns. */
static int write_probe_costs(struct lp_tracer *t, struct lp_writer *w, size_t i, int64_t time_ns)
{
	const struct pinfo *pi = &t->probes[i];
	const struct cls_cost *c = &t->costs[pi->insn];
	for (int h = 0; h < (pi->kind == LP_PROBE_ENTRY ? 2 : 1); h++) {
		char buf[32];
		struct lp_cost rec = { .time_ns = time_ns };
		int64_t inside = 0, sd, n;
		if (pi->kind == LP_PROBE_TP) {
			rec.what = "tracepoint";
			rec.ns = (double)t->tp_cost;
			sd = t->tp_sd;
			n = (int64_t)t->tp_n;
		} else if (pi->kind == LP_PROBE_POINT || pi->kind == LP_PROBE_USDT ||
			   pi->kind == LP_PROBE_PY) {
			rec.what = pi->kind == LP_PROBE_USDT ? "usdt"
				   : pi->kind == LP_PROBE_PY ? "python" : "line";
			rec.ns = (double)c->point;
			sd = c->point_sd;
			n = (int64_t)c->point_n;
		} else if (h == 0) {
			rec.what = "entry";
			rec.ns = (double)pair_of(t, pi)->entry;
			inside = pair_of(t, pi)->entry_in;
			sd = pair_of(t, pi)->entry_sd;
			n = (int64_t)pair_of(t, pi)->n;
		} else if (pi->ret_insn_probed) {
			int64_t ns;
			rec.what = "return";
			ret_insn_cost(t, pi->insn, pi->ret_insn, &ns, &inside, &sd, &n);
			rec.ns = (double)ns;
		} else {
			rec.what = "return";
			rec.ns = (double)c->uret.ret;
			inside = c->uret.ret_in;
			sd = c->uret.ret_sd;
			n = (int64_t)c->uret.n;
		}
		lp_attrs_buf__reset(&t->attrs);
		lp_attrs_buf__add(&t->attrs, "probe", pi->name);
		if (pi->kind == LP_PROBE_ENTRY) {
			fmt_i64(buf, inside);
			lp_attrs_buf__add(&t->attrs, "inside_ns", buf);
		}
		if (pi->kind == LP_PROBE_ENTRY && h == 1)
			lp_attrs_buf__add(&t->attrs, "returns",
					  pi->ret_insn_probed ? "insn" : "uretprobe");
		if (pi->kind == LP_PROBE_ENTRY && h == 1 && pi->ret_insn_probed)
			lp_attrs_buf__add(&t->attrs, "insn", lp_insn__name(pi->ret_insn));
		else if (pi->insn != LP_INSN_NONE)
			lp_attrs_buf__add(&t->attrs, "insn", lp_insn__name(pi->insn));
		int64_t prog = prog_of(t, pi->kind, h);
		if (prog > 0) {
			fmt_i64(buf, prog);
			lp_attrs_buf__add(&t->attrs, "prog_ns", buf);
		}
		fmt_i64(buf, sd);
		lp_attrs_buf__add(&t->attrs, "sd_ns", buf);
		fmt_i64(buf, n);
		lp_attrs_buf__add(&t->attrs, "n", buf);
		rec.attrs = lp_attrs_buf__attrs(&t->attrs);
		if (lp_writer__cost(w, &rec) < 0)
			return -1;
	}
	return 0;
}

int lp_tracer__write_costs_from(struct lp_tracer *t, struct lp_writer *w, int first)
{
	if (!t->calibrated)
		return 0;
	for (size_t i = (size_t)first; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->cal || (pi->kind == LP_PROBE_TP ? !t->tp_done : pi->insn == LP_INSN_NONE) ||
		    (pi->kind != LP_PROBE_ENTRY && pi->kind != LP_PROBE_POINT && pi->kind != LP_PROBE_TP &&
		     pi->kind != LP_PROBE_USDT && pi->kind != LP_PROBE_PY))
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !t->probes[j].cal && t->probes[j].insn == pi->insn &&
			       t->probes[j].kind == pi->kind && !strcmp(t->probes[j].name, pi->name) &&
			       t->probes[j].ret_insn_probed == pi->ret_insn_probed;
		if (seen)
			continue;
		if (write_probe_costs(t, w, i, t->cal_time) < 0)
			return -1;
	}
	return 0;
}

/* A followed process forked: the child is followed as the target it
 * descends from. */
static void on_fork_event(struct lp_tracer *t, pid_t child, pid_t parent, int64_t fork_ns)
{
	pid_t target = 0;
	int64_t covered = 0;
	for (size_t i = 0; i < t->ntargets && !target; i++)
		if (t->targets[i] == parent) {
			target = parent;
			covered = t->targets_covered[i];
		}
	for (size_t i = t->nkids; i-- > 0 && !target;)
		if (t->kids[i].pid == parent) {
			target = t->kids[i].target;
			covered = t->kids[i].covered_ns;
		}
	if (!target)	/* a parent already forgotten: exited since */
		return;
	/* Forked once its parent had every perf event: it has copies
	 * (sched_process_fork fires after copy_process, same clock). */
	t->kids = lp_reallocarray(t->kids, t->nkids + 1, sizeof(*t->kids));
	t->kids[t->nkids++] = (struct kid){ .pid = child, .target = target,
					    .uncovered = !covered || covered > fork_ns,
					    .covered_ns = fork_ns };
	if (!t->on_fork || t->detached)
		return;
	t->on_fork(t->fork_arg, child, target);
}

/* A fork the BPF side saw: the child is a target from now on. */
static void on_fork_record(struct lp_tracer *t, const struct lp_trace_event *ev)
{
	/* Adopted already (forked while the running descendants were
	 * listed), or a kid of the pid that exited unreported (LP_EV_EXIT
	 * lost). */
	struct kid *old = find_kid(t, (pid_t)ev->pid);
	if (old && old->adopted)
		return;
	if (old)
		forget_kid(t, (size_t)(old - t->kids));
	on_fork_event(t, (pid_t)ev->pid, (pid_t)ev->tid, (int64_t)ev->start);
	lp_hashmap__put(&t->nspids, pid_key((pid_t)ev->pid), NULL);
	/* A kill(2) per child: not on every fork of a fork storm. */
	int64_t now = lp_monotonic_ns();
	if (now - t->forgot_ns > 100000000) {
		forget_exited(t);
		t->forgot_ns = now;
	}
}

/* The calibration's own spans, kept for lp_tracer__calibrate. */
static void keep_cal_span(struct lp_tracer *t, const struct lp_trace_event *ev)
{
	if (ev->type != LP_EV_SPAN)
		return;
	if (t->ncal == t->calcap) {
		t->calcap = t->calcap ? 2 * t->calcap : 1024;
		t->cal_spans = lp_reallocarray(t->cal_spans, t->calcap, sizeof(*t->cal_spans));
	}
	t->cal_spans[t->ncal][0] = (int64_t)ev->start;
	t->cal_spans[t->ncal++][1] = (int64_t)ev->end;
}

/* A USDT pair's span counts the USDT hits inside it (usdt_open in
 * bpf/trace.bpf.c), not those of other uprobes or tracepoints: with any of
 * those traced too, its lp_ns is not known. */
static bool usdt_lp_known(const struct lp_tracer *t)
{
	for (size_t i = 0; i < t->nprobes; i++) {
		int k = t->probes[i].kind;

		if (!t->probes[i].cal && (k == LP_PROBE_ENTRY || k == LP_PROBE_POINT || k == LP_PROBE_TP ||
					  k == LP_PROBE_PY))
			return false;
	}
	return true;
}

/* A function or line probe's attributes: its captured values, the return
 * value, lp's own cost inside, how the call ended. */
static void probe_attrs(struct lp_tracer *t, const struct pinfo *pi,
			const struct lp_trace_event *ev, const void *data, size_t size)
{
	char buf[64];
	const char(*strs)[LP_TRACE_STR_MAX] = NULL;
	if (size >= sizeof(struct lp_trace_event_strs))
		strs = ((const struct lp_trace_event_strs *)data)->strs;
	values_attrs(t, pi, ev->vals, strs);
	if (ev->type != LP_EV_SPAN)
		return;
	/* A call left unreturned has no value; a tail call's is its callee's,
	 * not yet known at the jmp. */
	if (pi->has_ret && !(ev->flags & (LP_SPAN_F_UNWOUND | LP_SPAN_F_TAIL))) {
		format_value(buf, &pi->ret, ev->ret, NULL);
		lp_attrs_buf__add(&t->attrs, "ret", buf);
	}
	if (t->calibrated && (pi->kind != LP_PROBE_USDT || usdt_lp_known(t))) {
		fmt_u64(buf, ev->lp_ns);
		lp_attrs_buf__add(&t->attrs, "lp_ns", buf);
	}
	if (ev->flags & LP_SPAN_F_TAIL)
		lp_attrs_buf__add(&t->attrs, "tail", "1");
	if (ev->flags & LP_SPAN_F_UNWOUND)
		lp_attrs_buf__add(&t->attrs, "unwound", "1");
	if (pi->copy)
		lp_attrs_buf__add(&t->attrs, "copy", pi->copy);
}

static uint64_t pycode_key(pid_t pid, uint64_t code)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &pid, sizeof(pid));
	return lp_hashmap__key(lp_hash_bytes(h, &code, sizeof(code)));
}

static struct pycode *find_pycode(const struct lp_tracer *t, pid_t pid, uint64_t code)
{
	size_t pos = 0;
	struct pycode *c;
	while ((c = lp_hashmap__next(&t->pycodes, pycode_key(pid, code), &pos)))
		if (c->pid == pid && c->code == code)
			return c;
	return NULL;
}

/* A code object a python: probe matched: its names, for its spans (a
 * code object freed and another made at its address matched again); or
 * one whose name matched and module did not: where, for the summary. */
static void on_pycode(struct lp_tracer *t, const struct lp_trace_event_py *e, size_t size)
{
	pid_t pid = (pid_t)e->ev.pid;
	/* The record is as long as the characters it carries. */
	size_t nb = (size_t)(e->name_len < LP_PY_NAME_MAX ? e->name_len : LP_PY_NAME_MAX) * e->name_kind;
	size_t fb = (size_t)(e->file_len < LP_PY_FILE_MAX ? e->file_len : LP_PY_FILE_MAX) * e->file_kind;
	if (size < offsetof(struct lp_trace_event_py, chars) + nb + fb)
		return;
	char *name = lp_pyprobe__str(e->name_kind, e->name_len, e->chars, LP_PY_NAME_MAX, false);
	char *file = lp_pyprobe__str(e->file_kind, e->file_len, e->chars + nb, LP_PY_FILE_MAX, true);
	if (!e->ev.vals[2] || !name) {
		if (!t->py_elsewhere && file)
			t->py_elsewhere = lp_strdup(file);
		free(name);
		free(file);
		return;
	}
	struct pycode *c = find_pycode(t, pid, e->ev.vals[0]);
	if (!c) {
		c = lp_calloc(1, sizeof(*c));
		c->pid = pid;
		c->code = e->ev.vals[0];
		lp_hashmap__add(&t->pycodes, pycode_key(pid, c->code), c);
	}
	free(c->probe);
	free(c->file);
	c->probe = lp_malloc(strlen(name) + 8);
	strcpy(c->probe, "python:");
	strcat(c->probe, name);
	c->file = file && *file ? file : lp_strdup("-");
	if (c->file != file)
		free(file);
	free(name);
	fmt_i64(c->line, (int64_t)e->ev.vals[1]);
	t->py_matched++;
}

/* The record of a span (functions, system calls) or a point event, with
 * the attributes made for it; -1 when the output failed. */
static int write_event(struct lp_tracer *t, const struct pinfo *pi,
		       const struct lp_trace_event *ev)
{
	int r;
	add_nspid(t, (pid_t)ev->pid);
	if (t->keyed && lp_keyed__record(t->keyed, pi->spec, (int32_t)ev->pid,
					      (int32_t)ev->tid, (int64_t)ev->start,
					      ev->type == LP_EV_POINT ? (int64_t)ev->start
								      : (int64_t)ev->end,
					      &t->attrs, t->w) < 0) {
		t->werr = errno ? errno : EIO;
		return -1;
	}
	if (ev->type == LP_EV_SPAN || ev->type == LP_EV_SYSCALL) {
		/* A python: span is named by its function. */
		const struct pycode *c = pi->kind == LP_PROBE_PY
						 ? find_pycode(t, (pid_t)ev->pid, ev->vals[0]) : NULL;
		struct lp_span s = {
			.start_ns = (int64_t)ev->start, .end_ns = (int64_t)ev->end,
			.pid = (int32_t)ev->pid, .tid = (int32_t)ev->tid,
			.probe = c ? c->probe : pi->name,
			.depth = (int32_t)ev->depth, .attrs = lp_attrs_buf__attrs(&t->attrs),
		};
		r = lp_writer__span(t->w, &s);
	} else {
		struct lp_event e = {
			.time_ns = (int64_t)ev->start, .pid = (int32_t)ev->pid,
			.tid = (int32_t)ev->tid, .probe = pi->name,
			.attrs = lp_attrs_buf__attrs(&t->attrs),
		};
		r = lp_writer__event(t->w, &e);
	}
	if (r < 0) {
		t->werr = errno ? errno : EIO;
		return -1;
	}
	t->count++;
	return 0;
}

/* A python: span's attributes: its function's file and first line, lp's
 * cost inside, whether an exception left it. */
static void py_attrs(struct lp_tracer *t, const struct lp_trace_event *ev)
{
	const struct pycode *c = find_pycode(t, (pid_t)ev->pid, ev->vals[0]);
	char buf[24];
	if (c) {
		lp_attrs_buf__add(&t->attrs, "file", c->file);
		lp_attrs_buf__add(&t->attrs, "line", c->line);
	}
	if (t->calibrated) {
		fmt_u64(buf, ev->lp_ns);
		lp_attrs_buf__add(&t->attrs, "lp_ns", buf);
	}
	if (ev->flags & LP_SPAN_F_UNWOUND)
		lp_attrs_buf__add(&t->attrs, "unwound", "1");
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct lp_tracer *t = ctx;
	const struct lp_trace_event *ev = data;
	if (size < sizeof(*ev))
		return 0;
	if (ev->type == LP_EV_FORKED) {
		on_fork_record(t, ev);
		return 0;
	}
	if (ev->type == LP_EV_DL) {
		if (!t->dlgate)
			t->dlgate = lp_dlgate__new();
		lp_dlgate__dirty(t->dlgate, (pid_t)ev->pid);
		return 0;
	}
	if (ev->type == LP_EV_EXIT) {
		struct kid *k = find_kid(t, (pid_t)ev->pid);
		if (k)
			forget_kid(t, (size_t)(k - t->kids));
		return 0;
	}
	if (ev->type == LP_EV_PYCODE) {
		if (size >= offsetof(struct lp_trace_event_py, chars))
			on_pycode(t, data, size);
		return 0;
	}
	if (ev->probe >= t->nprobes || t->werr)
		return 0;
	struct pinfo *pi = &t->probes[ev->probe];
	if (pi->cal) {
		keep_cal_span(t, ev);
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
			py_attrs(t, ev);
			break;
		}
		probe_attrs(t, pi, ev, data, size);
		break;
	case LP_EV_SYSCALL:
		if (ev->start < t->start_ns)
			return 0;
		syscall_attrs(t, pi, ev->vals);
		fmt_i64(buf, (int64_t)ev->ret);
		lp_attrs_buf__add(&t->attrs, "ret", buf);
		/* No uprobe fires inside a system call; the raw tracepoints'
		 * programs run before its start and after its end. */
		if (t->calibrated)
			lp_attrs_buf__add(&t->attrs, "lp_ns", "0");
		break;
	case LP_EV_TP:
		if (pi->tep_event && size >= sizeof(struct lp_trace_event) + ev->size)
			tp_attrs(t, pi, ((const struct lp_trace_event_tp *)data)->data, ev->size);
		break;
	default:
		return 0;
	}
	return write_event(t, pi, ev);
}

/* Counter c of map "counters" over every CPU, its per-CPU values in vals. */
static uint64_t counter_sum(const uint64_t *vals, int ncpus, int c)
{
	uint64_t sum = 0;
	for (int cpu = 0; cpu < ncpus; cpu++)
		sum += vals[cpu * LP_NCOUNTERS + c];
	return sum;
}

/* Map "counters" now, every CPU's values (LP_NCOUNTERS each); NULL when
 * it cannot be read.  Free it. */
static uint64_t *read_counters(const struct lp_tracer *t)
{
	uint64_t *vals = lp_calloc((size_t)t->ncpus, LP_NCOUNTERS * sizeof(uint64_t));
	uint32_t k = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.counters), &k, vals) == 0)
		return vals;
	free(vals);
	return NULL;
}

uint64_t lp_tracer__python_hits(const struct lp_tracer *t, double *ns_each)
{
	*ns_each = 0;
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->kind == LP_PROBE_PY && !pi->cal && t->calibrated && pi->insn != LP_INSN_NONE)
			*ns_each = t->costs[pi->insn].point;
	}
	uint64_t *vals = read_counters(t);
	uint64_t sum = vals ? counter_sum(vals, t->ncpus, LP_COUNT_PY_HITS) : 0;
	free(vals);
	return sum;
}

/* The kernel's loss counters now: what write_lost counts from. */
static void lost_baseline(struct lp_tracer *t)
{
	uint64_t *vals = read_counters(t);
	if (vals)
		for (int c = 0; c < LP_NLOST; c++)
			t->lost_seen[c] = counter_sum(vals, t->ncpus, c);
	free(vals);
}

/* Writes a lost record for each counter that grew since the last call. */
static int write_lost(struct lp_tracer *t, struct lp_writer *w)
{
	static const char *const what[LP_NLOST] = { "ring", "depth", "threads", "unreturned", "children",
								"unchecked" };
	uint64_t *vals = read_counters(t);
	int ret = 0;
	if (vals) {
		for (int c = 0; c < LP_NLOST; c++) {
			uint64_t sum = counter_sum(vals, t->ncpus, c);
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
	}
	free(vals);
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
		forget_exited(t);
	}
	uint64_t before = t->count;
	t->w = w;
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
		dl_check(t);
	if (write_lost(t, w) < 0 || end_removals(t, w, false) < 0)
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

/* Closes the inherited perf events of the tracefs events, then removes
 * the events, in a process of its own when it can fork one: lp-trace ends
 * meanwhile.  Closing them frees the copies in every living descendant,
 * and each copy that is the last perf event naming its process walks
 * every process that maps the file (uprobe_apply in uprobe_perf_close),
 * the filter's list scanned for each one that had a breakpoint: one after
 * the other (event_mutex), ~2.7 ms a living child and event with 500 of
 * them here (1.4 s for one libc function; 0.35 s with 200).  Their
 * breakpoints stay meanwhile; the programs are detached already (the
 * links), so a hit costs the trap alone. */
static void close_tfs(struct lp_tracer *t)
{
	/* The other process closes its copies once lp-trace has closed its
	 * own (EOF on go): the last close of each does the work, and the
	 * events can be removed only after it. */
	int go[2] = { -1, -1 };
	pid_t pid = t->ntfds && pipe2(go, O_CLOEXEC) == 0 ? fork() : -1;
	if (pid == 0) {
		/* Out of lp-trace's process group and session (Ctrl-C is
		 * lp-trace's), reparented at once, holding nothing else of
		 * lp-trace's: an output pipe held open would keep its reader
		 * waiting. */
		if (fork() != 0)
			_exit(0);
		setsid();
		DIR *d = opendir("/proc/self/fd");
		int dfd = d ? dirfd(d) : -1;
		struct dirent *de;
		int *close_fds = NULL;
		size_t n = 0;
		while (d && (de = readdir(d))) {
			char *end;
			long fd = strtol(de->d_name, &end, 10);
			bool keep = *end || fd == dfd || fd == go[0];
			for (size_t i = 0; i < t->ntfds && !keep; i++)
				keep = t->tfds[i] == fd;
			if (keep)
				continue;
			close_fds = lp_reallocarray(close_fds, n + 1, sizeof(*close_fds));
			close_fds[n++] = (int)fd;
		}
		if (d)
			closedir(d);
		for (size_t i = 0; i < n; i++)
			close(close_fds[i]);
		char c;
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		for (size_t i = 0; i < t->ntfds; i++)
			close(t->tfds[i]);
		tfs_remove_group(t->tfs_group, 10000);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	/* Closed here first (at once: the other process holds them), or
	 * only here, the time it takes, when no process could be forked. */
	for (size_t i = 0; i < t->ntfds; i++)
		close(t->tfds[i]);
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (pid < 0 && t->ntevs)
		tfs_remove_group(t->tfs_group, 1000);
	t->ntfds = 0;
	t->ntevs = 0;
}

static void detach(struct lp_tracer *t)
{
	/* The links first: closing the perf events that carry a program is
	 * cheap while other perf events name their processes (the inherited
	 * ones, close_tfs). */
	destroy_links(t->links, t->nlinks, t->mfds, t->nmfds);
	t->nlinks = 0;
	t->nmfds = 0;
	close_tfs(t);
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

/* System calls in progress (a blocking read...) when tracing stopped. */
static int write_unfinished_syscalls(struct lp_tracer *t, struct lp_writer *w)
{
	int fd = bpf_map__fd(t->skel->maps.sysin);
	uint32_t key, next, *prev = NULL;
	struct { uint32_t tid; struct lp_trace_sysin in; } *open = NULL;
	size_t n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		struct lp_trace_sysin in;
		if (bpf_map_lookup_elem(fd, &key, &in) != 0 || in.probe >= t->nprobes ||
		    in.ts > t->stop_ns || in.ts < t->start_ns || t->probes[in.probe].removed)
			continue;
		open = lp_reallocarray(open, n + 1, sizeof(*open));
		open[n].tid = key;
		open[n++].in = in;
	}
	for (size_t i = 1; i < n; i++)	/* by tid: a stable order */
		for (size_t j = i; j > 0 && open[j - 1].tid > open[j].tid; j--) {
			__typeof__(*open) tmp = open[j];
			open[j] = open[j - 1];
			open[j - 1] = tmp;
		}
	int ret = 0;
	for (size_t i = 0; i < n && ret == 0; i++) {
		const struct pinfo *pi = &t->probes[open[i].in.probe];
		lp_attrs_buf__reset(&t->attrs);
		syscall_attrs(t, pi, open[i].in.args);
		if (t->calibrated)
			lp_attrs_buf__add(&t->attrs, "lp_ns", "0");
		add_nspid(t, (pid_t)open[i].in.tgid);
		struct lp_span s = {
			.start_ns = (int64_t)open[i].in.ts, .end_ns = LP_TIME_NONE,
			.pid = (int32_t)open[i].in.tgid, .tid = (int32_t)open[i].tid,
			.probe = pi->name, .depth = 0, .attrs = lp_attrs_buf__attrs(&t->attrs),
		};
		if (lp_writer__span(w, &s) < 0)
			ret = -1;
		else
			t->count++;
	}
	free(open);
	return ret;
}

/* Calls still open: their entry was seen, their return not (yet). */
/* The calls still open in the stacks of map fd (function probes', or
 * python: probes'), as unfinished spans; -1 when the output failed. */
static int write_open(struct lp_tracer *t, struct lp_writer *w, int fd)
{
	struct lp_trace_stack *st = lp_malloc(sizeof(*st));
	uint64_t key, next, *prev = NULL;
	int ret = 0;
	/* Sorted by key (tid, then goroutines), so the output does not depend
	 * on the hash's order. */
	uint64_t *tids = NULL;
	size_t ntids = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		tids = lp_reallocarray(tids, ntids + 1, sizeof(*tids));
		tids[ntids++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 1; i < ntids; i++)
		for (size_t j = i; j > 0 && tids[j - 1] > tids[j]; j--) {
			uint64_t tmp = tids[j];
			tids[j] = tids[j - 1];
			tids[j - 1] = tmp;
		}
	for (size_t i = 0; i < ntids && ret == 0; i++) {
		if (bpf_map_lookup_elem(fd, &tids[i], st) != 0)
			continue;
		for (uint32_t d = 0; d < st->depth && d < LP_TRACE_MAX_DEPTH; d++) {
			const struct lp_trace_frame *f = &st->frames[d];
			if (f->probe >= t->nprobes || f->ts > t->stop_ns || t->probes[f->probe].gate ||
			    t->probes[f->probe].removed)
				continue;
			const struct pinfo *pi = &t->probes[f->probe];
			const struct pycode *c = pi->kind == LP_PROBE_PY
							 ? find_pycode(t, (pid_t)st->tgid, f->vals[0]) : NULL;
			lp_attrs_buf__reset(&t->attrs);
			if (c) {
				lp_attrs_buf__add(&t->attrs, "file", c->file);
				lp_attrs_buf__add(&t->attrs, "line", c->line);
			} else if (pi->kind != LP_PROBE_PY) {
				values_attrs(t, pi, f->vals, (const char(*)[LP_TRACE_STR_MAX])f->strs);
			}
			if (t->calibrated) {	/* what lp added until it stopped */
				char buf[24];
				uint64_t in = pi->insn && pi->kind != LP_PROBE_PY
						      ? (uint64_t)pair_of(t, pi)->entry_in : 0;
				fmt_u64(buf, st->lp_ns - f->lp0 + in);
				lp_attrs_buf__add(&t->attrs, "lp_ns", buf);
			}
			add_nspid(t, (pid_t)st->tgid);
			struct lp_span s = {
				.start_ns = (int64_t)f->ts, .end_ns = LP_TIME_NONE,
				.pid = (int32_t)st->tgid, .tid = (int32_t)st->tid,
				.probe = c ? c->probe : pi->name, .depth = (int32_t)d,
				.attrs = lp_attrs_buf__attrs(&t->attrs),
			};
			if (lp_writer__span(w, &s) < 0) {
				ret = -1;
				break;
			}
			t->count++;
		}
	}
	free(tids);
	free(st);
	return ret;
}

/* --- probes that come and go (lp-trace --control) ----------------------- */

int lp_tracer__find(const struct lp_tracer *t, const char *text, int **ids)
{
	int n = 0;
	*ids = NULL;
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->cal || pi->removing || pi->removed ||
		    (strcmp(pi->spec, text) && strcmp(pi->name, text)))
			continue;
		*ids = lp_reallocarray(*ids, (size_t)n + 1, sizeof(**ids));
		(*ids)[n++] = (int)i;
	}
	return n;
}

/* Writes a probe record for each name among ids (a probe resolved in
 * several targets has one id in each, one name): an attach once, a detach
 * only of a probe whose attach was written (not of one taken back when
 * its add failed).  open: the calls in progress, per id (a detach). */
static int write_marks(struct lp_tracer *t, struct lp_writer *w, const int *ids, size_t n,
		       const char *action, int64_t time_ns, const uint64_t *open)
{
	/* An attach is written once its links are all in place: from then
	 * on every hit is seen (TIME is before the first went in, so no
	 * span of the probe starts before it). */
	int64_t ready = open ? 0 : lp_monotonic_ns();
	bool *say = lp_calloc(n ? n : 1, sizeof(*say));
	int ret = 0;
	for (size_t i = 0; i < n; i++)
		say[i] = open ? t->probes[ids[i]].marked : !t->probes[ids[i]].marked;
	for (size_t i = 0; i < n && ret == 0; i++) {
		struct pinfo *pi = &t->probes[ids[i]];
		bool seen = !say[i];
		for (size_t j = 0; j < i && !seen; j++)
			seen = say[j] && !strcmp(t->probes[ids[j]].name, pi->name);
		if (seen)
			continue;
		uint64_t sum = 0;
		for (size_t j = i; open && j < n; j++)
			if (say[j] && !strcmp(t->probes[ids[j]].name, pi->name))
				sum += open[j];
		char buf[24];
		lp_attrs_buf__reset(&t->attrs);
		lp_attrs_buf__add(&t->attrs, "spec", pi->spec);
		if (open) {
			fmt_u64(buf, sum);
			lp_attrs_buf__add(&t->attrs, "open", buf);
		} else {
			fmt_u64(buf, (uint64_t)ready);
			lp_attrs_buf__add(&t->attrs, "ready", buf);
		}
		struct lp_probe_mark m = { .time_ns = time_ns, .action = action, .probe = pi->name,
					   .attrs = lp_attrs_buf__attrs(&t->attrs) };
		ret = lp_writer__probe(w, &m);
	}
	for (size_t i = 0; i < n && !open; i++)
		t->probes[ids[i]].marked = true;
	free(say);
	return ret < 0 ? -1 : 0;
}

int lp_tracer__write_attached(struct lp_tracer *t, struct lp_writer *w, const int *ids, size_t n)
{
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (t->probes[ids[i]].attached_ns < first)
			first = t->probes[ids[i]].attached_ns;
	return n ? write_marks(t, w, ids, n, "attach", first, NULL) : 0;
}

/* Moves what serves probe id out of the arrays a[0..*n) (owner[i] its
 * probe) into out; the order of the rest kept. */
#define TAKE_OWNED(a, owner, n, out, nout, id)						\
	do {										\
		size_t k_ = 0;								\
		for (size_t i_ = 0; i_ < (n); i_++) {					\
			if ((owner)[i_] == (id)) {					\
				(out) = lp_reallocarray((out), (nout) + 1, sizeof(*(out)));	\
				(out)[(nout)++] = (a)[i_];				\
				continue;						\
			}								\
			(a)[k_] = (a)[i_];						\
			(owner)[k_++] = (owner)[i_];					\
		}									\
		(n) = k_;								\
	} while (0)

static void *removal_main(void *arg)
{
	struct removal_job *r = arg;
	/* In the reverse of the order attach_uprobes made them, one after
	 * the other: the entry goes before the return, so that a call
	 * entered while the probe was there returns through it. */
	/* Stamped as the entry begins to go (the kernel may stop calling it
	 * any time before the close returns, which waits for grace periods):
	 * a call seen ending later is dropped (pinfo.late), none is missed
	 * before the stamp. */
	__atomic_store_n(&r->gone_ns, lp_monotonic_ns(), __ATOMIC_RELEASE);
	for (size_t i = r->nmfds; i-- > 0;)
		close(r->fds[i]);
	for (size_t i = r->nlinks; i-- > 0;)
		bpf_link__destroy(r->links[i]);
	for (size_t i = r->nmfds; i < r->nfds; i++)
		close(r->fds[i]);
	for (size_t i = 0; i < r->ntevs; i++) {
		char cmd[128];
		int patience = 1000;
		snprintf(cmd, sizeof(cmd), "-:%s/%s\n", r->group, r->tevs[i].name);
		while (tfs_write(cmd) < 0 && errno == EBUSY && patience > 0) {
			usleep(20000);
			patience -= 20;
		}
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int lp_tracer__remove(struct lp_tracer *t, const int *ids, size_t n)
{
	struct removal_job *r = lp_calloc(1, sizeof(*r));
	snprintf(r->group, sizeof(r->group), "%s", t->tfs_group);
	for (size_t k = 0; k < n; k++) {
		int id = ids[k];
		struct pinfo *pi = &t->probes[id];
		pi->removing = true;
		pi->job = r;
		if (pi->kind == LP_PROBE_SYSCALL) {
			/* The raw tracepoints stay (other syscall: probes share
			 * them): the number leaves the table they look up. */
			uint32_t nr = (uint32_t)pi->sysnr;
			bpf_map_delete_elem(bpf_map__fd(t->skel->maps.sysnrs), &nr);
		}
		if (pi->kind == LP_PROBE_PY)
			t->py_set = false;	/* another python: probe may come */
		TAKE_OWNED(t->links, t->link_owner, t->nlinks, r->links, r->nlinks, id);
		TAKE_OWNED(t->mfds, t->mfd_owner, t->nmfds, r->fds, r->nfds, id);
	}
	r->nmfds = r->nfds;
	for (size_t k = 0; k < n; k++) {
		int id = ids[k];
		TAKE_OWNED(t->tfds, t->tfd_owner, t->ntfds, r->fds, r->nfds, id);
		size_t keep = 0;
		for (size_t i = 0; i < t->ntevs; i++) {
			if (t->tevs[i].probe == (uint32_t)id) {
				r->tevs = lp_reallocarray(r->tevs, r->ntevs + 1, sizeof(*r->tevs));
				r->tevs[r->ntevs++] = t->tevs[i];
			} else {
				t->tevs[keep++] = t->tevs[i];
			}
		}
		t->ntevs = keep;
	}
	t->removals = lp_reallocarray(t->removals, t->nremovals + 1, sizeof(*t->removals));
	struct removal *rp = &t->removals[t->nremovals++];
	*rp = (struct removal){ .ids = lp_calloc(n, sizeof(*ids)), .nids = n, .job = r };
	memcpy(rp->ids, ids, n * sizeof(*ids));
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* signals are the main thread's */
	if (pthread_create(&rp->thread, NULL, removal_main, r) == 0)
		rp->threaded = true;
	else
		removal_main(r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/* Waits for a removal's thread, and frees what it worked on. */
static void free_removal_job(struct removal *r)
{
	if (r->threaded)
		pthread_join(r->thread, NULL);
	free(r->job->links);
	free(r->job->fds);
	free(r->job->tevs);
	free(r->job);
	r->job = NULL;
}

/* The calls of probe ids still open in the stacks of map fd (function
 * probes', python: probes'), counted into open[]. */
static void count_open(struct lp_tracer *t, int fd, const int *ids, size_t n, uint64_t *open)
{
	struct lp_trace_stack *st = lp_malloc(sizeof(*st));
	uint64_t key, next, *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, st) != 0)
			continue;
		for (uint32_t d = 0; d < st->depth && d < LP_TRACE_MAX_DEPTH; d++)
			for (size_t i = 0; i < n; i++)
				open[i] += st->frames[d].probe == (uint32_t)ids[i];
	}
	free(st);
	/* A system call in progress. */
	int sfd = bpf_map__fd(t->skel->maps.sysin);
	uint32_t skey, snext, *sprev = NULL;
	while (fd == bpf_map__fd(t->skel->maps.stacks) &&
	       bpf_map_get_next_key(sfd, sprev, &snext) == 0) {
		skey = snext;
		sprev = &skey;
		struct lp_trace_sysin in;
		if (bpf_map_lookup_elem(sfd, &skey, &in) != 0)
			continue;
		for (size_t i = 0; i < n; i++)
			open[i] += in.probe == (uint32_t)ids[i];
	}
}

/* A removal whose links are gone: what the ring holds written, the calls
 * still open counted (and from now on dropped: their durations would be
 * cut short), the detach records written.  -1 when the output failed. */
static int end_removal(struct lp_tracer *t, struct lp_writer *w, struct removal *r)
{
	if (r->threaded)
		pthread_join(r->thread, NULL);
	r->threaded = false;
	t->w = w;
	ring_buffer__consume(t->rb);
	int64_t now = r->job->gone_ns;
	uint64_t *open = lp_calloc(r->nids, sizeof(*open));
	for (size_t i = 0; i < r->nids; i++) {
		struct pinfo *pi = &t->probes[r->ids[i]];
		pi->removed = true;
		pi->job = NULL;
		open[i] = pi->late;
	}
	free_removal_job(r);
	count_open(t, bpf_map__fd(t->skel->maps.stacks), r->ids, r->nids, open);
	count_open(t, bpf_map__fd(t->skel->maps.pystacks), r->ids, r->nids, open);
	uint64_t sum = 0;
	for (size_t i = 0; i < r->nids; i++)
		sum += open[i];
	int ret = t->werr ? -1 : write_marks(t, w, r->ids, r->nids, "detach", now, open);
	/* Not said of a probe taken back when its add failed. */
	bool said = t->probes[r->ids[0]].marked;
	if (said && sum)
		lp_error("control: removed '%s' (%" PRIu64 " calls in progress dropped)",
			 t->probes[r->ids[0]].spec, sum);
	else if (said)
		lp_error("control: removed '%s'", t->probes[r->ids[0]].spec);
	free(open);
	free(r->ids);
	if (t->werr)
		errno = t->werr;
	return ret;
}

/* The removals whose links are gone (all of them when wait), ended. */
static int end_removals(struct lp_tracer *t, struct lp_writer *w, bool wait)
{
	int ret = 0;
	for (size_t i = 0; i < t->nremovals;) {
		struct removal *r = &t->removals[i];
		if (!wait && !__atomic_load_n(&r->job->done, __ATOMIC_ACQUIRE)) {
			i++;
			continue;
		}
		if (end_removal(t, w, r) < 0)
			ret = -1;
		memmove(r, r + 1, (t->nremovals - i - 1) * sizeof(*r));
		t->nremovals--;
	}
	return ret;
}

int lp_tracer__pending(const struct lp_tracer *t)
{
	return (int)t->nremovals;
}

void lp_tracer__status(const struct lp_tracer *t)
{
	int64_t now = lp_monotonic_ns();
	size_t shown = 0;
	for (size_t i = 0; i < t->nprobes; i++) {
		const struct pinfo *pi = &t->probes[i];
		if (pi->cal || pi->removed)
			continue;
		lp_error("status: probe '%s' (%s): %" PRIu64 " records, attached %.1f s ago%s",
			 pi->name, pi->spec, pi->hits, (double)(now - pi->attached_ns) / 1e9,
			 pi->removing ? ", being removed" : "");
		shown++;
	}
	if (!shown)
		lp_error("status: no probe attached");
}

static int write_unfinished(struct lp_tracer *t, struct lp_writer *w)
{
	if (write_open(t, w, bpf_map__fd(t->skel->maps.stacks)) < 0 ||
	    write_open(t, w, bpf_map__fd(t->skel->maps.pystacks)) < 0)
		return -1;
	return write_unfinished_syscalls(t, w);
}

int lp_tracer__finish(struct lp_tracer *t, struct lp_writer *w)
{
	/* Removals under way end first: their detach records are before
	 * what the end writes. */
	if (end_removals(t, w, true) < 0)
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
	if (write_unfinished(t, w) < 0)
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
	if (t->cal_threaded)
		pthread_join(t->cal_thread, NULL);
	else
		for (size_t i = 0; i < t->ncal_links; i++)
			bpf_link__destroy(t->cal_links[i]);
	free(t->cal_links);
	for (size_t i = 0; i < t->nremovals; i++) {
		free_removal_job(&t->removals[i]);
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
		if (t->mprog[i] > 0 && i != MULTI_SESSION)
			close(t->mprog[i]);
	free(t->kids);
	free(t->pfiles);
	free(t->targets);
	ring_buffer__free(t->rb);
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
