/* gate.h - lp-record --inside FUNC: the sampler takes a thread's samples
 * only while the thread is inside FUNC, decided in the kernel.  FUNC's
 * entries and returns are lp-trace's own probes (lib/capture/trace/tracer*.c in
 * gate mode, attached to the targets and their descendants as lp-trace
 * attaches them: lib/capture/trace/family.c), whose programs keep each thread's
 * open calls (nesting and recursion each a frame, calls left by an
 * exception or longjmp popped by the stack-pointer checks of
 * bpf/trace.bpf.c) in a map the sampler (bpf/profile.bpf.c) shares.
 *
 *	spec = lp_gate__parse("FUNC");			(at option parsing)
 *	g = lp_gate__open(&opts);			(resolves, loads, calibrates, attaches)
 *	... lp_recorder__open with lp_gate__stacks_fd(g) ...
 *	lp_gate__write_costs(g, w);			(what a hit of its probes costs)
 *	lp_gate__write_marks(g, w, "attach", t);	(a gate attached while sampling)
 *	while (...) lp_gate__poll(g, w);		(forks: children get the probes)
 *	lp_gate__finish(g, w);				(detaches, lost records)
 *	lp_gate__free(g);
 */
#ifndef LP_GATE_H
#define LP_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/trace/probe.h"
#include "stream/stream.h"

struct lp_gate_opts {
	struct lp_probe_spec **specs;	/* lp_gate__parse's */
	size_t nspecs;
	const pid_t *pids;	/* the targets */
	size_t npids;
	/* The command's executable, its pids[0] held before its exec (so
	 * FUNC is resolved in the program it will run), or NULL: -p. */
	const char *cmd_exe;
	bool follow;		/* the targets' children too */
	uint32_t max_pids;	/* the tracer's pid set (--max-pids) */
	int64_t calibrate_ns;	/* measure what a hit costs, this long; 0: not */
	int verbose;
	/* lp-record --control's inside FUNC: the open calls kept in the
	 * sampler's map (lp_recorder__gate_fd), loaded already, not in a new
	 * map of the tracer's for the sampler to share. */
	bool share_stacks;
	int stacks_fd;
};

struct lp_gate;

/* One --inside argument: a function, FUNC or LIB:FUNC (C++ names as
 * lp-trace takes them).  NULL after saying why on stderr. */
struct lp_probe_spec *lp_gate__parse(const char *text);

/* NULL after saying why on stderr. */
struct lp_gate *lp_gate__open(const struct lp_gate_opts *opts);

/* The map of open calls the sampler reads (bpf/trace.h: key a thread
 * id, value struct lp_trace_stack). */
int lp_gate__stacks_fd(const struct lp_gate *g);

/* The cost records of the gate's probes (an entry and a return each,
 * "entry"/"return" with probe=FUNC, as lp-trace writes them): every call
 * of FUNC costs its thread that much, sampled or not.  0, or -1 when the
 * output failed. */
int lp_gate__write_costs(struct lp_gate *g, struct lp_writer *w);

/* For a gate that comes and goes (lp-record --control): writes "probe
 * TIME ACTION inside:FUNC spec=FUNC" for each function (formats/
 * lp-stream.md, "Probes that come and go"), action "attach" or
 * "detach".  0, or -1 when the output failed. */
int lp_gate__write_marks(struct lp_gate *g, struct lp_writer *w, const char *action,
			 int64_t time_ns);

/* Takes what the probes' programs report (forks: a child gets FUNC's
 * probes), without waiting.  0, -1 when the output failed, -2 when reading
 * the ring failed (reported). */
int lp_gate__poll(struct lp_gate *g, struct lp_writer *w);

/* Detaches the probes, writes the lost records (threads with no room
 * for their open calls: never seen inside; children not followed).  0, or
 * -1 when the output failed. */
int lp_gate__finish(struct lp_gate *g, struct lp_writer *w);

/* Detaches (unless finished) and frees; accepts NULL. */
void lp_gate__free(struct lp_gate *g);

#endif
