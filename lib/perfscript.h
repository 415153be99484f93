/* perfscript.h - `perf script` text as samples, read the way FlameGraph's
 * stackcollapse-perf.pl reads it (the corpus in shared/corpus pins down its
 * quirks).  Used by the stream reader; programs never call it directly. */
#ifndef LP_PERFSCRIPT_H
#define LP_PERFSCRIPT_H

#include <stddef.h>
#include "stream.h"

struct lp_perfscript;

struct lp_perfscript *lp_perfscript__new(struct lp_dict *dict);
void lp_perfscript__free(struct lp_perfscript *ps);
/* Feeds one line (no '\n').  Returns 1 when the line completed a sample,
 * stored in *out (valid until the next call); 0 when it did not; -1 when the
 * line is not understood: *why says why, and the caller warns and goes on
 * (stackcollapse-perf.pl skips such lines).  A sample ends at a blank line
 * only: one still open at the end of input is dropped, as the script does. */
int lp_perfscript__line(struct lp_perfscript *ps, const char *line, size_t len,
			struct lp_sample *out, const char **why);
/* Whether a first non-blank, non-comment line looks like perf script. */
int lp_perfscript__sniff(const char *line, size_t len);

#endif
