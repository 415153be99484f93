/* pprof.h - samples as a pprof profile (google/pprof's profile.proto,
 * gzip-compressed), the format go tool pprof, Grafana Pyroscope, Polar
 * Signals and speedscope read.  Built from the stream's frames, not from
 * folded text: a frame's module becomes a mapping, its file:line a line,
 * and inlined frames become extra lines of their caller's location, as
 * pprof models inlining.  Samples are summed by (stack, pid, comm) as they
 * arrive, so memory grows with distinct stacks, not with the input. */
#ifndef LP_PPROF_H
#define LP_PPROF_H

#include <stdio.h>
#include "stream/stream.h"

struct lp_pprof;

struct lp_pprof *lp_pprof__new(void);
void lp_pprof__free(struct lp_pprof *p);
/* A header: its event and period name the second sample value. */
void lp_pprof__header(struct lp_pprof *p, const struct lp_header *h);
/* Adds one sample; what it needs of its frames is copied. */
void lp_pprof__add(struct lp_pprof *p, const struct lp_sample *s);
/* Writes the whole profile, gzip-compressed.  0, or -1 when out failed. */
int lp_pprof__write(struct lp_pprof *p, FILE *out);

#endif
