/* record.h - lp-record's engine: the BPF sampler (bpf/profile.bpf.c) on a
 * per-CPU perf event, its ring buffer polled, every sample unwound and
 * symbolized and written as an lp stream; samples lost anywhere are counted
 * and written as lost records.
 *
 *	r = lp_recorder__open(&opts, writer);	(loads, calibrates, attaches, writes
 *						 the header and the cost records)
 *	while (...) lp_recorder__poll(r, 100);
 *	lp_recorder__stop(r);			(no new samples)
 *	lp_recorder__finish(r);			(drains, writes lost records)
 *	lp_recorder__counts(r, buf, size);	(the summary's counts)
 *	lp_recorder__notes(r);			(the lines after it)
 *	lp_recorder__free(r);			(detaches everything)
 */
#ifndef LP_RECORD_H
#define LP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "stream/stream.h"

/* What lp-record records (--mode). */
enum lp_record_mode {
	LP_RECORD_CPU,		/* on-CPU samples, weighted by the sampling period */
	LP_RECORD_OFF,		/* off-CPU intervals (state=blocked), weighted by their ns */
	LP_RECORD_WALL,		/* both, and runnable intervals: every thread's wall time */
};

/* How user stacks are unwound (--call-graph). */
enum lp_call_graph {
	/* The default: a copy of the top of the stack unwound with each
	 * module's CFI (.eh_frame/.debug_frame), so code built with or without
	 * frame pointers gives whole stacks; past the copy, the frame-pointer
	 * chain.  A thread whose stack was deeper than its copy gets a bigger
	 * one (up to 64 KiB). */
	LP_CALL_GRAPH_AUTO,
	LP_CALL_GRAPH_FP,	/* the frame-pointer chain only */
	LP_CALL_GRAPH_DWARF,	/* the copy only, of a fixed size */
};

/* What takes the samples (--backend). */
enum lp_record_backend {
	LP_BACKEND_BPF,		/* bpf/profile.bpf.c: every mode, Python frames, --inside */
	/* perf events alone (lib/capture/record/perfrec.h), as an ordinary user
	 * may: --mode cpu of one's own processes, no Python frames. */
	LP_BACKEND_PERF,
};

struct lp_record_opts {
	enum lp_record_mode mode;
	enum lp_record_backend backend;
	uint64_t min_block_ns;	/* off, wall: blocked intervals shorter are dropped */
	unsigned freq;		/* samples per second per CPU */
	const pid_t *pids;	/* the target processes; none: the whole system */
	size_t npids;
	bool follow;		/* their children too */
	bool kernel;		/* kernel stacks */
	enum lp_call_graph call_graph;
	uint32_t dwarf_bytes;	/* dwarf: bytes of stack to copy; auto: at first (0: 8 KiB) */
	int verbose;		/* -v: libbpf's warnings, the verifier log; -vv: its debug output */
	bool inlines;		/* inlined functions as frames (kind 'i') */
	bool srclines;		/* file:line on user frames */
	bool raw;		/* user frames unsymbolized (lp-symbolize later) */
	bool no_demangle;	/* C++ and Rust names left mangled */
	bool no_python;		/* no Python frames for CPython's interpreter frames */
	uint64_t ring_bytes;	/* 0: 4 MiB, 32 MiB with DWARF; a power of two */
	uint32_t max_pids;	/* the kernel's pid set; 0: LP_TARGET_MAX_PIDS */
	uint32_t stack_depth;	/* frames per stack, 1..LP_RECORD_MAX_STACK_DEPTH; 0: the most */
	/* Bytes of stacks kept to write each definition once; past them,
	 * forgotten and written again (lp_writer__bound_stacks); 0:
	 * LP_STACK_MEMORY. */
	uint64_t stack_memory;
	/* How long to measure what a sample and a blocked interval cost
	 * (lib/capture/record/cost.h), before recording; 0: not measured, no cost record. */
	int64_t calibrate_ns;
	/* --inside (lib/capture/trace/gate.h): a thread is sampled only while it is
	 * inside one of these functions (their names, as given, in the
	 * header's inside=), its open calls of them in map gate_fd. */
	const char *inside;	/* NULL: not gated */
	int gate_fd;
};

/* --stack-depth's bound (and default): the kernel's default
 * perf_event_max_stack, and the size of a sample's stacks in the ring. */
#define LP_RECORD_MAX_STACK_DEPTH 127

struct lp_recorder;


/* NULL after reporting on stderr. */
struct lp_recorder *lp_recorder__open(const struct lp_record_opts *opts,
				      struct lp_writer *w);
/* Adds a process to the kernel's pid filter. */
int lp_recorder__add_pid(struct lp_recorder *r, pid_t pid);
/* Waits up to timeout_ms for samples and writes them.  0, or -1 when the
 * output failed (errno: EPIPE for a closed output). */
int lp_recorder__poll(struct lp_recorder *r, int timeout_ms);
/* Disables the perf events: no sample is taken after this. */
void lp_recorder__stop(struct lp_recorder *r);
/* --mode cpu (lp-record --control's pause and resume): the perf events
 * disabled, no sample taken, or enabled again.  0, or -1 after saying why
 * (other modes: their intervals span a pause). */
int lp_recorder__pause(struct lp_recorder *r, bool paused);
/* The map of the gate's open calls (bpf/profile.bpf.c's lp_gate: opts'
 * gate_fd, or the sampler's own), for a gate's tracer attached while
 * sampling (lp-record --control's inside FUNC) to share. */
int lp_recorder__gate_fd(const struct lp_recorder *r);
/* Gates the sampler on the open calls in that map (names: the functions,
 * named in the summary's count of what was kept out), or, names NULL,
 * samples every thread again. */
void lp_recorder__gate(struct lp_recorder *r, const char *names);
/* Empties that map once the gate's probes are gone: the calls open then
 * would never be closed, and a later gate would count them. */
void lp_recorder__gate_clear(struct lp_recorder *r);
/* Writes every sample still in the ring, then the lost records; flushes.
 * 0, or -1 when the output failed. */
int lp_recorder__finish(struct lp_recorder *r);
/* The summary's counts, "N samples (...), N lost (ring full), ...", into
 * buf (lib/capture/producer.c writes them as a line on stderr): N every
 * sample written, whatever its state. */
void lp_recorder__counts(const struct lp_recorder *r, char *buf, size_t size);
/* The lines after the summary, on stderr: how stacks ended, and what a
 * sample and a blocked interval cost, when calibrated. */
void lp_recorder__notes(const struct lp_recorder *r);
/* Detaches and frees everything; accepts NULL. */
void lp_recorder__free(struct lp_recorder *r);

#endif
