/* split-options.c - the cut options lp-split and lp-report share (-P, -t,
 * --auto, --took, --child): gathered into struct lp_split_cuts, then
 * checked against each other and put in lp_split_opts. */
#include "analysis/split.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* --- the cut options, as lp-split and lp-report take them ----------------- */

static int bad_cut(const char *opt, const char *arg, const char *why)
{
	lp_error("%s '%s': %s", opt, arg, why);
	return 2;
}

/* -P LIST (opt 'P') or -t LIST (opt 't'), comma-separated, appended: 0,
 * or 2 after a message. */
static int parse_cuts(struct lp_split_cuts *c, int opt, const char *arg)
{
	const char *name = opt == 'P' ? "--percentile" : "--threshold";
	const char *why = NULL;
	char *list = lp_strdup(arg), *save = NULL;
	for (char *x = strtok_r(list, ",", &save); x && !why; x = strtok_r(NULL, ",", &save)) {
		if (opt == 'P') {
			double v;
			if (lp_parse_double(x, &v, &why) < 0)
				break;
			if (!(v > 0 && v < 100)) {
				why = "must be between 0 and 100";
				break;
			}
			c->pcts = lp_reallocarray(c->pcts, c->npcts + 1, sizeof(*c->pcts));
			c->pcts[c->npcts++] = v;
		} else {
			int64_t v;
			if (lp_parse_duration(x, &v, &why) < 0)
				break;
			c->ths = lp_reallocarray(c->ths, c->nths + 1, sizeof(*c->ths));
			c->ths[c->nths++] = v;
		}
	}
	free(list);
	return why ? bad_cut(name, arg, why) : 0;
}

int lp_split_cuts__option(struct lp_split_cuts *c, struct lp_split_opts *o, int opt,
			  const char *arg)
{
	switch (opt) {
	case 'e':
		o->probe = arg;
		return 1;
	case 'P':
	case 't':
		return parse_cuts(c, opt, arg) ? 2 : 1;
	case LP_SPLIT_OPT_AUTO:
		o->auto_cut = true;
		return 1;
	case LP_SPLIT_OPT_TOOK:
	case LP_SPLIT_OPT_CHILD:
		if (!*arg)
			return bad_cut(opt == LP_SPLIT_OPT_TOOK ? "--took" : "--child", arg,
				       "expected a probe's name");
		*(opt == LP_SPLIT_OPT_TOOK ? &o->took : &o->child) = arg;
		return 1;
	}
	return 0;
}

int lp_split_cuts__apply(struct lp_split_cuts *c, struct lp_split_opts *o)
{
	if (c->npcts && c->nths) {
		lp_error("--percentile and --threshold cannot be combined");
		return 2;
	}
	/* --took groups by a yes or no, not by a duration */
	if (o->took && (c->npcts || c->nths || o->auto_cut || o->child)) {
		lp_error("--took decides the groups: it cannot be combined with --%s",
			 c->npcts ? "percentile" : c->nths ? "threshold" : o->auto_cut ? "auto" : "child");
		return 2;
	}
	if (o->child && !c->npcts && !c->nths && !o->auto_cut) {
		lp_error("--child says what is cut: give the cut with --percentile, --threshold or --auto");
		return 2;
	}
	if (o->auto_cut && (c->npcts || c->nths)) {
		lp_error("--auto decides the cut: it cannot be combined with --%s",
			 c->npcts ? "percentile" : "threshold");
		return 2;
	}
	/* The valley is a property of the whole distribution: global by
	 * nature, like exact percentiles. */
	if (o->auto_cut && o->live) {
		lp_error("--auto needs every duration before the first sample is routed: "
			 "it cannot be combined with --live (use --live --percentile)");
		return 2;
	}
	if (c->npcts)
		qsort(c->pcts, c->npcts, sizeof(*c->pcts), lp_cmp_double);
	if (c->nths)
		qsort(c->ths, c->nths, sizeof(*c->ths), lp_cmp_i64);
	for (size_t i = 1; i < c->npcts; i++)
		if (c->pcts[i] == c->pcts[i - 1])
			return bad_cut("--percentile", "", "a cut point is given twice");
	for (size_t i = 1; i < c->nths; i++)
		if (c->ths[i] == c->ths[i - 1])
			return bad_cut("--threshold", "", "a cut point is given twice");
	o->percentiles = c->pcts;
	o->npercentiles = c->npcts;
	o->thresholds = c->ths;
	o->nthresholds = c->nths;
	return 0;
}
