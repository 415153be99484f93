/* pprof.h - samples as a pprof profile (google/pprof's profile.proto,
 * gzip-compressed), the format go tool pprof, Grafana Pyroscope, Polar
 * Signals and speedscope read.  Built from the stream's frames, not from
 * folded text (lib/output/proftab.h): a frame's module becomes a mapping,
 * its file:line a line, and inlined frames become extra lines of their
 * caller's location, as pprof models inlining.  Two values a sample: the
 * count of samples summed into it, and their weight (the event's unit);
 * pid and comm as labels. */
#ifndef LP_PPROF_H
#define LP_PPROF_H

#include <stdio.h>
#include "output/proftab.h"

/* Writes the whole profile, gzip-compressed (the tables gain the strings
 * pprof names its values with).  0, or -1 when out failed. */
int lp_pprof__write(struct lp_proftab *t, FILE *out);

#endif
