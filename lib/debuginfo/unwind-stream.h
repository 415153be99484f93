/* unwind-stream.h - the copied user stacks a stream carries (a perf record
 * --call-graph dwarf recording read by lp-cat: formats/lp-stream.md,
 * "Copied user stacks"), unwound after the processes are gone: their
 * modules from the stream's map records (never /proc: the pid may be
 * another process's now), the files opened by path and checked by
 * build-id, the unwinding lp_unwinder's (unwind.h).  lp-symbolize's. */
#ifndef LP_UNWIND_STREAM_H
#define LP_UNWIND_STREAM_H

#include <stdint.h>

#include "model/dict.h"
#include "stream/stackcopy.h"
#include "stream/stream.h"

struct lp_stream_unwinder;

struct lp_stream_unwinder *lp_stream_unwinder__new(void);
void lp_stream_unwinder__free(struct lp_stream_unwinder *u);

/* A map record: pid's maps from now on have it, over what it overlaps. */
void lp_stream_unwinder__map(struct lp_stream_unwinder *u, const struct lp_maprec *m);

/* A sample carrying a copy: its user frames replaced by the copy unwound
 * (raw frames, as lp-cat makes them, in dict; outermost first, the kernel's
 * kept above them), its attributes by attrs' text: the sample's without
 * the copy, with unwind=dwarf, and truncated=1 and why= when the stack
 * does not reach the thread's outermost frame.  1: done; 0: no copy (the
 * sample is as it was); -1: a malformed copy, *why says how. */
int lp_stream_unwinder__sample(struct lp_stream_unwinder *u, struct lp_dict *dict,
			       struct lp_sample *s, struct lp_attrs_buf *attrs, const char **why);

struct lp_stream_unwind_stats {
	uint64_t samples;	/* with a copy */
	uint64_t truncated;	/* the copy ended first (end-of-copy, max-frames) */
	uint64_t failed;	/* no module or no CFI for a pc: a file gone, or another build */
	const char *why;	/* the most recent failure's reason */
};
void lp_stream_unwinder__stats(const struct lp_stream_unwinder *u,
			       struct lp_stream_unwind_stats *st);

#endif
