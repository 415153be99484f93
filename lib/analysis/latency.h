/* latency.h - span durations per probe: exact nearest-rank quantiles as a
 * TSV table, or log2 histograms like bcc's funclatency.
 *
 * Exact quantiles are global by nature: every finished span's duration is
 * kept (8 bytes each, in one int64 array per probe) until the end of input.
 * Unfinished spans (end unknown) are counted apart, never in the figures. */
#ifndef LP_LATENCY_H
#define LP_LATENCY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "stream/stream.h"

struct lp_latency;

/* raw: durations as measured; else less each span's lp_ns=, the cost of
 * lp-trace's own probes inside it (formats/lp-stream.md, "What lp costs"). */
struct lp_latency *lp_latency__new(bool raw);
void lp_latency__free(struct lp_latency *l);
/* 0; 1 when the span is unfinished (counted, not measured); -1 when it ends
 * before it starts (*why says so; the caller reports it as bad input). */
int lp_latency__add(struct lp_latency *l, const struct lp_span *span, const char **why);
/* Nearest-rank quantile: the smallest duration d such that at least pct% of
 * the durations are <= d, i.e. the ceil(pct/100 * n)-th smallest (1-based). */
int64_t lp_latency__quantile(const int64_t *sorted, size_t n, unsigned pct);

/* "probe\tcount\tmin_ns\tp50_ns\tp90_ns\tp99_ns\tmax_ns" then one row per
 * probe, ordered by name (bytewise); a probe whose spans are all unfinished
 * has count 0 and "-" figures.  Unfinished spans are reported on stderr,
 * one note per probe that has some.  Returns 0, or -1 when out failed. */
int lp_latency__write_table(struct lp_latency *l, FILE *out);
/* One log2 histogram per probe (funclatency's layout), in nsecs, usecs or
 * msecs after the probe's largest duration. */
int lp_latency__write_histograms(struct lp_latency *l, FILE *out);
/* Total unfinished spans seen. */
uint64_t lp_latency__unfinished(const struct lp_latency *l);

#endif
