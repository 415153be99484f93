/* perfmap.h - perf's map of a process's JIT code, /tmp/perf-PID.map (node
 * --perf-basic-prof, the JVM's perf-map-agent, ...): "START SIZE NAME", the
 * numbers in hex, a symbol a line, appended to as the JIT compiles.  One
 * reader for the symbolizer (a live process's) and for perf.data's reader
 * (a recorded one's, as perf script reads it). */
#ifndef LP_PERFMAP_H
#define LP_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>

struct lp_perfmap;

/* The map in file (the path to open: a process's own /tmp may be under
 * its root), read at its first look-up. */
struct lp_perfmap *lp_perfmap__new(const char *file);
void lp_perfmap__free(struct lp_perfmap *m);
/* Reads the file again when it changed (or first); whether it has any
 * symbol. */
bool lp_perfmap__load(struct lp_perfmap *m);
/* The name of the symbol holding addr, or NULL.  A miss reads the file
 * again when it changed: the JIT may have added the symbol since.  A
 * symbol of size 0 runs to the next one. */
const char *lp_perfmap__find(struct lp_perfmap *m, uint64_t addr);

#endif
