/* record-internal.h - private to lib/capture/record/record*.c: the state of
 * an lp_recorder, which the pieces of lp-record's engine share, and the
 * functions one piece calls in another.  Not for any other file: the API
 * is record.h.
 *
 * Names: lp_recorder__VERB is the public API (record.h); lp_recorder_NAME,
 * one underscore, a function of one piece that another calls.  Each piece
 * includes "capture/record/record.h" first (a struct lp_recorder holds its
 * struct lp_record_opts; included from here, it would make record.h and
 * this header a cycle, which lib/layers refuses), and "profile.skel.h"
 * itself (the Makefile orders a skeleton before the files that name it);
 * here the skeleton's, libbpf's and the ring's event types are only
 * pointed to. */
#ifndef LP_RECORD_INTERNAL_H
#define LP_RECORD_INTERNAL_H

#ifndef LP_RECORD_H
#error "capture/record/record.h goes before capture/record/record-internal.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hashmap.h"
#include "capture/record/cost.h"
#include "stream/attrs.h"

struct bpf_link;
struct lp_dict;
struct lp_execmaps;
struct lp_frame;
struct lp_perfrec;
struct lp_py_event;
struct lp_python;
struct lp_sample_event;
struct lp_symbolizer;
struct lp_unwinder;
struct lp_writer;
struct profile_bpf;
struct ring_buffer;

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

/* record.c: the lifecycle (open, load, attach, poll, stop, finish, free),
 * the ring drained, the header and the lost records. */
int lp_recorder_write_failed(struct lp_recorder *r);
const char *lp_recorder_call_graph_name(enum lp_call_graph g);
void lp_recorder_set_events(struct lp_recorder *r, bool on);
int lp_recorder_handle_sample(void *ctx, void *data, size_t size);
bool lp_recorder_drain(struct lp_recorder *r, int timeout_ms);
struct lp_perfrec *lp_recorder_open_perf(struct lp_recorder *r, pid_t tid);

/* record-stack.c: the ring's events; a sample's stack and its record. */
void lp_recorder_run_pending(struct lp_recorder *r, int64_t now);
int lp_recorder_read_sample(struct lp_recorder *r, void *data, size_t size);

/* record-python.c: Python frames merged into stacks. */
void lp_recorder_forget_python(struct lp_recorder *r, pid_t pid);
void lp_recorder_check_python(struct lp_recorder *r, pid_t pid);
void lp_recorder_reap_python(struct lp_recorder *r);
void lp_recorder_keep_python(struct lp_recorder *r, const struct lp_py_event *pe, size_t size);
const struct lp_py_event *lp_recorder_python_of(struct lp_recorder *r,
						const struct lp_sample_event *ev);
void lp_recorder_python_frames(struct lp_recorder *r, const struct lp_sample_event *ev,
			       const struct lp_py_event *pe, size_t *n);
void lp_recorder_seed_python(struct lp_recorder *r);

/* record-offcpu.c: off-CPU and wall intervals. */
int lp_recorder_seed_intervals(struct lp_recorder *r);
int lp_recorder_attach_sched(struct lp_recorder *r);
void lp_recorder_detach_sched(struct lp_recorder *r);
void lp_recorder_close_intervals(struct lp_recorder *r);

/* record-cal.c: the calibration and the cost records. */
int lp_recorder_calibrate_samples(struct lp_recorder *r, int64_t ns);
int lp_recorder_calibrate(struct lp_recorder *r);
int lp_recorder_write_costs(struct lp_recorder *r);

/* record-summary.c: lp_recorder__counts and lp_recorder__notes alone. */

#endif
