/* quantile.c - logarithmic-bucket quantile sketch, optionally over a
 * sliding window of stream time (see quantile.h for the error bound). */
#include "base/quantile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* Above INT64_MAX: every duration a stream can hold (its times are 0 to
 * INT64_MAX ns) is within the accuracy bound, for ~25% more buckets than
 * 1e15 ns (11.6 days, which reported a 292-year span as 11 days). */
#define MAX_VALUE 1e19
#define BLOCK 64	/* buckets per block sum, so a query walks ~2*sqrt */

struct slice {
	int64_t idx;		/* which slice of stream time; INT64_MIN: empty */
	uint64_t zero;		/* values == 0 */
	uint64_t *counts;
};

struct lp_quantile {
	double accuracy, log_gamma, gamma;
	size_t nbuckets, nblocks;
	int64_t slice_ns;	/* 0: no window, one slice forever */
	int64_t cur;		/* newest slice index */
	struct slice slices[LP_QUANTILE_SLICES];
	size_t nslices;
	/* The window's sums, kept as slices come and go. */
	uint64_t *total, *blocks;
	uint64_t zero, count;
};

struct lp_quantile *lp_quantile__new(double accuracy, int64_t window_ns)
{
	struct lp_quantile *q = lp_calloc(1, sizeof(*q));
	q->accuracy = accuracy;
	q->gamma = (1 + accuracy) / (1 - accuracy);
	q->log_gamma = log(q->gamma);
	q->nbuckets = (size_t)ceil(log(MAX_VALUE) / q->log_gamma) + 2;
	q->nblocks = (q->nbuckets + BLOCK - 1) / BLOCK;
	q->nslices = window_ns > 0 ? LP_QUANTILE_SLICES : 1;
	q->slice_ns = window_ns > 0 ? (window_ns + LP_QUANTILE_SLICES - 1) / LP_QUANTILE_SLICES : 0;
	q->cur = INT64_MIN;
	for (size_t i = 0; i < q->nslices; i++) {
		q->slices[i].idx = INT64_MIN;
		q->slices[i].counts = lp_calloc(q->nbuckets, sizeof(uint64_t));
	}
	q->total = lp_calloc(q->nbuckets, sizeof(uint64_t));
	q->blocks = lp_calloc(q->nblocks, sizeof(uint64_t));
	return q;
}

void lp_quantile__free(struct lp_quantile *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->nslices; i++)
		free(q->slices[i].counts);
	free(q->total);
	free(q->blocks);
	free(q);
}

static size_t bucket(const struct lp_quantile *q, double v)
{
	if (v <= 1)
		return 0;
	if (v >= MAX_VALUE)
		v = MAX_VALUE;
	double i = ceil(log(v) / q->log_gamma);
	return i >= q->nbuckets ? q->nbuckets - 1 : (size_t)i;
}

/* Takes a slice's counts out of the window's sums and empties it. */
static void expire(struct lp_quantile *q, struct slice *s)
{
	if (s->idx == INT64_MIN)
		return;
	for (size_t i = 0; i < q->nbuckets; i++) {
		uint64_t c = s->counts[i];
		if (c) {
			q->total[i] -= c;
			q->blocks[i / BLOCK] -= c;
			q->count -= c;
			s->counts[i] = 0;
		}
	}
	q->zero -= s->zero;
	q->count -= s->zero;
	s->zero = 0;
	s->idx = INT64_MIN;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t d = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? d - 1 : d;
}

void lp_quantile__add(struct lp_quantile *q, double value, int64_t t)
{
	struct slice *s = &q->slices[0];
	if (q->slice_ns) {
		int64_t idx = floor_div(t, q->slice_ns);
		if (q->cur != INT64_MIN && idx <= q->cur - (int64_t)q->nslices)
			return;		/* older than the window */
		if (q->cur == INT64_MIN || idx > q->cur)
			q->cur = idx;
		s = &q->slices[(size_t)(idx % (int64_t)q->nslices + (int64_t)q->nslices) % q->nslices];
		if (s->idx != idx) {
			expire(q, s);
			s->idx = idx;
		}
		/* Slices that fell out of the window as time moved on. */
		for (size_t i = 0; i < q->nslices; i++) {
			struct slice *o = &q->slices[i];
			if (o->idx != INT64_MIN && o->idx <= q->cur - (int64_t)q->nslices)
				expire(q, o);
		}
	} else {
		s->idx = 0;
	}
	q->count++;
	if (!(value > 0)) {
		s->zero++;
		q->zero++;
		return;
	}
	size_t b = bucket(q, value);
	s->counts[b]++;
	q->total[b]++;
	q->blocks[b / BLOCK]++;
}

uint64_t lp_quantile__count(const struct lp_quantile *q)
{
	return q->count;
}

double lp_quantile__accuracy(const struct lp_quantile *q)
{
	return q->accuracy;
}

double lp_quantile__get(const struct lp_quantile *q, double p)
{
	if (!q->count)
		return NAN;
	uint64_t rank = (uint64_t)ceil(p * (double)q->count);
	if (rank < 1)
		rank = 1;
	if (rank > q->count)
		rank = q->count;
	if (rank <= q->zero)
		return 0;
	uint64_t seen = q->zero;
	size_t blk = 0;
	while (blk < q->nblocks && seen + q->blocks[blk] < rank)
		seen += q->blocks[blk++];
	for (size_t i = blk * BLOCK; i < q->nbuckets; i++) {
		seen += q->total[i];
		if (seen >= rank)
			return i == 0 ? 1 : 2 * exp((double)i * q->log_gamma) / (q->gamma + 1);
	}
	return MAX_VALUE;
}
