/* quantile.h - a streaming quantile sketch with a relative error bound, over
 * all values or over a sliding window of stream time.
 *
 * Values fall into logarithmic buckets [g^(i-1), g^i) with
 * g = (1 + a) / (1 - a); a bucket answers with 2 g^i / (g + 1), which is
 * within a relative error a of every value in it (the DDSketch scheme).  So a
 * quantile answered by the sketch is within a of the exact nearest-rank
 * quantile of the values it holds.  Memory is fixed: about
 * ln(max/min) / ln(g) buckets per slice (some 1,400 for 1 ns..1000 s at 1%).
 *
 * A windowed sketch keeps SLICES slices, each covering window/SLICES of
 * stream time; it holds the values whose time falls in the newest SLICES
 * slices, so between (SLICES-1)/SLICES of the window and all of it. */
#ifndef LP_QUANTILE_H
#define LP_QUANTILE_H

#include <stdint.h>

#define LP_QUANTILE_SLICES 8

struct lp_quantile;

/* accuracy: the relative error bound a (e.g. 0.01); window_ns 0: all values. */
struct lp_quantile *lp_quantile__new(double accuracy, int64_t window_ns);
void lp_quantile__free(struct lp_quantile *q);
/* Adds a value (>= 0; 0 counts exactly) seen at stream time t (ignored
 * without a window).  Times may go backwards a little: a value older than
 * the window is dropped. */
void lp_quantile__add(struct lp_quantile *q, double value, int64_t t);
uint64_t lp_quantile__count(const struct lp_quantile *q);
/* The nearest-rank p-quantile (0 < p <= 1) of the values held, within the
 * relative error bound; NAN when the sketch is empty. */
double lp_quantile__get(const struct lp_quantile *q, double p);
double lp_quantile__accuracy(const struct lp_quantile *q);

#endif
