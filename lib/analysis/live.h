/* live.h - lp-serve's views of streams still being written: the recent
 * samples kept in a bounded ring, and each probe's recent spans, from
 * which every snapshot is computed afresh as one JSON document (what the
 * page draws: formats/lp-serve.md): the flame graph and the hottest
 * functions and stacks over a sliding window or with weights halving
 * every half-life, the sub-second heatmap of the last minute, and per
 * probe its latency histogram, percentiles and cut (a nearest-rank
 * percentile or a threshold, slow strictly above it, as lp-split cuts),
 * with the flame graphs of the samples joined to its slow and its fast
 * spans (lp-join's span=).
 *
 * Settings change the view of what is kept, not what is kept: a longer
 * window shows the past at once, within the ring's bounds.  Memory is
 * bounded by those (samples and spans kept), never by the input's length.
 * Not thread-safe: the caller locks (lib/analysis/feed.h). */
#ifndef LP_LIVE_H
#define LP_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/record.h"

enum lp_live_mode {
	LP_LIVE_WINDOW,		/* the last window_ns */
	LP_LIVE_HALF_LIFE,	/* every sample kept, weighted 2^(-age / half_life_ns) */
};

struct lp_live_opts {
	enum lp_live_mode mode;
	int64_t window_ns;
	int64_t half_life_ns;
	size_t keep_samples;	/* the ring's size; 0: LP_LIVE_KEEP */
	const char *title;
};

#define LP_LIVE_KEEP 262144
#define LP_LIVE_MAX_PROBES 64

struct lp_live;

struct lp_live *lp_live__new(const struct lp_live_opts *o);
void lp_live__free(struct lp_live *l);

/* One record of input (lp_feed_fn's): samples (placed by arrival when
 * they have no time), spans, probe records (which probes are attached now,
 * by their spec=) and headers (the input's host=); the rest is not
 * shown. */
void lp_live__record(struct lp_live *l, int input, const struct lp_record *rec,
		     int64_t arrival_ns);

/* A setting from the page, KEY=VALUE: mode (window, half-life), window,
 * half_life (durations), host (the inputs whose header names it alone;
 * empty: all, merged), probe with percentile (0 < P < 100) or threshold
 * (a duration): that probe's cut.  0, or -1 with *why set. */
int lp_live__set(struct lp_live *l, const char *key, const char *value, const char *probe,
		 const char **why);
/* Whether lp_live__set would take it, changing nothing: 0, or -1 with
 * *why set. */
int lp_live__check(struct lp_live *l, const char *key, const char *value, const char *probe,
		   const char **why);

/* What the snapshot says beside the views. */
struct lp_live_extra {
	uint64_t lost;
	int inputs, inputs_left;
	bool failed;
	bool control;		/* lp-serve steers producers */
};

/* Writes the snapshot of the view ending at the newest time seen (or now,
 * for inputs without times) as one line of JSON.  0, or -1 when out failed. */
int lp_live__snapshot(struct lp_live *l, FILE *out, const struct lp_live_extra *x);

/* The flame graph of the samples kept whose time is in [from, to), as the
 * snapshot's "flame" (a heatmap range).  0, or -1 when out failed. */
int lp_live__range(struct lp_live *l, FILE *out, int64_t from, int64_t to);

#endif
