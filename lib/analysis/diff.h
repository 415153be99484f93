/* diff.h - two profiles side by side (lp-diff): folded stacks "before" and
 * "after" merged as FlameGraph's difffolded.pl merges them, and a ranked
 * report of the functions whose share of the samples changed, with a
 * significance figure per function so that noise is not read as change.
 *
 * Everything is held until both inputs are read: a diff is global by
 * nature, and a bad line in the second input must not leave a complete-
 * looking output behind. */
#ifndef LP_DIFF_H
#define LP_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "stream/stream.h"

struct lp_profile;
struct lp_folded_opts;

struct lp_diff_opts {
	enum lp_input_format input_format;	/* LP_INPUT_AUTO: sniffed per input */
	bool normalize;		/* -n: scale "before" to "after"'s total */
	bool strip_hex;		/* -s: 0x1234abcd -> 0x... before merging */
	/* How stream and perf script samples become folded stacks (lp-collapse's
	 * options); NULL: the defaults.  Folded input is taken verbatim. */
	const struct lp_folded_opts *folded;
	/* Samples of this event only; NULL: of the first event each input
	 * shows (lp-collapse's and stackcollapse-perf.pl's default). */
	const char *event_filter;
	/* Samples labelled group=NAME (lp-split --label) only, per side; NULL:
	 * every sample. */
	const char *groups[2];
	/* Keep the samples whose stack holds one of lp's own frames
	 * (lpframe.h); false: they are left out of every output.  Either
	 * way the report counts them. */
	bool lp_frames;
};

enum lp_diff_adjust {
	LP_DIFF_ADJUST_BH,	/* Benjamini-Hochberg (the default) */
	LP_DIFF_ADJUST_HOLM,	/* Holm-Bonferroni */
	LP_DIFF_ADJUST_NONE,
};

struct lp_diff_report_opts {
	double alpha;		/* significance level, e.g. 0.01 */
	size_t top;		/* rows to print; 0: all */
	enum lp_diff_adjust adjust;
};

struct lp_diff;

struct lp_diff *lp_diff__new(const struct lp_diff_opts *opts);
void lp_diff__free(struct lp_diff *d);
/* Reads one input ("-" is stdin) into side 0 ("before") or 1 ("after").
 * Returns -1 after reporting the problem as "lp-diff: FILE:LINE: what". */
int lp_diff__read(struct lp_diff *d, int side, const char *path);
/* Reads one input into both sides at once (standard input named twice:
 * the same profile twice, or two groups of one labelled stream). */
int lp_diff__read_both(struct lp_diff *d, const char *path);
/* Refuses (a message, -1) two inputs recorded at different periods, in
 * different modes or on different events (the header's, else the samples'
 * kept), unless opts.normalize is set; and with opts.normalize, a "before"
 * with no samples against an "after" with some (nothing to scale). */
int lp_diff__check(const struct lp_diff *d);
/* "stack countA countB" for the union of the stacks, the lines sorted
 * bytewise (as LC_ALL=C sort), counts as Perl prints numbers:
 * difffolded.pl's output, in a deterministic order. */
int lp_diff__write_folded(struct lp_diff *d, FILE *out);
/* The mode ("off", "wall") when the weights are nanoseconds, else NULL:
 * cpu recordings' weights are sample counts (lib/stream/folded.h). */
const char *lp_diff__ns(const struct lp_diff *d);
/* One function of the ranked report: its samples as leaf (self) and
 * anywhere on the stack (total) on each side, the changes of their shares
 * (B - A, percentage points), the adjusted p-value (the smaller of the
 * two tests'), whether it is significant at the report's alpha.  name is
 * not NUL-terminated and lives as long as the diff. */
struct lp_diff_row {
	const char *name;
	size_t len;
	double self[2], total[2];
	double dself, dtotal, p;
	bool significant;
};
/* The report's rows, ranked, in *rows (malloc'd; NULL when there are
 * none); *ntests: the tests adjusted over.  Returns how many. */
size_t lp_diff__rows(struct lp_diff *d, const struct lp_diff_report_opts *opts,
		     struct lp_diff_row **rows, size_t *ntests);
/* The samples read into a side (the denominators of the shares). */
double lp_diff__samples(const struct lp_diff *d, int side);
/* The ranked text report (see man/lp-diff.1 for its columns). */
int lp_diff__write_report(struct lp_diff *d, FILE *out, const struct lp_diff_report_opts *opts);
/* The merged profile with side 0 already normalised when asked (the input
 * of a differential flame graph).  Owned by d. */
struct lp_profile *lp_diff__profile(struct lp_diff *d);

/* Two-sided p-value of a two-proportion z-test: x1 of n1 against x2 of n2.
 * NAN when a side has no samples. */
double lp_diff__two_prop_p(double x1, double n1, double x2, double n2);
/* Adjusts n p-values in place for multiple comparisons (NANs are left out). */
void lp_diff__adjust(double *p, size_t n, enum lp_diff_adjust how);
/* "bh" "holm" "none" -> method; -1 when unknown. */
int lp_diff_adjust__parse(const char *name);

#endif
