/* speedscope.h - an aggregated profile as a speedscope JSON file
 * (https://www.speedscope.app/file-format-schema.json): one shared frame
 * table and one "sampled" profile whose samples are the profile's distinct
 * stacks, in folded order, with their weights.  speedscope's own importer
 * reads it back to exactly the folded stacks lp-collapse prints. */
#ifndef LP_SPEEDSCOPE_H
#define LP_SPEEDSCOPE_H

#include <stdio.h>
#include "model/profile.h"

struct lp_speedscope_opts {
	const char *name;	/* the profile's name; NULL: "lp" */
	const char *unit;	/* "none" (counts), "nanoseconds", ...; NULL: "none" */
	int side;		/* which side of the profile: 0 or 1 */
};

/* Writes the whole document.  Frames are the profile's stack strings split
 * at ';' (folded text cannot hold a ';' inside a frame).  An empty profile
 * gives a valid file with one empty profile (speedscope refuses a file with
 * no profile at all).  Stacks of weight 0 are left out: speedscope drops
 * them.  Returns 0, or -1 when the output failed (ferror). */
int lp_speedscope__write(FILE *out, struct lp_profile *p,
			 const struct lp_speedscope_opts *opts);

#endif
