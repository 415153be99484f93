/* cost.h - measuring what a producer adds to the threads it samples, on the
 * machine where it runs (formats/lp-stream.md, "What lp costs").  No BPF
 * here: the producer arms its own programs around these measurements.
 *
 * A sample: a spinning thread (lp_spin) reads CLOCK_MONOTONIC in a tight
 * loop and keeps the gaps longer than the loop's own; the producer samples
 * it and gives the samples' times (bpf_ktime_get_ns, the same clock) to
 * lp_spin__cost, which takes each gap holding a sample, less the loop's
 * baseline gap, as that sample's cost.
 *
 *	s = lp_spin__start(300 ms, stack bytes);
 *	... sample lp_spin__tid(s) until lp_spin__done(s), keep the times ...
 *	lp_spin__join(s);
 *	lp_spin__cost(s, times, n, &stats);
 *	lp_spin__free(s);
 *
 * A blocked interval: two threads on one CPU pass a byte back and forth
 * through pipes (lp_pingpong), counting the times they block.  The producer
 * times rounds with its tracing programs attached and detached, alternately,
 * and lp_cost__from_round_trips divides the difference by the blocks. */
#ifndef LP_COST_H
#define LP_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One kind of hit's cost: a robust mean (the mean of the middle 80%), a
 * robust standard deviation (1.4826 x the median absolute deviation), and
 * how many hits were measured. */
struct lp_cost_stats {
	double ns;
	double sd_ns;
	size_t n;
};

/* The name of the calibration's threads (lp-record's own). */
#define LP_CAL_THREAD_NAME "lp-calibrate"

/* Frames between the spinning loop and its thread's start: a sample's
 * frame-pointer walk goes through this many, about an application's. */
#define LP_SPIN_DEPTH 16

struct lp_spin;

/* Starts the spinning thread for duration_ns, with stack_bytes of its own
 * stack above the spinning frame (what a DWARF sample copies); returns once
 * it spins and its tid is known.  NULL with errno set. */
struct lp_spin *lp_spin__start(int64_t duration_ns, uint32_t stack_bytes);
pid_t lp_spin__tid(const struct lp_spin *s);
bool lp_spin__done(const struct lp_spin *s);
void lp_spin__join(struct lp_spin *s);
/* After lp_spin__join: the cost of the samples taken at times[0..n) (those
 * of the spinning thread), leaving out those in a gap where the thread was
 * switched out.  -1 when no sample fell in a gap. */
int lp_spin__cost(const struct lp_spin *s, const uint64_t *times, size_t n,
		  struct lp_cost_stats *out);
void lp_spin__free(struct lp_spin *s);

struct lp_pingpong;

/* Two threads on one CPU, idle until lp_pingpong__run; NULL with errno. */
struct lp_pingpong *lp_pingpong__new(void);
/* The CPU they are pinned to, -1 when they could not be pinned. */
int lp_pingpong__cpu(const struct lp_pingpong *p);
/* Starts `rounds` round trips (at most LP_PINGPONG_MAX_ROUNDS), each timed
 * into out[]; returns at once: lp_pingpong__done says when they are over,
 * lp_pingpong__wait blocks until then. */
#define LP_PINGPONG_MAX_ROUNDS 4096
void lp_pingpong__run(struct lp_pingpong *p, size_t rounds, int64_t *out);
bool lp_pingpong__done(const struct lp_pingpong *p);
void lp_pingpong__wait(struct lp_pingpong *p);
/* Once done: how many times the two threads blocked in the run (their
 * voluntary context switches, within one or two). */
size_t lp_pingpong__blocks(const struct lp_pingpong *p);
void lp_pingpong__free(struct lp_pingpong *p);

/* The cost of one blocked interval from round trips timed in pairs of
 * phases, one with the tracing detached (off[k][..]), one attached
 * (on[k][..], in which the threads blocked blocks_on[k] times), each of
 * `rounds` round trips: the median over the pairs of the difference of
 * their medians over the blocks in a round trip.  -1 when there is no
 * pair. */
int lp_cost__from_round_trips(int64_t *const *off, int64_t *const *on, const size_t *blocks_on,
			      size_t pairs, size_t rounds, struct lp_cost_stats *out);

#endif
