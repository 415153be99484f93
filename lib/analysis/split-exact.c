/* split-exact.c - the first pass of an exact split: every span of the
 * probe and every sample's cost, read before any is routed, so that each
 * span's duration less lp's own cost decides its band (exact percentiles,
 * the likelihood of a band for a span holding samples). */
#include "analysis/split.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "analysis/selfcost.h"
#include "analysis/split-internal.h"

/* --- the first pass: every duration, for exact percentiles ------------- */

/* By thread, then start, the outer of two spans that start together first:
 * on one thread calls nest, so a sweep in this order sees each span's
 * enclosing ones before it. */
static int cmp_pspan(const void *a, const void *b)
{
	const struct pspan *x = a, *y = b;
	if (x->who != y->who)
		return (x->who > y->who) - (x->who < y->who);
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->end < y->end) - (x->end > y->end);
}

static int cmp_psample(const void *a, const void *b)
{
	const struct psample *x = a, *y = b;
	if (x->who != y->who)
		return (x->who > y->who) - (x->who < y->who);
	return (x->t > y->t) - (x->t < y->t);
}

/* Every sample costs each span that encloses it on its thread (all of
 * them: a sample in a nested call costs its callers too).  One sweep per
 * thread over spans and samples in time order, with the open spans on a
 * stack. */
static void charge_samples(struct split *s, struct psample *smp, size_t nsmp)
{
	double mean[LP_HIT_N] = { 0 }, var[LP_HIT_N] = { 0 };
	bool known[LP_HIT_N] = { false };
	/* --raw: the samples are counted, their cost left in. */
	for (int h = 0; h < LP_HIT_N && !s->o->raw; h++)
		known[h] = lp_costs__of(s->costs, (enum lp_hit)h, &mean[h], &var[h]);
	if (s->nspans)	/* qsort's array may not be NULL, even empty */
		qsort(s->spans, s->nspans, sizeof(*s->spans), cmp_pspan);
	if (nsmp)
		qsort(smp, nsmp, sizeof(*smp), cmp_psample);
	size_t *open = lp_calloc(s->nspans + 1, sizeof(*open)), nopen = 0;
	size_t i = 0;
	for (size_t k = 0; k < nsmp; k++) {
		const struct psample *x = &smp[k];
		if (k == 0 || x->who != smp[k - 1].who) {
			nopen = 0;
			while (i < s->nspans && s->spans[i].who < x->who)
				i++;
		}
		while (i < s->nspans && s->spans[i].who == x->who && s->spans[i].start <= x->t) {
			while (nopen && s->spans[open[nopen - 1]].end <= s->spans[i].start)
				nopen--;
			open[nopen++] = i++;
		}
		while (nopen && s->spans[open[nopen - 1]].end <= x->t)
			nopen--;
		for (size_t o = 0; o < nopen; o++) {
			struct pspan *sp = &s->spans[open[o]];
			if (x->t >= sp->end || (sp->pid != x->pid && sp->pid != LP_ID_NONE &&
						x->pid != LP_ID_NONE))
				continue;
			if (!sp->nsamples++)
				sp->first = x->t;
			if (known[x->hit]) {
				sp->cost += mean[x->hit];
				sp->var += var[x->hit];
			}
		}
	}
	free(open);
}

/* The sampling period: the cost records' freq_hz=, else the header's
 * period_ns=; 0 when neither says. */
double lp_split__sampling_period(const struct split *s)
{
	double period = lp_costs__period(s->costs);
	return period ? period : s->period_ns;
}

/* The calibration measures what a sample costs a thread that does nothing
 * else, for 300 ms at the start.  In a real program it may cost more (the
 * caches a DWARF copy evicts, the recorder preempting the target: 7 us
 * more a sample in the request loop of bench/selfcost.sh), and on a busy
 * machine the calibration itself may be off (36 us calibrated against 19 us
 * paid, in CI).  The spans show what they paid (lp_costdist__deconvolve): within
 * a factor of 3 of the calibration, their figure is used; beyond, the
 * estimate's own assumption (on-CPU time grows with length alike in every
 * span) is likelier broken, and the calibration stays. */
static void use_seen_cost(struct split *s)
{
	double period = lp_split__sampling_period(s);
	if (s->o->raw || s->o->child || !period)
		return;
	double *one = lp_calloc(s->nspans + 1, sizeof(*one)), *zero = lp_calloc(s->nspans + 1,
									       sizeof(*zero));
	size_t n1 = 0, n0 = 0;
	double cal = 0, cal_var = 0;	/* the calibration's, summed over one[] */
	for (size_t i = 0; i < s->nspans; i++) {
		const struct pspan *sp = &s->spans[i];
		double d = (double)(sp->end - sp->start) - sp->lp_ns;
		if (sp->nsamples == 1 && sp->cost > 0 && d - sp->cost < 0.9 * period) {
			one[n1++] = d;
			cal += sp->cost;
			cal_var += sp->var;
		} else if (!sp->nsamples && d < 0.9 * period) {
			zero[n0++] = d;
		}
	}
	if (n1 && lp_costdist__deconvolve(&s->dist, one, n1, zero, n0, period, cal / (double)n1,
					  sqrt(cal_var / (double)n1))) {
		double f = s->dist.mean / (cal / (double)n1);
		if (f >= 1.0 / 3 && f <= 3) {
			for (size_t i = 0; i < s->nspans; i++) {
				s->spans[i].cost *= f;
				s->spans[i].var *= f * f;
			}
			s->used_seen = true;
		}
	}
	free(one);
	free(zero);
}

/* A span that holds samples is measured longer by their cost, which is
 * known only on average: when the truth may lie on either side of a cut,
 * the likelihood decides, or the span is uncertain. */
static int32_t decide(struct split *s, const struct lp_prior *prior, const struct pspan *sp,
		      double *prob)
{
	int32_t band = (int32_t)lp_split__band_of(s, sp->corrected);
	if (s->o->raw || s->o->child || !sp->nsamples || !(sp->var > 0) || s->nbands == 1)
		return band;
	double m = (double)(sp->end - sp->start) - sp->lp_ns;
	/* The cost's distribution as the spans show it, else the
	 * calibration's mean and spread (normal). */
	struct lp_costdist normal = lp_costdist__normal(sp->cost / sp->nsamples,
							sqrt(sp->var / sp->nsamples));
	const struct lp_costdist *d = s->used_seen ? &s->dist : &normal;
	/* The span before its first sample is clean but for the part of the
	 * sample's own cost that comes before its time stamp (the interrupt's
	 * entry: 35 us before the sample in a 30 us request, seen in
	 * bench/selfcost.sh): less the cost's 99th percentile, it is a floor
	 * of the true duration. */
	double lb = (double)(sp->first - sp->start) - sp->lp_ns - lp_costdist__quantile(d, 0.99);
	if (!lp_prior__bands(prior, m, lb, d, sp->nsamples, s->cuts, s->nbands, prob))
		return band;
	size_t best = 0;
	for (size_t b = 1; b < s->nbands; b++)
		if (prob[b] > prob[best])
			best = b;
	if (prob[best] >= s->o->confidence)
		return (int32_t)best;
	return (int32_t)(s->nbands + G_UNCERTAIN);
}

/* The samples that cost their spans time: each one's time, thread and
 * what it hit. */
struct psamples {
	struct psample *v;
	size_t n, cap;
};

/* A span of the probe, whole, that the predicates keep: kept with its
 * probes' own cost.  -1 after a message. */
static int take_span(struct split *s, struct lp_reader *r, const struct lp_span *sp)
{
	if (sp->start_ns == LP_TIME_NONE)
		return 0;
	if (sp->start_ns < s->t0)
		s->t0 = sp->start_ns;
	if (sp->end_ns == LP_TIME_NONE || !lp_split__is_probe(s, sp->probe) ||
	    !lp_split__preds_ok(s, &sp->attrs, ""))
		return 0;
	double lp_ns;
	if (!lp_span__lp_ns(sp, &lp_ns)) {
		lp_reader__error(r, "span: bad lp_ns");
		return -1;
	}
	if (s->nspans == s->spans_cap) {
		s->spans_cap = s->spans_cap ? s->spans_cap * 2 : 1024;
		s->spans = lp_reallocarray(s->spans, s->spans_cap, sizeof(*s->spans));
	}
	int64_t child = 0;
	if (s->o->child && !lp_split__child_ns(s, &sp->attrs, "", &child)) {
		lp_reader__error(r, "span: bad %s", s->child_key);
		return -1;
	}
	const char *key;
	size_t klen;
	uint64_t who = (uint32_t)sp->tid;
	if (lp_split__attr_raw(&sp->attrs, "key", 3, &key, &klen)) {
		/* Without -e every probe's spans decide: a callback's too. */
		if (!s->key_attr) {
			lp_reader__error(r, "span: %s is a keyed span (key=): name it with -e %s",
					 sp->probe, sp->probe);
			return -1;
		}
		who = lp_split__keyed_who(sp->pid, key, klen);
		s->keyed = true;
	}
	s->spans[s->nspans++] = (struct pspan){
		.start = sp->start_ns, .end = sp->end_ns, .pid = sp->pid, .tid = sp->tid,
		.lp_ns = s->o->raw ? 0 : lp_ns, .group = -1, .child = child, .who = who,
	};
	return 0;
}

/* One record of the first pass: costs, the period, samples that cost
 * their spans, spans.  -1 after a message. */
static int take_first(struct split *s, struct lp_reader *r, const struct lp_record *rec,
		      struct psamples *ps)
{
	if (rec->kind == LP_REC_COST) {
		lp_costs__add(s->costs, &rec->cost);
	} else if (rec->kind == LP_REC_PROBE) {
		lp_split__note_mark(s, &rec->mark);
	} else if (rec->kind == LP_REC_HEADER && !s->period_ns) {
		const char *why;
		double v;
		if (lp_attrs__get(&rec->header.attrs, "period_ns", &s->value, &s->value_cap) >= 0 &&
		    lp_parse_double(s->value, &v, &why) == 0 && v > 0)
			s->period_ns = v;
	} else if (rec->kind == LP_REC_SAMPLE) {
		const struct lp_sample *x = &rec->sample;
		if (x->time_ns == LP_TIME_NONE)
			return 0;
		if (x->time_ns < s->t0)
			s->t0 = x->time_ns;
		enum lp_hit hit = lp_hit__of_sample(x);
		if (x->tid == LP_ID_NONE || hit == LP_HIT_NONE)
			return 0;
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? ps->cap * 2 : 1024;
			ps->v = lp_reallocarray(ps->v, ps->cap, sizeof(*ps->v));
		}
		ps->v[ps->n++] = (struct psample){ x->time_ns, x->pid, x->tid, hit,
						   lp_split__sample_who(s, x) };
	} else if (rec->kind == LP_REC_SPAN) {
		return take_span(s, r, &rec->span);
	}
	return 0;
}

/* Each span's duration less lp's cost in it, and the sorted durations of
 * those in the time range. */
static void settle_durations(struct split *s)
{
	s->durs = lp_reallocarray(NULL, s->nspans ? s->nspans : 1, sizeof(*s->durs));
	for (size_t i = 0; i < s->nspans; i++) {
		struct pspan *sp = &s->spans[i];
		/* --child: its calls' time, their lp_ns out (lp-join); the
		 * samples in them are not known apart from the span's */
		sp->corrected = s->o->child ? sp->child
					    : lp_less_cost(sp->end - sp->start, sp->lp_ns + sp->cost);
		if (!s->o->has_time || (sp->end > s->from && sp->start < s->to)) {
			s->durs[s->ndurs++] = sp->corrected;
			s->sampled_spans += sp->nsamples > 0;
			s->sample_cost_ns += sp->cost;
			s->probe_cost_ns += sp->lp_ns;
		}
	}
	qsort(s->durs, s->ndurs, sizeof(*s->durs), lp_cmp_i64);
}

int lp_split__first_pass(struct split *s, const char *input, char **spool_path)
{
	struct lp_reader *r = lp_reader__open(input, s->o->format);
	if (!r)
		return -1;
	struct stat st;
	bool regular = strcmp(input, "-") && stat(input, &st) == 0 && S_ISREG(st.st_mode);
	FILE *spool = NULL;
	struct lp_writer *sw = NULL;
	if (!regular) {
		if (!(spool = lp_temp_file(spool_path)))
			return -1;
		sw = lp_writer__new(spool);
	}
	struct psamples ps = { 0 };
	struct lp_record rec;
	int rc;
	while ((rc = lp_reader__next(r, &rec)) > 0) {
		if (sw && lp_writer__record(sw, &rec) < 0) {
			lp_error_errno("%s: cannot write", *spool_path);
			rc = -1;
			break;
		}
		if (take_first(s, r, &rec, &ps) < 0) {
			rc = -1;
			break;
		}
	}
	lp_reader__free(r);
	if (sw) {
		lp_writer__free(sw);
		if (fclose(spool) == EOF && rc >= 0) {
			lp_error_errno("%s: cannot write", *spool_path);
			rc = -1;
		}
	}
	if (rc >= 0) {
		lp_split__set_time_bounds(s);
		charge_samples(s, ps.v, ps.n);
		use_seen_cost(s);
		settle_durations(s);
	}
	free(ps.v);
	return rc < 0 ? -1 : 0;
}

/* After the first pass: the cut points of the percentiles (--auto's is
 * lp_split__decide_distribution's), then each span's group (decide) and each group's
 * sorted durations. */
void lp_split__exact_cuts(struct split *s)
{
	/* Nearest rank: the ceil(p n)-th smallest. */
	for (size_t i = 0; s->o->npercentiles && i + 1 < s->nbands; i++) {
		if (!s->ndurs) {
			s->cuts[i] = INFINITY;
			continue;
		}
		double rank = ceil(s->o->percentiles[i] / 100 * (double)s->ndurs);
		size_t k = rank < 1 ? 1 : (size_t)rank;
		if (k > s->ndurs)
			k = s->ndurs;
		s->cuts[i] = (double)s->durs[k - 1];
	}
	/* Each span's group, and each group's durations. */
	struct lp_prior *prior = lp_prior__new(s->durs, s->ndurs, lp_split__sampling_period(s));
	double *prob = lp_calloc(s->nbands, sizeof(*prob));
	size_t *count = lp_calloc(s->ng, sizeof(*count));
	for (size_t i = 0; i < s->nspans; i++) {
		struct pspan *sp = &s->spans[i];
		if (s->o->has_time && !(sp->end > s->from && sp->start < s->to))
			continue;
		sp->group = decide(s, prior, sp, prob);
		count[sp->group]++;
		s->uncertain_spans += (size_t)sp->group == s->nbands + G_UNCERTAIN;
		lp_hashmap__put(&s->span_index, lp_split__span_key(sp->tid, sp->start, sp->end),
				(void *)(uintptr_t)(i + 1));
	}
	for (size_t g = 0; g < s->ng; g++)
		s->g[g].durs = lp_calloc(count[g] ? count[g] : 1, sizeof(int64_t));
	for (size_t i = 0; i < s->nspans; i++)
		if (s->spans[i].group >= 0) {
			struct group *g = &s->g[s->spans[i].group];
			g->durs[g->ndurs++] = s->spans[i].corrected;
		}
	for (size_t g = 0; g < s->ng; g++)
		qsort(s->g[g].durs, s->g[g].ndurs, sizeof(int64_t), lp_cmp_i64);
	free(count);
	free(prob);
	lp_prior__free(prior);
}
