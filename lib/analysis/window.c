/* window.c - recent samples only: eight buckets sliding over stream time,
 * or one profile whose weights are scaled up with time (2^(age/half-life)
 * from a reference) and scaled back at the view, so adding a sample never
 * touches the others. */
#include "analysis/window.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>

#define NBUCKETS 8
/* Decay: rescale once weights have grown by this factor, dropping the
 * stacks whose weight has become negligible. */
#define RESCALE_AT 0x1p40
#define NEGLIGIBLE 1e-12

struct bucket {
	int64_t index;			/* which eighth of DUR since the first sample */
	struct lp_folded_agg *agg;	/* samples of the current input */
	struct lp_profile *profile;	/* of the inputs before */
};

struct lp_window {
	struct lp_window_opts o;
	struct bucket buckets[NBUCKETS];	/* by index modulo NBUCKETS */
	int64_t width;			/* of a bucket */
	int64_t first, latest;
	int64_t ref;			/* decay: weights are relative to this time */
	uint64_t dropped;
};

static void bucket_reset(struct lp_window *w, struct bucket *b, int64_t index)
{
	lp_folded_agg__free(b->agg);
	lp_profile__free(b->profile);
	b->index = index;
	b->agg = lp_folded_agg__new(w->o.folded);
	b->profile = lp_profile__new();
}

struct lp_window *lp_window__new(const struct lp_window_opts *opts)
{
	struct lp_window *w = lp_calloc(1, sizeof(*w));
	w->o = *opts;
	w->first = w->latest = LP_TIME_NONE;
	w->width = opts->last_ns / NBUCKETS > 0 ? opts->last_ns / NBUCKETS : 1;
	for (int i = 0; i < NBUCKETS; i++)
		bucket_reset(w, &w->buckets[i], INT64_MIN);
	return w;
}

void lp_window__free(struct lp_window *w)
{
	if (!w)
		return;
	for (int i = 0; i < NBUCKETS; i++) {
		lp_folded_agg__free(w->buckets[i].agg);
		lp_profile__free(w->buckets[i].profile);
	}
	free(w);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Adds src's weights, times factor, into dst; returns the total added. */
static double add_scaled(struct lp_profile *dst, struct lp_profile *src, double factor,
			 double floor_weight)
{
	size_t n;
	const struct lp_profile_entry *const *e = lp_profile__sorted(src, &n);
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		double v = e[i]->weight[0] * factor;
		if (v > floor_weight) {
			lp_profile__add(dst, e[i]->stack, e[i]->len, e[i]->kinds, 0, v);
			total += v;
		}
	}
	return total;
}

/* Decay: weights so far are relative to w->ref; move the reference to t,
 * scaling them down and forgetting the negligible ones. */
static void rebase(struct lp_window *w, int64_t t)
{
	struct bucket *b = &w->buckets[0];
	lp_folded_agg__flush(b->agg, b->profile, 0);
	double factor = exp2(-(double)(t - w->ref) / (double)w->o.half_life_ns);
	double total = lp_profile__total(b->profile, 0) * factor;
	struct lp_profile *p = lp_profile__new();
	add_scaled(p, b->profile, factor, total * NEGLIGIBLE);
	lp_profile__free(b->profile);
	b->profile = p;
	w->ref = t;
}

int lp_window__add(struct lp_window *w, const struct lp_sample *s, const char **why)
{
	int64_t t = s->time_ns;
	if (t == LP_TIME_NONE) {
		*why = "a window needs timestamps (folded input has none)";
		return -1;
	}
	if (w->first == LP_TIME_NONE)
		w->first = w->latest = w->ref = t;
	if (t > w->latest)
		w->latest = t;
	if (w->o.half_life_ns > 0) {
		double factor = exp2((double)(t - w->ref) / (double)w->o.half_life_ns);
		if (factor > RESCALE_AT) {
			rebase(w, w->latest);
			factor = exp2((double)(t - w->ref) / (double)w->o.half_life_ns);
		}
		struct lp_sample scaled = *s;
		scaled.weight = s->weight * factor;
		lp_folded_agg__add(w->buckets[0].agg, &scaled);
		return 0;
	}
	if (w->o.last_ns <= 0) {	/* no window: everything */
		lp_folded_agg__add(w->buckets[0].agg, s);
		return 0;
	}
	int64_t index = floor_div(t - w->first, w->width);
	int64_t newest = floor_div(w->latest - w->first, w->width);
	if (index <= newest - NBUCKETS) {
		w->dropped++;
		return 0;
	}
	struct bucket *b = &w->buckets[((index % NBUCKETS) + NBUCKETS) % NBUCKETS];
	if (b->index != index)
		bucket_reset(w, b, index);
	lp_folded_agg__add(b->agg, s);
	return 0;
}

void lp_window__flush(struct lp_window *w)
{
	for (int i = 0; i < NBUCKETS; i++)
		lp_folded_agg__flush(w->buckets[i].agg, w->buckets[i].profile, 0);
}

struct lp_profile *lp_window__view(struct lp_window *w)
{
	struct lp_profile *view = lp_profile__new();
	lp_window__flush(w);
	if (w->first == LP_TIME_NONE)
		return view;
	if (w->o.half_life_ns > 0) {
		add_scaled(view, w->buckets[0].profile,
			   exp2(-(double)(w->latest - w->ref) / (double)w->o.half_life_ns), 0);
		return view;
	}
	if (w->o.last_ns <= 0) {
		add_scaled(view, w->buckets[0].profile, 1, -1);
		return view;
	}
	int64_t newest = floor_div(w->latest - w->first, w->width);
	for (int i = 0; i < NBUCKETS; i++)
		if (w->buckets[i].index > newest - NBUCKETS && w->buckets[i].index <= newest)
			add_scaled(view, w->buckets[i].profile, 1, -1);
	return view;
}

int64_t lp_window__latest(const struct lp_window *w)
{
	return w->latest;
}

uint64_t lp_window__dropped(const struct lp_window *w)
{
	return w->dropped;
}
