/* tracer-internal.h - private to lib/capture/trace/tracer*.c: the state of
 * an lp_tracer, which the pieces of lp-trace's BPF glue share, and the
 * functions one piece calls in another.  Not for any other file: the API
 * is tracer.h.
 *
 * Names: lp_tracer__VERB is the public API (tracer.h); lp_tracer_NAME,
 * one underscore, a function of one piece that another calls.  Each piece includes "trace.skel.h"
 * itself (the Makefile orders a skeleton before the files that name it);
 * here the skeleton, libbpf's and libtraceevent's types are only
 * pointed to. */
#ifndef LP_TRACER_INTERNAL_H
#define LP_TRACER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hashmap.h"
#include "capture/trace/probe.h"
#include "capture/trace/tracecal.h"
#include "stream/attrs.h"

struct bpf_link;
struct bpf_program;
struct lp_dlgate;
struct lp_keyed;
struct lp_writer;
struct ring_buffer;
struct tep_event;
struct tep_handle;
struct trace_bpf;

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
	bool py_every;		/* LP_PROBE_PY: a site every call passes (pyprobe.h) */
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

/* Whether slot's program is a copy lp-trace loaded and closes, not one a
 * skeleton owns (lp_session; lp_py, loaded again in pyskel). */
static inline bool multi_copied(int slot)
{
	return slot != MULTI_SESSION && slot != MULTI_PY;
}

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
	/* Links taken away while the probe stays (lp_tracer_unlink): no
	 * record, its calls still written. */
	bool quiet;
	int64_t begun_ns;
};

struct lp_tracer {
	struct trace_bpf *skel;
	/* The object again, every map shared, with only lp_py loaded, for
	 * uprobe-multi links (tracer-attach.c, multi_prog); NULL until then. */
	struct trace_bpf *pyskel;
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
	/* The python: probe's code objects watched (tracer-pywatch.c): whether
	 * they may be, what a watched return costs, and whether the eval
	 * loop's other breakpoints are gone (or stay: one could not be). */
	bool py_watch;
	struct lp_pywatch *pywatch;
	int64_t pywatch_ns, pywatch_in_ns;
	bool py_watch_only, py_unwatchable, pywatch_cost_written;
	bool py_unlinked;	/* and gone (lp_tracer_unlink's links destroyed) */
	size_t unlinking;	/* lp_tracer_unlink's removals under way */
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

/* tracer.c: the lifecycle, the ring's events, the lost counts. */
int lp_tracer_attach_exit(struct lp_tracer *t);
uint64_t lp_tracer_counter(const struct lp_tracer *t, int which);
void lp_tracer_lost_baseline(struct lp_tracer *t);

/* tracer-attach.c: attaching probes, following children. */
void lp_tracer_add_link(struct lp_tracer *t, struct bpf_link *l);
bool lp_tracer_file_shared(struct lp_tracer *t, const char *path);
struct kid *lp_tracer_find_kid(struct lp_tracer *t, pid_t pid);
void lp_tracer_forget_kid(struct lp_tracer *t, size_t i);
int lp_tracer_attach_one(struct lp_tracer *t, struct bpf_program *prog, int slot, uint64_t off,
			 uint64_t cookie, const struct lp_probe_point *pt);
void lp_tracer_forget_exited(struct lp_tracer *t);
void lp_tracer_on_fork_record(struct lp_tracer *t, const struct lp_trace_event *ev);

/* tracer-tfs.c: tracefs uprobe events, inherited at fork. */
int lp_tracer_tfs_write(const char *cmd);
int lp_tracer_tfs_open_threads(struct lp_tracer *t, const struct tev *ev, pid_t pid);
int lp_tracer_tfs_attach(struct lp_tracer *t, struct bpf_program *prog, char kind, uint64_t off,
			 uint64_t cookie, uint32_t id, const struct lp_probe_point *pt, pid_t pid);
void lp_tracer_close_tfs(struct lp_tracer *t);
/* Waits for the thread destroying the last calibration's links, if any
 * (tracer-cal.c). */
void lp_tracer_cal_join(struct lp_tracer *t);

/* tracer-gate.c: returns armed per call while no library loaded can throw. */
bool lp_tracer_can_gate(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid);
void lp_tracer_ungate(struct lp_tracer *t, uint32_t id);
void lp_tracer_dl_check(struct lp_tracer *t);

/* tracer-records.c: records and their attributes. */
uint64_t lp_tracer_pid_key(pid_t pid);
void lp_tracer_tp_attrs(struct lp_tracer *t, const struct pinfo *pi, const unsigned char *data,
			unsigned int size);
void lp_tracer_syscall_attrs(struct lp_tracer *t, const struct pinfo *pi,
			     const unsigned long long *vals);
void lp_tracer_probe_attrs(struct lp_tracer *t, const struct pinfo *pi,
			   const struct lp_trace_event *ev, const void *data, size_t size);
void lp_tracer_py_attrs(struct lp_tracer *t, const struct lp_trace_event *ev);
void lp_tracer_on_pycode(struct lp_tracer *t, const struct lp_trace_event_py *e, size_t size);
int lp_tracer_write_event(struct lp_tracer *t, const struct pinfo *pi,
			  const struct lp_trace_event *ev);
int lp_tracer_write_unfinished(struct lp_tracer *t, struct lp_writer *w);

/* tracer-control.c: probes added and removed while tracing. */
int lp_tracer_unlink(struct lp_tracer *t, const int *ids, size_t n);

/* tracer-pywatch.c: python: probes that cost only the calls of the code
 * they name. */
void lp_tracer_py_arm(struct lp_tracer *t, pid_t pid, uint64_t code, const char *name,
		      const char *where);
void lp_tracer_py_requicken(struct lp_tracer *t, const struct lp_trace_event *ev);
void lp_tracer_py_forget(struct lp_tracer *t);
void lp_tracer_py_tick(struct lp_tracer *t);

/* tracer-cal.c: the calibration, and the costs it gives probes. */
const struct pair_cost *lp_tracer_pair_of(const struct lp_tracer *t, const struct pinfo *pi);
void lp_tracer_set_costs(const struct lp_tracer *t, const struct pinfo *pi,
			 const struct lp_probe_point *pt, struct lp_trace_probe *cfg);
int lp_tracer_write_probe_costs(struct lp_tracer *t, struct lp_writer *w, size_t i,
				int64_t time_ns);
void lp_tracer_keep_cal_span(struct lp_tracer *t, const struct lp_trace_event *ev);

/* tracer-control.c: probes that come and go. */
void lp_tracer_free_removal_job(struct removal *r);
int lp_tracer_end_removals(struct lp_tracer *t, struct lp_writer *w, bool wait);

#endif
