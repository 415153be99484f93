/* report.h - lp-report's work: one labelled stream (lp-split --label) made
 * into the data of one page (lib/output/reportpage.h): the deciding
 * probe's latency distribution with its cuts and modes, each group's
 * counts and times, a flame graph per group, the differential one and
 * lp-diff's ranked table of the slowest group against the fastest, and
 * what lp-split said (its split records: formats/lp-stream.md).
 *
 * The stream is read twice (the diff reads it again): a file, not a pipe. */
#ifndef LP_REPORT_H
#define LP_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "stream/stream.h"

struct lp_report_opts {
	const char *title;	/* NULL: from the probe and the groups */
	const char *source;	/* the input's name, as the page shows it */
	/* The diff's sides (lp-diff's A and B); NULL: the fastest band
	 * group and the slowest. */
	const char *group_a, *group_b;
	/* Frames under this share of a flame graph's total are left out (their
	 * time stays in their caller's); LP_REPORT_MIN_SHARE by default, 0
	 * keeps every frame. */
	double min_share;
	size_t top;		/* rows of the ranked table; 0: 20 */
	enum lp_input_format format;
};

#define LP_REPORT_MIN_SHARE 0.0002

/* Reads the labelled stream at path and writes the page to out.  0, or -1
 * after an error already reported (the input's, naming where). */
int lp_report__write(const char *path, FILE *out, const struct lp_report_opts *o);

#endif
