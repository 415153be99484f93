/* keyed.h - requests that are not one call (lp-trace's key: probes): a
 * span from a start probe to an end probe matched by a key (a pointer the
 * start returns or takes, the end takes: the request object), across
 * threads, and the callbacks that work for a request marked with its key.
 *
 *   key:NAME=START(KEY)..END(KEY)   a span NAME per key, START's start to
 *                                   END's end, key=KEY, end_tid= END's thread
 *   key:NAME@FUNC(KEY)              FUNC's spans carry key.NAME=KEY: the
 *                                   thread works for that request inside
 *
 * KEY is ret (the start's return value), an argument's name, a member
 * read through one (r->conn, as lp-trace reads any argument's) or
 * arg0..arg5.
 * The probes themselves are ordinary function probes (their own spans are
 * written too); this module only sees their records as lp-trace writes
 * them and adds what the keys make.  Keys are compared as numbers when
 * they are numbers (a pointer DWARF types and one it does not: 0x1f and
 * 31 are the same), per process; an end or a callback is the newest
 * request of its key begun before it (an object freed and made again by
 * another thread before the free's record came: two open under one key).
 * Memory is bounded: at most max_open requests open; a start beyond that
 * evicts the oldest (counted, written as lost keyed-evicted). */
#ifndef LP_KEYED_H
#define LP_KEYED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/attrs.h"
#include "stream/lptext.h"

struct lp_keyed;

/* The parts of a key: probe: the probes to trace, in order (each an
 * ordinary probe spec's text: "new_request", "free_request(r)",
 * "on_read(r)"), their number in *nprobes.  NULL after a message naming
 * the spec. */
struct lp_keyed *lp_keyed__new(size_t max_open);
void lp_keyed__free(struct lp_keyed *k);
bool lp_keyed__is_spec(const char *text);
/* Adds a key: spec; its probes' texts (one or two, owned by k) go in
 * probes[], their number returned; -1 after a message.  Of two, the
 * second is the start: to attach after every other probe (the end and
 * the callbacks), so that a request seen to start has all of them live. */
int lp_keyed__add(struct lp_keyed *k, const char *text, const char *probes[2]);

/* A record lp-trace is about to write: a span (end_ns >= start_ns) or a
 * point event (end_ns == start_ns) of the probe given as spec (the text
 * lp_keyed__add returned), its attributes in attrs.  A callback's key is
 * added to attrs (key.NAME=V); an end's request span is written to w
 * first.  -1 when writing failed. */
int lp_keyed__record(struct lp_keyed *k, const char *spec, int32_t pid, int32_t tid,
		     int64_t start_ns, int64_t end_ns, struct lp_attrs_buf *attrs,
		     struct lp_writer *w);

/* At the end: the requests still open as spans without an end, the
 * evicted and unmatched as lost records at time now_ns.  -1 when writing
 * failed. */
int lp_keyed__finish(struct lp_keyed *k, struct lp_writer *w, int64_t now_ns);

/* For lp-trace's summary: requests written, still open, evicted, ends
 * without a start. */
void lp_keyed__counts(const struct lp_keyed *k, uint64_t *spans, uint64_t *open,
		      uint64_t *evicted, uint64_t *unmatched);

#endif
