/* record-summary.c - the summary on stderr: its counts (lp_recorder__counts)
 * and the notes after them (what perf events could not see, how stacks
 * ended, what a sample and a blocked interval cost). */
#include "capture/record/record.h"
#include "capture/record/record-internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/record/perfrec.h"
#include "capture/python.h"
#include "debuginfo/symbolize.h"
#include "base/util.h"

void lp_recorder__counts(const struct lp_recorder *r, char *buf, size_t size)
{
	struct lp_symbolizer_stats st;
	char children[64] = "", outside[320] = "";

	lp_symbolizer__stats(r->sym, &st);
	if (r->children)
		snprintf(children, sizeof(children), ", %" PRIu64 " children not followed (pid set full)",
			 r->children);
	/* --inside: what the gate kept out, after the counts of what is in. */
	if (r->gated)
		snprintf(outside, sizeof(outside), ", %" PRIu64 " outside %.200s (not written)",
			 r->outside, r->gated);
	if (r->opts.mode == LP_RECORD_OFF) {
		snprintf(buf, size, "%" PRIu64 " off-CPU intervals, %" PRIu64 " lost (ring full), %" PRIu64
			 " lost (map full), %" PRIu64 " lost (end unreported), %" PRIu64
			 " unwinds failed, %" PRIu64 " truncated%s%s; %" PRIu64 " processes, %" PRIu64
			 " modules symbolized",
			 r->blocked + r->runnable, r->ring_lost, r->off_lost, r->off_unseen,
			 r->unwind_failed + r->ustack_failed, r->truncated, children, outside, st.procs,
			 st.modules);
		return;
	}
	if (r->opts.mode == LP_RECORD_WALL) {
		/* Every sample the stream holds, then by state. */
		snprintf(buf, size, "%" PRIu64 " samples (wall: %" PRIu64 " running at %u Hz, %" PRIu64
			 " blocked, %" PRIu64 " runnable; %s), %" PRIu64
			 " lost (ring full), %" PRIu64 " lost (map full), %" PRIu64
			 " lost (end unreported), %" PRIu64 " unwinds failed, %" PRIu64
			 " truncated%s%s; %" PRIu64 " processes, %" PRIu64 " modules symbolized",
			 r->running + r->blocked + r->runnable, r->running, r->opts.freq, r->blocked,
			 r->runnable, lp_recorder_call_graph_name(r->opts.call_graph), r->ring_lost,
			 r->off_lost, r->off_unseen,
			 r->unwind_failed + r->ustack_failed, r->truncated, children, outside, st.procs,
			 st.modules);
		return;
	}
	snprintf(buf, size, "%" PRIu64 " samples (%s at %u Hz, %s), %" PRIu64 " lost (ring full), %" PRIu64
		 " unwinds failed, %" PRIu64 " truncated%s%s; %" PRIu64 " processes, %" PRIu64
		 " modules symbolized",
		 r->running, r->event ? r->event : "-", r->opts.freq,
		 lp_recorder_call_graph_name(r->opts.call_graph), r->ring_lost,
		 r->unwind_failed + r->ustack_failed, r->truncated, children, outside, st.procs, st.modules);
}

/* Microseconds of the whole nanoseconds the cost record holds, so that the
 * summary says what the stream says (14,749.6 ns is 14.7 us, its record's
 * 14750 ns 14.8). */
static double record_us(double ns)
{
	return round(ns) / 1e3;
}

/* What lp-record cost the threads it sampled, after the summary line. */
static void cost_summary(const struct lp_recorder *r)
{
	if (r->have_sample_cost)
		lp_error("each sample cost the sampled thread ~%.1f us (sd %.1f us, %s, %u Hz, "
			 "calibrated on %zu samples)",
			 record_us(r->sample_cost.ns), record_us(r->sample_cost.sd_ns),
			 lp_recorder_call_graph_name(r->opts.call_graph), r->opts.freq,
			 r->sample_cost.n);
	if (r->have_block_cost)
		lp_error("each blocked interval cost its thread ~%.1f us (sd %.1f us, calibrated "
			 "on %zu intervals)",
			 record_us(r->block_cost.ns), record_us(r->block_cost.sd_ns), r->block_cost.n);
}

static int ending_cmp(const void *a, const void *b)
{
	const struct lp_ending *x = *(const struct lp_ending *const *)a;
	const struct lp_ending *y = *(const struct lp_ending *const *)b;
	int c = (y->count > x->count) - (y->count < x->count);

	return c ? c : strcmp(x->module, y->module);
}

/* What a stack ending early in a module says of it, and what to do: by
 * the reason its unwinding gave (libdw's own messages as they are). */
static const char *remedy(const char *why)
{
	static const struct {
		const char *why, *remedy;
	} remedies[] = {
		{ "broken-chain", "built without frame pointers: the default --call-graph auto "
				  "unwinds it" },
		{ "end-of-copy", "deeper than the stack copy (with --call-graph auto it grows to "
				 "64 KiB per thread)" },
		{ "end-of-chain", "the frame-pointer chain ends in a function that keeps none, "
				  "past the stack copy" },
		{ "max-frames", "more frames than --stack-depth" },
		{ "uretprobe", "the uretprobe trampoline, the real return address "
				       "not held where the kernel keeps it (a tick while a return "
				       "probe was being set up: the probe's own time)" },
		{ "no-user-stack", "the kernel gave no user stack" },
	};

	if (!why)
		return "no CFI to go on from there (a module without unwind tables, or JIT code "
		       "without frame pointers)";
	for (size_t i = 0; i < sizeof(remedies) / sizeof(remedies[0]); i++)
		if (!strcmp(why, remedies[i].why))
			return remedies[i].remedy;
	return why;
}

/* How many stacks are whole, and where the others end: the three modules
 * most of them end in, with what to do about it. */
static void stacks_summary(const struct lp_recorder *r)
{
	struct lp_ending **v;
	size_t n = 0;

	if (!r->stacks)
		return;
	v = lp_calloc(r->endings.count + 1, sizeof(*v));
	for (size_t i = 0; i < r->endings.cap; i++)
		if (r->endings.keys[i])
			v[n++] = r->endings.values[i];
	qsort(v, n, sizeof(*v), ending_cmp);
	lp_error("%.1f%% of %" PRIu64 " user stacks whole (reach their thread's start)%s",
		 100.0 * r->whole / r->stacks, r->stacks, n ? "; the others end in:" : "");
	for (size_t i = 0; i < n && i < 3; i++)
		lp_error("  %.1f%% in %s: %s", 100.0 * v[i]->count / r->stacks, v[i]->module,
			 remedy(v[i]->why));
	free(v);
}

/* --backend perf: what its events could not see. */
static void perf_notes(const struct lp_recorder *r)
{
	if (!r->perf)
		return;
	if (lp_perfrec__user_only(r->perf))
		lp_error("perf events as an ordinary user: no sample while a thread ran in the "
			 "kernel (system calls, page faults); root or CAP_PERFMON sees those too");
	if (lp_perfrec__throttled(r->perf))
		lp_error("the kernel throttled sampling %" PRIu64 " times "
			 "(kernel.perf_event_max_sample_rate): a lower -F", lp_perfrec__throttled(r->perf));
}

void lp_recorder__notes(const struct lp_recorder *r)
{
	perf_notes(r);
	stacks_summary(r);
	lp_writer__stacks_note(r->w);
	lp_python__notes(r->py);
	cost_summary(r);
}
