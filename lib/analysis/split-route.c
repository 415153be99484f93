/* split-route.c - one record to its group: a sample by the span lp-join
 * attached to it, a span by its duration against the cuts, after the
 * predicates (--where), the time range, the probe's windows and, for keyed
 * spans, the request a callback worked for. */
#include "analysis/split.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/quantile.h"
#include "base/util.h"
#include "model/lpframe.h"
#include "analysis/selfcost.h"
#include "analysis/separate.h"
#include "analysis/waits.h"
#include "analysis/split-internal.h"

/* --- attributes, read in place (this runs once per sample) ------------- */

/* An attribute as written, without a copy (lp_attrs__raw). */
bool lp_split__attr_raw(const struct lp_attrs *a, const char *key, size_t klen,
			const char **val, size_t *vlen)
{
	return (*val = lp_attrs__raw(a, key, klen, vlen)) != NULL;
}

/* The band of a duration: the number of cut points it exceeds. */
size_t lp_split__band_of(const struct split *s, int64_t d)
{
	size_t lo = 0, hi = s->nbands - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((double)d > s->cuts[mid])
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* prefix "" for a span's own attributes, "span." or "spanN." on a sample. */
bool lp_split__preds_ok(struct split *s, const struct lp_attrs *a, const char *prefix)
{
	for (size_t i = 0; i < s->o->npreds; i++) {
		const struct lp_where *p = &s->o->preds[i];
		size_t need = strlen(prefix) + strlen(p->key) + 1;
		if (need > s->kbufcap) {
			s->kbufcap = need + 32;
			s->kbuf = lp_realloc(s->kbuf, s->kbufcap);
		}
		snprintf(s->kbuf, s->kbufcap, "%s%s", prefix, p->key);
		if (!lp_where__holds(p, lp_attrs__get(a, s->kbuf, &s->buf, &s->bufcap) < 0 ? NULL : s->buf))
			return false;
	}
	return true;
}

bool lp_split__is_probe(const struct split *s, const char *probe)
{
	return !s->o->probe || !strcmp(probe, s->o->probe);
}

/* Whether a window's probe is the split's: a python: probe is a glob its
 * spans' names match (python:Shop.* for python:Shop.checkout). */
static bool split_window(const struct split *s, const char *probe)
{
	bool glob = !strncmp(probe, "python:", 7) && s->o->probe &&
		    fnmatch(probe, s->o->probe, 0) == 0;
	return glob || lp_split__is_probe(s, probe);
}

/* A probe record: a window of its probe opens or closes.  Every probe's
 * are kept: the split's decide outside from unprobed; the others', which
 * spans a branch or a call probe watched (--took, the report).  Both
 * passes read them: a window already known is not added twice. */
void lp_split__note_mark(struct split *s, const struct lp_probe_mark *m)
{
	bool attach = !strcmp(m->action, "attach");
	if (!attach && strcmp(m->action, "detach"))
		return;
	for (size_t i = 0; i < s->nwins; i++)
		if (!strcmp(s->wins[i].probe, m->probe) &&
		    (attach ? s->wins[i].from : s->wins[i].to) == m->time_ns)
			return;
	if (!split_window(s, m->probe))
		lp_separate__windowed(s->sep, m->probe);
	if (attach) {
		/* ready=: when every link was in place (lp-trace's attach);
		 * before, a hit could go unseen. */
		size_t vlen;
		const char *v = lp_attrs__raw(&m->attrs, "ready", 5, &vlen);
		int64_t ready = m->time_ns;
		if (v && (!lp_attrs__value_i64(v, vlen, &ready) || ready < m->time_ns))
			ready = m->time_ns;
		s->wins = lp_reallocarray(s->wins, s->nwins + 1, sizeof(*s->wins));
		s->wins[s->nwins++] = (struct window){ lp_strdup(m->probe), m->time_ns, ready,
						       INT64_MAX };
		return;
	}
	/* The latest window of the probe still open; a detach without an
	 * attach before it: attached from the start. */
	for (size_t i = s->nwins; i-- > 0;)
		if (!strcmp(s->wins[i].probe, m->probe) && s->wins[i].to == INT64_MAX &&
		    s->wins[i].from <= m->time_ns) {
			s->wins[i].to = m->time_ns;
			return;
		}
	s->wins = lp_reallocarray(s->wins, s->nwins + 1, sizeof(*s->wins));
	s->wins[s->nwins++] = (struct window){ lp_strdup(m->probe), INT64_MIN, INT64_MIN, m->time_ns };
}

/* Whether the split's probe was attached at time t (always, when the
 * stream never said when it was). */
static bool probed_at(const struct split *s, int64_t t)
{
	bool any = false;
	if (t == LP_TIME_NONE)
		return true;
	for (size_t i = 0; i < s->nwins; i++) {
		if (!split_window(s, s->wins[i].probe))
			continue;
		any = true;
		if (s->wins[i].from <= t && t < s->wins[i].to)
			return true;
	}
	return !any;
}

/* Whether probe (len bytes: a branch's or a call's, as lp-join names
 * them) was attached from start to end.  A stream with probe records
 * (lp-trace --control writes one for every probe, the command line's
 * too) says when each was: one with none so far was not attached yet.  A
 * stream without says nothing: attached throughout. */
bool lp_split__watched(const struct split *s, const char *probe, size_t len, int64_t start,
		       int64_t end)
{
	bool any = false;
	for (size_t i = 0; i < s->nwins; i++) {
		if (strlen(s->wins[i].probe) != len || memcmp(s->wins[i].probe, probe, len))
			continue;
		any = true;
		if (s->wins[i].ready <= start && end <= s->wins[i].to)
			return true;
	}
	return !any && !s->nwins;
}

/* The span of the probe that lp-join attached to a sample: its prefix
 * ("span" or "spanN"), start and end.  Without --probe, the innermost. */
static bool sample_span(struct split *s, const struct lp_sample *smp, char prefix[8],
			int64_t *start, int64_t *end)
{
	for (int i = 0; i < 64; i++) {
		char key[40];
		const char *v;
		size_t n;
		/* "span", then "span1".."span63" (--all-spans' outer spans) */
		memcpy(prefix, "span", 5);
		if (i >= 10) {
			prefix[4] = (char)('0' + i / 10);
			prefix[5] = (char)('0' + i % 10);
			prefix[6] = '\0';
		} else if (i) {
			prefix[4] = (char)('0' + i);
			prefix[5] = '\0';
		}
		if (!lp_split__attr_raw(&smp->attrs, prefix, strlen(prefix), &v, &n))
			return false;
		s->joined_samples += i == 0;
		if (s->o->probe && !lp_attrs__value_is(v, n, s->o->probe))
			continue;
		size_t plen = strlen(prefix);
		memcpy(key, prefix, plen);
		memcpy(key + plen, "_start", 7);
		if (!lp_split__attr_raw(&smp->attrs, key, plen + 6, &v, &n) ||
		    !lp_attrs__value_i64(v, n, start))
			return false;
		memcpy(key + plen, "_end", 5);
		if (!lp_split__attr_raw(&smp->attrs, key, plen + 4, &v, &n) ||
		    !lp_attrs__value_i64(v, n, end))
			return false;
		return true;
	}
	return false;
}

static bool time_in(const struct split *s, int64_t t)
{
	return !s->o->has_time || (t >= s->from && t < s->to);
}

void lp_split__set_time_bounds(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	if (!o->has_time)
		return;
	s->from = o->time_from;
	s->to = o->time_to;
	if (!o->time_absolute_from && s->from != INT64_MIN)
		s->from = s->t0 == INT64_MAX ? INT64_MAX : s->t0 + s->from;
	if (!o->time_absolute_to && s->to != INT64_MAX)
		s->to = s->t0 == INT64_MAX ? INT64_MAX : s->t0 + s->to;
}

uint64_t lp_split__span_key(int32_t tid, int64_t start, int64_t end)
{
	int64_t k[3] = { tid, start, end };
	return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, k, sizeof(k)));
}

/* Whose a keyed span is: its key as lp-trace matched it (keyed.h: a
 * number when it reads as one, per process), apart from every thread id. */
uint64_t lp_split__keyed_who(int32_t pid, const char *v, size_t n)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &pid, sizeof(pid));

	return lp_hash_number_or_text(h, v, n) | 1ULL << 63;
}

/* A sample's who: the request its callback worked for (span.key.PROBE=,
 * as written: a key is printed without escapes), else its thread. */
uint64_t lp_split__sample_who(const struct split *s, const struct lp_sample *x)
{
	const char *v;
	size_t n;
	if (s->key_attr && lp_split__attr_raw(&x->attrs, s->key_attr, strlen(s->key_attr), &v, &n))
		return lp_split__keyed_who(x->pid, v, n);
	return (uint32_t)x->tid;
}

/* The keyed span whose key is who at time t, once the first pass sorted
 * them (by who, then start). */
static struct pspan *keyed_at(const struct split *s, uint64_t who, int64_t t)
{
	size_t lo = 0, hi = s->nspans;
	while (lo < hi) {	/* the first span after (who, t) */
		size_t mid = lo + (hi - lo) / 2;
		const struct pspan *m = &s->spans[mid];
		if (m->who < who || (m->who == who && m->start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || s->spans[lo - 1].who != who || s->spans[lo - 1].end <= t)
		return NULL;
	return &s->spans[lo - 1];
}

/* The span a sample or span record is, when the first pass decided it. */
static const struct pspan *decided(const struct split *s, int32_t tid, int64_t start, int64_t end)
{
	if (!s->spans)
		return NULL;
	uintptr_t i = (uintptr_t)lp_hashmap__get(&s->span_index,
						  lp_split__span_key(tid, start, end));
	return i ? &s->spans[i - 1] : NULL;
}

/* --- routing ------------------------------------------------------------ */

static bool live_cuts(struct split *s)
{
	if (!s->o->npercentiles)
		return true;
	if (!lp_quantile__count(s->sketch))
		return false;
	if (!s->dirty)
		return true;
	s->dirty = false;
	for (size_t i = 0; i + 1 < s->nbands; i++)
		s->cuts[i] = lp_quantile__get(s->sketch, s->o->percentiles[i] / 100);
	return true;
}

/* --took: whether a span (prefix "" for its own attributes, "span." or
 * "spanN." on a sample) reached or called the probe. */
static bool took(struct split *s, const struct lp_attrs *a, const char *prefix)
{
	const char *keys[2] = { s->took_at, s->took_calls };
	for (int i = 0; i < 2; i++) {
		size_t n = strlen(prefix) + strlen(keys[i]), vlen;
		lp_grow(&s->kbuf, &s->kbufcap, n + 1);
		snprintf(s->kbuf, s->kbufcap, "%s%s", prefix, keys[i]);
		if (lp_attrs__raw(a, s->kbuf, n, &vlen))
			return true;
	}
	return false;
}

/* --took's group of a span from start to end: unprobed when the probe
 * did not watch all of it (added later by lp-trace --control, or removed
 * before it ended): that it never reached the probe is not known. */
static size_t took_group(struct split *s, const struct lp_attrs *a, const char *prefix,
			 int64_t start, int64_t end)
{
	if (!lp_split__watched(s, s->o->took, strlen(s->o->took), start, end))
		return s->nbands + G_UNPROBED;
	return took(s, a, prefix);
}

/* --child: a span's time in its calls of the probe into *ns (0 when it
 * made none); false when the value is not a duration. */
bool lp_split__child_ns(struct split *s, const struct lp_attrs *a, const char *prefix, int64_t *ns)
{
	size_t n = strlen(prefix) + strlen(s->child_key), vlen;
	lp_grow(&s->kbuf, &s->kbufcap, n + 1);
	snprintf(s->kbuf, s->kbufcap, "%s%s", prefix, s->child_key);
	const char *v = lp_attrs__raw(a, s->kbuf, n, &vlen);
	*ns = 0;
	return !v || (lp_attrs__value_i64(v, vlen, ns) && *ns >= 0);
}

/* One pass (--live, thresholds on a pipe): the band of a sample's span,
 * judged on its duration less its lp_ns= (which lp-join copied onto the
 * sample as PREFIX.lp_ns=) and less this sample's cost: the span held one
 * at least.  How many more it held is not known when its first sample is
 * routed (its samples follow it): a span holding several is judged longer
 * than it was, which a file, read twice, avoids.  When the cost's spread
 * (2 sd) reaches across a cut, the uncertain group: the likelihood a file
 * gets needs the whole distribution. */
static size_t one_pass_band(struct split *s, int64_t start, int64_t end,
			    const struct lp_sample *smp, const char *dot)
{
	char key[48];
	size_t n;
	int64_t v;
	double mean, var, sd = 0, take = 0;
	if (s->o->took)
		return took_group(s, &smp->attrs, dot, start, end);
	if (s->o->child)	/* its own lp_ns is out already; samples are not */
		return lp_split__child_ns(s, &smp->attrs, dot, &v) ? lp_split__band_of(s, v)
								   : s->nbands + G_UNCERTAIN;
	if (!s->o->raw) {
		snprintf(key, sizeof(key), "%slp_ns", dot);
		const char *raw = lp_attrs__raw(&smp->attrs, key, strlen(key), &n);
		if (raw && lp_attrs__value_i64(raw, n, &v) && v > 0)
			take = (double)v;
		if (lp_costs__of(s->costs, lp_hit__of_sample(smp), &mean, &var)) {
			take += mean;
			sd = sqrt(var);
		}
	}
	int64_t d = lp_less_cost(end - start, take);
	for (size_t i = 0; sd > 0 && i + 1 < s->nbands; i++)
		if (fabs((double)d - s->cuts[i]) < 2 * sd)
			return s->nbands + G_UNCERTAIN;
	return lp_split__band_of(s, d);
}

/* One record to its group, or to every output; -1 after a message. */
/* A callback span (key.PROBE=): its time counts to the request it worked
 * for, less lp's own cost in it. */
static void add_callback(struct split *s, const struct lp_span *sp)
{
	const char *v;
	size_t n;
	if (!lp_split__attr_raw(&sp->attrs, s->key_attr + 5, strlen(s->key_attr + 5), &v, &n))
		return;
	struct pspan *kp = keyed_at(s, lp_split__keyed_who(sp->pid, v, n), sp->start_ns);
	double lp_ns = 0;
	if (!kp)
		return;
	if (!s->o->raw)
		lp_span__lp_ns(sp, &lp_ns);
	double ns = (double)lp_less_cost(sp->end_ns - sp->start_ns, lp_ns);
	kp->callback_ns += ns;
	if (!s->waits)
		s->waits = lp_waits__new();
	lp_waits__add(s->waits, sp->pid, sp->tid, sp->start_ns, sp->end_ns, ns, (size_t)(kp - s->spans));
}

int lp_split__route(struct split *s, struct lp_reader *r, const struct lp_record *rec)
{
	char prefix[32];
	switch (rec->kind) {
	case LP_REC_SAMPLE: {
		const struct lp_sample *smp = &rec->sample;
		int64_t start, end;
		struct group *g;
		const struct pspan *ps;
		if (s->o->has_time && smp->time_ns == LP_TIME_NONE) {
			/* a file of counts (pprof, folded): no sample is at a time */
			lp_reader__error(r, "sample: -T, --time needs samples' times, and this "
					    "input's have none (%s)",
					 lp_input_format__name(lp_reader__format(r)));
			return -1;
		}
		if (smp->time_ns != LP_TIME_NONE && !time_in(s, smp->time_ns)) {
			g = &s->g[s->nbands + G_EXCLUDED];
		} else if (!s->o->lp_frames && smp->stack && lp_stack__has_lp(smp->stack)) {
			/* lp's own work (a probe's trap, a BPF program): in
			 * neither group's flame graph. */
			g = &s->g[s->nbands + G_LP];
		} else if (s->keyed) {
			/* A request's samples are those of the callbacks that
			 * worked for it, on any thread. */
			uint64_t who = lp_split__sample_who(s, smp);
			s->joined_samples += lp_split__attr_raw(&smp->attrs, "span", 4,
								&(const char *){ 0 }, &(size_t){ 0 });
			struct pspan *kp = who >> 63 ? keyed_at(s, who, smp->time_ns) : NULL;
			g = &s->g[kp && kp->group >= 0 ? (size_t)kp->group : s->nbands + G_OUTSIDE];
		} else if (!sample_span(s, smp, prefix, &start, &end)) {
			g = &s->g[s->nbands + (probed_at(s, smp->time_ns) ? G_OUTSIDE : G_UNPROBED)];
		} else {
			char dot[40];	/* prefix ("span", "spanN") and a dot; no printf per sample */
			size_t pl = strlen(prefix);
			memcpy(dot, prefix, pl);
			memcpy(dot + pl, ".", 2);
			if (!lp_split__preds_ok(s, &smp->attrs, dot))
				g = &s->g[s->nbands + G_EXCLUDED];
			else if (s->o->live && !live_cuts(s))
				g = &s->g[s->nbands + G_UNRANKED];
			else if ((ps = decided(s, smp->tid, start, end)))
				g = &s->g[ps->group];
			else
				g = &s->g[one_pass_band(s, start, end, smp, dot)];
		}
		lp_split__emit_sample(s, smp, g);
		return 0;
	}
	case LP_REC_SPAN: {
		const struct lp_span *sp = &rec->span;
		if (s->keyed && sp->end_ns != LP_TIME_NONE)
			add_callback(s, sp);
		if (sp->end_ns == LP_TIME_NONE || sp->start_ns == LP_TIME_NONE ||
		    !lp_split__is_probe(s, sp->probe))
			break;
		/* A request's samples are known only once every span is. */
		size_t klen;
		if (!s->spans && lp_attrs__raw(&sp->attrs, "key", 3, &klen)) {
			lp_reader__error(r, "span: %s is a keyed span (key=): it needs the whole "
					    "input first, not --live or a threshold on a pipe", sp->probe);
			return -1;
		}
		s->probe_spans++;
		bool in_time = !s->o->has_time || (sp->end_ns > s->from && sp->start_ns < s->to);
		if (!in_time || !lp_split__preds_ok(s, &sp->attrs, "")) {
			lp_split__emit_span(s, sp, &s->g[s->nbands + G_EXCLUDED], false, 0);
			return 0;
		}
		double lp_ns = 0;
		if (!s->o->raw)
			lp_span__lp_ns(sp, &lp_ns);
		int64_t d = lp_less_cost(sp->end_ns - sp->start_ns, lp_ns);
		if (s->o->child && !lp_split__child_ns(s, &sp->attrs, "", &d)) {
			lp_reader__error(r, "span: bad %s", s->child_key);
			return -1;
		}
		const struct pspan *ps = decided(s, sp->tid, sp->start_ns, sp->end_ns);
		if (ps) {
			lp_split__emit_span(s, sp, &s->g[ps->group], true, ps->corrected);
			return 0;
		}
		if (s->o->took) {
			size_t g = took_group(s, &sp->attrs, "", sp->start_ns, sp->end_ns);
			lp_split__emit_span(s, sp, &s->g[g], g < s->nbands, d);
			return 0;
		}
		if (s->o->live && s->o->npercentiles) {
			lp_quantile__add(s->sketch, (double)d, sp->end_ns);
			s->live_spans++;
			s->dirty = true;
			live_cuts(s);
		}
		lp_split__emit_span(s, sp, &s->g[lp_split__band_of(s, d)], true, d);
		return 0;
	}
	case LP_REC_FRAME:
	case LP_REC_STACK:
		/* Written where a sample needs them. */
		return 0;
	case LP_REC_COST:
		/* One pass: the costs come first, before the samples (a
		 * second pass reads again what the first took in). */
		lp_costs__add(s->costs, &rec->cost);
		break;
	case LP_REC_PROBE:
		lp_split__note_mark(s, &rec->mark);
		break;
	default:
		break;
	}
	lp_split__to_all(s, rec);
	return 0;
}
