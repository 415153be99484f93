/* separate.c - what separates one group of spans from the others
 * (separate.h).
 *
 * A feature is a yes or no of each span: it reached a point probe
 * (at.PROBE=), it called a function (calls.PROBE=), it carried a captured
 * value (KEY=VALUE as written).  A key with more than MAX_VALUES distinct
 * values (an id, a time, a pointer) says nothing as yes-or-no values: it is
 * left out, and memory stays bounded by the keys, not by the spans.
 */
#include "analysis/separate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/contents.h"
#include "base/hashmap.h"
#include "base/util.h"

#define MAX_VALUES 8	/* distinct values a key may have and still be features */

enum kind { F_REACHED, F_CALLED, F_VALUE };	/* also the order of a tie */

struct key {
	char *name;
	size_t len, nvalues;
	bool many;
};

struct feat {
	enum kind kind;
	char *name;		/* the probe, or KEY=VALUE, as written */
	size_t len;
	struct key *key;	/* F_VALUE: its key */
	struct watch *watch;	/* F_REACHED, F_CALLED: its probe's, if windowed */
	uint64_t *n;		/* spans with it, by group */
	double log10p;		/* the report's */
	uint64_t hi_n, lo_n;	/* the report's: spans with it in the group, in the others */
	double hi_rate, lo_rate;
};

/* A windowed probe: the spans it watched, by group. */
struct watch {
	char *probe;
	size_t len;
	uint64_t *n;
};

struct lp_separate {
	size_t ng;
	uint64_t *total;		/* spans by group */
	struct watch **watches;		/* __windowed's (never moved: features point at them) */
	size_t nwatches;
	struct lp_hashmap feats;	/* hash(kind, name) -> struct feat (__add) */
	struct lp_hashmap keys;		/* hash(key) -> struct key (__add) */
	struct feat **all;
	size_t nall;
};

struct lp_separate *lp_separate__new(size_t ngroups)
{
	struct lp_separate *s = lp_calloc(1, sizeof(*s));
	s->ng = ngroups;
	s->total = lp_calloc(ngroups ? ngroups : 1, sizeof(*s->total));
	lp_hashmap__init(&s->feats);
	lp_hashmap__init(&s->keys);
	return s;
}

void lp_separate__free(struct lp_separate *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nall; i++) {
		free(s->all[i]->name);
		free(s->all[i]->n);
		free(s->all[i]);
	}
	for (size_t i = 0; i < s->keys.cap; i++)
		if (s->keys.keys[i]) {
			struct key *k = s->keys.values[i];
			free(k->name);
			free(k);
		}
	for (size_t i = 0; i < s->nwatches; i++) {
		free(s->watches[i]->probe);
		free(s->watches[i]->n);
		free(s->watches[i]);
	}
	free(s->watches);
	lp_hashmap__fini(&s->feats);
	lp_hashmap__fini(&s->keys);
	free(s->all);
	free(s->total);
	free(s);
}

static struct key *key_get(struct lp_separate *s, const char *name, size_t len)
{
	uint64_t h = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, name, len));
	struct key *k;
	for (size_t pos = 0; (k = lp_hashmap__next(&s->keys, h, &pos));)
		if (k->len == len && !memcmp(k->name, name, len))
			return k;
	k = lp_calloc(1, sizeof(*k));
	k->name = lp_strndup(name, len);
	k->len = len;
	lp_hashmap__add(&s->keys, h, k);
	return k;
}

/* The feature, made when new (NULL: a key with too many values). */
static struct feat *feat_get(struct lp_separate *s, enum kind kind, const char *name, size_t len,
			     struct key *key)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &kind, sizeof(kind));
	h = lp_hashmap__key(lp_hash_bytes(h, name, len));
	struct feat *f;
	for (size_t pos = 0; (f = lp_hashmap__next(&s->feats, h, &pos));)
		if (f->kind == kind && f->len == len && !memcmp(f->name, name, len))
			return f;
	if (key && (key->many || ++key->nvalues > MAX_VALUES)) {
		key->many = true;
		return NULL;
	}
	f = lp_calloc(1, sizeof(*f));
	f->kind = kind;
	f->name = lp_strndup(name, len);
	f->len = len;
	f->key = key;
	f->n = lp_calloc(s->ng, sizeof(*f->n));
	lp_hashmap__add(&s->feats, h, f);
	s->all = lp_reallocarray(s->all, s->nall + 1, sizeof(*s->all));
	s->all[s->nall++] = f;
	return f;
}

static bool is(const struct lp_attr *a, const char *key)
{
	return a->key_len == strlen(key) && !memcmp(a->key, key, a->key_len);
}

static bool starts(const struct lp_attr *a, const char *prefix)
{
	size_t n = strlen(prefix);
	return a->key_len > n && !memcmp(a->key, prefix, n);
}

static struct watch *watch_of(struct lp_separate *s, const char *probe, size_t len)
{
	for (size_t i = 0; i < s->nwatches; i++)
		if (s->watches[i]->len == len && !memcmp(s->watches[i]->probe, probe, len))
			return s->watches[i];
	return NULL;
}

void lp_separate__windowed(struct lp_separate *s, const char *probe)
{
	size_t len = strlen(probe);
	if (watch_of(s, probe, len))
		return;
	struct watch *w = lp_calloc(1, sizeof(*w));
	*w = (struct watch){ lp_strdup(probe), len, lp_calloc(s->ng, sizeof(uint64_t)) };
	s->watches = lp_reallocarray(s->watches, s->nwatches + 1, sizeof(*s->watches));
	s->watches[s->nwatches++] = w;
	/* Features of it met already: rates over its spans from now on. */
	for (size_t i = 0; i < s->nall; i++)
		if (s->all[i]->kind != F_VALUE && s->all[i]->len == len &&
		    !memcmp(s->all[i]->name, probe, len))
			s->all[i]->watch = w;
}

void lp_separate__span(struct lp_separate *s, size_t g, const struct lp_attrs *attrs,
		       lp_separate_watched *watched, void *arg)
{
	struct lp_attrs_iter it = LP_ATTRS_ITER(attrs);
	struct lp_attr a;
	struct feat *f;
	s->total[g]++;
	/* Each windowed probe's spans. */
	for (size_t i = 0; watched && i < s->nwatches; i++)
		if (watched(arg, s->watches[i]->probe, s->watches[i]->len))
			s->watches[i]->n[g]++;
	while (lp_attrs__next(&it, &a)) {
		if (!a.value || !a.key_len)
			continue;
		size_t at = strlen(LP_CONTENTS_AT), calls = strlen(LP_CONTENTS_CALLS);
		if (starts(&a, LP_CONTENTS_AT))
			f = feat_get(s, F_REACHED, a.key + at, a.key_len - at, NULL);
		else if (starts(&a, LP_CONTENTS_CALLS))
			f = feat_get(s, F_CALLED, a.key + calls, a.key_len - calls, NULL);
		else if (starts(&a, LP_CONTENTS_CALLS_NS) || is(&a, "lp_ns") || is(&a, "nspid") ||
			 is(&a, "group") || is(&a, "corrected_ns") || is(&a, "key") ||
			 is(&a, "end_tid"))
			continue;	/* times, lp's bookkeeping, lp-split's label, a request's identity */
		else
			f = feat_get(s, F_VALUE, a.field, a.field_len, key_get(s, a.key, a.key_len));
		if (!f)
			continue;
		if (f->kind != F_VALUE && !f->watch)
			f->watch = watch_of(s, f->name, f->len);
		/* Reached while the probe watched part of the span only: not
		 * among the spans it is rated over. */
		if (f->watch && watched && !watched(arg, f->name, f->len))
			continue;
		f->n[g]++;
	}
}

/* ln C(n, k) */
static double lchoose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

double lp_fisher_log10p(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	double r1 = (double)a + (double)b, c1 = (double)a + (double)c;
	double n = r1 + (double)c + (double)d;
	double lo = fmax(0, r1 + c1 - n), hi = fmin(r1, c1);
	double base = lchoose(n, r1);
	double obs = lchoose(c1, (double)a) + lchoose(n - c1, r1 - (double)a) - base;
	/* the tables no likelier than the one observed (a relative
	 * tolerance: equal probabilities computed two ways), summed as
	 * exp(x - max) to keep what a double cannot */
	double max = -INFINITY, sum = 0;
	for (int pass = 0; pass < 2; pass++)
		for (double x = lo; x <= hi; x++) {
			double p = lchoose(c1, x) + lchoose(n - c1, r1 - x) - base;
			if (p > obs + 1e-7 * fabs(obs) + 1e-12)
				continue;
			if (pass == 0)
				max = fmax(max, p);
			else
				sum += exp(p - max);
		}
	double lnp = max + log(sum);
	if (lnp > 0)
		lnp = 0;
	return lnp / log(10);
}

/* "3.2e-41", "0.012", "1" */
static void fmt_p(char *b, size_t size, double log10p)
{
	if (log10p > -4) {
		snprintf(b, size, "%.2g", pow(10, log10p));
		return;
	}
	double e = floor(log10p), m = pow(10, log10p - e);
	if (m >= 9.95) {
		m = 1;
		e++;
	}
	snprintf(b, size, "%.1fe%.0f", m, e);
}

/* Most significant first (p to 6 digits: mirror tables' equal p-values
 * are computed apart by a rounding); then the larger difference of rates
 * (to 9 digits, alike: 1 - 0.572 is not 0.428 in doubles);
 * then what the group has more of (said as "reached", not "did not
 * reach"); then the kind (a branch before a value that merely follows
 * it) and the name. */
static int feat_cmp(const void *pa, const void *pb)
{
	const struct feat *a = *(const struct feat *const *)pa, *b = *(const struct feat *const *)pb;
	double pa6 = round(a->log10p * 1e6), pb6 = round(b->log10p * 1e6);
	if (pa6 != pb6)
		return (pa6 > pb6) - (pa6 < pb6);
	double da = round(fabs(a->hi_rate - a->lo_rate) * 1e9);
	double db = round(fabs(b->hi_rate - b->lo_rate) * 1e9);
	if (da != db)
		return (da < db) - (da > db);
	bool ma = a->hi_rate > a->lo_rate, mb = b->hi_rate > b->lo_rate;
	if (ma != mb)
		return ma ? -1 : 1;
	if (a->kind != b->kind)
		return (a->kind > b->kind) - (a->kind < b->kind);
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, n);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

static const char *const verbs[3][2] = {
	{ "reached", "did not reach" }, { "called", "did not call" }, { "had", "did not have" },
};

/* The features measured against group hi, the most significant first
 * (NULL when there is none); *all_hi and *all_lo: the spans in group hi
 * and in the others. */
static struct feat **ranked(struct lp_separate *s, size_t hi, size_t *count, uint64_t *all_hi_out,
			    uint64_t *all_lo_out)
{
	uint64_t nhi = s->total[hi], nlo = 0;
	*count = 0;
	for (size_t g = 0; g < s->ng; g++)
		nlo += g == hi ? 0 : s->total[g];
	*all_hi_out = nhi;
	*all_lo_out = nlo;
	if (!nhi || !nlo)
		return NULL;
	uint64_t all_hi = nhi, all_lo = nlo;
	struct feat **v = lp_calloc(s->nall ? s->nall : 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < s->nall; i++) {
		struct feat *x = s->all[i];
		if (x->key && x->key->many)
			continue;
		uint64_t a = x->n[hi], c = 0;
		for (size_t g = 0; g < s->ng; g++)
			c += g == hi ? 0 : x->n[g];
		/* A windowed probe's feature: over the spans it watched. */
		nhi = all_hi;
		nlo = all_lo;
		if (x->watch) {
			nhi = x->watch->n[hi];
			nlo = 0;
			for (size_t g = 0; g < s->ng; g++)
				nlo += g == hi ? 0 : x->watch->n[g];
			if (!nhi || !nlo)
				continue;
		}
		x->hi_n = a;
		x->lo_n = c;
		x->hi_rate = (double)a / (double)nhi;
		x->lo_rate = (double)c / (double)nlo;
		x->log10p = lp_fisher_log10p(a, nhi - a, c, nlo - c);
		v[n++] = x;
	}
	if (!n) {
		free(v);
		return NULL;
	}
	qsort(v, n, sizeof(*v), feat_cmp);
	*count = n;
	return v;
}

size_t lp_separate__rank(struct lp_separate *s, size_t hi, struct lp_separate_row *rows,
			 size_t max)
{
	size_t n;
	uint64_t all_hi, all_lo;
	struct feat **v = ranked(s, hi, &n, &all_hi, &all_lo);

	for (size_t i = 0; i < n && i < max; i++) {
		const struct feat *x = v[i];
		rows[i] = (struct lp_separate_row){
			.verb = x->kind == F_VALUE ? NULL : verbs[x->kind][0], .name = x->name,
			.len = x->len, .hi_n = x->hi_n, .lo_n = x->lo_n, .hi_rate = x->hi_rate,
			.lo_rate = x->lo_rate, .log10p = x->log10p };
	}
	free(v);
	return n < max ? n : max;
}

void lp_separate__report(struct lp_separate *s, FILE *f, size_t hi, const char *const *names,
			 size_t rows)
{
	size_t n;
	uint64_t all_hi, all_lo;
	struct feat **v = ranked(s, hi, &n, &all_hi, &all_lo);
	if (!v)
		return;
	/* the others' name: one group's, or "the rest" */
	char lo_name[256];
	if (s->ng == 2)
		snprintf(lo_name, sizeof(lo_name), "%s", names[hi ? 0 : 1]);
	else
		snprintf(lo_name, sizeof(lo_name), "not-%s", names[hi]);
	fprintf(f, "# what separates the %s spans (%llu) from the %s (%llu): spans with each, "
		   "Fisher's exact test (two-sided)\n",
		names[hi], (unsigned long long)all_hi, lo_name, (unsigned long long)all_lo);
	fprintf(f, "feature\t%s\t%s\t%s_rate\t%s_rate\tp\n", names[hi], lo_name, names[hi], lo_name);
	char p[32];
	for (size_t i = 0; i < n && i < rows; i++) {
		struct feat *x = v[i];
		fmt_p(p, sizeof(p), x->log10p);
		fprintf(f, "%s%s%.*s\t%llu\t%llu\t%.1f%%\t%.1f%%\t%s\n",
			x->kind == F_VALUE ? "" : verbs[x->kind][0], x->kind == F_VALUE ? "" : " ",
			(int)x->len, x->name, (unsigned long long)x->hi_n,
			(unsigned long long)x->lo_n, 100 * x->hi_rate,
			100 * x->lo_rate, p);
	}
	struct feat *top = v[0];
	if (top->log10p < -3) {
		bool more = top->hi_rate > top->lo_rate;
		fmt_p(p, sizeof(p), top->log10p);
		if (more)
			fprintf(f, "# the %s spans are the ones that %s %.*s (%.1f%% of %s, %.1f%% of %s, "
				   "p = %s)\n",
				names[hi], verbs[top->kind][0], (int)top->len, top->name,
				100 * top->hi_rate, names[hi], 100 * top->lo_rate, lo_name, p);
		else
			fprintf(f, "# the %s spans are the ones that %s %.*s (%.1f%% of %s %s it, "
				   "%.1f%% of %s, p = %s)\n",
				names[hi], verbs[top->kind][1], (int)top->len, top->name,
				100 * top->hi_rate, names[hi], verbs[top->kind][0],
				100 * top->lo_rate, lo_name, p);
	} else {
		fprintf(f, "# nothing inside the spans or captured by them tells the %s spans from the "
			   "%s (p >= 0.001)\n", names[hi], lo_name);
	}
	free(v);
}
