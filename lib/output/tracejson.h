/* tracejson.h - records as Chrome trace-event JSON (the JSON Object Format
 * that chrome://tracing, Perfetto's UI and catapult load):
 *
 *   span    -> a complete event, "ph":"X", ts and dur in microseconds (ns
 *              kept as three decimals), args = the captured values and the
 *              nesting depth; an unfinished span -> "ph":"B" with no end
 *   sample  -> an instant event on its thread ("ph":"i","s":"t") named after
 *              its leaf frame, "sf" pointing at its stack in "stackFrames",
 *              args = weight, cpu, event and the sample's attributes
 *   event   -> an instant event on its thread, args = its values
 *   lost    -> a global instant event "lost WHAT" with the count
 *   a thread's comm -> one "thread_name" metadata event
 *
 * Events are written as records arrive; memory holds only the stack-frame
 * tree (one node per distinct call-path prefix) and the set of threads
 * already named.  Timestamps are the stream's own (CLOCK_MONOTONIC). */
#ifndef LP_TRACEJSON_H
#define LP_TRACEJSON_H

#include <stdint.h>
#include <stdio.h>
#include "stream/stream.h"

struct lp_tracejson;

struct lp_tracejson *lp_tracejson__new(FILE *out);
/* Writes the events of one record (headers feed "otherData"; frame, stack
 * and unknown records write nothing).  Returns 0, or -1 when out failed. */
int lp_tracejson__record(struct lp_tracejson *t, const struct lp_record *rec);
/* Closes the document: the stack-frame tree, metadata.  Samples without a
 * timestamp (folded input) cannot sit on a timeline: they are left out and
 * counted here, with a note on stderr.  Returns 0, or -1 when out failed. */
int lp_tracejson__finish(struct lp_tracejson *t);
uint64_t lp_tracejson__untimed(const struct lp_tracejson *t);
void lp_tracejson__free(struct lp_tracejson *t);

#endif
