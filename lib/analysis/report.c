/* report.c - lp-report's work (report.h): a labelled stream read once for
 * the durations, the groups and the split records, each group's samples
 * aggregated as folded stacks (as lp-collapse formats them); read again by
 * lp-diff's code for the differential graph and the ranked table; all of
 * it written as one JSON object into the page. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/modes.h"
#include "analysis/report.h"
#include "analysis/selfcost.h"
#include "base/hashmap.h"
#include "base/json.h"
#include "base/util.h"
#include "model/profile.h"
#include "output/reportpage.h"
#include "stream/folded.h"

/* Groups that are no band of durations: not drawn as flame graphs, not a
 * side of the diff by default (lp-split(1)). */
static bool special_group(const char *name)
{
	return !strcmp(name, "outside") || !strcmp(name, "uncertain") || !strcmp(name, "lp") ||
	       !strcmp(name, "unprobed");
}

/* A key and its value as JSON text (a number, or a string already quoted). */
struct kv {
	char *key, *json;
};

struct group {
	char *name;
	double samples, spans, span_ns;
	double state_ns[3];		/* running, runnable, blocked */
	double sample_ns;		/* its samples' weight */
	struct lp_profile *prof;	/* its samples' folded stacks, side 0 */
	struct kv *split;		/* its split record's keys */
	size_t nsplit;
	size_t order;			/* its split group record's rank; SIZE_MAX: none */
	double dur_sum;			/* its spans' decided durations, summed */
};

/* A split record's parts: lp-split's decisions, as written. */
struct srec {
	char *what, *name, *value;
	struct kv *kv;
	size_t nkv;
};

struct report {
	const struct lp_report_opts *o;
	struct group *g;
	size_t ng;
	int64_t *durs;
	size_t ndurs, dcap;
	struct srec *recs;
	size_t nrecs;
	size_t ngrecs;			/* split group records read */
	bool have_states;		/* samples with state= */
	struct lp_folded_units units;
	struct lp_folded_buf fb, kb;
	FILE *j;			/* the JSON, into a memory buffer */
};

static struct group *group_of(struct report *r, const char *name, size_t len)
{
	for (size_t i = 0; i < r->ng; i++)
		if (strlen(r->g[i].name) == len && !memcmp(r->g[i].name, name, len))
			return &r->g[i];
	r->g = lp_reallocarray(r->g, r->ng + 1, sizeof(*r->g));
	struct group *g = &r->g[r->ng++];
	memset(g, 0, sizeof(*g));
	g->name = lp_strndup(name, len);
	g->prof = lp_profile__new();
	g->order = SIZE_MAX;
	return g;
}

/* A value as JSON: a number as written when it is one, else a string. */
static char *json_value(const char *v, size_t len)
{
	char *end, *s = lp_strndup(v, len), *out = NULL;
	size_t size = 0;

	FILE *f = open_memstream(&out, &size);

	errno = 0;
	double d = strtod(s, &end);
	if (len && !*end && !errno && isfinite(d))
		lp_json__number(f, d);
	else
		lp_json__string(f, s, len);
	fclose(f);
	free(s);
	return out;
}

/* The unescaped fields of attrs, each as a kv. */
static struct kv *attrs_kv(const struct lp_attrs *a, size_t *n)
{
	struct lp_attrs_iter it = LP_ATTRS_ITER(a);
	struct lp_attr at;
	struct kv *v = NULL;

	*n = 0;
	while (lp_attrs__next(&it, &at)) {
		if (!at.value)
			continue;
		char *val = lp_malloc(at.value_len + 1);
		size_t vl = lp_unescape(val, at.value, at.value_len);

		v = lp_reallocarray(v, *n + 1, sizeof(*v));
		v[*n].key = lp_strndup(at.key, at.key_len);
		v[(*n)++].json = json_value(val, vl);
		free(val);
	}
	return v;
}

static void free_kv(struct kv *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].json);
	}
	free(v);
}

static const char *kv_get(const struct kv *v, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].key, key))
			return v[i].json;
	return NULL;
}

/* "WHAT NAME VALUE key=value..." after "split" (formats/lp-stream.md). */
static void take_split(struct report *r, const char *line, size_t len)
{
	const char *f[3];
	size_t fl[3], k = 0;
	const char *p = line, *end = line + len;

	while (k < 3 && p <= end) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		f[k] = p;
		fl[k++] = (size_t)((tab ? tab : end) - p);
		p = tab ? tab + 1 : end + 1;
	}
	if (k < 3)
		return;		/* not one lp-split writes: ignored, as any unknown line */
	struct srec s = { 0 };
	char *tmp[3];
	for (int i = 0; i < 3; i++) {
		/* "-" is none; "\x2d" a name that is "-" */
		bool none = fl[i] == 1 && f[i][0] == '-';
		tmp[i] = lp_malloc(fl[i] + 1);
		tmp[i][none ? 0 : lp_unescape(tmp[i], f[i], fl[i])] = 0;
	}
	s.what = tmp[0];
	s.name = tmp[1];
	s.value = tmp[2];
	struct lp_attrs a = { .text = p <= end ? p : end, .len = p <= end ? (size_t)(end - p) : 0 };
	s.kv = attrs_kv(&a, &s.nkv);
	r->recs = lp_reallocarray(r->recs, r->nrecs + 1, sizeof(*r->recs));
	r->recs[r->nrecs++] = s;
	if (!strcmp(s.what, "group")) {
		struct group *g = group_of(r, s.name, strlen(s.name));

		g->order = r->ngrecs++;
		g->split = s.kv;
		g->nsplit = s.nkv;
		r->recs[r->nrecs - 1].kv = NULL;
		r->recs[r->nrecs - 1].nkv = 0;
	}
}

static void take_span(struct report *r, const struct lp_span *sp)
{
	size_t glen;
	const char *gname = lp_attrs__raw(&sp->attrs, "group", 5, &glen);

	if (!gname || sp->end_ns == LP_TIME_NONE)
		return;
	struct group *g = group_of(r, gname, glen);
	g->spans++;
	g->span_ns += (double)(sp->end_ns - sp->start_ns);
	/* The duration lp-split decided on (less lp's own cost), when it
	 * says; else the measured one less the probes' cost. */
	int64_t d;
	size_t clen;
	const char *c = lp_attrs__raw(&sp->attrs, "corrected_ns", 12, &clen);
	if (!c || !lp_attrs__value_i64(c, clen, &d)) {
		double lp_ns = 0;

		lp_span__lp_ns(sp, &lp_ns);
		d = lp_less_cost(sp->end_ns - sp->start_ns, lp_ns);
	}
	if (r->ndurs == r->dcap) {
		r->dcap = r->dcap ? 2 * r->dcap : 4096;
		r->durs = lp_reallocarray(r->durs, r->dcap, sizeof(*r->durs));
	}
	r->durs[r->ndurs++] = d;
	g->dur_sum += (double)d;
}

static void take_sample(struct report *r, const struct lp_sample *smp)
{
	size_t glen, slen;
	const char *gname = lp_attrs__raw(&smp->attrs, "group", 5, &glen);
	const char *state = lp_attrs__raw(&smp->attrs, "state", 5, &slen);
	int st = 0;

	if (!gname)
		return;
	struct group *g = group_of(r, gname, glen);
	double w = lp_folded_units__count(&r->units, smp);
	g->samples++;
	/* Thread states are known only in a wall-clock profile (state=). */
	if (state) {
		if (lp_attrs__value_is(state, slen, "runnable"))
			st = 1;
		else if (lp_attrs__value_is(state, slen, "blocked"))
			st = 2;
		g->state_ns[st] += smp->weight;
		r->have_states = true;
	}
	g->sample_ns += smp->weight;
	lp_folded_buf__reset(&r->fb);
	lp_folded_buf__reset(&r->kb);
	static const struct lp_folded_opts plain;
	lp_folded__format(&r->fb, &r->kb, smp, &plain);
	lp_profile__add(g->prof, r->fb.s, r->fb.len, r->kb.s, 0, w);
}

static int read_stream(struct report *r, const char *path)
{
	struct lp_reader *rd = lp_reader__open(path, r->o->format);
	struct lp_record rec;
	int rc;

	if (!rd)
		return -1;
	lp_folded_units__input(&r->units);
	while ((rc = lp_reader__next(rd, &rec)) > 0) {
		switch (rec.kind) {
		case LP_REC_HEADER:
			lp_folded_units__header(&r->units, &rec.header);
			break;
		case LP_REC_SAMPLE:
			take_sample(r, &rec.sample);
			break;
		case LP_REC_SPAN:
			take_span(r, &rec.span);
			break;
		case LP_REC_OTHER:
			if (rec.len > 6 && !memcmp(rec.line, "split\t", 6))
				take_split(r, rec.line + 6, rec.len - 6);
			break;
		default:
			break;
		}
	}
	/* The profiles' stacks are copies: the reader may go. */
	lp_reader__free(rd);
	return rc < 0 ? -1 : 0;
}

/* --- trees ---------------------------------------------------------- */

struct tnode {
	const char *name;
	uint32_t len, parent, first, next;
	char kind;
	double v[2];
};

struct tree {
	struct tnode *n;
	size_t nn, cap;
	struct lp_hashmap map;	/* (parent, name) -> index + 1 */
	double total[2];
};

static uint32_t tree_child(struct tree *t, uint32_t parent, const char *name, size_t len, char kind)
{
	uint64_t h = lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, &parent, sizeof(parent)), name, len);
	uint64_t key = lp_hashmap__key(h ^ (uint64_t)(unsigned char)kind);
	void *v;

	for (size_t pos = 0; (v = lp_hashmap__next(&t->map, key, &pos));) {
		struct tnode *c = &t->n[(uintptr_t)v - 1];
		if (c->parent == parent && c->len == len && c->kind == kind && !memcmp(c->name, name, len))
			return (uint32_t)((uintptr_t)v - 1);
	}
	if (t->nn == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->n = lp_reallocarray(t->n, t->cap, sizeof(*t->n));
	}
	uint32_t i = (uint32_t)t->nn++;
	t->n[i] = (struct tnode){ .name = name, .len = (uint32_t)len, .parent = parent,
				  .first = UINT32_MAX, .next = t->n[parent].first, .kind = kind };
	t->n[parent].first = i;
	lp_hashmap__add(&t->map, key, (void *)(uintptr_t)(i + 1));
	return i;
}

/* The tree of a profile's stacks (both sides), node 0 "all". */
static void tree_build(struct tree *t, struct lp_profile *p)
{
	size_t n;
	const struct lp_profile_entry *const *e = lp_profile__sorted(p, &n);

	memset(t, 0, sizeof(*t));
	lp_hashmap__init(&t->map);
	t->cap = 1024;
	t->n = lp_calloc(t->cap, sizeof(*t->n));
	t->n[0] = (struct tnode){ .name = "all", .len = 3, .first = UINT32_MAX, .next = UINT32_MAX };
	t->nn = 1;
	for (size_t i = 0; i < n; i++) {
		const char *s = e[i]->stack, *end = s + e[i]->len;
		uint32_t at = 0;
		size_t f = 0;

		for (int side = 0; side < 2; side++) {
			t->n[0].v[side] += e[i]->weight[side];
			t->total[side] += e[i]->weight[side];
		}
		while (s < end) {
			const char *semi = memchr(s, ';', (size_t)(end - s));
			const char *fe = semi ? semi : end;
			char kind = e[i]->kinds ? e[i]->kinds[f] : 'u';

			at = tree_child(t, at, s, (size_t)(fe - s), kind);
			for (int side = 0; side < 2; side++)
				t->n[at].v[side] += e[i]->weight[side];
			s = semi ? semi + 1 : end;
			f++;
		}
	}
}

static void tree_free(struct tree *t)
{
	free(t->n);
	lp_hashmap__fini(&t->map);
}

/* arg: the tree the nodes are in. */
static int child_cmp(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	const struct tnode *x = &t->n[*(const uint32_t *)a];
	const struct tnode *y = &t->n[*(const uint32_t *)b];
	size_t l = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, l);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Whether a node is big enough to draw: its share of a side's total. */
static bool tree_keep(const struct tree *t, uint32_t i, bool two, double min)
{
	const struct tnode *n = &t->n[i];

	if (t->total[0] > 0 && n->v[0] / t->total[0] >= min)
		return true;
	return two && t->total[1] > 0 && n->v[1] / t->total[1] >= min;
}

/* Node i and what is under it, as JSON: {"n","v"} (one side) or
 * {"n","a","b"} (two), "k"/"i" for kernel and inlined frames, "c". */
static void tree_json(FILE *j, const struct tree *t, uint32_t i, bool two, double min)
{
	const struct tnode *n = &t->n[i];
	uint32_t *kids = NULL;
	size_t nk = 0;

	fputs("{\"n\":", j);
	lp_json__string(j, n->name, n->len);
	if (two) {
		fputs(",\"a\":", j);
		lp_json__number(j, n->v[0]);
		fputs(",\"b\":", j);
		lp_json__number(j, n->v[1]);
	} else {
		fputs(",\"v\":", j);
		lp_json__number(j, n->v[0]);
	}
	if (n->kind == 'k')
		fputs(",\"k\":1", j);
	else if (n->kind == 'i')
		fputs(",\"i\":1", j);
	for (uint32_t c = n->first; c != UINT32_MAX; c = t->n[c].next)
		if (tree_keep(t, c, two, min)) {
			kids = lp_reallocarray(kids, nk + 1, sizeof(*kids));
			kids[nk++] = c;
		}
	if (nk) {
		qsort_r(kids, nk, sizeof(*kids), child_cmp, (void *)t);
		fputs(",\"c\":[", j);
		for (size_t k = 0; k < nk; k++) {
			if (k)
				fputc(',', j);
			tree_json(j, t, kids[k], two, min);
		}
		fputc(']', j);
	}
	fputc('}', j);
	free(kids);
}

/* --- the JSON ------------------------------------------------------- */

static void key(FILE *j, bool *first, const char *k)
{
	fputs(*first ? "" : ",", j);
	*first = false;
	lp_json__cstring(j, k);
	fputc(':', j);
}

static const struct srec *first_rec(const struct report *r, const char *what)
{
	for (size_t i = 0; i < r->nrecs; i++)
		if (!strcmp(r->recs[i].what, what))
			return &r->recs[i];
	return NULL;
}

static const char *probe_name(const struct report *r)
{
	const struct srec *p = first_rec(r, "probe");

	return p && *p->name ? p->name : NULL;
}

/* The probe, its durations' histogram and density, cuts and modes. */
static void write_distribution(struct report *r, bool *first)
{
	FILE *j = r->j;
	const struct srec *p = first_rec(r, "probe");

	if (p) {
		key(j, first, "probe");
		fputs("{\"name\":", j);
		lp_json__cstring(j, p->name);
		for (size_t i = 0; i < p->nkv; i++) {
			fputc(',', j);
			lp_json__cstring(j, p->kv[i].key);
			fputc(':', j);
			fputs(p->kv[i].json, j);
		}
		fputc('}', j);
	}
	if (!r->ndurs)
		return;
	struct lp_histogram h;
	struct lp_modes *m = lp_modes__new(r->durs, r->ndurs);
	int64_t lo = INT64_MAX, hi = 0;

	for (size_t i = 0; i < r->ndurs; i++) {
		lo = r->durs[i] < lo ? r->durs[i] : lo;
		hi = r->durs[i] > hi ? r->durs[i] : hi;
	}
	lp_histogram__init(&h, r->durs, r->ndurs, 80);
	key(j, first, "durations");
	fprintf(j, "{\"n\":%zu,\"min_ns\":", r->ndurs);
	lp_json__int(j, lo);
	fputs(",\"max_ns\":", j);
	lp_json__int(j, hi);
	fputs(",\"bins\":[", j);
	for (size_t i = 0; i < h.nrows; i++) {
		fprintf(j, "%s[", i ? "," : "");
		lp_json__int(j, h.edges[i]);
		fputc(',', j);
		lp_json__int(j, h.edges[i + 1]);
		fprintf(j, ",%zu]", h.counts[i]);
	}
	/* The density on the histogram's log axis, its peak 1. */
	fputs("],\"density\":[", j);
	enum { POINTS = 240 };
	double a = log((double)(h.edges[0] > 0 ? h.edges[0] : 1)), b = log((double)h.edges[h.nrows]);
	double d[POINTS], top = 0;
	for (int i = 0; i < POINTS; i++) {
		d[i] = lp_modes__density(m, exp(a + (b - a) * i / (POINTS - 1)));
		top = d[i] > top ? d[i] : top;
	}
	for (int i = 0; i < POINTS; i++) {
		fprintf(j, "%s[", i ? "," : "");
		lp_json__number(j, round(exp(a + (b - a) * i / (POINTS - 1))));
		fputc(',', j);
		lp_json__number(j, top > 0 ? round(d[i] / top * 1e4) / 1e4 : 0);
		fputc(']', j);
	}
	fputs("]}", j);
	/* Cuts and modes as lp-split decided and found them; modes found
	 * here when the stream has no split records. */
	key(j, first, "cuts");
	fputc('[', j);
	bool any = false;
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct srec *s = &r->recs[i];
		if (strcmp(s->what, "cut"))
			continue;
		char *v = json_value(s->value, strlen(s->value));
		fprintf(j, "%s{\"ns\":%s,\"label\":", any ? "," : "", v);
		free(v);
		lp_json__cstring(j, s->name);
		fputc('}', j);
		any = true;
	}
	fputc(']', j);
	key(j, first, "modes");
	fputc('[', j);
	any = false;
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct srec *s = &r->recs[i];
		if (strcmp(s->what, "mode"))
			continue;
		const char *share = kv_get(s->kv, s->nkv, "share");
		char *v = json_value(s->value, strlen(s->value));
		fprintf(j, "%s{\"ns\":%s,\"share\":%s}", any ? "," : "", v, share ? share : "0");
		free(v);
		any = true;
	}
	for (size_t i = 0; !first_rec(r, "mode") && i < m->nmodes; i++) {
		fprintf(j, "%s{\"ns\":", i ? "," : "");
		lp_json__int(j, m->modes[i].at_ns);
		fputs(",\"share\":", j);
		lp_json__number(j, round(m->modes[i].mass * 1e4) / 1e4);
		fputc('}', j);
	}
	fputc(']', j);
	lp_histogram__free(&h);
	lp_modes__free(m);
}

static void write_groups(struct report *r, bool *first)
{
	FILE *j = r->j;
	static const char *const states[] = { "running_ns", "runnable_ns", "blocked_ns" };

	key(j, first, "groups");
	fputc('[', j);
	for (size_t i = 0; i < r->ng; i++) {
		const struct group *g = &r->g[i];

		fprintf(j, "%s{\"name\":", i ? "," : "");
		lp_json__cstring(j, g->name);
		/* lp-split's figures where its record gives them, else the
		 * stream's own counts. */
		for (size_t k = 0; k < g->nsplit; k++)
			fprintf(j, ",\"%s\":%s", g->split[k].key, g->split[k].json);
		if (!kv_get(g->split, g->nsplit, "spans") && g->spans)
			fprintf(j, ",\"spans\":%.0f", g->spans);
		if (!kv_get(g->split, g->nsplit, "samples"))
			fprintf(j, ",\"samples\":%.0f", g->samples);
		for (int s = 0; r->have_states && s < 3; s++)
			if (!kv_get(g->split, g->nsplit, states[s])) {
				fprintf(j, ",\"%s\":", states[s]);
				lp_json__number(j, round(g->state_ns[s]));
			}
		/* Coverage says something of a band's spans only: the
		 * uncertain group holds spans for their samples. */
		if (!kv_get(g->split, g->nsplit, "coverage") && g->span_ns > 0 &&
		    !special_group(g->name)) {
			fputs(",\"coverage\":", j);
			lp_json__number(j, round(g->sample_ns / g->span_ns * 1e4) / 1e4);
		}
		fputc('}', j);
	}
	fputc(']', j);
}

/* "p90 (597 us)": the first cut, for a title; "" when there is none. */
static void cut_text(const struct report *r, char *b, size_t size)
{
	const struct srec *c = first_rec(r, "cut");
	double ns = c ? strtod(c->value, NULL) : 0;

	*b = 0;
	if (c)
		snprintf(b, size, "%s (%.3g %s)", c->name, ns >= 1e6 ? ns / 1e6 : ns / 1e3,
			 ns >= 1e6 ? "ms" : "us");
}

static void write_flames(struct report *r, bool *first, size_t *bands, size_t nb)
{
	FILE *j = r->j;
	double min = r->o->min_share;

	key(j, first, "unit");
	lp_json__cstring(j, lp_folded_units__ns(&r->units) ? "ns"
			    : r->units.weights && !r->units.samples ? "weight" : "samples");
	key(j, first, "flames");
	fputc('[', j);
	/* The slowest band first. */
	for (size_t k = nb, out = 0; k-- > 0;) {
		struct group *g = &r->g[bands[k]];
		struct tree t;
		char title[256], cut[96];

		if (!lp_profile__count(g->prof))
			continue;
		tree_build(&t, g->prof);
		cut_text(r, cut, sizeof(cut));
		if (!strcmp(g->name, "above") && *cut)
			snprintf(title, sizeof(title), "above %s", cut);
		else if (!strcmp(g->name, "below") && *cut)
			snprintf(title, sizeof(title), "%s and below", cut);
		else
			snprintf(title, sizeof(title), "%s", g->name);
		fprintf(j, "%s{\"group\":", out++ ? "," : "");
		lp_json__cstring(j, g->name);
		fputs(",\"title\":", j);
		lp_json__cstring(j, title);
		fputs(",\"total\":", j);
		lp_json__number(j, t.total[0]);
		fputs(",\"root\":", j);
		tree_json(j, &t, 0, false, min);
		fputc('}', j);
		tree_free(&t);
	}
	fputc(']', j);
}

/* The differential graph and the ranked table: lp-diff's, A against B. */
static int write_diff(struct report *r, bool *first, const char *path, const char *ga,
		      const char *gb)
{
	FILE *j = r->j;
	struct lp_diff_opts dopts = { .input_format = r->o->format, .groups = { ga, gb } };
	struct lp_diff_report_opts ropts = { .alpha = 0.01, .adjust = LP_DIFF_ADJUST_BH };
	struct lp_diff *d = lp_diff__new(&dopts);
	struct lp_diff_row *rows;
	size_t ntests, n, top = r->o->top ? r->o->top : 20;
	double min = r->o->min_share;

	if (lp_diff__read_both(d, path) < 0) {
		lp_diff__free(d);
		return -1;
	}
	struct tree t;
	tree_build(&t, lp_diff__profile(d));
	key(j, first, "diff");
	fputs("{\"a\":", j);
	lp_json__cstring(j, ga);
	fputs(",\"b\":", j);
	lp_json__cstring(j, gb);
	fputs(",\"total_a\":", j);
	lp_json__number(j, t.total[0]);
	fputs(",\"total_b\":", j);
	lp_json__number(j, t.total[1]);
	fputs(",\"root\":", j);
	tree_json(j, &t, 0, true, min);
	fputc('}', j);
	tree_free(&t);

	n = lp_diff__rows(d, &ropts, &rows, &ntests);
	double N[2] = { lp_diff__samples(d, 0), lp_diff__samples(d, 1) };
	key(j, first, "table");
	fputs("{\"a\":", j);
	lp_json__cstring(j, ga);
	fputs(",\"b\":", j);
	lp_json__cstring(j, gb);
	fprintf(j, ",\"tests\":%zu,\"rows\":[", ntests);
	for (size_t i = 0; i < n && i < top; i++) {
		const struct lp_diff_row *w = &rows[i];

		fprintf(j, "%s{\"function\":", i ? "," : "");
		lp_json__string(j, w->name, w->len);
		const char *names[] = { "self_a", "self_b", "total_a", "total_b" };
		const double vals[] = { w->self[0], w->self[1], w->total[0], w->total[1] };
		for (int k = 0; k < 4; k++) {
			double den = N[k & 1];
			fprintf(j, ",\"%s\":", names[k]);
			lp_json__number(j, den > 0 ? round(vals[k] / den * 1e6) / 1e6 : 0);
		}
		fputs(",\"samples_a\":", j);
		lp_json__number(j, w->total[0]);
		fputs(",\"samples_b\":", j);
		lp_json__number(j, w->total[1]);
		fputs(",\"p\":", j);
		lp_json__number(j, isnan(w->p) ? 1 : w->p);
		fprintf(j, ",\"significant\":%s}", w->significant ? "true" : "false");
	}
	fputs("]}", j);
	free(rows);
	lp_diff__free(d);
	return 0;
}

static void write_records(struct report *r, bool *first)
{
	FILE *j = r->j;
	bool any = false;

	key(j, first, "features");
	fputc('[', j);
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct srec *s = &r->recs[i];
		if (strcmp(s->what, "feature"))
			continue;
		fprintf(j, "%s{\"name\":", any ? "," : "");
		lp_json__cstring(j, s->name);
		for (size_t k = 0; k < s->nkv; k++)
			fprintf(j, ",\"%s\":%s", s->kv[k].key, s->kv[k].json);
		char *v = json_value(s->value, strlen(s->value));
		fprintf(j, ",\"p\":%s}", v);
		free(v);
		any = true;
	}
	fputc(']', j);
	key(j, first, "notes");
	fputc('[', j);
	any = false;
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct srec *s = &r->recs[i];
		const char *text = kv_get(s->kv, s->nkv, "text");
		if (strcmp(s->what, "note") || !text)
			continue;
		fprintf(j, "%s{\"kind\":", any ? "," : "");
		lp_json__cstring(j, s->name);
		fprintf(j, ",\"text\":%s}", text);
		any = true;
	}
	fputc(']', j);
}

/* The diff's sides: the options', else the fastest band and the slowest. */
static bool diff_sides(const struct report *r, const size_t *bands, size_t nb, const char **ga,
		       const char **gb)
{
	*ga = r->o->group_a;
	*gb = r->o->group_b;
	if (!*ga && nb >= 2)
		*ga = r->g[bands[0]].name;
	if (!*gb && nb >= 2)
		*gb = r->g[bands[nb - 1]].name;
	return *ga && *gb;
}

static void free_report(struct report *r)
{
	for (size_t i = 0; i < r->ng; i++) {
		free(r->g[i].name);
		lp_profile__free(r->g[i].prof);
		free_kv(r->g[i].split, r->g[i].nsplit);
	}
	free(r->g);
	for (size_t i = 0; i < r->nrecs; i++) {
		free(r->recs[i].what);
		free(r->recs[i].name);
		free(r->recs[i].value);
		free_kv(r->recs[i].kv, r->recs[i].nkv);
	}
	free(r->recs);
	free(r->durs);
	lp_folded_buf__free(&r->fb);
	lp_folded_buf__free(&r->kb);
}

/* "below, above, outside": the groups' names, for a message. */
static const char *group_list(const struct report *r)
{
	static char b[1024];

	*b = 0;
	for (size_t i = 0; i < r->ng; i++)
		snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%s", i ? ", " : "", r->g[i].name);
	return b;
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	double ma = a->spans ? a->dur_sum / a->spans : INFINITY;
	double mb = b->spans ? b->dur_sum / b->spans : INFINITY;

	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	if (ma != mb)
		return ma < mb ? -1 : 1;
	return strcmp(a->name, b->name);
}

int lp_report__write(const char *path, FILE *out, const struct lp_report_opts *o)
{
	struct report r = { .o = o };
	char *json = NULL;
	size_t jlen = 0;
	int rc = -1;

	if (read_stream(&r, path) < 0)
		goto out;
	if (!r.ng) {
		lp_error("%s: no sample or span has a group (lp-split --label writes them; "
			 "or give lp-report a probe to split by)", o->source ? o->source : path);
		goto out;
	}
	/* The bands fastest first: in lp-split's order, else by their spans'
	 * mean duration (a stream labelled by hand). */
	qsort(r.g, r.ng, sizeof(*r.g), group_cmp);
	size_t *bands = lp_calloc(r.ng + 1, sizeof(*bands)), nb = 0;
	for (size_t i = 0; i < r.ng; i++)
		if (!special_group(r.g[i].name))
			bands[nb++] = i;
	const char *ga, *gb;
	bool diff = diff_sides(&r, bands, nb, &ga, &gb);
	for (int side = 0; diff && side < 2; side++) {
		const char *want = side ? gb : ga;
		bool found = false;

		for (size_t i = 0; i < r.ng; i++)
			found |= !strcmp(r.g[i].name, want);
		if (!found) {
			lp_error("%s: no group '%s' (groups: %s)", o->source ? o->source : path, want,
				 group_list(&r));
			free(bands);
			goto out;
		}
	}

	r.j = open_memstream(&json, &jlen);
	bool first = true;
	fputc('{', r.j);
	key(r.j, &first, "title");
	if (o->title) {
		lp_json__cstring(r.j, o->title);
	} else {
		char t[512];
		const char *p = probe_name(&r);

		snprintf(t, sizeof(t), "%s%s", p ? "What makes slow calls of " : "Groups of samples",
			 p ? p : "");
		if (p)
			snprintf(t + strlen(t), sizeof(t) - strlen(t), " slow");
		lp_json__cstring(r.j, t);
	}
	key(r.j, &first, "version");
	lp_json__cstring(r.j, "lp-report " LP_VERSION);
	key(r.j, &first, "source");
	lp_json__cstring(r.j, o->source ? o->source : path);
	write_distribution(&r, &first);
	write_groups(&r, &first);
	write_flames(&r, &first, bands, nb);
	if (diff && write_diff(&r, &first, path, ga, gb) < 0) {
		fclose(r.j);
		free(bands);
		goto out;
	}
	write_records(&r, &first);
	fputs("}\n", r.j);
	fclose(r.j);
	free(bands);
	rc = lp_report_page__write(out, json, jlen);
	if (rc < 0)
		lp_error_errno("cannot write the page");
out:
	free(json);
	free_report(&r);
	return rc;
}
