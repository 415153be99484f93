/* join.h - lp-join's work: samples gain the spans that enclose them on the
 * same host, pid and tid (start <= t < end), streaming, with memory bounded
 * by the out-of-order bound rather than by the input's length. */
#ifndef LP_JOIN_H
#define LP_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stream/stream.h"

struct lp_join_opts {
	/* How far behind the newest span end a sample may be and still be
	 * enclosed by a span not read yet (and how long spans are kept for
	 * samples that arrive late).  A span longer than this may miss the
	 * samples of its first part on live input. */
	int64_t max_delay_ns;
	bool all_spans;			/* every enclosing span, not the innermost */
	bool no_contents;			/* spans pass as they are (contents.h not run) */
	const char *const *probes;	/* join only spans of these probes; NULL: all */
	size_t nprobes;
	/* Held samples before lp-join stops reading samples and waits for
	 * spans (files) or, when spans do not come, releases the oldest
	 * unjoined (counted). */
	size_t max_held;
	enum lp_input_format samples_format;
	enum lp_input_format spans_format;
	const char *output;		/* NULL or "-": stdout */
};

struct lp_join_stats {
	uint64_t samples, joined, spans, unfinished, early, other;
	uint64_t untimed;			/* samples without a time */
	int64_t sample_min, sample_max;		/* time ranges, for a hint when */
	int64_t span_min, span_max;		/* nothing joined (clocks differ) */
};

/* Opens both inputs, then the output, and joins.  Returns 0, or -1 after a
 * read error or a failed output (already reported; EPIPE becomes SIGPIPE). */
int lp_join__run(const char *samples_path, const char *spans_path,
		 const struct lp_join_opts *opts, struct lp_join_stats *stats);

#endif
