/* record-cal.c - the calibration (--calibrate): what a sample and a blocked
 * interval cost the sampled thread, measured before recording on cost.c's
 * spinning thread and ping-pong, and the cost records that say so. */
#include "capture/record/record.h"
#include "capture/record/record-internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/types.h>
/* bpf/profile.h by path: lib/model/profile.h is another header. */
#include "bpf/profile.h"
#include "capture/counters.h"
#include "capture/record/cost.h"
#include "capture/record/perfrec.h"
#include "profile.skel.h"
#include "base/util.h"

/* The cost of a sample: the spinning thread of lib/capture/record/cost.c sampled by the
 * same program and perf events, at the same frequency, with the same
 * unwinding (its stack has dwarf_bytes to copy above the spinning frame). */
int lp_recorder_calibrate_samples(struct lp_recorder *r, int64_t ns)
{
	struct lp_spin *s = lp_spin__start(ns, r->opts.dwarf_bytes);

	if (!s) {
		lp_error_errno("cannot start the calibration thread");
		return -1;
	}
	r->cal_tid = lp_spin__tid(s);
	r->ncal = 0;
	/* perf events: the spinning thread's own, while it spins (the
	 * targets' stay disabled). */
	struct lp_perfrec *targets = r->perf;
	if (targets && !(r->perf = lp_recorder_open_perf(r, r->cal_tid))) {
		r->perf = targets;
		lp_spin__join(s);
		lp_spin__free(s);
		return -1;
	}
	lp_recorder_set_events(r, true);
	while (!lp_spin__done(s))
		lp_recorder_drain(r, 10);
	lp_recorder_set_events(r, false);
	lp_spin__join(s);
	lp_recorder_drain(r, 0);
	if (targets) {
		lp_perfrec__free(r->perf);
		r->perf = targets;
	}
	r->have_sample_cost = lp_spin__cost(s, r->cal_times, r->ncal, &r->sample_cost) == 0;
	if (!r->have_sample_cost)
		lp_error("no sample of the calibration thread in %.0f ms: the cost of a sample "
			 "is unknown (a longer --calibrate?)", ns / 1e6);
	lp_spin__free(s);
	return 0;
}

/* Round trips per phase: a few ms, short enough to alternate many times
 * within the calibration, so a change of the machine's load falls on both
 * sides alike. */
#define LP_CAL_ROUNDS 200
#define LP_CAL_MIN_ROUNDS 50

/* Round trips in a phase: as many as keep a phase's intervals below
 * wakeup_bytes in the ring, for when no one reads it during the phase.
 * Past there every interval sent forces a wakeup of the reader, an
 * interrupt on the sending CPU, which a target whose recorder keeps up
 * never pays.  A round trip sends at most two intervals (each thread
 * blocks once), in wall mode four (each switch-in a blocked and a runnable
 * part), each at most the event, the stack copy and the ring's header. */
static size_t phase_rounds(const struct lp_recorder *r)
{
	const struct profile_bpf__rodata *ro = r->skel->rodata;
	size_t per_round = ro->runnable_intervals ? 4 : 2;
	size_t n = ro->wakeup_bytes /
		   (per_round * (sizeof(struct lp_sample_event) + ro->off_copy + BPF_RINGBUF_HDR_SZ));

	return n < LP_CAL_MIN_ROUNDS ? LP_CAL_MIN_ROUNDS : n > LP_CAL_ROUNDS ? LP_CAL_ROUNDS : n;
}

/* Times one phase of `rounds` round trips into out; returns how many times
 * the threads blocked.  lp-record's reader stays off the ping-pong's CPU
 * while they run: on another CPU it drains as it does while recording
 * (`away`), else it sleeps until the phase is over and drains after.  On
 * their CPU its timer wakeups, its reading and its own traced switches
 * would land inside the round trips, more of them in the longer, traced
 * phase: a cost no target on another CPU pays. */
static size_t run_phase(struct lp_recorder *r, struct lp_pingpong *p, size_t rounds, int64_t *out,
			bool away)
{
	size_t blocks;

	lp_pingpong__run(p, rounds, out);
	if (away) {
		while (!lp_pingpong__done(p))
			lp_recorder_drain(r, 1);
	} else {
		lp_pingpong__wait(p);
	}
	blocks = lp_pingpong__blocks(p);
	lp_recorder_drain(r, 0);
	return blocks;
}

/* Moves the calling thread (the reader) off `cpu`, if it may run on
 * another: true when it did, with its affinity in *saved to restore. */
static bool move_off(int cpu, cpu_set_t *saved)
{
	cpu_set_t away;

	if (cpu < 0 || sched_getaffinity(0, sizeof(*saved), saved) < 0)
		return false;
	away = *saved;
	CPU_CLR(cpu, &away);
	return CPU_COUNT(&away) > 0 && sched_setaffinity(0, sizeof(away), &away) == 0;
}

/* The cost of a blocked interval: the ping-pong's round trips with the
 * scheduler programs attached, against without, in alternate phases. */
static int calibrate_blocks(struct lp_recorder *r, int64_t ns)
{
	struct lp_pingpong *p = lp_pingpong__new();
	int64_t **off = NULL, **on = NULL;
	size_t *blocks = NULL, rounds = phase_rounds(r);
	int64_t end = lp_monotonic_ns() + ns;
	size_t pairs = 0, cap = 0;
	cpu_set_t saved;
	bool away;
	int rc = 0;

	if (!p) {
		lp_error_errno("cannot start the calibration threads");
		return -1;
	}
	away = move_off(lp_pingpong__cpu(p), &saved);
	while (pairs < 2 || lp_monotonic_ns() < end) {
		if (pairs == cap) {
			cap = cap ? 2 * cap : 32;
			off = lp_reallocarray(off, cap, sizeof(*off));
			on = lp_reallocarray(on, cap, sizeof(*on));
			blocks = lp_reallocarray(blocks, cap, sizeof(*blocks));
		}
		off[pairs] = lp_calloc(rounds, sizeof(**off));
		on[pairs] = lp_calloc(rounds, sizeof(**on));
		pairs++;
		run_phase(r, p, rounds, off[pairs - 1], away);
		if (lp_recorder_attach_sched(r) < 0) {
			rc = -1;
			break;
		}
		blocks[pairs - 1] = run_phase(r, p, rounds, on[pairs - 1], away);
		lp_recorder_detach_sched(r);
	}
	lp_pingpong__free(p);
	if (away)
		sched_setaffinity(0, sizeof(saved), &saved);
	if (rc == 0)
		r->have_block_cost = lp_cost__from_round_trips(off, on, blocks, pairs, rounds,
							       &r->block_cost) == 0;
	for (size_t i = 0; i < pairs; i++) {
		free(off[i]);
		free(on[i]);
	}
	free(off);
	free(on);
	free(blocks);
	return rc;
}

/* Before recording: lp-record's own process joins the pid set for as long
 * as it calibrates (its samples and intervals are dropped in lp_recorder_handle_sample);
 * afterwards the intervals it left in lp_off and the counters it moved are
 * cleared, so the recording starts clean. */
int lp_recorder_calibrate(struct lp_recorder *r)
{
	bool sample = r->opts.mode != LP_RECORD_OFF, block = r->opts.mode != LP_RECORD_CPU;
	int64_t each = r->opts.calibrate_ns / (sample + block);
	__u32 self = (__u32)getpid(), key;
	__u8 one = 1;
	int rc = 0, fd;

	if (r->opts.npids &&
	    bpf_map__update_elem(r->skel->maps.lp_pids, &self, sizeof(self), &one, sizeof(one),
				 BPF_ANY) < 0) {
		lp_error_errno("cannot add lp-record to the pid filter to calibrate");
		return -1;
	}
	r->calibrating = true;
	if (sample)
		rc = lp_recorder_calibrate_samples(r, each);
	if (rc == 0 && block)
		rc = calibrate_blocks(r, each);
	/* What the last phase sent after its last drain (the scheduler
	 * programs ran until lp_recorder_detach_sched) is the calibration's too: read and
	 * dropped now, or the recording would write it (lp-calibrate's
	 * intervals, and with -a every thread's of the last phase). */
	ring_buffer__consume(r->ring);
	r->calibrating = false;
	if (r->opts.npids)
		bpf_map__delete_elem(r->skel->maps.lp_pids, &self, sizeof(self), 0);
	fd = bpf_map__fd(r->skel->maps.lp_off);
	while (bpf_map_get_next_key(fd, NULL, &key) == 0 && bpf_map_delete_elem(fd, &key) == 0)
		;
	lp_counters__zero(bpf_map__fd(r->skel->maps.lp_counters), LP_CNT_NR);
	r->cal_time_ns = lp_monotonic_ns();
	r->self = (pid_t)self;
	return rc;
}

int lp_recorder_write_costs(struct lp_recorder *r)
{
	struct lp_attrs_buf a = { 0 };
	char buf[64];
	int rc = 0;

	if (r->have_sample_cost) {
		struct lp_cost c = { .time_ns = r->cal_time_ns, .what = "sample",
				     .ns = round(r->sample_cost.ns) };

		lp_attrs_buf__add(&a, "unwind", lp_recorder_call_graph_name(r->opts.call_graph));
		snprintf(buf, sizeof(buf), "%u", r->opts.freq);
		lp_attrs_buf__add(&a, "freq_hz", buf);
		snprintf(buf, sizeof(buf), "%.0f", round(r->sample_cost.sd_ns));
		lp_attrs_buf__add(&a, "sd_ns", buf);
		snprintf(buf, sizeof(buf), "%zu", r->sample_cost.n);
		lp_attrs_buf__add(&a, "n", buf);
		c.attrs = lp_attrs_buf__attrs(&a);
		rc = lp_writer__cost(r->w, &c);
	}
	if (rc == 0 && r->have_block_cost) {
		struct lp_cost c = { .time_ns = r->cal_time_ns, .what = "block",
				     .ns = round(r->block_cost.ns) };

		lp_attrs_buf__reset(&a);
		snprintf(buf, sizeof(buf), "%.0f", round(r->block_cost.sd_ns));
		lp_attrs_buf__add(&a, "sd_ns", buf);
		snprintf(buf, sizeof(buf), "%zu", r->block_cost.n);
		lp_attrs_buf__add(&a, "n", buf);
		lp_attrs_buf__add(&a, "how", "clock");
		c.attrs = lp_attrs_buf__attrs(&a);
		rc = lp_writer__cost(r->w, &c);
	}
	lp_attrs_buf__free(&a);
	return rc < 0 ? lp_recorder_write_failed(r) : 0;
}
