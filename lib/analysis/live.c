/* live.c - lp-serve's views, each snapshot computed from what is kept
 * (live.h): a ring of the newest samples (time, stack, weight, and the
 * span lp-join joined each to), and per probe a ring of its newest spans'
 * ends and durations.  A snapshot walks them once per view; at the ring's
 * bounds (262,144 samples, 65,536 spans a probe) that is a few tens of
 * milliseconds, once a second. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/live.h"
#include "analysis/where.h"
#include "analysis/separate.h"
#include "analysis/top.h"
#include "base/hashmap.h"
#include "base/json.h"
#include "base/util.h"
#include "stream/attrs.h"
#include "stream/frame.h"

#define SPANS_KEPT 65536
/* The newest spans' attributes (what lp-join says happened inside them),
 * for the ranking of what separates slow from fast: fewer, they are text. */
#define ATTRS_KEPT 4096
#define SEPARATE_ROWS 10
#define HEAT_COLUMNS 60
#define HEAT_ROWS 50
/* A flame graph leaves out frames under this share of its total (their
 * weight stays in their parent's), and stops at this many nodes. */
#define FLAME_MIN_SHARE 0.0002
#define FLAME_MAX_NODES 20000
#define FUNC_ROWS 200
#define STACK_ROWS 50
/* Histogram buckets a factor of 2^(1/4) apart. */
#define HIST_PER_OCTAVE 4

struct kept {
	int input;		/* the reader it came from */
	/* Its span's branches reached and calls made (lp-join's span.at.P=
	 * and span.calls.P= keys: "\tat.P\tcalls.Q\t"), interned; NULL:
	 * none said. */
	const char *did;
	int64_t t;
	const struct lp_stack *stack;
	double weight;
	int probe;		/* the probe of the span it was joined to, or -1 */
	int64_t span_ns;	/* that span's duration */
	bool untimed;		/* t is when it arrived: its input has no times */
	/* Its span's captured values (lp-join's span.KEY=, but at. and
	 * calls.) as "KEY=VALUE" fields, malloc'd; NULL: none. */
	char *vals;
	size_t vals_len;
};

struct span_kept {
	int input;
	int64_t end, dur;
	int64_t lp_ns;		/* lp's own time in it (lp-trace's lp_ns=), 0 unsaid */
};

struct attrs_kept {
	int input;
	int64_t end, dur;
	char *text;		/* the span's attributes as written */
	size_t len;
};

struct probe {
	char *name;
	struct span_kept *ring;	/* SPANS_KEPT, from head - n on */
	size_t n, head;
	struct attrs_kept *attrs;	/* ATTRS_KEPT, from ahead - an on */
	size_t an, ahead;
	uint64_t total;
	bool by_threshold;
	char *took;		/* cut by whether a span reached or called this */
	struct lp_where *where;	/* or by whether its values meet this */
	char *where_text;
	double percentile;
	int64_t threshold;
};

/* One input: the host its header names, what it brought. */
struct input {
	char *host;		/* NULL: its header names none (or none yet) */
	uint64_t samples, spans;
	/* What its times are moved by to the view's clock: its header's
	 * realtime_offset_ns less the first input's that gave one. */
	int64_t shift;
};

struct lp_live {
	struct lp_live_opts o;
	struct input *inputs;
	size_t ninputs;
	char *host;		/* the view's host; NULL: every input's */
	struct kept *ring;
	size_t cap, n, head;
	uint64_t samples;
	int64_t latest;		/* the newest time seen */
	int64_t latest_arrival;	/* when the newest sample without one came */
	/* The first realtime_offset_ns an input's header gave: each host's
	 * CLOCK_MONOTONIC made this input's, so hosts' times line up. */
	int64_t ref_offset;
	bool have_ref;
	struct probe probes[LP_LIVE_MAX_PROBES];
	size_t nprobes;
	uint64_t spans, spans_unnamed;
	/* The probes attached now, as their attach records' spec= says:
	 * what a producer's remove takes. */
	char *attached[LP_LIVE_MAX_PROBES];
	size_t nattached;
	char *buf;		/* lp_attrs__get's */
	size_t buf_cap;
	struct lp_hashmap dids;	/* interned struct kept's did */
	char *didbuf;
	size_t didcap;
};

struct lp_live *lp_live__new(const struct lp_live_opts *o)
{
	struct lp_live *l = lp_calloc(1, sizeof(*l));

	l->o = *o;
	l->cap = o->keep_samples ? o->keep_samples : LP_LIVE_KEEP;
	l->ring = lp_calloc(l->cap, sizeof(*l->ring));
	l->latest = l->latest_arrival = LP_TIME_NONE;
	lp_hashmap__init(&l->dids);
	return l;
}

static void clear_where(struct probe *p)
{
	if (p->where)
		lp_where__fini(p->where);
	free(p->where);
	free(p->where_text);
	p->where = NULL;
	p->where_text = NULL;
}

void lp_live__free(struct lp_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nprobes; i++) {
		free(l->probes[i].name);
		free(l->probes[i].ring);
		for (size_t k = 0; k < ATTRS_KEPT; k++)
			free(l->probes[i].attrs[k].text);
		free(l->probes[i].attrs);
		free(l->probes[i].took);
		clear_where(&l->probes[i]);
	}
	for (size_t i = 0; i < l->cap; i++)
		free(l->ring[i].vals);
	for (size_t i = 0; i < l->dids.cap; i++)
		if (l->dids.keys[i])
			free(l->dids.values[i]);
	lp_hashmap__fini(&l->dids);
	free(l->didbuf);
	for (size_t i = 0; i < l->nattached; i++)
		free(l->attached[i]);
	for (size_t i = 0; i < l->ninputs; i++)
		free(l->inputs[i].host);
	free(l->inputs);
	free(l->host);
	free(l->ring);
	free(l->buf);
	free(l);
}

/* Probe name's index, made when new (-1 when there are too many). */
static int probe_of(struct lp_live *l, const char *name, bool make)
{
	for (size_t i = 0; i < l->nprobes; i++)
		if (!strcmp(l->probes[i].name, name))
			return (int)i;
	if (!make || l->nprobes == LP_LIVE_MAX_PROBES)
		return -1;
	struct probe *p = &l->probes[l->nprobes];
	p->name = lp_strdup(name);
	p->ring = lp_calloc(SPANS_KEPT, sizeof(*p->ring));
	p->attrs = lp_calloc(ATTRS_KEPT, sizeof(*p->attrs));
	p->percentile = 90;
	return (int)l->nprobes++;
}

static struct input *input_of(struct lp_live *l, int i)
{
	if ((size_t)i >= l->ninputs) {
		l->inputs = lp_reallocarray(l->inputs, (size_t)i + 1, sizeof(*l->inputs));
		memset(l->inputs + l->ninputs, 0, ((size_t)i + 1 - l->ninputs) * sizeof(*l->inputs));
		l->ninputs = (size_t)i + 1;
	}
	return &l->inputs[i];
}

/* Whether input i is in the view (its host the one asked for, if any). */
static bool input_shown(const struct lp_live *l, int i)
{
	if (!l->host)
		return true;
	const char *h = (size_t)i < l->ninputs ? l->inputs[i].host : NULL;
	return h && !strcmp(h, l->host);
}

static void seen(struct lp_live *l, int64_t t)
{
	if (l->latest == LP_TIME_NONE || t > l->latest)
		l->latest = t;
}

static int64_t attr_i64(const struct lp_attrs *a, const char *key)
{
	size_t len;
	int64_t v;
	const char *raw = lp_attrs__raw(a, key, strlen(key), &len);

	return raw && lp_attrs__value_i64(raw, len, &v) ? v : LP_TIME_NONE;
}

/* The keys span.at.P and span.calls.P of a joined sample, as
 * "\tat.P\tcalls.Q\t" (as written, escaped), interned: the spans of a
 * probe reach few combinations of branches and calls.  NULL when none. */
static const char *did_of(struct lp_live *l, const struct lp_attrs *a)
{
	struct lp_attrs_iter it = LP_ATTRS_ITER(a);
	struct lp_attr at;
	size_t len = 0;

	while (lp_attrs__next(&it, &at)) {
		bool reach = at.key_len > 8 && !memcmp(at.key, "span.at.", 8);
		bool call = at.key_len > 11 && !memcmp(at.key, "span.calls.", 11);
		if (!reach && !call)
			continue;
		lp_grow(&l->didbuf, &l->didcap, len + at.key_len + 3);
		if (!len)
			l->didbuf[len++] = '\t';
		memcpy(l->didbuf + len, at.key + 5, at.key_len - 5);
		len += at.key_len - 5;
		l->didbuf[len++] = '\t';
	}
	if (!len)
		return NULL;
	l->didbuf[len] = 0;
	uint64_t h = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, l->didbuf, len));
	size_t pos = 0;
	for (char *s; (s = lp_hashmap__next(&l->dids, h, &pos));)
		if (!strcmp(s, l->didbuf))
			return s;
	char *s = lp_strdup(l->didbuf);
	lp_hashmap__add(&l->dids, h, s);
	return s;
}

/* Whether a joined sample's span (its did) reached or called probe. */
static bool did_take(const char *did, const char *probe)
{
	if (!did)
		return false;
	for (const char *at = did; (at = strstr(at, probe)); at++) {
		size_t n = strlen(probe);
		bool head = (at - did >= 4 && !memcmp(at - 4, "\tat.", 4)) ||
			    (at - did >= 7 && !memcmp(at - 7, "\tcalls.", 7));
		if (head && at[n] == '\t')
			return true;
	}
	return false;
}

/* Whether a span's attributes say it reached or called probe. */
static bool span_took(const struct lp_attrs *a, const char *probe)
{
	char key[320];
	size_t len;

	for (int i = 0; i < 2; i++) {
		int n = snprintf(key, sizeof(key), "%s%s", i ? "calls." : "at.", probe);
		if (n > 0 && (size_t)n < sizeof(key) && lp_attrs__raw(a, key, (size_t)n, &len))
			return true;
	}
	return false;
}

/* A joined sample's span's captured values, for where= (the span.KEY=
 * fields but lp-join's own and the at./calls. ones), "KEY=VALUE" fields
 * as a record carries them; NULL when there are none. */
static char *vals_of(const struct lp_attrs *a, size_t *len)
{
	struct lp_attrs_iter it = LP_ATTRS_ITER(a);
	struct lp_attr at;
	struct lp_attrs_buf b = { 0 };
	while (lp_attrs__next(&it, &at)) {
		if (!at.value || at.key_len <= 5 || memcmp(at.key, "span.", 5) ||
		    (at.key_len > 8 && !memcmp(at.key, "span.at.", 8)) ||
		    (at.key_len > 11 && !memcmp(at.key, "span.calls.", 11)))
			continue;
		char field[512];
		int n = snprintf(field, sizeof(field), "%.*s=%.*s", (int)(at.key_len - 5), at.key + 5,
				 (int)at.value_len, at.value);
		if (n > 0 && (size_t)n < sizeof(field))
			lp_attrs_buf__raw(&b, field, (size_t)n);
	}
	*len = b.len;
	return b.text;
}

static void add_sample(struct lp_live *l, int input, const struct lp_sample *s, int64_t arrival)
{
	int64_t shift = input_of(l, input)->shift;
	struct kept k = { .input = input, .t = s->time_ns != LP_TIME_NONE ? s->time_ns + shift : arrival,
			  .stack = s->stack, .weight = s->weight, .probe = -1,
			  .untimed = s->time_ns == LP_TIME_NONE };

	/* lp-join's: the innermost span enclosing the sample. */
	if (lp_attrs__get(&s->attrs, "span", &l->buf, &l->buf_cap) >= 0) {
		int64_t from = attr_i64(&s->attrs, "span_start"), to = attr_i64(&s->attrs, "span_end");
		if (from != LP_TIME_NONE && to != LP_TIME_NONE && to >= from) {
			k.probe = probe_of(l, l->buf, true);
			k.span_ns = to - from;
			k.did = did_of(l, &s->attrs);
			k.vals = vals_of(&s->attrs, &k.vals_len);
		}
	}
	free(l->ring[l->head].vals);
	l->ring[l->head] = k;
	l->head = (l->head + 1) % l->cap;
	if (l->n < l->cap)
		l->n++;
	l->samples++;
	input_of(l, input)->samples++;
	if (k.untimed) {
		if (l->latest_arrival == LP_TIME_NONE || k.t > l->latest_arrival)
			l->latest_arrival = k.t;
	} else {
		seen(l, k.t);
	}
}

static void add_span(struct lp_live *l, int input, const struct lp_span *s)
{
	if (s->end_ns == LP_TIME_NONE || s->end_ns < s->start_ns)
		return;
	int i = probe_of(l, s->probe, true);
	if (i < 0) {
		l->spans_unnamed++;
		return;
	}
	struct probe *p = &l->probes[i];
	int64_t lp = attr_i64(&s->attrs, "lp_ns");
	int64_t shift = input_of(l, input)->shift;
	p->ring[p->head] = (struct span_kept){ input, s->end_ns + shift, s->end_ns - s->start_ns,
					       lp != LP_TIME_NONE && lp > 0 ? lp : 0 };
	p->head = (p->head + 1) % SPANS_KEPT;
	if (p->n < SPANS_KEPT)
		p->n++;
	if (s->attrs.len) {
		struct attrs_kept *a = &p->attrs[p->ahead];
		free(a->text);
		a->text = lp_malloc(s->attrs.len);
		memcpy(a->text, s->attrs.text, s->attrs.len);
		a->len = s->attrs.len;
		a->input = input;
		a->end = s->end_ns + shift;
		a->dur = s->end_ns - s->start_ns;
		p->ahead = (p->ahead + 1) % ATTRS_KEPT;
		if (p->an < ATTRS_KEPT)
			p->an++;
	}
	p->total++;
	l->spans++;
	input_of(l, input)->spans++;
	seen(l, s->end_ns + shift);
}

static void mark(struct lp_live *l, const struct lp_probe_mark *m)
{
	if (lp_attrs__get(&m->attrs, "spec", &l->buf, &l->buf_cap) < 0)
		return;
	size_t i = 0;
	while (i < l->nattached && strcmp(l->attached[i], l->buf))
		i++;
	if (!strcmp(m->action, "attach") && i == l->nattached && i < LP_LIVE_MAX_PROBES) {
		l->attached[l->nattached++] = lp_strdup(l->buf);
	} else if (!strcmp(m->action, "detach") && i < l->nattached) {
		free(l->attached[i]);
		l->attached[i] = l->attached[--l->nattached];
	}
}

void lp_live__record(struct lp_live *l, int input, const struct lp_record *rec,
		     int64_t arrival_ns)
{
	if (rec->kind == LP_REC_SAMPLE && rec->sample.stack) {
		add_sample(l, input, &rec->sample, arrival_ns);
	} else if (rec->kind == LP_REC_SPAN) {
		add_span(l, input, &rec->span);
	} else if (rec->kind == LP_REC_HEADER) {
		struct input *in = input_of(l, input);
		if (lp_attrs__get(&rec->header.attrs, "host", &l->buf, &l->buf_cap) >= 0) {
			free(in->host);
			in->host = lp_strdup(l->buf);
		}
		int64_t off = attr_i64(&rec->header.attrs, "realtime_offset_ns");
		if (off != LP_TIME_NONE) {
			if (!l->have_ref) {
				l->ref_offset = off;
				l->have_ref = true;
			}
			in->shift = off - l->ref_offset;
		}
	}
	else if (rec->kind == LP_REC_PROBE)
		mark(l, &rec->mark);
}

/* A setting checked, and with apply made: nothing is changed before all of
 * it is known good, so that a form whose second setting is refused leaves
 * the first unmade too (lp-serve checks every field, then applies). */
static int set(struct lp_live *l, const char *key, const char *value, const char *probe,
	       const char **why, bool apply)
{
	int64_t ns;
	double p;

	if (!strcmp(key, "mode")) {
		enum lp_live_mode m;
		if (!strcmp(value, "window"))
			m = LP_LIVE_WINDOW;
		else if (!strcmp(value, "half-life"))
			m = LP_LIVE_HALF_LIFE;
		else
			return *why = "mode: window or half-life", -1;
		if (apply)
			l->o.mode = m;
		return 0;
	}
	if (!strcmp(key, "host")) {
		if (apply) {
			free(l->host);
			l->host = *value ? lp_strdup(value) : NULL;
		}
		return 0;
	}
	if (!strcmp(key, "window") || !strcmp(key, "half_life")) {
		if (lp_parse_duration(value, &ns, why) < 0)
			return -1;
		if (ns <= 0)
			return *why = "a duration must be positive", -1;
		if (apply)
			*(key[0] == 'w' ? &l->o.window_ns : &l->o.half_life_ns) = ns;
		return 0;
	}
	if (strcmp(key, "percentile") && strcmp(key, "threshold") && strcmp(key, "took") &&
	    strcmp(key, "where"))
		return *why = "unknown setting", -1;
	int i = probe ? probe_of(l, probe, false) : -1;
	if (i < 0)
		return *why = "no spans of that probe", -1;
	struct probe *pr = &l->probes[i];
	if (!strcmp(key, "where")) {
		struct lp_where w;
		if (!*value) {
			if (apply)
				clear_where(pr);
			return 0;
		}
		if (strlen(value) > 256 || lp_where__parse(value, &w, why) < 0)
			return *why = *why ? *why : "where: KEY=VALUE, KEY<N, ...", -1;
		if (!apply) {
			lp_where__fini(&w);
			return 0;
		}
		clear_where(pr);
		free(pr->took);
		pr->took = NULL;
		pr->where = lp_malloc(sizeof(w));
		*pr->where = w;
		pr->where_text = lp_strdup(value);
		return 0;
	}
	if (!strcmp(key, "took")) {
		if (!*value || strlen(value) > 256)
			return *why = "took: the probe a span reached or called", -1;
		if (!apply)
			return 0;
		clear_where(pr);
		free(pr->took);
		pr->took = lp_strdup(value);
		return 0;
	}
	if (key[0] == 'p') {
		if (lp_parse_double(value, &p, why) < 0)
			return -1;
		if (!(p > 0 && p < 100))
			return *why = "a percentile is above 0 and below 100", -1;
	} else {
		if (lp_parse_duration(value, &ns, why) < 0)
			return -1;
		if (ns < 0)
			return *why = "a threshold is not negative", -1;
	}
	if (!apply)
		return 0;
	clear_where(pr);
	free(pr->took);
	pr->took = NULL;
	if (key[0] == 'p') {
		pr->percentile = p;
		pr->by_threshold = false;
	} else {
		pr->threshold = ns;
		pr->by_threshold = true;
	}
	return 0;
}

int lp_live__check(struct lp_live *l, const char *key, const char *value, const char *probe,
		   const char **why)
{
	return set(l, key, value, probe, why, false);
}

int lp_live__set(struct lp_live *l, const char *key, const char *value, const char *probe,
		 const char **why)
{
	return set(l, key, value, probe, why, true);
}

/* --- what a view holds ----------------------------------------------------- */

/* Sample k's weight in the view ending at end (0: outside it). */
static double in_view(const struct lp_live *l, const struct kept *k, int64_t end)
{
	if (!input_shown(l, k->input))
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
		if (!input_shown(l, k->input))
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
			    !input_shown(l, a->input))
				continue;
			struct lp_attrs attrs = { a->text, a->len };
			bool slow = p->took    ? span_took(&attrs, p->took)
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
		    !input_shown(l, s->input))
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
		int slow = p->took    ? did_take(k->did, p->took)
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
		if (k->t >= from && k->t < to && input_shown(l, k->input))
			flame_add(&f, k->stack, k->weight);
	}
	flame_write(&f, out);
	fputc('\n', out);
	flame_fini(&f);
	return ferror(out) ? -1 : 0;
}
