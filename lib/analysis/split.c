/* split.c - samples into groups by the latency of their enclosing span.
 *
 * A sample's span is the one lp-join attached for the probe (span=PROBE with
 * span_start= and span_end=, or spanN=PROBE with --all-spans).  Its band is
 * decided by the span's duration d against the cut points: band i holds
 * cut[i-1] < d <= cut[i].  A percentile's cut is the nearest-rank value of
 * the probe's span durations: with n spans sorted, the p-th percentile is
 * the ceil(p/100 * n)-th.  So at p90 exactly the spans slower than the p90
 * value (about 10% of them) are "above".
 *
 * Exact percentiles need every duration before the first sample can be
 * routed: global by nature.  A file is read twice (stdin is spooled to a
 * temporary file on the first pass); a span's times, thread and cost (80
 * bytes) and a sample's time, thread and kind (24 bytes) are kept, to take
 * lp's own cost out of each span's duration (selfcost.h).  Thresholds
 * read twice too: a span's samples come after it.  --live reads once and
 * uses a windowed sketch (quantile.h), correcting by lp_ns= only.
 *
 * This file owns the run (lp_split__run: one pass or two, then the report
 * and the split records), the groups' names and the split's state's
 * lifetime; the pieces are split-*.c, which share split-internal.h.
 */
#include "analysis/split.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "base/quantile.h"
#include "base/util.h"
#include "analysis/contents.h"
#include "analysis/modes.h"
#include "analysis/selfcost.h"
#include "analysis/separate.h"
#include "analysis/waits.h"
#include "analysis/split-internal.h"

static const char *const extra_names[G_EXTRA] = { "outside", "excluded", "unranked",
						  "uncertain", "lp", "unprobed" };

static char *fmt_duration(int64_t ns)
{
	char b[64];
	if (ns && ns % 1000000000 == 0)
		snprintf(b, sizeof(b), "%" PRId64 "s", ns / 1000000000);
	else if (ns && ns % 1000000 == 0)
		snprintf(b, sizeof(b), "%" PRId64 "ms", ns / 1000000);
	else if (ns && ns % 1000 == 0)
		snprintf(b, sizeof(b), "%" PRId64 "us", ns / 1000);
	else
		snprintf(b, sizeof(b), "%" PRId64 "ns", ns);
	return lp_strdup(b);
}

static char *band_name(const struct lp_split_opts *o, size_t i, size_t nbands)
{
	char b[128];
	if (o->took)
		return lp_strdup(i == 0 ? "not-took" : "took");
	if (nbands == 1)
		return lp_strdup("selected");
	if (nbands == 2)
		return lp_strdup(i == 0 ? "below" : "above");
	if (o->npercentiles) {
		char lo[32] = "p0", hi[32] = "p100";
		if (i > 0)
			snprintf(lo, sizeof(lo), "p%g", o->percentiles[i - 1]);
		if (i < nbands - 1)
			snprintf(hi, sizeof(hi), "p%g", o->percentiles[i]);
		snprintf(b, sizeof(b), "%s-%s", lo, hi);
		return lp_strdup(b);
	}
	char *lo = i > 0 ? fmt_duration(o->thresholds[i - 1]) : lp_strdup("0");
	char *hi = i < nbands - 1 ? fmt_duration(o->thresholds[i]) : lp_strdup("inf");
	snprintf(b, sizeof(b), "%s-%s", lo, hi);
	free(lo);
	free(hi);
	return lp_strdup(b);
}

static size_t nbands_of(const struct lp_split_opts *o)
{
	if (o->auto_cut || o->took)
		return 2;
	return 1 + (o->npercentiles ? o->npercentiles : o->nthresholds);
}

size_t lp_split__group_names(const struct lp_split_opts *o, const char ***names)
{
	size_t nb = nbands_of(o), n = nb + G_EXTRA;
	const char **v = lp_calloc(n, sizeof(*v));
	for (size_t i = 0; i < nb; i++)
		v[i] = band_name(o, i, nb);
	for (size_t i = 0; i < G_EXTRA; i++)
		v[nb + i] = lp_strdup(extra_names[i]);
	*names = v;
	return n;
}

static void free_split(struct split *s)
{
	for (size_t i = 0; i < s->nnotes; i++) {
		free(s->notes[i].kind);
		free(s->notes[i].text);
	}
	free(s->notes);
	for (size_t i = 0; i < s->ng; i++) {
		free(s->g[i].name);
		lp_quantile__free(s->g[i].lat);
		free(s->g[i].durs);
		lp_split__free_blockers(&s->g[i]);
	}
	free(s->g);
	for (size_t i = 0; i < s->nwins; i++)
		free(s->wins[i].probe);
	free(s->wins);
	free(s->cuts);
	free(s->outs);
	free(s->durs);
	free(s->spans);
	lp_waits__free(s->waits);
	lp_hashmap__fini(&s->span_index);
	lp_costs__free(s->costs);
	lp_costdist__fini(&s->dist);
	free(s->buf);
	free(s->kbuf);
	free(s->value);
	free(s->name);
	lp_attrs_buf__free(&s->ab);
	lp_quantile__free(s->sketch);
	lp_modes__free(s->modes);
	lp_separate__free(s->sep);
	free(s->key_attr);
	free(s->took_at);
	free(s->took_calls);
	free(s->child_key);
}

int lp_split__run(const char *input, const struct lp_split_opts *o)
{
	struct split s = { .o = o, .t0 = INT64_MAX, .from = INT64_MIN, .to = INT64_MAX };
	s.nbands = nbands_of(o);
	s.ng = s.nbands + G_EXTRA;
	s.g = lp_calloc(s.ng, sizeof(*s.g));
	for (size_t i = 0; i < s.ng; i++)
		lp_hashmap__init(&s.g[i].blockers);
	for (size_t i = 0; i < s.ng; i++)
		s.g[i].name = i < s.nbands ? band_name(o, i, s.nbands)
					   : lp_strdup(extra_names[i - s.nbands]);
	s.cuts = lp_calloc(s.nbands, sizeof(*s.cuts));
	s.costs = lp_costs__new();
	s.sep = lp_separate__new(s.nbands);
	if (o->took) {
		lp_contents__key(LP_CONTENTS_AT, o->took, &s.took_at, &s.took_at_cap);
		lp_contents__key(LP_CONTENTS_CALLS, o->took, &s.took_calls, &s.took_calls_cap);
	}
	if (o->child)
		lp_contents__key(LP_CONTENTS_CALLS_NS, o->child, &s.child_key, &s.child_key_cap);
	lp_hashmap__init(&s.span_index);
	if (o->probe) {
		size_t n = strlen(o->probe) + 10;
		s.key_attr = lp_malloc(n);
		snprintf(s.key_attr, n, "span.key.%s", o->probe);
	}
	for (size_t i = 0; i < o->nthresholds; i++)
		s.cuts[i] = (double)o->thresholds[i];
	char *spool = NULL;
	const char *second = input;
	/* Percentiles and --auto read the input twice (a pipe is spooled):
	 * every duration is needed first.  Thresholds do so on a file too, as
	 * a span's corrected duration needs every sample in it and its
	 * samples come after it; on a pipe they route as they read (a live
	 * pipeline's groups grow as it runs), corrected by lp_ns= only. */
	struct stat st;
	bool regular = strcmp(input, "-") ? stat(input, &st) == 0 && S_ISREG(st.st_mode)
					   : fstat(0, &st) == 0 && S_ISREG(st.st_mode);
	bool exact = (o->npercentiles || o->auto_cut || (o->nthresholds && regular)) && !o->live;
	if (exact) {
		if (lp_split__first_pass(&s, input, &spool) < 0 ||
		    lp_split__decide_distribution(&s) < 0) {
			if (spool)
				unlink(spool);
			free(spool);
			free_split(&s);
			return -1;
		}
		lp_split__exact_cuts(&s);
		if (spool)
			second = spool;
	} else if (o->live && o->npercentiles) {
		s.sketch = lp_quantile__new(o->accuracy, o->window_ns);
		for (size_t i = 0; i < s.nbands; i++)
			s.g[i].lat = lp_quantile__new(o->accuracy, 0);
	} else if (!exact) {
		for (size_t i = 0; i < s.nbands; i++)
			s.g[i].lat = lp_quantile__new(o->accuracy, 0);
	}
	if (!exact && !o->live)
		lp_split__set_time_bounds(&s);	/* thresholds: relative --time needs t0 */

	struct lp_reader *r = lp_reader__open(second, spool ? LP_INPUT_LP : o->format);
	if (spool)
		unlink(spool);
	if (!r) {
		free(spool);
		free_split(&s);
		return -1;
	}
	lp_split__open_outputs(&s);
	struct lp_record rec;
	int rc;
	bool one_pass_time = !exact && o->has_time;
	while ((rc = lp_reader__next(r, &rec)) > 0) {
		if (one_pass_time && s.t0 == INT64_MAX) {
			int64_t t = rec.kind == LP_REC_SAMPLE ? rec.sample.time_ns
				  : rec.kind == LP_REC_SPAN ? rec.span.start_ns : LP_TIME_NONE;
			if (t != LP_TIME_NONE) {
				s.t0 = t;
				lp_split__set_time_bounds(&s);
			}
		}
		if (lp_split__route(&s, r, &rec) < 0) {
			rc = -1;
			break;
		}
	}
	lp_reader__free(r);
	free(spool);
	if (rc < 0) {
		lp_split__close_outputs(&s);
		free_split(&s);
		return -1;
	}
	if (s.keyed)
		lp_split__sum_callbacks(&s);
	/* The groups' records out before the report and warnings, which
	 * may share their terminal or pipe; the split records follow. */
	for (size_t i = 0; i < s.nouts; i++)
		if (fflush(s.outs[i].f) != 0)
			lp_split__out_failed(&s.outs[i]);
	int out_rc = lp_split__report(&s) < 0 ? -1 : 0;
	lp_split__self_check(&s);
	lp_split__warn_cuts(&s);
	if (o->label)
		lp_split__put_decisions(&s);
	if (lp_split__close_outputs(&s) < 0)
		out_rc = -1;
	/* An input that cannot be split is worth a word. */
	uint64_t nsamples = 0;
	for (size_t i = 0; i < s.ng; i++)
		nsamples += s.g[i].samples;
	if (nsamples && !s.joined_samples)
		lp_error("no sample carries a span (span=): is the input lp-join's output?");
	else if (nsamples && o->probe && !s.probe_spans)
		lp_error("no span of probe '%s' in the input", o->probe);
	free_split(&s);
	return out_rc;
}
