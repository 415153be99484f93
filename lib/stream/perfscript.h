/* perfscript.h - `perf script` text as samples, read the way FlameGraph's
 * stackcollapse-perf.pl reads it (the corpus in shared/corpus pins down its
 * quirks).  Used by the stream reader; programs never call it directly. */
#ifndef LP_PERFSCRIPT_H
#define LP_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include "stream/stream.h"

struct lp_perfscript;

/* What stackcollapse-perf.pl decides while reading, not while printing. */
struct lp_perfscript_opts {
	bool srcline;		/* --srcline: the line after each frame line is
				 * its source line (perf script -F+srcline) */
	bool inlines;		/* --inline: frames expanded through the
				 * binaries' DWARF, as addr2line -i does */
	bool context;		/* --context: with inlines, func:file:line */
	bool carry;		/* a sample left open at the end of one input
				 * goes on in the next parser made, as when
				 * the script reads its files as one stream */
	const char *event_filter;	/* NULL: every event; "": only the
				 * first event seen (the script's default);
				 * else only that event (--event-filter) */
};

/* Options for the parsers created from now on (the stream reader creates
 * them); the default is all zero: every event, no source lines. */
void lp_perfscript__set_default_opts(const struct lp_perfscript_opts *o);

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

/* The script's symbol clean-up of one frame name (';' to ':', argument
 * lists and quotes removed, Java's leading 'L' when java): dst holds n + 1
 * bytes; returns the new length.  The folded formatter uses it too. */
size_t lp_perfscript__tidy(char *dst, const char *src, size_t n, bool java);
/* Whether a module is a perf map of JIT code (/tmp/perf-PID.map). */
bool lp_perfscript__jit_module(const char *mod, size_t n);

#endif
