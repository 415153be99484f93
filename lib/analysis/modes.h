/* modes.h - the modes of a set of durations, and the valleys between them:
 * where a latency distribution separates into a fast and a slow population
 * (lp-split --auto), and whether a given cut point falls inside one.
 *
 * A kernel density estimate over ln(duration): Gaussian kernel, bandwidth by
 * Silverman's robust rule made adaptive (wider in sparse regions), binned on
 * a grid (linear binning, then truncated convolutions: O(n + grid * kernel)).  Local maxima are modes;
 * adjacent modes separated by a valley that is not significant are merged,
 * shallowest first, until every valley left is significant (see modes.c for
 * the rule and why).  Pure computation: no I/O. */
#ifndef LP_MODES_H
#define LP_MODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A mode counts only with this share of the durations and this many. */
#define LP_MODES_MIN_MASS 0.005
#define LP_MODES_MIN_COUNT 20
/* A valley is significant when its density is at most this fraction of the
 * smaller neighbouring peak's height (and the dip is beyond noise). */
#define LP_MODES_VALLEY_RATIO 0.5
/* A cut falls inside a mode when the density there is at least this
 * fraction of the mode's peak height: within its half-height width. */
#define LP_MODES_INSIDE_RATIO 0.5

struct lp_mode {
	int64_t at_ns;		/* the peak */
	double height;		/* density there, per unit of ln(ns) */
	int64_t lo_ns, hi_ns;	/* where the density around the peak falls to half its height */
	size_t count;		/* durations d with valley below < d <= valley above */
	double mass;		/* count / n */
};

struct lp_valley {
	int64_t at_ns;		/* the density's minimum between two modes */
	double depth;		/* density there / the smaller neighbouring peak's height */
	size_t below;		/* durations <= at_ns */
};

struct lp_modes {
	size_t n;			/* durations */
	double bandwidth;		/* the kernel's standard deviation, in ln(ns) */
	size_t nmodes;			/* 0 only without durations */
	struct lp_mode *modes;		/* ascending */
	struct lp_valley *valleys;	/* nmodes - 1: [i] lies between modes i and i + 1 */
	/* The density of ln(duration) on the grid lo + i * step, i < ngrid. */
	size_t ngrid;
	double lo, step;
	double *density;
	double *lambda;			/* the kernel's width there, in bandwidths */
	size_t *cum;			/* durations <= the grid point's duration (rounded) */
};

/* The modes of n durations (ns, in any order; negative ones count as 0).
 * Never NULL. */
struct lp_modes *lp_modes__new(const int64_t *durs, size_t n);
void lp_modes__free(struct lp_modes *m);

/* The density at a duration (per unit of ln(ns)); 0 outside the grid. */
double lp_modes__density(const struct lp_modes *m, double ns);

/* --auto's cut: the valley just below the slowest mode, the one that
 * separates the slowest population from the rest.  Its index in
 * m->valleys, or -1 when there is one mode (no valley). */
int lp_modes__auto_cut(const struct lp_modes *m);

/* Whether a cut at ns falls inside a mode: the density there is at least
 * LP_MODES_INSIDE_RATIO of the height of the mode whose span (between its
 * valleys) holds it.  Returns that mode's index, or -1.  *valley is the
 * valley nearest the cut (in ln(ns)), or -1 when there is none. */
int lp_modes__inside(const struct lp_modes *m, double ns, int *valley);

/* A histogram of durations with log-spaced rows whose edges are round
 * numbers (1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.4, 8 per decade, or coarser
 * ladders, or 20 a decade), the finest ladder that covers [min, max] in at
 * most max_rows rows.  Row i holds edges[i] <= d < edges[i + 1]. */
struct lp_histogram {
	size_t nrows;
	int64_t *edges;		/* nrows + 1 */
	size_t *counts;		/* nrows */
	unsigned per_decade;	/* rows a decade */
};

/* From n > 0 durations, in any order. */
void lp_histogram__init(struct lp_histogram *h, const int64_t *durs, size_t n, size_t max_rows);
void lp_histogram__free(struct lp_histogram *h);

#endif
