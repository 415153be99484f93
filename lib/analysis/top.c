/* top.c - sliding-window and decaying aggregation of samples by stack, and
 * the function/stack report lp-top draws.
 *
 * Window mode keeps a ring of buckets (one second each, or a tenth of the
 * window when it is shorter than ten seconds), each a map stack id -> summed
 * weight: a sample lands in the bucket of its timestamp, and a bucket is
 * freed when the view's end moves past the window, so memory follows the
 * distinct stacks per bucket, not the samples.  The window therefore ends on
 * a bucket boundary: it covers between window - bucket and window of time.
 *
 * Decay mode keeps one map whose weights are stored scaled by
 * 2^((t - ref) / half_life), so adding a sample never touches the others;
 * the report multiplies by 2^(-(end - ref) / half_life).  When the exponent
 * grows large the map is renormalised to a new ref and entries that became
 * negligible are dropped, which bounds it. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/frame.h"
#include "base/hashmap.h"
#include "analysis/feed.h"
#include "analysis/top.h"
#include "base/stop.h"
#include "base/util.h"

struct entry {
	const struct lp_stack *stack;
	double weight;
	uint64_t count;
};

struct bucket {
	int64_t index;		/* time / bucket_ns; INT64_MIN when empty */
	struct lp_hashmap map;	/* stack id -> struct entry */
};

struct lp_top {
	struct lp_top_opts o;
	int64_t end;		/* the view's end; LP_TIME_NONE before any time */
	int64_t latest;		/* newest sample time */
	uint64_t samples, dropped;
	/* window */
	int64_t bucket_ns;
	size_t nbuckets;
	struct bucket *ring;
	/* decay and all */
	struct lp_hashmap map;
	int64_t ref;		/* decay: stored weights are relative to this time */
};

/* Renormalise when stored weights reach 2^this: far from overflow. */
#define DECAY_MAX_EXP 256.0
/* On renormalising, entries below this fraction of the total go. */
#define DECAY_NEGLIGIBLE 1e-9

static void map_clear(struct lp_hashmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			free(m->values[i]);
	lp_hashmap__fini(m);
	lp_hashmap__init(m);
}

static struct entry *map_entry(struct lp_hashmap *m, const struct lp_stack *stack)
{
	uint64_t key = lp_hashmap__key(stack->id);
	struct entry *e = lp_hashmap__get(m, key);

	if (!e) {
		e = lp_calloc(1, sizeof(*e));
		e->stack = stack;
		lp_hashmap__put(m, key, e);
	}
	return e;
}

struct lp_top *lp_top__new(const struct lp_top_opts *opts)
{
	struct lp_top *t = lp_calloc(1, sizeof(*t));

	t->o = *opts;
	t->end = LP_TIME_NONE;
	t->latest = LP_TIME_NONE;
	t->ref = LP_TIME_NONE;
	lp_hashmap__init(&t->map);
	if (t->o.mode == LP_TOP_WINDOW) {
		if (t->o.window_ns <= 0)
			t->o.window_ns = 10 * 1000000000LL;
		t->bucket_ns = 1000000000LL;
		if (t->o.window_ns < 10 * t->bucket_ns)
			t->bucket_ns = t->o.window_ns / 10 > 1000000 ? t->o.window_ns / 10 : 1000000;
		t->nbuckets = (size_t)((t->o.window_ns + t->bucket_ns - 1) / t->bucket_ns);
		t->ring = lp_calloc(t->nbuckets, sizeof(*t->ring));
		for (size_t i = 0; i < t->nbuckets; i++) {
			t->ring[i].index = INT64_MIN;
			lp_hashmap__init(&t->ring[i].map);
		}
	}
	if (t->o.mode == LP_TOP_DECAY && t->o.half_life_ns <= 0)
		t->o.half_life_ns = 5 * 1000000000LL;
	return t;
}

void lp_top__free(struct lp_top *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbuckets; i++) {
		map_clear(&t->ring[i].map);
		lp_hashmap__fini(&t->ring[i].map);
	}
	free(t->ring);
	map_clear(&t->map);
	lp_hashmap__fini(&t->map);
	free(t);
}

/* Floor division: times before 0 are unusual but not wrong. */
static int64_t bucket_of(const struct lp_top *t, int64_t time)
{
	int64_t q = time / t->bucket_ns;

	return (time % t->bucket_ns < 0) ? q - 1 : q;
}

static void decay_renormalise(struct lp_top *t, int64_t new_ref)
{
	double f = exp2(-(double)(new_ref - t->ref) / (double)t->o.half_life_ns);
	double total = 0;
	struct lp_hashmap keep;

	for (size_t i = 0; i < t->map.cap; i++)
		if (t->map.keys[i]) {
			struct entry *e = t->map.values[i];
			e->weight *= f;
			total += e->weight;
		}
	lp_hashmap__init(&keep);
	for (size_t i = 0; i < t->map.cap; i++) {
		if (!t->map.keys[i])
			continue;
		struct entry *e = t->map.values[i];
		if (e->weight > total * DECAY_NEGLIGIBLE)
			lp_hashmap__put(&keep, t->map.keys[i], e);
		else
			free(e);
	}
	lp_hashmap__fini(&t->map);
	t->map = keep;
	t->ref = new_ref;
}

void lp_top__advance(struct lp_top *t, int64_t now)
{
	if (now == LP_TIME_NONE || (t->end != LP_TIME_NONE && now <= t->end))
		return;
	t->end = now;
	if (t->o.mode == LP_TOP_WINDOW) {
		int64_t first = bucket_of(t, now) - (int64_t)t->nbuckets + 1;
		for (size_t i = 0; i < t->nbuckets; i++) {
			struct bucket *b = &t->ring[i];
			if (b->index != INT64_MIN && b->index < first) {
				map_clear(&b->map);
				b->index = INT64_MIN;
			}
		}
	} else if (t->o.mode == LP_TOP_DECAY && t->ref != LP_TIME_NONE &&
		   (double)(now - t->ref) / (double)t->o.half_life_ns > DECAY_MAX_EXP) {
		decay_renormalise(t, now);
	}
}

void lp_top__add(struct lp_top *t, int64_t time, const struct lp_stack *stack, double weight)
{
	struct entry *e;

	t->samples++;
	if (t->latest == LP_TIME_NONE || time > t->latest)
		t->latest = time;
	switch (t->o.mode) {
	case LP_TOP_WINDOW: {
		lp_top__advance(t, time);
		int64_t bi = bucket_of(t, time);
		if (bi <= bucket_of(t, t->end) - (int64_t)t->nbuckets) {
			t->dropped++;
			return;
		}
		struct bucket *b = &t->ring[(uint64_t)bi % t->nbuckets];
		if (b->index != bi) {
			map_clear(&b->map);
			b->index = bi;
		}
		e = map_entry(&b->map, stack);
		break;
	}
	case LP_TOP_DECAY:
		if (t->ref == LP_TIME_NONE)
			t->ref = time;
		lp_top__advance(t, time);
		if ((double)(time - t->ref) / (double)t->o.half_life_ns > DECAY_MAX_EXP)
			decay_renormalise(t, time);
		e = map_entry(&t->map, stack);
		weight *= exp2((double)(time - t->ref) / (double)t->o.half_life_ns);
		break;
	default:
		lp_top__advance(t, time);
		e = map_entry(&t->map, stack);
		break;
	}
	e->weight += weight;
	e->count++;
}

int64_t lp_top__latest(const struct lp_top *t)
{
	return t->latest;
}

/* --- the view -------------------------------------------------------- */

struct view {
	struct entry *entries;	/* owned copies, weights as of the view's end */
	size_t n;
	double total;
	uint64_t count;
};

static void view_add(struct view *v, struct lp_hashmap *idx, const struct entry *src, double f)
{
	uint64_t key = lp_hashmap__key(src->stack->id);
	uintptr_t pos = (uintptr_t)lp_hashmap__get(idx, key);

	if (!pos) {
		v->entries = lp_reallocarray(v->entries, v->n + 1, sizeof(*v->entries));
		v->entries[v->n] = (struct entry){ src->stack, 0, 0 };
		pos = ++v->n;
		lp_hashmap__put(idx, key, (void *)pos);
	}
	v->entries[pos - 1].weight += src->weight * f;
	v->entries[pos - 1].count += src->count;
	v->total += src->weight * f;
	v->count += src->count;
}

static void view_build(struct lp_top *t, struct view *v)
{
	struct lp_hashmap idx;

	memset(v, 0, sizeof(*v));
	lp_hashmap__init(&idx);
	if (t->o.mode == LP_TOP_WINDOW) {
		for (size_t b = 0; b < t->nbuckets; b++) {
			struct lp_hashmap *m = &t->ring[b].map;
			if (t->ring[b].index == INT64_MIN)
				continue;
			for (size_t i = 0; i < m->cap; i++)
				if (m->keys[i])
					view_add(v, &idx, m->values[i], 1);
		}
	} else {
		double f = 1;
		if (t->o.mode == LP_TOP_DECAY && t->ref != LP_TIME_NONE)
			f = exp2(-(double)(t->end - t->ref) / (double)t->o.half_life_ns);
		for (size_t i = 0; i < t->map.cap; i++)
			if (t->map.keys[i])
				view_add(v, &idx, t->map.values[i], f);
	}
	lp_hashmap__fini(&idx);
}

void lp_top__stats(struct lp_top *t, struct lp_top_stats *st)
{
	struct view v;

	view_build(t, &v);
	st->samples = t->samples;
	st->dropped = t->dropped;
	st->weight = v.total;
	st->stacks = v.n;
	free(v.entries);
}

static const char *module_base(const struct lp_frame *f)
{
	const char *base = strrchr(f->module, '/');

	if (!lp_frame__has_module(f))
		return "";
	return base ? base + 1 : f->module;
}

struct func {
	char *name;		/* display name */
	const char *module;	/* basename, "" when unknown */
	double self, total;
	uint64_t stamp;		/* the last stack counted in total (recursion) */
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->weight != y->weight)
		return (x->weight < y->weight) - (x->weight > y->weight);
	return (x->stack->id > y->stack->id) - (x->stack->id < y->stack->id);
}

/* arg: the enum lp_top_sort to order by. */
static int cmp_func(const void *a, const void *b, void *arg)
{
	const struct func *x = *(struct func *const *)a, *y = *(struct func *const *)b;
	enum lp_top_sort sort_key = *(const enum lp_top_sort *)arg;
	double xp = sort_key == LP_TOP_SORT_SELF ? x->self : x->total;
	double yp = sort_key == LP_TOP_SORT_SELF ? y->self : y->total;
	double xs = sort_key == LP_TOP_SORT_SELF ? x->total : x->self;
	double ys = sort_key == LP_TOP_SORT_SELF ? y->total : y->self;
	int c;

	if (xp != yp)
		return (xp < yp) - (xp > yp);
	if (xs != ys)
		return (xs < ys) - (xs > ys);
	if ((c = strcmp(x->name, y->name)))
		return c;
	return strcmp(x->module, y->module);
}

/* Writes s cut to fit in room columns (bytes: names are mostly ASCII); a
 * cut stack keeps its leaf end, which is what one looks at. */
static void put_fitted(FILE *out, const char *s, int room, int keep_end)
{
	size_t len = strlen(s);

	if (room <= 0 || len <= (size_t)room) {
		fputs(s, out);
		return;
	}
	if (room <= 3) {
		fwrite(keep_end ? s + len - room : s, 1, room, out);
		return;
	}
	if (keep_end) {
		fputs("...", out);
		fputs(s + len - (room - 3), out);
	} else {
		fwrite(s, 1, room - 3, out);
		fputs("...", out);
	}
}

/* The view's functions, most weight first: self is the leaf's, total
 * counts a function once per stack however often it recurses.  *buf is
 * scratch for frame names. */
static struct func **view_funcs(const struct view *v, enum lp_top_sort sort, size_t *nfuncs,
				char **buf, size_t *buf_cap)
{
	struct lp_hashmap fidx;
	struct func **funcs = NULL;
	size_t n = 0;
	lp_hashmap__init(&fidx);
	for (size_t i = 0; i < v->n; i++) {
		const struct lp_stack *s = v->entries[i].stack;
		for (size_t k = 0; k < s->nframes; k++) {
			const struct lp_frame *f = s->frames[k];
			const char *name = lp_frame__name(f, buf, buf_cap);
			const char *mod = module_base(f);
			uint64_t h = lp_hash_bytes(LP_HASH_INIT, name, strlen(name) + 1);
			h = lp_hashmap__key(lp_hash_bytes(h, mod, strlen(mod)));
			struct func *fn = lp_hashmap__get(&fidx, h);
			if (!fn) {
				fn = lp_calloc(1, sizeof(*fn));
				fn->name = lp_strdup(name);
				fn->module = mod;
				lp_hashmap__put(&fidx, h, fn);
				funcs = lp_reallocarray(funcs, n + 1, sizeof(*funcs));
				funcs[n++] = fn;
			}
			if (fn->stamp != i + 1) {
				fn->stamp = i + 1;
				fn->total += v->entries[i].weight;
			}
			if (k + 1 == s->nframes)
				fn->self += v->entries[i].weight;
		}
	}
	lp_hashmap__fini(&fidx);
	if (n)	/* no sample: no array */
		qsort_r(funcs, n, sizeof(*funcs), cmp_func, &sort);
	*nfuncs = n;
	return funcs;
}

/* The functions' table: SELF% TOTAL% FUNCTION [module].  Returns lines. */
static int put_funcs(FILE *out, struct func **funcs, size_t nfuncs, double total,
		     const struct lp_top_report_opts *ro, const char *eol, char **buf,
		     size_t *buf_cap)
{
	int lines = 0;
	fprintf(out, "  SELF%%  TOTAL%%  FUNCTION%s\n", eol);
	lines++;
	for (size_t i = 0; i < nfuncs && (ro->nfuncs < 0 || (int)i < ro->nfuncs); i++) {
		const struct func *fn = funcs[i];
		int n = fprintf(out, "%7.2f %7.2f  ", 100 * fn->self / total,
				100 * fn->total / total);
		bool bracketed = fn->module[0] == '[';	/* [kernel.kallsyms], [vdso] */
		size_t nl = strlen(fn->name), ml = strlen(fn->module);
		lp_grow(buf, buf_cap, nl + ml + 5);	/* names may be any length */
		if (!fn->module[0] || fn->name[0] == '[')
			snprintf(*buf, *buf_cap, "%s", fn->name);
		else if (bracketed)
			snprintf(*buf, *buf_cap, "%s  %s", fn->name, fn->module);
		else
			snprintf(*buf, *buf_cap, "%s  [%s]", fn->name, fn->module);
		put_fitted(out, *buf, ro->width ? ro->width - n : 0, 0);
		fprintf(out, "%s\n", eol);
		lines++;
	}
	return lines;
}

/* The stacks' table: SHARE% root;...;leaf.  Returns lines. */
static int put_stacks(FILE *out, const struct view *v, double total,
		      const struct lp_top_report_opts *ro, const char *eol, char **buf,
		      size_t *buf_cap)
{
	int lines = 0;
	fprintf(out, " SHARE%%  STACK (root;...;leaf)%s\n", eol);
	lines++;
	char *folded = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < v->n && (ro->nstacks < 0 || (int)i < ro->nstacks); i++) {
		const struct lp_stack *s = v->entries[i].stack;
		size_t len = 0;
		for (size_t k = 0; k < s->nframes; k++) {
			const char *name = lp_frame__name(s->frames[k], buf, buf_cap);
			size_t nl = strlen(name);
			if (len + nl + 2 > cap) {
				cap = (len + nl + 2) * 2;
				folded = lp_realloc(folded, cap);
			}
			if (k)
				folded[len++] = ';';
			memcpy(folded + len, name, nl);
			len += nl;
		}
		if (!cap)
			folded = lp_realloc(folded, cap = 16);
		folded[len] = 0;
		int n = fprintf(out, "%7.2f  ", 100 * v->entries[i].weight / total);
		put_fitted(out, folded, ro->width ? ro->width - n : 0, 1);
		fprintf(out, "%s\n", eol);
		lines++;
	}
	free(folded);
	return lines;
}

int lp_top__report(struct lp_top *t, FILE *out, const struct lp_top_report_opts *ro)
{
	struct view v;
	char *buf = NULL;	/* a frame's name (lp_frame__name) */
	size_t buf_cap = 0, nfuncs;
	const char *eol = ro->eol ? ro->eol : "";
	char num[32];

	view_build(t, &v);
	if (v.n)	/* an empty view has no array, which qsort may not be given */
		qsort(v.entries, v.n, sizeof(*v.entries), cmp_entry);
	struct func **funcs = view_funcs(&v, t->o.sort, &nfuncs, &buf, &buf_cap);
	double total = v.total > 0 ? v.total : 1;

	fputs(ro->title ? ro->title : "lp-top", out);
	/* Weights are often nanoseconds: whole numbers past a thousand. */
	snprintf(num, sizeof(num), v.total >= 1000 ? "%.0f" : "%.6g", v.total);
	fprintf(out, "  samples %llu  stacks %zu  weight %s", (unsigned long long)v.count,
		v.n, num);
	if (t->dropped)
		fprintf(out, "  late %llu", (unsigned long long)t->dropped);
	fprintf(out, "%s\n%s\n", eol, eol);
	int lines = 2;
	lines += put_funcs(out, funcs, nfuncs, total, ro, eol, &buf, &buf_cap);
	fprintf(out, "%s\n", eol);
	lines++;
	lines += put_stacks(out, &v, total, ro, eol, &buf, &buf_cap);
	free(buf);
	for (size_t i = 0; i < nfuncs; i++) {
		free(funcs[i]->name);
		free(funcs[i]);
	}
	free(funcs);
	free(v.entries);
	return lines;
}

void lp_top__view(struct lp_top *t, struct lp_top_view *out)
{
	struct view v;
	char *buf = NULL;
	size_t buf_cap = 0, nfuncs;

	view_build(t, &v);
	if (v.n)
		qsort(v.entries, v.n, sizeof(*v.entries), cmp_entry);
	struct func **funcs = view_funcs(&v, t->o.sort, &nfuncs, &buf, &buf_cap);
	free(buf);
	memset(out, 0, sizeof(*out));
	out->total = v.total;
	out->count = v.count;
	out->nstacks = v.n;
	out->stacks = lp_calloc(v.n ? v.n : 1, sizeof(*out->stacks));
	for (size_t i = 0; i < v.n; i++)
		out->stacks[i] = (struct lp_top_stack_row){ v.entries[i].stack, v.entries[i].weight };
	out->nfuncs = nfuncs;
	out->funcs = lp_calloc(nfuncs ? nfuncs : 1, sizeof(*out->funcs));
	for (size_t i = 0; i < nfuncs; i++) {
		out->funcs[i] = (struct lp_top_func_row){ funcs[i]->name, funcs[i]->module,
							  funcs[i]->self, funcs[i]->total };
		free(funcs[i]);
	}
	free(funcs);
	free(v.entries);
}

void lp_top_view__free(struct lp_top_view *v)
{
	for (size_t i = 0; i < v->nfuncs; i++)
		free(v->funcs[i].name);
	free(v->funcs);
	free(v->stacks);
	memset(v, 0, sizeof(*v));
}

/* --- fed by reader threads ---------------------------------------------- */

struct lp_top_feed {
	struct lp_feed *feed;
	struct lp_top *top;
	int64_t first_time, latest_arrival;
};

static void feed_sample(void *sink, int input, const struct lp_record *rec, int64_t now)
{
	struct lp_top_feed *f = sink;

	if (rec->kind != LP_REC_SAMPLE || !rec->sample.stack)
		return;
	/* Folded input and some perf scripts carry no time: their samples
	 * are placed by arrival. */
	int64_t t = rec->sample.time_ns != LP_TIME_NONE ? rec->sample.time_ns : now;
	if (f->first_time == LP_TIME_NONE || t < f->first_time)
		f->first_time = t;
	if (lp_top__latest(f->top) == LP_TIME_NONE || t > lp_top__latest(f->top))
		f->latest_arrival = now;
	lp_top__add(f->top, t, rec->sample.stack, rec->sample.weight);
}

struct lp_top_feed *lp_top_feed__start(struct lp_top *t, struct lp_reader **readers, int n,
				       int wake_fd)
{
	struct lp_top_feed *f = lp_calloc(1, sizeof(*f));

	f->top = t;
	f->first_time = LP_TIME_NONE;
	f->feed = lp_feed__start(readers, n, wake_fd, feed_sample, f);
	return f;
}

void lp_top_feed__lock(struct lp_top_feed *f, struct lp_top_feed_state *st)
{
	struct lp_feed_state fs;

	lp_feed__lock(f->feed, &fs);
	if (st)
		*st = (struct lp_top_feed_state){ .first_time = f->first_time,
						  .latest_arrival = f->latest_arrival,
						  .lost = fs.lost,
						  .readers_left = fs.readers_left,
						  .failed = fs.failed };
}

void lp_top_feed__unlock(struct lp_top_feed *f)
{
	lp_feed__unlock(f->feed);
}

void lp_top_feed__join(struct lp_top_feed *f)
{
	lp_feed__join(f->feed);
}

void lp_top_feed__abandon(struct lp_top_feed *f)
{
	lp_feed__abandon(f->feed);
}

void lp_top_feed__free(struct lp_top_feed *f)
{
	if (!f)
		return;
	lp_feed__free(f->feed);
	free(f);
}
