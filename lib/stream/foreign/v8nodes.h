/* v8nodes.h - one V8 CPU profile (a tree of nodes, the node of each sample,
 * the microseconds between samples) as lp samples: what a .cpuprofile file
 * holds (cpuprofile.c) and what Chrome's trace events carry in Profile,
 * ProfileChunk and CpuProfile events (chrometrace.c).  The mapping:
 *   - a sample's time is V8's clock (microseconds of CLOCK_MONOTONIC on
 *     Linux) made nanoseconds: the start plus the deltas up to it;
 *   - its weight the time to the next sample (the last one's: to the end
 *     when the profile has one, else its own delta), its event "wall";
 *   - its stack the node's path from the root node ("(root)"), which is
 *     left out; a frame is the function's name ("(anonymous)" when it has
 *     none), its module the script's URL, its line the URL and the 1-based
 *     line; JavaScript frames (a URL, or the codeType "JS") are 'j', V8's
 *     own 'u'.
 * Nodes name their parent ("parent") or their children ("children"), or
 * hang under a "head" (the oldest form); every id they use is checked. */
#ifndef LP_V8NODES_H
#define LP_V8NODES_H

#include <stdbool.h>
#include <stdint.h>

#include "model/dict.h"

struct json_t;
struct lp_v8_profile;

struct lp_v8_profile *lp_v8__new(struct lp_dict *dict);
void lp_v8__free(struct lp_v8_profile *p);

/* Adds the nodes of an array of {id, callFrame, parent?, children?}: NULL,
 * or why not (a node without an id). */
const char *lp_v8__nodes(struct lp_v8_profile *p, struct json_t *nodes);
/* Adds the nodes of the oldest form: a tree under head, children inline. */
void lp_v8__tree(struct lp_v8_profile *p, struct json_t *head);
/* Adds samples (node ids) and their timeDeltas (microseconds; NULL: none,
 * all 0): NULL, or why not (they do not match). */
const char *lp_v8__samples(struct lp_v8_profile *p, struct json_t *samples,
			   struct json_t *deltas);
/* Once every node and sample is in: the parents linked and checked, the
 * clock started at start_us; has_end: end_us ends the last sample.  NULL,
 * or why the profile is not well-formed. */
const char *lp_v8__link(struct lp_v8_profile *p, double start_us, bool has_end, double end_us);
/* The next sample's time, weight, event and stack into *s, the rest of *s
 * untouched: 1; 0 at the end; -1 with *why. */
int lp_v8__next(struct lp_v8_profile *p, struct lp_sample *s, const char **why);

#endif
