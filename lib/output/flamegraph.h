/* flamegraph.h - an interactive flame graph (or icicle graph, or
 * differential flame graph) of a profile, as one standalone SVG file with
 * its own JavaScript: search by regular expression, click to zoom,
 * tooltips.  What flamegraph.pl draws from folded stacks, without Perl.
 *
 * The output depends only on the profile and the options (no clock, no
 * hash-order iteration): two renders of the same input are byte-identical.
 */
#ifndef LP_FLAMEGRAPH_H
#define LP_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdio.h>
#include "model/profile.h"

/* Zero (or NULL) in any field means its default, so
 * `struct lp_flamegraph_opts o = { 0 };` is a valid start. */
struct lp_flamegraph_opts {
	const char *title;	/* default "Flame Graph" ("Icicle Graph",
				 * "Differential Flame Graph") */
	const char *subtitle;	/* default none */
	int width;		/* image width in pixels; default 1200 */
	int frame_height;	/* pixels per stack level; default 16 */
	double min_width_px;	/* frames narrower than this are omitted (their
				 * weight still counts in their parents);
				 * default 0.1 */
	int max_frames;		/* at most this many rectangles: the minimum
				 * width is raised until they fit, because a
				 * browser cannot use an SVG with ~10^5 of them;
				 * default 50000 */
	bool differential;	/* weight[0] before, weight[1] after: widths by
				 * "after", red grew / blue shrank (by share of
				 * each side's total) */
	bool negate;		/* differential: swap the hues (blue grew) */
	bool inverted;		/* icicle: root at the top, stacks hang down */
	const char *count_name;	/* default "samples" */
};

/* Writes the SVG of profile (side 0, or both sides when differential).
 * Frames come from each entry's folded stack ("root;...;leaf"); an entry's
 * kinds string (enum lp_frame_kind, one char per frame) colours them, and
 * without it a frame's kind is read from FlameGraph's annotations:
 * "name_[k]" kernel, "_[j]" JIT, "_[i]" inlined, anything else user.
 * Names are shown as they are (XML-escaped; invalid UTF-8 and control
 * bytes as \xHH).  An empty profile gives a valid SVG saying "no samples".
 * Returns 0, or -1 with errno set when writing failed. */
int lp_flamegraph__write(FILE *out, struct lp_profile *profile,
			 const struct lp_flamegraph_opts *opts);

/* Writes s as SVG text or an attribute value, escaped as frame names are:
 * XML's five special characters as entities, invalid UTF-8 and control
 * bytes as \xHH (XML cannot carry them), so any title gives a well-formed
 * file.  For the other SVG writers (heatmap.c).  0, or -1 with errno set. */
int lp_svg_put_text(FILE *f, const char *s);

#endif
