/* separate.h - what separates one group of spans from the others: the
 * branches they reached and the calls they made (lp-join's at.PROBE= and
 * calls.PROBE=, contents.h) and their captured values (KEY=VALUE, their own
 * and the first.PROBE.KEY= of what happened inside them), each counted in
 * every group and ranked by Fisher's exact test (two-sided) between the
 * group asked about and all the others together. */
#ifndef LP_SEPARATE_H
#define LP_SEPARATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stream/attrs.h"

struct lp_separate;

struct lp_separate *lp_separate__new(size_t ngroups);
void lp_separate__free(struct lp_separate *s);

/* Whether probe (len bytes) was attached for the whole of the span being
 * counted: a point probe or a call probe added later (lp-trace --control)
 * says nothing of the spans it did not watch. */
typedef bool lp_separate_watched(void *arg, const char *probe, size_t len);

/* A span of group g (< ngroups) and its attributes.  watched (NULL:
 * every probe watched every span) decides which of the branches and calls
 * it counts for, reached or not: a feature's rates are over the spans its
 * probe watched. */
void lp_separate__span(struct lp_separate *s, size_t g, const struct lp_attrs *attrs,
		       lp_separate_watched *watched, void *arg);

/* A probe that was not attached throughout (the probe records of
 * lp-trace --control): its branch and call features count only the spans
 * it watched.  Said before the spans are counted. */
void lp_separate__windowed(struct lp_separate *s, const char *probe);

/* The table of the features that tell group hi from the others (at most
 * rows of them, the most significant first) and a sentence naming the
 * first when it is significant (p < 0.001).  names: each group's. */
void lp_separate__report(struct lp_separate *s, FILE *f, size_t hi, const char *const *names,
			 size_t rows);

/* One feature of the ranking: verb ("reached", "called"; NULL for a
 * captured KEY=VALUE) and name as the table says them. */
struct lp_separate_row {
	const char *verb, *name;	/* name: len bytes, valid while s is */
	size_t len;
	uint64_t hi_n, lo_n;		/* spans with it in group hi, in the others */
	double hi_rate, lo_rate, log10p;
};

/* The table's rows as data: at most max of them into rows, the most
 * significant first; their number. */
size_t lp_separate__rank(struct lp_separate *s, size_t hi, struct lp_separate_row *rows,
			 size_t max);

/* Fisher's exact test of the 2x2 table (a b / c d), two-sided: log10 of
 * its p-value (exact far below the smallest double). */
double lp_fisher_log10p(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

#endif
