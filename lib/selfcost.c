/* selfcost.c - lp's own cost, from cost records, and the likelihood that a
 * span lp made longer was truly above a cut (selfcost.h). */
#include "selfcost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct lp_costs {
	bool have[LP_HIT_N];
	double mean[LP_HIT_N], var[LP_HIT_N];
	double period_ns;
	bool any;
	char *buf;
	size_t cap;
};

struct lp_costs *lp_costs__new(void)
{
	return lp_calloc(1, sizeof(struct lp_costs));
}

void lp_costs__free(struct lp_costs *c)
{
	if (!c)
		return;
	free(c->buf);
	free(c);
}

static double attr_num(struct lp_costs *c, const struct lp_attrs *a, const char *key)
{
	double v;
	const char *why;
	if (lp_attrs__get(a, key, &c->buf, &c->cap) < 0 || lp_parse_double(c->buf, &v, &why) < 0 ||
	    !(v >= 0) || isinf(v))
		return 0;
	return v;
}

void lp_costs__add(struct lp_costs *c, const struct lp_cost *cost)
{
	enum lp_hit hit;
	if (!strcmp(cost->what, "sample")) {
		ssize_t n = lp_attrs__get(&cost->attrs, "unwind", &c->buf, &c->cap);
		hit = n < 0 ? LP_HIT_SAMPLE : !strcmp(c->buf, "dwarf") ? LP_HIT_DWARF
					    : !strcmp(c->buf, "fp") ? LP_HIT_FP : LP_HIT_SAMPLE;
		double hz = attr_num(c, &cost->attrs, "freq_hz");
		if (hz > 0)
			c->period_ns = 1e9 / hz;
	} else if (!strcmp(cost->what, "block")) {
		hit = LP_HIT_BLOCK;
	} else {
		/* Probe hits: lp-trace sums them into each span's lp_ns=. */
		c->any = true;
		return;
	}
	double sd = attr_num(c, &cost->attrs, "sd_ns");
	c->have[hit] = true;
	c->mean[hit] = cost->ns;
	c->var[hit] = sd * sd;
	c->any = true;
}

bool lp_costs__known(const struct lp_costs *c)
{
	return c->any;
}

enum lp_hit lp_hit__of_sample(const struct lp_sample *smp)
{
	if (smp->event && !strcmp(smp->event, "offcpu"))
		return LP_HIT_BLOCK;
	/* A wall-clock sample of a thread that was not running was made from
	 * scheduler events, not by interrupting it: its blocked interval is
	 * an offcpu sample's, which wall mode does not mark as such. */
	if (lp_attrs__raw(&smp->attrs, "state", 5, &(size_t){ 0 }) &&
	    !lp_attrs__is(&smp->attrs, "state", "running"))
		return LP_HIT_NONE;
	if (lp_attrs__is(&smp->attrs, "unwind", "dwarf"))
		return LP_HIT_DWARF;
	if (lp_attrs__is(&smp->attrs, "unwind", "fp"))
		return LP_HIT_FP;
	return LP_HIT_SAMPLE;
}

bool lp_costs__of(const struct lp_costs *c, enum lp_hit hit, double *mean, double *var)
{
	if (hit == LP_HIT_NONE)
		return false;
	/* A sample's unwinder not calibrated: the nearest that was. */
	static const enum lp_hit fallback[LP_HIT_N][3] = {
		[LP_HIT_FP] = { LP_HIT_FP, LP_HIT_SAMPLE, LP_HIT_DWARF },
		[LP_HIT_DWARF] = { LP_HIT_DWARF, LP_HIT_SAMPLE, LP_HIT_FP },
		[LP_HIT_SAMPLE] = { LP_HIT_SAMPLE, LP_HIT_FP, LP_HIT_DWARF },
		[LP_HIT_BLOCK] = { LP_HIT_BLOCK, LP_HIT_BLOCK, LP_HIT_BLOCK },
	};
	for (int i = 0; i < 3; i++) {
		enum lp_hit h = fallback[hit][i];
		if (c->have[h]) {
			*mean = c->mean[h];
			*var = c->var[h];
			return true;
		}
	}
	return false;
}

double lp_costs__period(const struct lp_costs *c)
{
	return c->period_ns;
}

int64_t lp_less_cost(int64_t d, double take)
{
	if (!(take > 0))
		return d;
	return take >= (double)d ? 0 : d - (int64_t)llround(take);
}

bool lp_span__lp_ns(const struct lp_span *sp, double *ns)
{
	size_t n;
	const char *v = lp_attrs__raw(&sp->attrs, "lp_ns", 5, &n);
	*ns = 0;
	if (!v)
		return true;
	char num[32];
	const char *why;
	if (n >= sizeof(num))
		return false;
	memcpy(num, v, n);
	num[n] = '\0';
	return lp_parse_double(num, ns, &why) == 0 && *ns >= 0 && !isinf(*ns);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#define Q 0.25

bool lp_selfcost__seen(double *one, size_t n1, double *zero, size_t n0, double period_ns,
		       double *cost)
{
	if (n1 < 100 || n0 < 100 || !(period_ns > 0))
		return false;
	qsort(one, n1, sizeof(*one), cmp_double);
	qsort(zero, n0, sizeof(*zero), cmp_double);
	double total = 0;
	for (size_t i = 0; i < n0; i++)
		if (zero[i] > 0 && zero[i] < period_ns)
			total += zero[i] / (period_ns - zero[i]);
	if (!(total > 0))
		return false;
	/* The lower quartile, not the median: among the spans that hold a
	 * sample the long ones weigh more than among the others, and a
	 * quantile low in both is further from where a slow mode mixes in. */
	double half = total * Q, sum = 0, wmed = zero[n0 - 1];
	for (size_t i = 0; i < n0; i++) {
		if (!(zero[i] > 0 && zero[i] < period_ns))
			continue;
		sum += zero[i] / (period_ns - zero[i]);
		if (sum >= half) {
			wmed = zero[i];
			break;
		}
	}
	double med = one[(size_t)((double)(n1 - 1) * Q)];
	*cost = med - wmed;
	return true;
}

/* --- the prior ------------------------------------------------------------ */

/* Bins of ratio at least 1.01 (1% of a duration: finer than a sample's
 * cost spread wherever that spread matters), at most MAX_BINS of them. */
#define BIN_RATIO 1.01
#define MAX_BINS 8192

struct lp_prior {
	double lo;		/* the first bin's lower edge, ns (>= 1) */
	double log_lo, log_ratio;
	size_t n;
	double *w;		/* each bin's weight */
};

static double edge(const struct lp_prior *p, size_t i)
{
	return exp(p->log_lo + (double)i * p->log_ratio);
}

struct lp_prior *lp_prior__new(const int64_t *durs, size_t n, double period_ns)
{
	if (!n)
		return NULL;
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < n; i++) {
		double d = durs[i] < 1 ? 1 : (double)durs[i];
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	struct lp_prior *p = lp_calloc(1, sizeof(*p));
	p->lo = lo;
	p->log_lo = log(lo);
	double span = log(hi) - p->log_lo;
	p->log_ratio = log(BIN_RATIO);
	if (span / p->log_ratio > MAX_BINS - 2)
		p->log_ratio = span / (MAX_BINS - 2);
	p->n = (size_t)(span / p->log_ratio) + 2;
	p->w = lp_calloc(p->n, sizeof(*p->w));
	for (size_t i = 0; i < n; i++) {
		double d = durs[i] < 1 ? 1 : (double)durs[i];
		size_t b = (size_t)((log(d) - p->log_lo) / p->log_ratio);
		if (b >= p->n)
			b = p->n - 1;
		p->w[b] += 1;
	}
	/* A span is sampled with the chance that a sample lands in it: the
	 * spans that hold samples are the longer ones (length bias). */
	for (size_t b = 0; b < p->n; b++) {
		double mid = sqrt(edge(p, b) * edge(p, b + 1));
		p->w[b] *= period_ns > 0 ? -expm1(-mid / period_ns) : mid;
	}
	return p;
}

void lp_prior__free(struct lp_prior *p)
{
	if (!p)
		return;
	free(p->w);
	free(p);
}

static double cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

static size_t band_at(const double *cuts, size_t nbands, double d)
{
	size_t b = 0;
	while (b + 1 < nbands && d > cuts[b])
		b++;
	return b;
}

bool lp_prior__bands(const struct lp_prior *p, double est, double var, double lb,
		     const double *cuts, size_t nbands, double *prob)
{
	for (size_t b = 0; b < nbands; b++)
		prob[b] = 0;
	if (!p || !(var > 0))
		return false;
	double sd = sqrt(var);
	/* Where the true duration can be: within 8 sd of the estimate, and
	 * not below what was measured before the first sample. */
	double from = est - 8 * sd, to = est + 8 * sd;
	if (from < lb)
		from = lb;
	if (to <= from)
		return false;
	double total = 0;
	for (size_t i = 0; i < p->n; i++) {
		double a = edge(p, i), z = edge(p, i + 1);
		if (z <= from || p->w[i] == 0)
			continue;
		if (a >= to)
			break;
		/* The bin's weight spread evenly over it, cut where the
		 * range and the cut points cut it. */
		double density = p->w[i] / (z - a);
		double x = a > from ? a : from, end = z < to ? z : to;
		while (x < end) {
			size_t band = band_at(cuts, nbands, x + (end - x) * 1e-9);
			double y = end;
			if (band + 1 < nbands && cuts[band] < y)
				y = cuts[band] > x ? cuts[band] : end;
			double m = density * (cdf((y - est) / sd) - cdf((x - est) / sd));
			prob[band] += m;
			total += m;
			x = y;
		}
	}
	if (!(total > 0))
		return false;
	for (size_t b = 0; b < nbands; b++)
		prob[b] /= total;
	return true;
}
