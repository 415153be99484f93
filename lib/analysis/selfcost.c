/* selfcost.c - lp's own cost, from cost records, and the likelihood that a
 * span lp made longer was truly above a cut (selfcost.h). */
#include "analysis/selfcost.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

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

/* The inverse error function, to 1e-3 (Winitzki's approximation, then
 * two Newton steps): a normal quantile from a probability. */
static double erfinv_approx(double y)
{
	const double a = 0.147;
	double l = log(1 - y * y), t = 2 / (M_PI * a) + l / 2;
	double x = copysign(sqrt(sqrt(t * t - l / a) - t), y);
	for (int i = 0; i < 2; i++)
		x -= (erf(x) - y) / (2 / sqrt(M_PI) * exp(-x * x));
	return x;
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

struct lp_costdist lp_costdist__normal(double mean, double sd)
{
	return (struct lp_costdist){ .mean = mean, .sd = sd };
}

void lp_costdist__fini(struct lp_costdist *d)
{
	for (int k = 0; k <= LP_COSTDIST_K; k++)
		free(d->cdf[k]);
	memset(d, 0, sizeof(*d));
}

/* Bins of one sample's cost in a deconvolution, and its passes: enough to
 * resolve a cost's tail, few enough that noise in a few thousand spans is
 * not fitted (Richardson-Lucy fits noise as it goes on). */
#define COST_BINS 400
#define RL_PASSES 60

/* A deconvolution's histograms, over bins of `step` ns: f, the durations
 * of spans with no sample (weighted as the chance a sample missed them),
 * normalized; h, those of spans with one; p and c, scratch. */
struct rl {
	double *f, *h, *p, *c;
	size_t *fj, nf;		/* f's non-empty bins, for the convolutions */
	size_t nd;
};

/* One Richardson-Lucy pass: g (the cost's distribution) updated so that f
 * convolved with it comes nearer to h.  False when it vanished. */
static bool rl_pass(struct rl *r, double *g)
{
	memset(r->p, 0, r->nd * sizeof(*r->p));
	for (size_t k = 0; k < COST_BINS; k++)
		if (g[k] > 1e-12)
			for (size_t a = 0; a < r->nf; a++)
				if (r->fj[a] + k < r->nd)
					r->p[r->fj[a] + k] += r->f[r->fj[a]] * g[k];
	double gt = 0;
	for (size_t k = 0; k < COST_BINS; k++) {
		double num = 0, den = 0;
		for (size_t a = 0; a < r->nf; a++) {
			size_t j = r->fj[a] + k;
			if (j >= r->nd)
				continue;
			den += r->f[r->fj[a]];
			if (r->p[j] > 0)
				num += r->f[r->fj[a]] * r->h[j] / r->p[j];
		}
		r->c[k] = den > 0 ? g[k] * num / den : 0;
		gt += r->c[k];
	}
	if (!(gt > 0))
		return false;
	for (size_t k = 0; k < COST_BINS; k++)
		g[k] = r->c[k] / gt;
	return true;
}

/* d from the cost's distribution g: its moments, and the cumulative
 * distribution of k samples' cost (g convolved k times) for each k. */
static void set_empirical(struct lp_costdist *d, const double *g, double step)
{
	d->empirical = true;
	d->step = step;
	d->n = (size_t)COST_BINS * LP_COSTDIST_K;
	double m = 0, v = 0;
	for (size_t k = 0; k < COST_BINS; k++)
		m += g[k] * ((double)k + 0.5) * step;
	for (size_t k = 0; k < COST_BINS; k++) {
		double x = ((double)k + 0.5) * step - m;
		v += g[k] * x * x;
	}
	d->mean = m;
	d->sd = sqrt(v);
	double *pk = lp_calloc(d->n, sizeof(*pk)), *next = lp_calloc(d->n, sizeof(*next));
	memcpy(pk, g, COST_BINS * sizeof(*g));
	for (int kk = 1; kk <= LP_COSTDIST_K; kk++) {
		if (kk > 1) {
			memset(next, 0, d->n * sizeof(*next));
			for (size_t a = 0; a < d->n; a++)
				if (pk[a] > 0)
					for (size_t b = 0; b < COST_BINS && a + b < d->n; b++)
						next[a + b] += pk[a] * g[b];
			memcpy(pk, next, d->n * sizeof(*pk));
		}
		d->cdf[kk] = lp_calloc(d->n, sizeof(double));
		double sum = 0;
		for (size_t a = 0; a < d->n; a++)
			d->cdf[kk][a] = sum += pk[a];
	}
	free(pk);
	free(next);
}

bool lp_costdist__deconvolve(struct lp_costdist *d, const double *one, size_t n1,
			     const double *zero, size_t n0, double period_ns, double guess_mean,
			     double guess_sd)
{
	memset(d, 0, sizeof(*d));
	if (n1 < 100 || n0 < 100 || !(period_ns > 0) || !(guess_mean > 0))
		return false;
	/* The cost is looked for within 3 times the calibration: wider, a
	 * span of one mode plus a large cost explains one of a slower mode
	 * as well as a small cost does, and the deconvolution cannot tell
	 * (2 us and 100 us calls, 14 us a sample: it found 34 us, sd 40). */
	double sd0 = fmax(guess_sd, guess_mean / 2);
	double kmax = guess_mean + 4 * sd0;
	if (kmax > period_ns / 2)
		kmax = period_ns / 2;
	double step = kmax / COST_BINS, dmax = 0.9 * period_ns;
	struct rl r = { .nd = (size_t)((dmax + kmax) / step) + 2 };
	r.f = lp_calloc(r.nd, sizeof(*r.f));
	r.h = lp_calloc(r.nd, sizeof(*r.h));
	r.p = lp_calloc(r.nd, sizeof(*r.p));
	r.c = lp_calloc(COST_BINS, sizeof(*r.c));
	r.fj = lp_calloc(r.nd, sizeof(*r.fj));
	double *g = lp_calloc(COST_BINS, sizeof(*g)), ft = 0, ht = 0;
	for (size_t i = 0; i < n0; i++)
		if (zero[i] >= 0 && zero[i] < dmax) {
			double w = fmax(zero[i], step / 2) / (period_ns - zero[i]);
			r.f[(size_t)(zero[i] / step)] += w;
			ft += w;
		}
	for (size_t i = 0; i < n1; i++)
		if (one[i] >= 0 && one[i] < dmax + kmax) {
			r.h[(size_t)(one[i] / step)] += 1;
			ht += 1;
		}
	for (size_t j = 0; j < r.nd; j++)
		if (r.f[j] > 0) {
			r.f[j] /= ft;
			r.fj[r.nf++] = j;
		}
	bool ok = ft > 0 && ht >= 100;
	/* Start from the calibration, widened to the whole range (where the
	 * start is 0, Richardson-Lucy never puts any). */
	double gt = 0;
	for (size_t k = 0; k < COST_BINS; k++) {
		double x = ((double)k + 0.5) * step - guess_mean;
		g[k] = exp(-x * x / (2 * sd0 * sd0));
		gt += g[k];
	}
	for (size_t k = 0; k < COST_BINS; k++)
		g[k] /= gt;
	for (int pass = 0; ok && pass < RL_PASSES; pass++)
		ok = rl_pass(&r, g);
	if (ok)
		set_empirical(d, g, step);
	free(r.f);
	free(r.h);
	free(r.p);
	free(r.c);
	free(r.fj);
	free(g);
	return ok;
}

double lp_costdist__cdf(const struct lp_costdist *d, unsigned k, double x)
{
	if (!d->empirical || k > LP_COSTDIST_K || k == 0) {
		double sd = d->sd * sqrt((double)k), mean = d->mean * (double)k;
		if (!(sd > 0))
			return x >= mean ? 1 : 0;
		return cdf((x - mean) / sd);
	}
	if (x <= 0)
		return 0;
	double pos = x / d->step;
	size_t i = (size_t)pos;
	if (i >= d->n)
		return 1;
	double lo = i ? d->cdf[k][i - 1] : 0, hi = d->cdf[k][i];
	return lo + (hi - lo) * (pos - (double)i);
}

double lp_costdist__quantile(const struct lp_costdist *d, double q)
{
	if (!d->empirical)
		return d->mean + d->sd * M_SQRT2 * erfinv_approx(2 * q - 1);
	for (size_t i = 0; i < d->n; i++)
		if (d->cdf[1][i] >= q)
			return ((double)i + 1) * d->step;
	return (double)d->n * d->step;
}

/* Where k samples' cost lies (nearly all of it). */
static void cost_range(const struct lp_costdist *d, unsigned k, double *lo, double *hi)
{
	if (d->empirical && k >= 1 && k <= LP_COSTDIST_K) {
		*lo = 0;
		*hi = (double)d->n * d->step;
		return;
	}
	double sd = d->sd * sqrt((double)k), mean = d->mean * (double)k;
	*lo = fmax(0, mean - 8 * sd);
	*hi = mean + 8 * sd;
}

bool lp_prior__bands(const struct lp_prior *p, double m, double lb, const struct lp_costdist *d,
		     unsigned k, const double *cuts, size_t nbands, double *prob)
{
	for (size_t b = 0; b < nbands; b++)
		prob[b] = 0;
	if (!p || !(d->sd > 0) || !k)
		return false;
	/* Where the true duration can be: m less what k samples can cost,
	 * and not below what was measured before the first sample. */
	double clo, chi;
	cost_range(d, k, &clo, &chi);
	double from = fmax(m - chi, lb), to = m - clo;
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
		 * range and the cut points cut it; a true duration t in
		 * [x, y) means a cost in (m - y, m - x]. */
		double density = p->w[i] / (z - a);
		double x = a > from ? a : from, end = z < to ? z : to;
		while (x < end) {
			size_t band = band_at(cuts, nbands, x + (end - x) * 1e-9);
			double y = end;
			if (band + 1 < nbands && cuts[band] < y)
				y = cuts[band] > x ? cuts[band] : end;
			double mass = density * (lp_costdist__cdf(d, k, m - x) -
						 lp_costdist__cdf(d, k, m - y));
			prob[band] += mass;
			total += mass;
			x = y;
		}
	}
	if (!(total > 0))
		return false;
	for (size_t b = 0; b < nbands; b++)
		prob[b] /= total;
	return true;
}
