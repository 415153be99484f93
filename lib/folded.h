/* folded.h - folded stacks ("root;caller;leaf COUNT"), as flamegraph.pl,
 * difffolded.pl and stackcollapse-*.pl exchange them: reading a line into a
 * sample, and formatting a sample's stack as stackcollapse-perf.pl does. */
#ifndef LP_FOLDED_H
#define LP_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include "stream.h"

/* Parses one folded line.  1: a sample in *out (frames of kind user, weight
 * the count, which may be fractional); 0: a blank or '#' comment line;
 * -1: malformed, *why says how. */
int lp_folded__parse(struct lp_dict *dict, const char *line, size_t len,
		     struct lp_sample *out, const char **why);
/* Whether a first non-blank, non-comment line looks like folded stacks. */
int lp_folded__sniff(const char *line, size_t len);

#endif
