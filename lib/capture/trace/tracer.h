/* tracer.h - lp-trace's BPF glue: loads bpf/trace.bpf.c, attaches resolved
 * probe points, and turns what the kernel reports into stream records
 * (spans, events, lost counts).  Its pieces, lib/capture/trace/tracer*.c
 * (tracer-internal.h), are the only files of lp-trace that include
 * libbpf. */
#ifndef LP_TRACER_H
#define LP_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/trace/probe.h"
#include "stream/stream.h"

struct lp_tracer_opts {
	int64_t min_duration_ns;	/* spans shorter than this are not reported */
	size_t ring_bytes;		/* ring buffer size, a power of two */
	uint32_t max_pids;		/* the kernel's pid set; 0: LP_TARGET_MAX_PIDS */
	int verbose;			/* -v: attach details, libbpf's warnings; -vv: its debug output */
	/* lp-record --inside: the function probes attached are a gate
	 * (LP_PROBE_F_GATE): their open calls are kept per thread in the map
	 * lp_tracer__stacks_fd gives, for the sampler; no span is written. */
	bool gate;
	/* lp-record --control's inside FUNC: the gate's open calls kept in
	 * the sampler's map stacks_fd (loaded already), not a new one. */
	bool share_stacks;
	int stacks_fd;
	/* key: probes (keyed.h): shown each record of their parts before
	 * it is written; NULL: none. */
	struct lp_keyed *keyed;
};

struct lp_tracer;

/* Opens and loads the BPF programs.  NULL after reporting why (missing
 * privileges: one line naming what is needed). */
struct lp_tracer *lp_tracer__new(const struct lp_tracer_opts *opts);

/* What lp_tracer__calibrate measures: masks of 1 << LP_INSN_*. */
struct lp_cal_needs {
	unsigned entry;		/* function probes' entries (and their uretprobes) */
	unsigned point;		/* point probes' hits (and a probed return's instruction) */
	unsigned ret_insn;	/* entries of functions whose returns are probed at instructions */
	bool tracepoints;
};

/* Measures what one hit of lp-trace's probes costs the thread it lands in
 * (formats/lp-stream.md, "What lp costs"), for the classes of *need.  The
 * same programs are attached to calibration functions of this process
 * (lib/capture/trace/tracecal.c), or to the tracepoint of its own getppid(2)
 * calls, and the calls timed with and without them, within about
 * budget_ns.  Call before lp_tracer__attach, which gives each probe its
 * class's figures, counted in the kernel into spans' lp_ns=.  While
 * tracing (a probe added), the ring is drained meanwhile.  -1 after
 * reporting why (the tracer then writes no cost records and no lp_ns=). */
int lp_tracer__calibrate(struct lp_tracer *t, const struct lp_cal_needs *need, int64_t budget_ns);

/* Clears from *need what is measured already: what a probe added while
 * tracing still needs.  Whether anything is left. */
bool lp_tracer__uncalibrated(const struct lp_tracer *t, struct lp_cal_needs *need);

/* What lp_tracer__calibrate measures for points[0..n), or'ed into *need:
 * a function probe's entry class (and the class of its instructions that
 * leave it, when its returns are probed there: a point probe's hit), a
 * point probe's class. */
void lp_tracer__classes(const struct lp_probe_point *points, size_t n, struct lp_cal_needs *need);

/* Writes the cost records of the probes attached so far (none when not
 * calibrated).  Returns 0, or -1 when the output failed. */
int lp_tracer__write_costs(struct lp_tracer *t, struct lp_writer *w);
/* The same, for the probes from id first on (added while tracing). */
int lp_tracer__write_costs_from(struct lp_tracer *t, struct lp_writer *w, int first);

/* Processes syscall: and tp: probes follow (they are system-wide events
 * filtered in the kernel by process id).  A process leaves the filter when
 * it exits. */
int lp_tracer__add_pid(struct lp_tracer *t, pid_t pid);

/* Attaches one probe point for process pid (uprobes; -1 for any process).
 * A uprobe in a file that no process outside the filter maps (the
 * targets' executable, as a rule) is attached once for every process and
 * filtered in the kernel: the targets' children, present and future, are
 * traced from their first instruction with nothing more attached.  One in
 * a file others map too (libc) gets a tracefs uprobe event whose breakpoint
 * goes only into pid (others would pay a trap per call) and, by the
 * kernel, into every process pid forks from now on, before it runs; pid's
 * running descendants are given it with lp_tracer__attach_child.  Returns
 * the probe's id, or -1 after reporting why. */
int lp_tracer__attach(struct lp_tracer *t, const struct lp_probe_point *pt, pid_t pid);

/* Follows forks: a child of a traced process is traced from its fork by
 * every probe (the uprobes in files others map: inherited from its parent
 * in the kernel), and on_fork is called (during a poll) with the target it
 * descends from, to call lp_tracer__attach_child for each of that target's
 * points, which does something only for a child forked before its parent
 * had the probes (an adopted descendant's).  The filter holds max_pids
 * processes at once; children past it are counted ("lost ... children").
 * Call before attaching probes, so that adopted descendants are no
 * bystanders. */
int lp_tracer__follow(struct lp_tracer *t, void (*on_fork)(void *arg, pid_t child, pid_t target),
		      void *arg);
/* The uprobes of probe id (as lp_tracer__attach returned it) for a child
 * or adopted descendant that did not inherit them (forked before its
 * parent had them), when the probe is in a file others map; 0 for other
 * probes and children, and for a child already gone; -1 when they could
 * not be attached (the child is counted as lost). */
int lp_tracer__attach_child(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			    pid_t child);

/* A descendant of target pid that was running when tracing began (a
 * server's workers): followed as a child is, in the kernel's filter before
 * probes are attached (so that it is no bystander: lp_tracer__attach).  Its
 * uprobes in files others map are the caller's to attach, with
 * attach_child, once probes are.  1 when added, 0 when known already or counted as lost (the
 * filter is full), -1 after reporting why. */
int lp_tracer__adopt(struct lp_tracer *t, pid_t pid, pid_t target);

/* System calls that start before this call are not reported: a started
 * command's own ones are those after its release (not lp's code between
 * fork and exec). */
void lp_tracer__set_start(struct lp_tracer *t);

/* Waits up to timeout_ms for events and writes them.  Returns the number of
 * records written, -1 when the output failed (errno set), -2 when reading
 * the ring failed (reported). */
int lp_tracer__poll(struct lp_tracer *t, struct lp_writer *w, int timeout_ms);

/* Ends tracing: detaches every probe, drains the ring, writes the calls
 * still open as unfinished spans and the lost counts.  Returns 0, or -1
 * when the output failed. */
int lp_tracer__finish(struct lp_tracer *t, struct lp_writer *w);

/* --- probes that come and go (lp-trace --control) --- */

/* The probes attached under text (as given, or their name) and not being
 * removed: their count, their ids in *ids (malloc'd). */
int lp_tracer__find(const struct lp_tracer *t, const char *text, int **ids);

/* A child followed now (forked before probe id was attached, so without
 * its inherited perf events) of target is given it. */
void lp_tracer__attach_kids(struct lp_tracer *t, int id, const struct lp_probe_point *pt,
			    pid_t target);

/* Writes "probe TIME attach NAME spec=..." for ids (attached together):
 * TIME taken just before their entries were attached, so that none of
 * their spans starts before it (formats/lp-stream.md).  0, or -1 when
 * the output failed. */
int lp_tracer__write_attached(struct lp_tracer *t, struct lp_writer *w, const int *ids, size_t n);

/* Starts detaching probes ids (lp_tracer__find's) while tracing goes on:
 * their links are destroyed by a thread (grace periods: ~0.1 to 0.7 s
 * each), entries first; a later poll (or finish) writes what the ring
 * holds of them and then "probe TIME detach NAME spec=... open=N", TIME
 * when the links began to go, N the calls in progress then, whose spans
 * are not written (they would end after TIME, or never).  Their records
 * after that are dropped. */
int lp_tracer__remove(struct lp_tracer *t, const int *ids, size_t n);

/* One line on stderr per probe: its name, as given, records written,
 * since when attached. */
void lp_tracer__status(const struct lp_tracer *t);

/* The map of open calls (bpf/trace.h: key a thread id, value struct
 * lp_trace_stack), for another BPF object to share (lp-record --inside). */
int lp_tracer__stacks_fd(const struct lp_tracer *t);

/* The hits of python: probes in the targets so far (every Python call
 * hits twice, its start and its return, whatever its name), and *ns_each
 * what one costs the thread it lands in (0 when not calibrated). */
uint64_t lp_tracer__python_hits(const struct lp_tracer *t, double *ns_each);
/* The returns of watched code objects so far (their hardware watchpoints'
 * traps), *ns_each what one costs (0 when none is watched), and *state:
 * LP_PYWATCH_NONE, every Python call traps (a glob, an interpreter or a
 * machine where returns cannot be watched, or one that could not be);
 * LP_PYWATCH_ARMING, the code named not yet watched; LP_PYWATCH_ONLY, the
 * breakpoints every call passes are gone. */
enum { LP_PYWATCH_NONE, LP_PYWATCH_ARMING, LP_PYWATCH_ONLY };
uint64_t lp_tracer__python_watch_hits(const struct lp_tracer *t, double *ns_each, int *state);

/* Totals for the summary on stderr. */
uint64_t lp_tracer__count(const struct lp_tracer *t);
uint64_t lp_tracer__lost(const struct lp_tracer *t);

/* Detaches (if not finished) and frees. */
void lp_tracer__free(struct lp_tracer *t);

#endif
