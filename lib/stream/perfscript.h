/* perfscript.h - `perf script` text as samples, read the way FlameGraph's
 * stackcollapse-perf.pl reads it (the corpus in shared/corpus pins down its
 * quirks): the codec lp_codec_perf (codec.h), and the script's clean-up of
 * names, which the folded formatter shares.  Programs read perf script
 * through the input layer (stream.h), never through this header. */
#ifndef LP_PERFSCRIPT_H
#define LP_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include "model/dict.h"
#include "stream/codec.h"

/* Reading is the codec lp_codec_perf (codec.h): a parser per input, with
 * the caller's options; a sample opts->carry holds goes on in it. */
/* Whether a first non-blank, non-comment line looks like perf script. */
int lp_perfscript__sniff(const char *line, size_t len);

/* The script's symbol clean-up of one frame name (';' to ':', argument
 * lists and quotes removed, Java's leading 'L' when java): dst holds n + 1
 * bytes; returns the new length.  The folded formatter uses it too. */
size_t lp_perfscript__tidy(char *dst, const char *src, size_t n, bool java);
/* Whether a module is a perf map of JIT code (/tmp/perf-PID.map). */
bool lp_perfscript__jit_module(const char *mod, size_t n);

#endif
