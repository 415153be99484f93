/* window.h - a profile of recent samples, for live use (lp-collapse --last,
 * --half-life): the last DUR of stream time, or every sample with a weight
 * that halves with each half-life of age.  Age is measured from the newest
 * sample's time, so a file gives the same view as the live stream did at
 * its end.
 *
 * --last keeps eight buckets, each an eighth of DUR, and the view is the
 * bucket of the newest sample with the seven before it: it spans between
 * 7/8 of DUR and DUR.  A sample older than that when it comes is dropped
 * and counted.  Memory: distinct folded stacks per bucket (--last), or
 * those whose decayed weight is not negligible (--half-life); never the
 * number of samples. */
#ifndef LP_WINDOW_H
#define LP_WINDOW_H

#include <stdint.h>
#include "stream/folded.h"
#include "model/profile.h"
#include "stream/stream.h"

struct lp_window_opts {
	int64_t last_ns;	/* > 0: the last DUR */
	int64_t half_life_ns;	/* > 0: decaying weights */
	const struct lp_folded_opts *folded;	/* how stacks are named */
};

struct lp_window;

struct lp_window *lp_window__new(const struct lp_window_opts *opts);
void lp_window__free(struct lp_window *w);
/* 0; -1 with *why when the sample has no time (folded input). */
int lp_window__add(struct lp_window *w, const struct lp_sample *s, const char **why);
/* Before the reader whose samples were added is freed: the aggregation
 * holds its stacks until then. */
void lp_window__flush(struct lp_window *w);
/* The view now, as a new profile (the caller frees it); flushes first. */
struct lp_profile *lp_window__view(struct lp_window *w);
/* The newest sample time seen; LP_TIME_NONE before the first. */
int64_t lp_window__latest(const struct lp_window *w);
/* Samples dropped for being older than the window when they came. */
uint64_t lp_window__dropped(const struct lp_window *w);

#endif
