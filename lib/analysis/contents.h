/* contents.h - what happened inside a span on its thread: the point events
 * (line probes, USDT points) and the nested spans (child calls) between its
 * start and end, written as attributes of the span (formats/lp-stream.md,
 * "What happened inside a span"):
 *
 *	at.PROBE=N		N point events of PROBE
 *	calls.PROBE=N		N nested calls of PROBE (any depth)
 *	calls_ns.PROBE=NS	their time: the outermost ones' durations less lp_ns
 *	first.PROBE.KEY=VALUE	the first event's or call's captured values
 *
 * lp-join writes them (lp_contents), lp-split reads them (lp_contents__key).
 *
 * A tracer writes a span when it ends, after everything that happened in
 * it on its thread: so the events and spans of a thread wait in a list, in
 * the order they came, until a span that holds them arrives and takes them
 * (its own summary then waits in their place, for its caller).  Memory:
 * what no span still to come can hold is forgotten (lp_contents__prune). */
#ifndef LP_CONTENTS_H
#define LP_CONTENTS_H

#include <stddef.h>
#include <stdint.h>

#include "stream/attrs.h"

/* The prefixes of the keys, for readers that enumerate them. */
#define LP_CONTENTS_AT "at."
#define LP_CONTENTS_CALLS "calls."
#define LP_CONTENTS_CALLS_NS "calls_ns."
#define LP_CONTENTS_FIRST "first."

struct lp_contents;

struct lp_contents *lp_contents__new(void);
void lp_contents__free(struct lp_contents *in);

/* A point event, read from the tracer's stream; host: a hash of the
 * stream's host= (0 when not known). */
void lp_contents__event(struct lp_contents *in, uint64_t host, const struct lp_event *ev);

/* A finished span: its attributes, less any of the keys above it already
 * carried (a stream joined before), plus what happened inside it, into
 * *out.  The span then waits for its caller as one of its calls. */
void lp_contents__span(struct lp_contents *in, uint64_t host, const struct lp_span *sp,
		     struct lp_attrs_buf *out);

/* Forgets, on each thread, what came before mark less the longest span
 * seen on that thread: a span still to come that holds it would be longer
 * (the caller's mark: the newest span end read less the out-of-order
 * bound).  INT64_MAX forgets everything. */
void lp_contents__prune(struct lp_contents *in, int64_t mark);

/* Events and spans waiting for a span that holds them. */
size_t lp_contents__held(const struct lp_contents *in);

/* The key PREFIX PROBE (prefix one of the above, probe as a tracer names
 * it: escaped as a key needs, '=' included) NUL-terminated in *buf
 * (lp_grow: NULL and 0 at first); returns its length. */
size_t lp_contents__key(const char *prefix, const char *probe, char **buf, size_t *cap);

/* Whether a key (klen bytes) is one of those above. */
bool lp_contents__is_key(const char *key, size_t klen);

#endif
