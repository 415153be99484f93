/* split.h - lp-split's work: route samples into groups by the duration of
 * the span of a probe that encloses them (percentile bands, thresholds),
 * filtered by time range and by predicates on the span's captured values. */
#ifndef LP_SPLIT_H
#define LP_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/where.h"
#include "stream/stream.h"


struct lp_split_file {
	const char *group, *path;
};

struct lp_split_opts {
	const char *probe;		/* NULL: the innermost span, any probe */
	const double *percentiles;	/* ascending, each in (0, 100) */
	size_t npercentiles;
	const int64_t *thresholds;	/* ascending, ns */
	size_t nthresholds;
	bool auto_cut;			/* --auto: one cut, at the valley below the slowest mode */
	/* --took PROBE: two groups, spans that reached the point probe or
	 * called the function PROBE inside them (lp-join's at.PROBE= or
	 * calls.PROBE=), and the others; no cut */
	const char *took;
	/* --child PROBE: the cuts are on the span's time in its calls of
	 * PROBE (lp-join's calls_ns.PROBE=, less their lp_ns), not on its
	 * own duration */
	const char *child;
	bool has_time;			/* --time FROM-TO */
	int64_t time_from, time_to;	/* INT64_MIN/MAX when open */
	bool time_absolute_from, time_absolute_to;	/* else from the first time read */
	const struct lp_where *preds;	/* on a span's values (a sample's span.KEY) */
	size_t npreds;
	bool live;			/* one pass, a windowed sketch for percentiles */
	int64_t window_ns;
	double accuracy;
	bool label;			/* one stream, group=NAME on each sample */
	const char *output;		/* --label's output; NULL: stdout */
	const char *pattern;		/* every group to a file, %s the group's name */
	const struct lp_split_file *files;	/* --above, --below, --group NAME=FILE */
	size_t nfiles;
	const char *report;		/* NULL: stderr */
	bool quiet;
	enum lp_input_format format;
	bool raw;			/* decide on measured durations: lp's cost left in */
	bool lp_frames;			/* samples in lp's own frames stay in their span's group */
	double confidence;		/* a sampled span goes to the band at least this likely */
};

/* The defaults: a 60 s window, 1% accuracy, 0.9 confidence. */
#define LP_SPLIT_OPTS_DEFAULT \
	{ .window_ns = 60000000000LL, .accuracy = 0.01, .format = LP_INPUT_AUTO, .confidence = 0.9 }

/* Where to cut, as given: -P LIST and -t LIST, gathered before they are
 * checked with --auto, --took, --child and --live (lp-split's and
 * lp-report's options). */
struct lp_split_cuts {
	double *pcts;
	int64_t *ths;
	size_t npcts, nths;
};

/* The options that say what decides and where to cut, shared by the
 * programs that split: LP_SPLIT_CUT_LONGOPTS goes into a getopt_long table
 * (<getopt.h>, with "e:P:t:" among the short options), and every value
 * getopt_long returns that is not the program's own goes to
 * lp_split_cuts__option: 1 when it was one of them (now in c or o), 0 when
 * not, 2 after a message (bad usage). */
enum { LP_SPLIT_OPT_AUTO = 0x1100, LP_SPLIT_OPT_TOOK, LP_SPLIT_OPT_CHILD };
#define LP_SPLIT_CUT_LONGOPTS						\
	{ "probe", required_argument, NULL, 'e' },			\
	{ "percentile", required_argument, NULL, 'P' },			\
	{ "threshold", required_argument, NULL, 't' },			\
	{ "auto", no_argument, NULL, LP_SPLIT_OPT_AUTO },		\
	{ "took", required_argument, NULL, LP_SPLIT_OPT_TOOK },		\
	{ "child", required_argument, NULL, LP_SPLIT_OPT_CHILD }
int lp_split_cuts__option(struct lp_split_cuts *c, struct lp_split_opts *o, int opt,
			  const char *arg);
/* Checks the cuts against the other options in o and puts them in o,
 * sorted, none twice: 0, or 2 after a message. */
int lp_split_cuts__apply(struct lp_split_cuts *c, struct lp_split_opts *o);

/* The group names the options give, in order (for checking --group NAME). */
size_t lp_split__group_names(const struct lp_split_opts *o, const char ***names);

/* Returns 0, or -1 after an error already reported. */
int lp_split__run(const char *input, const struct lp_split_opts *o);

#endif
