/* live.c - what lp-serve keeps of its inputs for its views (live.h): a
 * ring of the newest samples (time, stack, weight, and the span lp-join
 * joined each to), per probe a ring of its newest spans' ends and
 * durations and of their attributes, each input's host and clock; and
 * the settings that choose a view (window or half-life, host, a probe's
 * cut).  The views are written from them by live-snapshot.c. */
#include <stdlib.h>
#include <string.h>

#include "analysis/live.h"
#include "analysis/live-internal.h"
#include "analysis/where.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "stream/attrs.h"

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

bool lp_live_input_shown(const struct lp_live *l, int i)
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

bool lp_live_did_take(const char *did, const char *probe)
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

bool lp_live_span_took(const struct lp_attrs *a, const char *probe)
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
