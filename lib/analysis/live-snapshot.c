/* live-snapshot.c - lp-serve's views written from what live.c keeps
 * (live.h's lp_live__snapshot and lp_live__range): the samples in view as
 * a flame graph, functions and stacks; the heatmap; per probe its
 * percentiles, histogram, cut, slow and fast flame graphs and what
 * separates them.  A snapshot walks the rings once per view; at their
 * bounds (262,144 samples, 65,536 spans a probe) that is a few tens of
 * milliseconds, once a second. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/live.h"
#include "analysis/live-internal.h"
#include "analysis/where.h"
#include "analysis/separate.h"
#include "analysis/top.h"
#include "base/hashmap.h"
#include "base/json.h"
#include "base/util.h"
#include "stream/attrs.h"
#include "stream/frame.h"

/* --- what a view holds ----------------------------------------------------- */

/* Sample k's weight in the view ending at end (0: outside it). */
static double in_view(const struct lp_live *l, const struct kept *k, int64_t end)
{
	if (!lp_live_input_shown(l, k->input))
		return 0;
	/* Beside inputs with times, one without (a pprof) cannot be placed:
	 * whole in every view.  Alone, it is windowed by when it came. */
	if (k->untimed && l->latest != LP_TIME_NONE)
		return k->weight;
	if (l->o.mode == LP_LIVE_WINDOW)
		return k->t > end - l->o.window_ns && k->t <= end ? k->weight : 0;
	return k->t <= end ? k->weight * exp2(-(double)(end - k->t) / (double)l->o.half_life_ns)
			   : k->weight;
}

/* The i-th kept sample, oldest first. */
static const struct kept *kept_at(const struct lp_live *l, size_t i)
{
	return &l->ring[(l->head + l->cap - l->n + i) % l->cap];
}

/* --- flame graphs: a trie of frames, written as nested [name, value, children] */

struct fnode {
	const struct lp_frame *frame;	/* NULL at the root */
	double v;
	uint32_t child, next;	/* first child, next sibling: 1-based, 0 none */
};

struct flame {
	struct fnode *nodes;
	size_t n, cap;
	struct lp_hashmap idx;	/* (parent, frame id) -> node + 1 */
	char *buf;
	size_t buf_cap;
	size_t emitted;
};

static void flame_init(struct flame *f)
{
	memset(f, 0, sizeof(*f));
	lp_hashmap__init(&f->idx);
	f->nodes = lp_calloc(f->cap = 64, sizeof(*f->nodes));
	f->n = 1;
}

static void flame_fini(struct flame *f)
{
	lp_hashmap__fini(&f->idx);
	free(f->nodes);
	free(f->buf);
}

static void flame_add(struct flame *f, const struct lp_stack *s, double w)
{
	uint32_t at = 0;

	f->nodes[0].v += w;
	for (size_t k = 0; k < s->nframes; k++) {
		uint64_t h = lp_hash_bytes(LP_HASH_INIT, &at, sizeof(at));
		h = lp_hashmap__key(lp_hash_bytes(h, &s->frames[k]->id, sizeof(s->frames[k]->id)));
		uintptr_t pos = (uintptr_t)lp_hashmap__get(&f->idx, h);
		if (!pos) {
			if (f->n == f->cap)
				f->nodes = lp_reallocarray(f->nodes, f->cap *= 2, sizeof(*f->nodes));
			f->nodes[f->n] = (struct fnode){ .frame = s->frames[k],
							 .next = f->nodes[at].child };
			f->nodes[at].child = (uint32_t)f->n + 1;
			pos = ++f->n;
			lp_hashmap__put(&f->idx, h, (void *)pos);
		}
		at = (uint32_t)pos - 1;
		f->nodes[at].v += w;
	}
}

struct child_ref {
	uint32_t node;
	const char *name;
};

static int cmp_child(const void *a, const void *b)
{
	const struct child_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->node > y->node) - (x->node < y->node);
}

/* Node at, its children above min, by name (as flamegraph.pl orders them). */
static void flame_put(struct flame *f, FILE *out, uint32_t at, double min)
{
	const struct fnode *n = &f->nodes[at];

	f->emitted++;
	fputc('[', out);
	if (n->frame)
		lp_json__cstring(out, lp_frame__name(n->frame, &f->buf, &f->buf_cap));
	else
		fputs("\"all\"", out);
	fputc(',', out);
	lp_json__number(out, n->v);
	fputs(",[", out);
	size_t nc = 0;
	for (uint32_t c = n->child; c; c = f->nodes[c - 1].next)
		nc += f->nodes[c - 1].v >= min;
	struct child_ref *kids = lp_calloc(nc ? nc : 1, sizeof(*kids));
	size_t i = 0;
	for (uint32_t c = n->child; c; c = f->nodes[c - 1].next)
		if (f->nodes[c - 1].v >= min)
			kids[i++] = (struct child_ref){
				c - 1, lp_strdup(lp_frame__name(f->nodes[c - 1].frame, &f->buf,
								&f->buf_cap)) };
	qsort(kids, nc, sizeof(*kids), cmp_child);
	bool first = true;
	for (i = 0; i < nc; i++) {
		if (f->emitted < FLAME_MAX_NODES) {
			if (!first)
				fputc(',', out);
			first = false;
			flame_put(f, out, kids[i].node, min);
		}
		free((char *)kids[i].name);
	}
	free(kids);
	fputs("]]", out);
}

static void flame_write(struct flame *f, FILE *out)
{
	flame_put(f, out, 0, f->nodes[0].v * FLAME_MIN_SHARE);
}

/* --- the snapshot ---------------------------------------------------------- */

static void put_key(FILE *out, const char *key)
{
	fputc(',', out);
	lp_json__cstring(out, key);
	fputc(':', out);
}

static void put_time(FILE *out, int64_t t)
{
	if (t == LP_TIME_NONE)
		fputs("null", out);
	else
		lp_json__int(out, t);
}

/* The view's samples into an lp_top (functions and stacks) and a flame. */
static void put_samples(struct lp_live *l, FILE *out, int64_t end)
{
	struct lp_top_opts to = { .mode = LP_TOP_ALL, .sort = LP_TOP_SORT_SELF };
	struct lp_top *top = lp_top__new(&to);
	struct lp_top_view v;
	struct flame f;

	for (size_t i = 0; i < l->n; i++) {
		const struct kept *k = kept_at(l, i);
		double w = end == LP_TIME_NONE ? 0 : in_view(l, k, end);
		if (w > 0)
			lp_top__add(top, k->t, k->stack, w);
	}
	lp_top__view(top, &v);
	flame_init(&f);
	for (size_t i = 0; i < v.nstacks; i++)
		flame_add(&f, v.stacks[i].stack, v.stacks[i].weight);
	put_key(out, "in_view");
	lp_json__int(out, (int64_t)v.count);
	put_key(out, "weight");
	lp_json__number(out, v.total);
	put_key(out, "stacks");
	lp_json__int(out, (int64_t)v.nstacks);
	fputs("},\"flame\":", out);
	flame_write(&f, out);
	put_key(out, "funcs");
	fputc('[', out);
	for (size_t i = 0; i < v.nfuncs && i < FUNC_ROWS; i++) {
		fputs(i ? ",[" : "[", out);
		lp_json__cstring(out, v.funcs[i].name);
		fputc(',', out);
		lp_json__cstring(out, v.funcs[i].module);
		fputc(',', out);
		lp_json__number(out, v.funcs[i].self);
		fputc(',', out);
		lp_json__number(out, v.funcs[i].total);
		fputc(']', out);
	}
	fputs("]", out);
	put_key(out, "stacks");
	fputc('[', out);
	for (size_t i = 0; i < v.nstacks && i < STACK_ROWS; i++) {
		const struct lp_stack *s = v.stacks[i].stack;
		char *folded = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&folded, &len);
		if (!m)
			lp_die(1, "out of memory");
		for (size_t k = 0; k < s->nframes; k++)
			fprintf(m, "%s%s", k ? ";" : "", lp_frame__name(s->frames[k], &f.buf, &f.buf_cap));
		fclose(m);
		fputs(i ? ",[" : "[", out);
		lp_json__string(out, folded, len);
		fputc(',', out);
		lp_json__number(out, v.stacks[i].weight);
		fputc(']', out);
		free(folded);
	}
	fputs("]", out);
	flame_fini(&f);
	lp_top_view__free(&v);
	lp_top__free(top);
}

/* The last HEAT_COLUMNS seconds up to end: samples by second and by their
 * offset in it. */
static void put_heat(struct lp_live *l, FILE *out, int64_t end)
{
	static const int64_t sec = 1000000000;
	uint32_t (*cells)[HEAT_ROWS] = lp_calloc(HEAT_COLUMNS, sizeof(*cells));
	int64_t last = end == LP_TIME_NONE ? 0 : end / sec, first = last - HEAT_COLUMNS + 1;
	uint32_t max = 0;
	uint64_t untimed = 0;

	for (size_t i = 0; end != LP_TIME_NONE && i < l->n; i++) {
		const struct kept *k = kept_at(l, i);
		if (!lp_live_input_shown(l, k->input))
			continue;
		/* a pprof's or folded stacks' samples have no time to place */
		untimed += k->untimed;
		if (k->untimed || k->t < 0 || k->t / sec < first || k->t / sec > last)
			continue;
		uint32_t *c = &cells[k->t / sec - first][(k->t % sec) * HEAT_ROWS / sec];
		if (++*c > max)
			max = *c;
	}
	put_key(out, "heat");
	fprintf(out, "{\"rows\":%d,\"first_s\":%lld,\"max\":%u,\"untimed\":%llu,\"columns\":[",
		HEAT_ROWS, (long long)first, max, (unsigned long long)untimed);
	for (int c = 0; end != LP_TIME_NONE && c < HEAT_COLUMNS; c++) {
		fputs(c ? ",[" : "[", out);
		for (int r = 0; r < HEAT_ROWS; r++)
			fprintf(out, r ? ",%u" : "%u", cells[c][r]);
		fputc(']', out);
	}
	fputs("]}", out);
	free(cells);
}

/* The value below which a fraction q of the sorted d[n] lies (the
 * nearest rank). */
static int64_t rank(const int64_t *d, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n);

	return d[i ? (i > n ? n : i) - 1 : 0];
}

static void put_hist(FILE *out, const int64_t *d, size_t n)
{
	fputs("[", out);
	for (size_t i = 0; i < n;) {
		/* The bucket of d[i]: [2^(k/4), 2^((k+1)/4)) ns. */
		double k = floor(log2((double)(d[i] > 0 ? d[i] : 1)) * HIST_PER_OCTAVE);
		double lo = d[i] > 0 ? exp2(k / HIST_PER_OCTAVE) : 0;
		double hi = exp2((k + 1) / HIST_PER_OCTAVE);
		size_t j = i;
		while (j < n && (double)d[j] < hi)
			j++;
		if (j == i)	/* rounding at the edge: d[i] belongs here */
			j++;
		fprintf(out, "%s[%.0f,%.0f,%zu]", i ? "," : "", lo, hi, j - i);
		i = j;
	}
	fputs("]", out);
}

/* What separates the probe's slow spans in view from its fast ones
 * (lp-split's ranking, separate.h): the branches reached, calls made and
 * values captured, most significant first, over the newest spans kept
 * with attributes.  Every probe counts as watching every span. */
/* Whether a span's values (its attributes, or a sample's vals) meet w. */
static bool where_holds(struct lp_live *l, const struct lp_where *w, const struct lp_attrs *a)
{
	return lp_where__holds(w, lp_attrs__get(a, w->key, &l->buf, &l->buf_cap) < 0 ? NULL : l->buf);
}

static void put_separates(struct lp_live *l, FILE *out, const struct probe *p, int64_t end,
			  int64_t at)
{
	struct lp_separate_row rows[SEPARATE_ROWS];
	size_t n = 0;

	put_key(out, "separates");
	fputc('[', out);
	if ((at != LP_TIME_NONE || p->took || p->where) && p->an) {
		struct lp_separate *sep = lp_separate__new(2);
		for (size_t i = 0; i < p->an; i++) {
			const struct attrs_kept *a =
				&p->attrs[(p->ahead + ATTRS_KEPT - p->an + i) % ATTRS_KEPT];
			if ((l->o.mode == LP_LIVE_WINDOW && a->end <= end - l->o.window_ns) ||
			    !lp_live_input_shown(l, a->input))
				continue;
			struct lp_attrs attrs = { a->text, a->len };
			bool slow = p->took    ? lp_live_span_took(&attrs, p->took)
				    : p->where ? where_holds(l, p->where, &attrs)
					       : a->dur > at;
			lp_separate__span(sep, slow, &attrs, NULL, NULL);
		}
		n = lp_separate__rank(sep, 1, rows, SEPARATE_ROWS);
		for (size_t i = 0; i < n; i++) {
			fputs(i ? ",[" : "[", out);
			if (rows[i].verb)
				lp_json__cstring(out, rows[i].verb);
			else
				fputs("null", out);
			fputc(',', out);
			lp_json__string(out, rows[i].name, rows[i].len);
			fprintf(out, ",%llu,%llu,", (unsigned long long)rows[i].hi_n,
				(unsigned long long)rows[i].lo_n);
			lp_json__number(out, rows[i].hi_rate);
			fputc(',', out);
			lp_json__number(out, rows[i].lo_rate);
			fputc(',', out);
			lp_json__number(out, rows[i].log10p);
			fputc(']', out);
		}
		lp_separate__free(sep);
	}
	fputc(']', out);
}

static void put_probe(struct lp_live *l, FILE *out, size_t pi, int64_t end)
{
	struct probe *p = &l->probes[pi];
	int64_t *d = lp_calloc(p->n ? p->n : 1, sizeof(*d));
	size_t n = 0;
	double lp_ns = 0, span_ns = 0;

	for (size_t i = 0; i < p->n; i++) {
		const struct span_kept *s = &p->ring[(p->head + SPANS_KEPT - p->n + i) % SPANS_KEPT];
		if ((l->o.mode == LP_LIVE_WINDOW && s->end <= end - l->o.window_ns) ||
		    !lp_live_input_shown(l, s->input))
			continue;
		d[n++] = s->dur;
		lp_ns += (double)s->lp_ns;
		span_ns += (double)s->dur;
	}
	qsort(d, n, sizeof(*d), lp_cmp_i64);
	fputs(pi ? ",{" : "{", out);
	fputs("\"name\":", out);
	lp_json__cstring(out, p->name);
	put_key(out, "spans");
	lp_json__int(out, (int64_t)n);
	put_key(out, "total");
	lp_json__int(out, (int64_t)p->total);
	static const struct { const char *key; double q; } qs[] = {
		{ "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "max", 1 } };
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		put_key(out, qs[i].key);
		put_time(out, n ? rank(d, n, qs[i].q) : LP_TIME_NONE);
	}
	/* lp's own part of its spans' time (what lp-trace's probes added,
	 * calibrated), so a user sees what tracing it costs. */
	put_key(out, "lp_ns");
	lp_json__number(out, lp_ns);
	put_key(out, "lp_share");
	lp_json__number(out, span_ns > 0 ? lp_ns / span_ns : 0);
	put_key(out, "hist");
	put_hist(out, d, n);
	bool by_set = p->took || p->where;	/* a side by what the span did or held */
	int64_t at = by_set ? LP_TIME_NONE : p->by_threshold ? p->threshold
			    : n ? rank(d, n, p->percentile / 100) : LP_TIME_NONE;
	fputs(",\"cut\":{\"percentile\":", out);
	if (p->by_threshold || by_set)
		fputs("null", out);
	else
		lp_json__number(out, p->percentile);
	fputs(",\"threshold_ns\":", out);
	put_time(out, p->by_threshold && !by_set ? p->threshold : LP_TIME_NONE);
	fputs(",\"took\":", out);
	if (p->took)
		lp_json__cstring(out, p->took);
	else
		fputs("null", out);
	fputs(",\"where\":", out);
	if (p->where)
		lp_json__cstring(out, p->where_text);
	else
		fputs("null", out);
	fputs(",\"at_ns\":", out);
	put_time(out, at);
	fputs("}", out);
	put_separates(l, out, p, end, at);
	/* The samples joined to its spans, by the side of the cut their span
	 * is on: slow strictly above it, as lp-split counts; or with took,
	 * "slow" the spans that reached or called it. */
	struct flame side[2];
	flame_init(&side[0]);
	flame_init(&side[1]);
	uint64_t count[2] = { 0, 0 };
	for (size_t i = 0; (at != LP_TIME_NONE || by_set) && i < l->n; i++) {
		const struct kept *k = kept_at(l, i);
		double w = k->probe == (int)pi ? in_view(l, k, end) : 0;
		if (w <= 0)
			continue;
		struct lp_attrs vals = { k->vals ? k->vals : "", k->vals_len };
		int slow = p->took    ? lp_live_did_take(k->did, p->took)
			   : p->where ? where_holds(l, p->where, &vals)
				      : k->span_ns > at;
		flame_add(&side[slow], k->stack, w);
		count[slow]++;
	}
	for (int s = 1; s >= 0; s--) {
		put_key(out, s ? "slow" : "fast");
		if (count[0] + count[1])
			flame_write(&side[s], out);
		else
			fputs("null", out);
		put_key(out, s ? "slow_samples" : "fast_samples");
		lp_json__int(out, (int64_t)count[s]);
		flame_fini(&side[s]);
	}
	fputs("}", out);
	free(d);
}

int lp_live__snapshot(struct lp_live *l, FILE *out, const struct lp_live_extra *x)
{
	int64_t end = l->latest != LP_TIME_NONE ? l->latest : l->latest_arrival;

	fputs("{\"v\":1,\"title\":", out);
	lp_json__cstring(out, l->o.title ? l->o.title : "lp-serve");
	put_key(out, "mode");
	lp_json__cstring(out, l->o.mode == LP_LIVE_WINDOW ? "window" : "half-life");
	put_key(out, "window_ns");
	lp_json__int(out, l->o.window_ns);
	put_key(out, "half_life_ns");
	lp_json__int(out, l->o.half_life_ns);
	put_key(out, "end_ns");
	put_time(out, end);
	put_key(out, "host");
	if (l->host)
		lp_json__cstring(out, l->host);
	else
		fputs("null", out);
	put_key(out, "inputs");
	fputc('[', out);
	for (size_t i = 0; i < l->ninputs; i++) {
		fputs(i ? ",{\"host\":" : "{\"host\":", out);
		if (l->inputs[i].host)
			lp_json__cstring(out, l->inputs[i].host);
		else
			fputs("null", out);
		fprintf(out, ",\"samples\":%llu,\"spans\":%llu}",
			(unsigned long long)l->inputs[i].samples, (unsigned long long)l->inputs[i].spans);
	}
	fputc(']', out);
	fputs(",\"stats\":{\"samples\":", out);
	lp_json__int(out, (int64_t)l->samples);
	put_key(out, "kept");
	lp_json__int(out, (int64_t)l->n);
	put_key(out, "spans");
	lp_json__int(out, (int64_t)l->spans);
	put_key(out, "lost");
	lp_json__int(out, (int64_t)x->lost);
	put_key(out, "inputs");
	lp_json__int(out, x->inputs);
	put_key(out, "inputs_left");
	lp_json__int(out, x->inputs_left);
	fprintf(out, ",\"failed\":%s", x->failed ? "true" : "false");
	put_samples(l, out, end);	/* closes stats */
	put_heat(l, out, end);
	put_key(out, "probes");
	fputc('[', out);
	for (size_t i = 0; i < l->nprobes; i++)
		put_probe(l, out, i, end);
	fputc(']', out);
	fprintf(out, ",\"control\":{\"available\":%s,\"traced\":[", x->control ? "true" : "false");
	for (size_t i = 0; i < l->nattached; i++) {
		if (i)
			fputc(',', out);
		lp_json__cstring(out, l->attached[i]);
	}
	fputs("]}}\n", out);
	return ferror(out) ? -1 : 0;
}

int lp_live__range(struct lp_live *l, FILE *out, int64_t from, int64_t to)
{
	struct flame f;

	flame_init(&f);
	for (size_t i = 0; i < l->n; i++) {
		const struct kept *k = kept_at(l, i);
		if (k->t >= from && k->t < to && lp_live_input_shown(l, k->input))
			flame_add(&f, k->stack, k->weight);
	}
	flame_write(&f, out);
	fputc('\n', out);
	flame_fini(&f);
	return ferror(out) ? -1 : 0;
}
