/* inputs.h - a filter's FILE operands: a lone "-" (stdin) when there are
 * none, and every one opened before the filter writes anything, so that a
 * missing file fails the run with no output written. */
#ifndef LP_INPUTS_H
#define LP_INPUTS_H

#include "stream/stream.h"

/* The operands argv[first..argc), or a lone "-" when there are none. */
char **lp_input_paths(int argc, char **argv, int first, int *n);

/* Opens paths[0..n) as fmt, with opts (NULL: none; lp_reader__open_opts).
 * NULL when one cannot be opened (the reader has said why; the ones
 * already open are freed). */
struct lp_reader **lp_open_inputs(char **paths, int n, enum lp_input_format fmt,
				  const struct lp_input_opts *opts);
void lp_free_inputs(struct lp_reader **readers, int n);

#endif
