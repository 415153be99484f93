/* selfcost.h - what lp's own samples and probes added to the spans it
 * measured (formats/lp-stream.md, "What lp costs"), and how likely a span
 * that lp made longer was truly on either side of a cut.
 *
 * A sample costs the thread it lands in ~14-23 us; a 2 us call that holds
 * one looks 16 us long *because* it was sampled.  lp-split takes the cost
 * out before it cuts: a span's corrected duration is its measured one less
 * its lp_ns= (lp-trace's probes inside it) less the cost of the samples
 * that landed in it on its thread.  What the correction cannot know is each
 * sample's own cost, only their mean and spread: a span whose correction
 * straddles a cut is decided by likelihood (lp_prior__bands). */
#ifndef LP_SELFCOST_H
#define LP_SELFCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/stream.h"

/* The costs a stream's cost records give. */
struct lp_costs;

struct lp_costs *lp_costs__new(void);
void lp_costs__free(struct lp_costs *c);
/* Takes a cost record in: a later one of the same kind replaces it. */
void lp_costs__add(struct lp_costs *c, const struct lp_cost *cost);
/* Whether any cost record was read. */
bool lp_costs__known(const struct lp_costs *c);

/* What a sample is, as far as its cost goes (LP_HIT_NONE: costs nothing
 * lp knows of, e.g. a wall-clock sample of a blocked thread). */
enum lp_hit { LP_HIT_NONE, LP_HIT_FP, LP_HIT_DWARF, LP_HIT_SAMPLE, LP_HIT_BLOCK, LP_HIT_N };
enum lp_hit lp_hit__of_sample(const struct lp_sample *smp);
/* The mean and variance (ns, ns^2) one such hit adds to its thread; false
 * when no cost record says. */
bool lp_costs__of(const struct lp_costs *c, enum lp_hit hit, double *mean, double *var);
/* The sampling period the cost records name (freq_hz=), in ns; 0 when
 * none does. */
double lp_costs__period(const struct lp_costs *c);

/* A duration less a cost taken out of it, never below 0; in integers, as
 * a duration near 2^63 has no exact double. */
int64_t lp_less_cost(int64_t d, double take);

/* A span's lp_ns= (0 when it has none); false when it is malformed. */
bool lp_span__lp_ns(const struct lp_span *sp, double *ns);

/* The prior of true durations: corrected durations binned on a log scale,
 * each weighted by the chance that a span of that length holds a sample
 * (1 - exp(-d / period); d itself when the period is not known). */
struct lp_prior;

struct lp_prior *lp_prior__new(const int64_t *durs, size_t n, double period_ns);
void lp_prior__free(struct lp_prior *p);
/* What samples cost a span: one sample's cost as a distribution, normal
 * (the calibration's mean and sd) or as the spans show it (deconvolved,
 * lp_costdist__deconvolve), and k samples' as its k-fold convolution. */
#define LP_COSTDIST_K 4		/* convolutions kept; more samples: normal */
struct lp_costdist {
	bool empirical;
	double mean, sd;	/* one sample's */
	double step;		/* empirical: ns a bin */
	size_t n;		/* bins of each cdf[] */
	double *cdf[LP_COSTDIST_K + 1];	/* cdf[k][i]: P(k samples cost < (i + 1) step) */
};

struct lp_costdist lp_costdist__normal(double mean, double sd);
/* One sample's cost as the spans show it: the durations of spans holding
 * exactly one sample (one[]) are those of the spans holding none (zero[],
 * weighted by t/(T - t): with one sample every period T of CPU time, a
 * span of length t < T holds one with probability t/T) plus the cost, so the
 * cost's distribution is their deconvolution (Richardson-Lucy, which keeps
 * it a distribution: it sees the long tail a mean and an sd hide).  guess
 * (the calibration's mean and sd) starts it and sets its range.  False
 * when either set has fewer than 100 spans. */
bool lp_costdist__deconvolve(struct lp_costdist *d, const double *one, size_t n1,
			     const double *zero, size_t n0, double period_ns, double guess_mean,
			     double guess_sd);
/* The q-quantile of one sample's cost, ns. */
double lp_costdist__quantile(const struct lp_costdist *d, double q);
/* P(k samples cost at most x ns). */
double lp_costdist__cdf(const struct lp_costdist *d, unsigned k, double x);
void lp_costdist__fini(struct lp_costdist *d);

/* The probability that a sampled span's true duration falls in each of
 * nbands bands (band i: cuts[i-1] < d <= cuts[i]), given its duration m
 * less lp_ns= (its k samples' cost still in), the distribution of that
 * cost, and a lower bound lb on its true duration (the part before its
 * first sample, measured cleanly).  prob[] gets nbands values summing to
 * 1.  False when the prior holds no mass where the span can be (decide by
 * the corrected duration alone). */
bool lp_prior__bands(const struct lp_prior *p, double m, double lb, const struct lp_costdist *d,
		     unsigned k, const double *cuts, size_t nbands, double *prob);

#endif
