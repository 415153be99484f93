/* heatmap.h - flamescope's sub-second offset heatmap: samples counted by
 * the second they fall in (a column per second from the first sample) and
 * by their offset within that second (a row per 1/rows of a second), so
 * periodic work, bursts and stalls show as patterns a flame graph averages
 * away.  Every cell names its time range in the form lp-split --time takes
 * (@FROM-@TO, absolute stream times: exact whatever lp-split counts its
 * relative times from), so a pattern seen becomes a flame graph of just
 * that range.  Memory grows with the time covered (rows counters a second,
 * at most a day of seconds), not with the samples.
 *
 * Column 0 starts at the first sample's time, moved back by whole seconds
 * when a sample read later is earlier (several CPUs' rings drain out of
 * order): the grid's phase is the first sample's, and the earliest sample
 * is in column 0. */
#ifndef LP_HEATMAP_H
#define LP_HEATMAP_H

#include <stdio.h>
#include "stream/stream.h"

#define LP_HEATMAP_ROWS 50	/* the default: 20 ms cells, as flamescope's */

struct lp_heatmap;

/* rows: offset buckets per second (1..1000). */
struct lp_heatmap *lp_heatmap__new(int rows);
void lp_heatmap__free(struct lp_heatmap *h);
/* Counts one sample.  0; -1 with *why set (valid until the next call) when
 * the sample has no time (folded input, perf script without times), or
 * when the samples would span more than a day (streams of different boots
 * or hosts concatenated), or its time is beyond 2^61 ns. */
int lp_heatmap__add(struct lp_heatmap *h, const struct lp_sample *s, const char **why);
/* An interactive SVG: cells shaded by count, each with a tooltip naming
 * its second, its offset range, its count and its lp-split --time range.
 * An empty heatmap gives an SVG saying so.  0, or -1 when out failed. */
int lp_heatmap__write_svg(struct lp_heatmap *h, FILE *out, const char *title);
/* The same as text: a header line "second offset_ms samples time", then one
 * line per non-empty cell, by second then offset, time as @FROM-@TO for
 * lp-split --time ("-" for a cell before time 0).  0, or -1 when out
 * failed. */
int lp_heatmap__write_tsv(struct lp_heatmap *h, FILE *out);

#endif
