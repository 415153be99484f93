/* split.c - samples into groups by the latency of their enclosing span.
 *
 * A sample's span is the one lp-join attached for the probe (span=PROBE with
 * span_start= and span_end=, or spanN=PROBE with --all-spans).  Its band is
 * decided by the span's duration d against the cut points: band i holds
 * cut[i-1] < d <= cut[i].  A percentile's cut is the nearest-rank value of
 * the probe's span durations: with n spans sorted, the p-th percentile is
 * the ceil(p/100 * n)-th.  So at p90 exactly the spans slower than the p90
 * value (about 10% of them) are "above".
 *
 * Exact percentiles need every duration before the first sample can be
 * routed: global by nature.  A file is read twice (stdin is spooled to a
 * temporary file on the first pass); a span's times, thread and cost (80
 * bytes) and a sample's time, thread and kind (24 bytes) are kept, to take
 * lp's own cost out of each span's duration (selfcost.h).  Thresholds
 * read twice too: a span's samples come after it.  --live reads once and
 * uses a windowed sketch (quantile.h), correcting by lp_ns= only.
 */
#include "analysis/split.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/frame.h"
#include "base/hashmap.h"
#include "model/lpframe.h"
#include "analysis/contents.h"
#include "analysis/modes.h"
#include "analysis/separate.h"
#include "analysis/waits.h"
#include "base/quantile.h"
#include "analysis/selfcost.h"
#include "base/util.h"

int lp_split_pred__parse(const char *s, struct lp_split_pred *p, const char **why)
{
	static const struct { const char *text; enum lp_split_op op; } ops[] = {
		{ "!=", LP_OP_NE }, { "<=", LP_OP_LE }, { ">=", LP_OP_GE },
		{ "==", LP_OP_EQ }, { "=", LP_OP_EQ }, { "<", LP_OP_LT }, { ">", LP_OP_GT },
	};
	size_t klen = strcspn(s, "!=<>");
	if (klen == 0 || !s[klen]) {
		*why = "expected KEY=VALUE, KEY!=VALUE, KEY<N, KEY<=N, KEY>N or KEY>=N";
		return -1;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t olen = strlen(ops[i].text);
		if (strncmp(s + klen, ops[i].text, olen))
			continue;
		memset(p, 0, sizeof(*p));
		p->key = lp_strndup(s, klen);
		p->value = lp_strdup(s + klen + olen);
		p->op = ops[i].op;
		const char *w;
		p->numeric = p->value[0] && lp_parse_double(p->value, &p->num, &w) == 0;
		if (!p->numeric && p->op != LP_OP_EQ && p->op != LP_OP_NE) {
			*why = "<, <=, > and >= need a number";
			return -1;
		}
		return 0;
	}
	*why = "expected KEY=VALUE, KEY!=VALUE, KEY<N, KEY<=N, KEY>N or KEY>=N";
	return -1;
}

/* --- attributes, read in place (this runs once per sample) ------------- */

/* An attribute as written, without a copy (lp_attrs__raw). */
static bool attr_raw(const struct lp_attrs *a, const char *key, size_t klen,
		     const char **val, size_t *vlen)
{
	return (*val = lp_attrs__raw(a, key, klen, vlen)) != NULL;
}

/* --- groups ------------------------------------------------------------ */

/* G_UNPROBED: samples outside every span of the probe taken while it was
 * not attached (probe records, lp-trace --control): nothing watched for
 * its calls then, so they are not "outside" its spans. */
enum { G_OUTSIDE, G_EXCLUDED, G_UNRANKED, G_UNCERTAIN, G_LP, G_UNPROBED, G_EXTRA };
static const char *const extra_names[G_EXTRA] = { "outside", "excluded", "unranked",
						  "uncertain", "lp", "unprobed" };

struct group {
	char *name;
	int out;		/* index into outputs, -1: not written */
	uint64_t spans, samples;
	double span_ns, sample_weight;
	/* Sample weight by the thread state= of lp-record --mode wall. */
	double state_weight[3];
	/* Blocked weight by the function it blocked in (lp_stack__blocking_frame),
	 * keyed by the name's hash: struct blocker (lp_hashmap__add). */
	struct lp_hashmap blockers;
	int64_t max_ns;
	struct lp_quantile *lat;	/* live: this group's span durations */
	int64_t *durs;		/* file: its spans' corrected durations, sorted */
	size_t ndurs;
	double callback_ns;	/* keyed: its requests' time in their callbacks */
	double others_ns;	/* keyed: their waits while others' callbacks ran */
};

/* The first pass keeps each span of the probe, and each sample's time and
 * cost, to take lp's own cost out of the durations (selfcost.h). */
struct pspan {
	int64_t start, end;
	int32_t pid, tid;
	double lp_ns;		/* lp-trace's probes inside it */
	double cost, var;	/* its samples' cost: mean and variance */
	int64_t first;		/* its first sample's time */
	int64_t corrected;	/* end - start - lp_ns - cost; --child: its calls' time */
	int64_t child;		/* --child: calls_ns.PROBE= */
	uint32_t nsamples;
	int32_t group;		/* decided: a band, or the uncertain group */
	/* Whose samples cost it: its thread's (the tid), or, a keyed span
	 * (lp-trace's key: requests, key=), those of the callbacks that
	 * worked for its key (span.key.PROBE=): keyed_who. */
	uint64_t who;
	double callback_ns;	/* keyed: its callbacks' time, second pass */
};

struct psample {
	int64_t t;
	int32_t pid, tid;
	enum lp_hit hit;
	uint64_t who;		/* as pspan's */
};

struct output {
	char *path;
	FILE *f;
	struct lp_writer *w;
	char *buf;		/* f's buffer: freed once f is closed */
};

struct split {
	const struct lp_split_opts *o;
	size_t nbands;
	struct group *g;	/* nbands bands, then the G_EXTRA groups */
	size_t ng;
	double *cuts;		/* nbands - 1 cut points, ns */
	struct output *outs;
	size_t nouts;
	int64_t t0;		/* first time read, for a relative --time */
	int64_t from, to;
	/* file mode: corrected durations of the spans that count, sorted */
	int64_t *durs;
	size_t ndurs;
	struct lp_costs *costs;
	struct pspan *spans;		/* the probe's spans, by (tid, start) */
	size_t spans_cap;		/* first pass: room in spans */
	size_t nspans;
	struct lp_hashmap span_index;	/* (tid, start, end) -> index + 1 */
	uint64_t sampled_spans, uncertain_spans;
	/* A sample's cost as the spans show it (dist.empirical when they
	 * could), and whether it replaced the calibrated one. */
	struct lp_costdist dist;
	bool used_seen;
	double sample_cost_ns, probe_cost_ns;	/* taken out, in all */
	double period_ns;		/* the header's period_ns=, 0 when none */
	struct lp_modes *modes;		/* of durs, once they are all known */
	struct lp_quantile *sketch;	/* live */
	bool dirty;			/* spans added since the cuts were read */
	uint64_t joined_samples;	/* samples with any span= at all */
	uint64_t probe_spans;		/* spans of the probe read */
	FILE *report_f;			/* --report FILE */
	bool have_states;		/* samples with state= (lp-record --mode wall) */
	uint64_t live_spans;
	struct lp_attrs_buf ab;
	char *buf;
	size_t bufcap;
	char *kbuf;
	size_t kbufcap;
	char *value;		/* an attribute's value (lp_attrs__get) */
	size_t value_cap;
	char *name;		/* a frame's name (lp_frame__name) */
	size_t name_cap;
	/* When the split's probe (any, without --probe) was attached, from
	 * its probe records: [from, to), to INT64_MAX while attached.  None:
	 * attached throughout (a stream without probe records). */
	struct window { char *probe; int64_t from, ready, to; } *wins;
	size_t nwins;
	struct lp_separate *sep;	/* what separates the top band from the others */
	/* Warnings said on stderr, kept for the split records (--label). */
	struct note { char *kind, *text; } *notes;
	size_t nnotes;
	/* Keyed spans (lp-trace's key: requests): the probe's spans carry
	 * key=, and a sample works for the request whose key its callback
	 * span carries (span.key.PROBE=, the attribute's name in key_attr). */
	bool keyed;
	char *key_attr;
	struct lp_waits *waits;		/* keyed: the callbacks, for where requests waited */
	/* --took's keys (at.PROBE, calls.PROBE), --child's (calls_ns.PROBE) */
	char *took_at, *took_calls, *child_key;
	size_t took_at_cap, took_calls_cap, child_key_cap;
};

static char *fmt_duration(int64_t ns)
{
	char b[64];
	if (ns && ns % 1000000000 == 0)
		snprintf(b, sizeof(b), "%" PRId64 "s", ns / 1000000000);
	else if (ns && ns % 1000000 == 0)
		snprintf(b, sizeof(b), "%" PRId64 "ms", ns / 1000000);
	else if (ns && ns % 1000 == 0)
		snprintf(b, sizeof(b), "%" PRId64 "us", ns / 1000);
	else
		snprintf(b, sizeof(b), "%" PRId64 "ns", ns);
	return lp_strdup(b);
}

static char *band_name(const struct lp_split_opts *o, size_t i, size_t nbands)
{
	char b[128];
	if (o->took)
		return lp_strdup(i == 0 ? "not-took" : "took");
	if (nbands == 1)
		return lp_strdup("selected");
	if (nbands == 2)
		return lp_strdup(i == 0 ? "below" : "above");
	if (o->npercentiles) {
		char lo[32] = "p0", hi[32] = "p100";
		if (i > 0)
			snprintf(lo, sizeof(lo), "p%g", o->percentiles[i - 1]);
		if (i < nbands - 1)
			snprintf(hi, sizeof(hi), "p%g", o->percentiles[i]);
		snprintf(b, sizeof(b), "%s-%s", lo, hi);
		return lp_strdup(b);
	}
	char *lo = i > 0 ? fmt_duration(o->thresholds[i - 1]) : lp_strdup("0");
	char *hi = i < nbands - 1 ? fmt_duration(o->thresholds[i]) : lp_strdup("inf");
	snprintf(b, sizeof(b), "%s-%s", lo, hi);
	free(lo);
	free(hi);
	return lp_strdup(b);
}

static size_t nbands_of(const struct lp_split_opts *o)
{
	if (o->auto_cut || o->took)
		return 2;
	return 1 + (o->npercentiles ? o->npercentiles : o->nthresholds);
}

size_t lp_split__group_names(const struct lp_split_opts *o, const char ***names)
{
	size_t nb = nbands_of(o), n = nb + G_EXTRA;
	const char **v = lp_calloc(n, sizeof(*v));
	for (size_t i = 0; i < nb; i++)
		v[i] = band_name(o, i, nb);
	for (size_t i = 0; i < G_EXTRA; i++)
		v[nb + i] = lp_strdup(extra_names[i]);
	*names = v;
	return n;
}

/* The band of a duration: the number of cut points it exceeds. */
static size_t band_of(const struct split *s, int64_t d)
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

static bool pred_ok(const struct lp_split_pred *p, const char *v)
{
	if (!v)
		return p->op == LP_OP_NE;
	double x;
	const char *why;
	if (p->numeric && lp_parse_double(v, &x, &why) == 0) {
		switch (p->op) {
		case LP_OP_EQ: return x == p->num;
		case LP_OP_NE: return x != p->num;
		case LP_OP_LT: return x < p->num;
		case LP_OP_LE: return x <= p->num;
		case LP_OP_GT: return x > p->num;
		case LP_OP_GE: return x >= p->num;
		}
	}
	switch (p->op) {
	case LP_OP_EQ: return !strcmp(v, p->value);
	case LP_OP_NE: return strcmp(v, p->value) != 0;
	default: return false;
	}
}

/* prefix "" for a span's own attributes, "span." or "spanN." on a sample. */
static bool preds_ok(struct split *s, const struct lp_attrs *a, const char *prefix)
{
	for (size_t i = 0; i < s->o->npreds; i++) {
		const struct lp_split_pred *p = &s->o->preds[i];
		size_t need = strlen(prefix) + strlen(p->key) + 1;
		if (need > s->kbufcap) {
			s->kbufcap = need + 32;
			s->kbuf = lp_realloc(s->kbuf, s->kbufcap);
		}
		snprintf(s->kbuf, s->kbufcap, "%s%s", prefix, p->key);
		if (!pred_ok(p, lp_attrs__get(a, s->kbuf, &s->buf, &s->bufcap) < 0 ? NULL : s->buf))
			return false;
	}
	return true;
}

static bool is_probe(const struct split *s, const char *probe)
{
	return !s->o->probe || !strcmp(probe, s->o->probe);
}

/* Whether a window's probe is the split's: a python: probe is a glob its
 * spans' names match (python:Shop.* for python:Shop.checkout). */
static bool split_window(const struct split *s, const char *probe)
{
	bool glob = !strncmp(probe, "python:", 7) && s->o->probe &&
		    fnmatch(probe, s->o->probe, 0) == 0;
	return glob || is_probe(s, probe);
}

/* A probe record: a window of its probe opens or closes.  Every probe's
 * are kept: the split's decide outside from unprobed; the others', which
 * spans a branch or a call probe watched (--took, the report).  Both
 * passes read them: a window already known is not added twice. */
static void note_mark(struct split *s, const struct lp_probe_mark *m)
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
static bool watched(const struct split *s, const char *probe, size_t len, int64_t start,
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

/* lp_separate__span's question about one span. */
struct span_watch {
	const struct split *s;
	int64_t start, end;
};

static bool span_watched(void *arg, const char *probe, size_t len)
{
	const struct span_watch *w = arg;
	return watched(w->s, probe, len, w->start, w->end);
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
		if (!attr_raw(&smp->attrs, prefix, strlen(prefix), &v, &n))
			return false;
		s->joined_samples += i == 0;
		if (s->o->probe && !lp_attrs__value_is(v, n, s->o->probe))
			continue;
		size_t plen = strlen(prefix);
		memcpy(key, prefix, plen);
		memcpy(key + plen, "_start", 7);
		if (!attr_raw(&smp->attrs, key, plen + 6, &v, &n) || !lp_attrs__value_i64(v, n, start))
			return false;
		memcpy(key + plen, "_end", 5);
		if (!attr_raw(&smp->attrs, key, plen + 4, &v, &n) || !lp_attrs__value_i64(v, n, end))
			return false;
		return true;
	}
	return false;
}

static bool time_in(const struct split *s, int64_t t)
{
	return !s->o->has_time || (t >= s->from && t < s->to);
}

static void set_time_bounds(struct split *s)
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

/* --- output ------------------------------------------------------------ */

static void out_failed(const struct output *out)
{
	lp_write_failed(out->path ? out->path : "stdout");
}

static void to_all(struct split *s, const struct lp_record *rec)
{
	for (size_t i = 0; i < s->nouts; i++)
		if (lp_writer__record(s->outs[i].w, rec) < 0)
			out_failed(&s->outs[i]);
}

static void with_group(struct split *s, const struct lp_attrs *a, const char *name)
{
	lp_attrs_buf__set(&s->ab, a);
	lp_attrs_buf__add(&s->ab, "group", name);
}

static const char *const state_names[3] = { "running", "runnable", "blocked" };
enum { ST_BLOCKED = 2 };
#define TOP_BLOCKERS 3		/* functions listed per group */

struct blocker {
	char *name;
	double weight;
};

static void add_blocked(struct split *s, struct group *g, const struct lp_stack *st,
			double weight)
{
	const struct lp_frame *f = lp_stack__blocking_frame(st);
	const char *name = f ? lp_frame__name(f, &s->name, &s->name_cap) : "[unknown]";
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, name, strlen(name)));
	struct blocker *b;

	for (size_t pos = 0; (b = lp_hashmap__next(&g->blockers, key, &pos));)
		if (!strcmp(b->name, name))
			break;
	if (!b) {
		b = lp_calloc(1, sizeof(*b));
		b->name = lp_strdup(name);
		/* a symbol is the target's text: no tab or newline in the table */
		for (char *c = b->name; *c; c++)
			if ((unsigned char)*c < ' ')
				*c = '?';
		lp_hashmap__add(&g->blockers, key, b);
	}
	b->weight += weight;
}

/* Heaviest first, then by name: a total order. */
static int blocker_cmp(const void *pa, const void *pb)
{
	const struct blocker *a = *(const struct blocker *const *)pa;
	const struct blocker *b = *(const struct blocker *const *)pb;

	if (a->weight != b->weight)
		return (b->weight > a->weight) - (b->weight < a->weight);
	return strcmp(a->name, b->name);
}

/* The group's blockers, heaviest first; *n their count.  Free the array. */
static struct blocker **sorted_blockers(const struct group *g, size_t *n)
{
	struct blocker **v = lp_calloc(g->blockers.count ? g->blockers.count : 1, sizeof(*v));
	size_t len = 0;

	for (size_t i = 0; i < g->blockers.cap; i++)
		if (g->blockers.keys[i])
			v[len++] = g->blockers.values[i];
	qsort(v, len, sizeof(*v), blocker_cmp);
	*n = len;
	return v;
}

static void free_blockers(struct group *g)
{
	for (size_t i = 0; i < g->blockers.cap; i++)
		if (g->blockers.keys[i]) {
			struct blocker *b = g->blockers.values[i];
			free(b->name);
			free(b);
		}
	lp_hashmap__fini(&g->blockers);
}

static void emit_sample(struct split *s, const struct lp_sample *smp, struct group *g)
{
	g->samples++;
	g->sample_weight += smp->weight;
	ssize_t n = lp_attrs__get(&smp->attrs, "state", &s->value, &s->value_cap);
	for (int k = 0; n >= 0 && k < 3; k++)
		if ((size_t)n == strlen(state_names[k]) && !memcmp(s->value, state_names[k], n)) {
			g->state_weight[k] += smp->weight;
			s->have_states = true;
			if (k == ST_BLOCKED)
				add_blocked(s, g, smp->stack, smp->weight);
		}
	if (g->out < 0)
		return;
	struct output *out = &s->outs[g->out];
	struct lp_sample copy = *smp;
	if (s->o->label) {
		with_group(s, &smp->attrs, g->name);
		copy.attrs = lp_attrs_buf__attrs(&s->ab);
	}
	if (lp_writer__sample(out->w, &copy) < 0)
		out_failed(out);
}

/* d: the span's duration as decided on (corrected for lp's cost); the
 * group's span time stays the measured one, which its samples cover. */
static void emit_span(struct split *s, const struct lp_span *sp, struct group *g, bool counted,
		      int64_t d)
{
	if (counted && (size_t)(g - s->g) < s->nbands)
		lp_separate__span(s->sep, (size_t)(g - s->g), &sp->attrs, span_watched,
				  &(struct span_watch){ s, sp->start_ns, sp->end_ns });
	if (counted) {
		g->spans++;
		g->span_ns += (double)(sp->end_ns - sp->start_ns);
		if (d > g->max_ns)
			g->max_ns = d;
		if (g->lat)
			lp_quantile__add(g->lat, (double)d, 0);
	}
	if (g->out < 0)
		return;
	struct output *out = &s->outs[g->out];
	struct lp_span copy = *sp;
	if (s->o->label) {
		/* The duration the split decided on, so that readers of the
		 * labelled stream (lp-report) draw the same distribution;
		 * group= last, as on samples. */
		lp_attrs_buf__set(&s->ab, &sp->attrs);
		if (counted)
			lp_attrs_buf__add_i64(&s->ab, "corrected_ns", 12, d);
		lp_attrs_buf__add(&s->ab, "group", g->name);
		copy.attrs = lp_attrs_buf__attrs(&s->ab);
	}
	if (lp_writer__span(out->w, &copy) < 0)
		out_failed(out);
}

/* Large writes.  stdout's buffer outlives it (stdio may flush it at exit);
 * a file's is freed once the file is closed. */
#define OUTBUF (1 << 16)
static void set_buffer(struct output *out)
{
	static char stdout_buf[OUTBUF];

	out->buf = out->f == stdout ? NULL : lp_malloc(OUTBUF);
	setvbuf(out->f, out->buf ? out->buf : stdout_buf, _IOFBF, OUTBUF);
}

/* Whether group was given a file of its own (--group NAME=FILE). */
static bool made_by_name(const struct lp_split_opts *o, const char *group)
{
	for (size_t k = 0; k < o->nfiles; k++)
		if (!strcmp(o->files[k].group, group))
			return true;
	return false;
}

static int open_outputs(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	if (o->report && !o->quiet)
		s->report_f = lp_open_output(o->report);
	for (size_t i = 0; i < s->ng; i++)
		s->g[i].out = -1;
	if (o->label) {
		s->outs = lp_calloc(1, sizeof(*s->outs));
		s->nouts = 1;
		s->outs[0].path = o->output && strcmp(o->output, "-") ? lp_strdup(o->output) : NULL;
		s->outs[0].f = lp_open_output(o->output);
		set_buffer(&s->outs[0]);
		s->outs[0].w = lp_writer__new(s->outs[0].f);
		for (size_t i = 0; i < s->ng; i++)
			s->g[i].out = 0;
		return 0;
	}
	s->outs = lp_calloc(s->ng, sizeof(*s->outs));
	for (size_t i = 0; i < s->ng; i++) {
		const char *path = NULL;
		char *made = NULL;
		for (size_t k = 0; k < o->nfiles; k++)
			if (!strcmp(o->files[k].group, s->g[i].name))
				path = o->files[k].path;
		if (!path && o->pattern) {
			const char *pc = strstr(o->pattern, "%s");
			size_t n = strlen(o->pattern) + strlen(s->g[i].name);
			made = lp_malloc(n + 1);
			snprintf(made, n + 1, "%.*s%s%s", (int)(pc - o->pattern), o->pattern,
				 s->g[i].name, pc + 2);
			path = made;
		}
		/* Groups these options cannot produce get no file. */
		if (i == s->nbands + G_EXCLUDED && !o->has_time && !o->npreds)
			path = NULL;
		if (i == s->nbands + G_UNRANKED && !(o->live && o->npercentiles))
			path = NULL;
		if (i == s->nbands + G_UNCERTAIN && (o->raw || s->nbands == 1))
			path = NULL;
		/* Known only once the input is read: a file when named. */
		if (i == s->nbands + G_UNPROBED && !made_by_name(o, s->g[i].name))
			path = NULL;
		if (path) {
			struct output *out = &s->outs[s->nouts];
			out->path = lp_strdup(path);
			out->f = lp_open_output(path);
			set_buffer(out);
			out->w = lp_writer__new(out->f);
			s->g[i].out = (int)s->nouts++;
		}
		free(made);
	}
	return 0;
}

static int close_outputs(struct split *s)
{
	int rc = 0;
	for (size_t i = 0; i < s->nouts; i++) {
		lp_writer__free(s->outs[i].w);
		if (lp_close_output(s->outs[i].f, s->outs[i].path ? s->outs[i].path : "stdout") < 0)
			rc = -1;
		free(s->outs[i].buf);
		free(s->outs[i].path);
	}
	return rc;
}

static uint64_t span_key(int32_t tid, int64_t start, int64_t end)
{
	int64_t k[3] = { tid, start, end };
	return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, k, sizeof(k)));
}

/* Whose a keyed span is: its key as lp-trace matched it (keyed.h: a
 * number when it reads as one, per process), apart from every thread id. */
static uint64_t keyed_who(int32_t pid, const char *v, size_t n)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &pid, sizeof(pid));

	return lp_hash_number_or_text(h, v, n) | 1ULL << 63;
}

/* A sample's who: the request its callback worked for (span.key.PROBE=,
 * as written: a key is printed without escapes), else its thread. */
static uint64_t sample_who(const struct split *s, const struct lp_sample *x)
{
	const char *v;
	size_t n;
	if (s->key_attr && attr_raw(&x->attrs, s->key_attr, strlen(s->key_attr), &v, &n))
		return keyed_who(x->pid, v, n);
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
	uintptr_t i = (uintptr_t)lp_hashmap__get(&s->span_index, span_key(tid, start, end));
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
	if (!watched(s, s->o->took, strlen(s->o->took), start, end))
		return s->nbands + G_UNPROBED;
	return took(s, a, prefix);
}

/* --child: a span's time in its calls of the probe into *ns (0 when it
 * made none); false when the value is not a duration. */
static bool child_ns(struct split *s, const struct lp_attrs *a, const char *prefix, int64_t *ns)
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
		return child_ns(s, &smp->attrs, dot, &v) ? band_of(s, v) : s->nbands + G_UNCERTAIN;
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
	return band_of(s, d);
}

/* One record to its group, or to every output; -1 after a message. */
/* A callback span (key.PROBE=): its time counts to the request it worked
 * for, less lp's own cost in it. */
static void add_callback(struct split *s, const struct lp_span *sp)
{
	const char *v;
	size_t n;
	if (!attr_raw(&sp->attrs, s->key_attr + 5, strlen(s->key_attr + 5), &v, &n))
		return;
	struct pspan *kp = keyed_at(s, keyed_who(sp->pid, v, n), sp->start_ns);
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

static int route(struct split *s, struct lp_reader *r, const struct lp_record *rec)
{
	char prefix[32];
	switch (rec->kind) {
	case LP_REC_SAMPLE: {
		const struct lp_sample *smp = &rec->sample;
		int64_t start, end;
		struct group *g;
		const struct pspan *ps;
		if (smp->time_ns != LP_TIME_NONE && !time_in(s, smp->time_ns)) {
			g = &s->g[s->nbands + G_EXCLUDED];
		} else if (!s->o->lp_frames && smp->stack && lp_stack__has_lp(smp->stack)) {
			/* lp's own work (a probe's trap, a BPF program): in
			 * neither group's flame graph. */
			g = &s->g[s->nbands + G_LP];
		} else if (s->keyed) {
			/* A request's samples are those of the callbacks that
			 * worked for it, on any thread. */
			uint64_t who = sample_who(s, smp);
			s->joined_samples += attr_raw(&smp->attrs, "span", 4, &(const char *){ 0 }, &(size_t){ 0 });
			struct pspan *kp = who >> 63 ? keyed_at(s, who, smp->time_ns) : NULL;
			g = &s->g[kp && kp->group >= 0 ? (size_t)kp->group : s->nbands + G_OUTSIDE];
		} else if (!sample_span(s, smp, prefix, &start, &end)) {
			g = &s->g[s->nbands + (probed_at(s, smp->time_ns) ? G_OUTSIDE : G_UNPROBED)];
		} else {
			char dot[40];	/* prefix ("span", "spanN") and a dot; no printf per sample */
			size_t pl = strlen(prefix);
			memcpy(dot, prefix, pl);
			memcpy(dot + pl, ".", 2);
			if (!preds_ok(s, &smp->attrs, dot))
				g = &s->g[s->nbands + G_EXCLUDED];
			else if (s->o->live && !live_cuts(s))
				g = &s->g[s->nbands + G_UNRANKED];
			else if ((ps = decided(s, smp->tid, start, end)))
				g = &s->g[ps->group];
			else
				g = &s->g[one_pass_band(s, start, end, smp, dot)];
		}
		emit_sample(s, smp, g);
		return 0;
	}
	case LP_REC_SPAN: {
		const struct lp_span *sp = &rec->span;
		if (s->keyed && sp->end_ns != LP_TIME_NONE)
			add_callback(s, sp);
		if (sp->end_ns == LP_TIME_NONE || sp->start_ns == LP_TIME_NONE ||
		    !is_probe(s, sp->probe))
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
		if (!in_time || !preds_ok(s, &sp->attrs, "")) {
			emit_span(s, sp, &s->g[s->nbands + G_EXCLUDED], false, 0);
			return 0;
		}
		double lp_ns = 0;
		if (!s->o->raw)
			lp_span__lp_ns(sp, &lp_ns);
		int64_t d = lp_less_cost(sp->end_ns - sp->start_ns, lp_ns);
		if (s->o->child && !child_ns(s, &sp->attrs, "", &d)) {
			lp_reader__error(r, "span: bad %s", s->child_key);
			return -1;
		}
		const struct pspan *ps = decided(s, sp->tid, sp->start_ns, sp->end_ns);
		if (ps) {
			emit_span(s, sp, &s->g[ps->group], true, ps->corrected);
			return 0;
		}
		if (s->o->took) {
			size_t g = took_group(s, &sp->attrs, "", sp->start_ns, sp->end_ns);
			emit_span(s, sp, &s->g[g], g < s->nbands, d);
			return 0;
		}
		if (s->o->live && s->o->npercentiles) {
			lp_quantile__add(s->sketch, (double)d, sp->end_ns);
			s->live_spans++;
			s->dirty = true;
			live_cuts(s);
		}
		emit_span(s, sp, &s->g[band_of(s, d)], true, d);
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
		note_mark(s, &rec->mark);
		break;
	default:
		break;
	}
	to_all(s, rec);
	return 0;
}

/* --- the first pass: every duration, for exact percentiles ------------- */

/* By thread, then start, the outer of two spans that start together first:
 * on one thread calls nest, so a sweep in this order sees each span's
 * enclosing ones before it. */
static int cmp_pspan(const void *a, const void *b)
{
	const struct pspan *x = a, *y = b;
	if (x->who != y->who)
		return (x->who > y->who) - (x->who < y->who);
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->end < y->end) - (x->end > y->end);
}

static int cmp_psample(const void *a, const void *b)
{
	const struct psample *x = a, *y = b;
	if (x->who != y->who)
		return (x->who > y->who) - (x->who < y->who);
	return (x->t > y->t) - (x->t < y->t);
}

/* Every sample costs each span that encloses it on its thread (all of
 * them: a sample in a nested call costs its callers too).  One sweep per
 * thread over spans and samples in time order, with the open spans on a
 * stack. */
static void charge_samples(struct split *s, struct psample *smp, size_t nsmp)
{
	double mean[LP_HIT_N] = { 0 }, var[LP_HIT_N] = { 0 };
	bool known[LP_HIT_N] = { false };
	/* --raw: the samples are counted, their cost left in. */
	for (int h = 0; h < LP_HIT_N && !s->o->raw; h++)
		known[h] = lp_costs__of(s->costs, (enum lp_hit)h, &mean[h], &var[h]);
	if (s->nspans)	/* qsort's array may not be NULL, even empty */
		qsort(s->spans, s->nspans, sizeof(*s->spans), cmp_pspan);
	if (nsmp)
		qsort(smp, nsmp, sizeof(*smp), cmp_psample);
	size_t *open = lp_calloc(s->nspans + 1, sizeof(*open)), nopen = 0;
	size_t i = 0;
	for (size_t k = 0; k < nsmp; k++) {
		const struct psample *x = &smp[k];
		if (k == 0 || x->who != smp[k - 1].who) {
			nopen = 0;
			while (i < s->nspans && s->spans[i].who < x->who)
				i++;
		}
		while (i < s->nspans && s->spans[i].who == x->who && s->spans[i].start <= x->t) {
			while (nopen && s->spans[open[nopen - 1]].end <= s->spans[i].start)
				nopen--;
			open[nopen++] = i++;
		}
		while (nopen && s->spans[open[nopen - 1]].end <= x->t)
			nopen--;
		for (size_t o = 0; o < nopen; o++) {
			struct pspan *sp = &s->spans[open[o]];
			if (x->t >= sp->end || (sp->pid != x->pid && sp->pid != LP_ID_NONE &&
						x->pid != LP_ID_NONE))
				continue;
			if (!sp->nsamples++)
				sp->first = x->t;
			if (known[x->hit]) {
				sp->cost += mean[x->hit];
				sp->var += var[x->hit];
			}
		}
	}
	free(open);
}

/* The sampling period: the cost records' freq_hz=, else the header's
 * period_ns=; 0 when neither says. */
static double sampling_period(const struct split *s)
{
	double period = lp_costs__period(s->costs);
	return period ? period : s->period_ns;
}

/* The calibration measures what a sample costs a thread that does nothing
 * else, for 300 ms at the start.  In a real program it may cost more (the
 * caches a DWARF copy evicts, the recorder preempting the target: 7 us
 * more a sample in the request loop of bench/selfcost.sh), and on a busy
 * machine the calibration itself may be off (36 us calibrated against 19 us
 * paid, in CI).  The spans show what they paid (lp_costdist__deconvolve): within
 * a factor of 3 of the calibration, their figure is used; beyond, the
 * estimate's own assumption (on-CPU time grows with length alike in every
 * span) is likelier broken, and the calibration stays. */
static void use_seen_cost(struct split *s)
{
	double period = sampling_period(s);
	if (s->o->raw || s->o->child || !period)
		return;
	double *one = lp_calloc(s->nspans + 1, sizeof(*one)), *zero = lp_calloc(s->nspans + 1,
									       sizeof(*zero));
	size_t n1 = 0, n0 = 0;
	double cal = 0, cal_var = 0;	/* the calibration's, summed over one[] */
	for (size_t i = 0; i < s->nspans; i++) {
		const struct pspan *sp = &s->spans[i];
		double d = (double)(sp->end - sp->start) - sp->lp_ns;
		if (sp->nsamples == 1 && sp->cost > 0 && d - sp->cost < 0.9 * period) {
			one[n1++] = d;
			cal += sp->cost;
			cal_var += sp->var;
		} else if (!sp->nsamples && d < 0.9 * period) {
			zero[n0++] = d;
		}
	}
	if (n1 && lp_costdist__deconvolve(&s->dist, one, n1, zero, n0, period, cal / (double)n1,
					  sqrt(cal_var / (double)n1))) {
		double f = s->dist.mean / (cal / (double)n1);
		if (f >= 1.0 / 3 && f <= 3) {
			for (size_t i = 0; i < s->nspans; i++) {
				s->spans[i].cost *= f;
				s->spans[i].var *= f * f;
			}
			s->used_seen = true;
		}
	}
	free(one);
	free(zero);
}

/* A span that holds samples is measured longer by their cost, which is
 * known only on average: when the truth may lie on either side of a cut,
 * the likelihood decides, or the span is uncertain. */
static int32_t decide(struct split *s, const struct lp_prior *prior, const struct pspan *sp,
		      double *prob)
{
	int32_t band = (int32_t)band_of(s, sp->corrected);
	if (s->o->raw || s->o->child || !sp->nsamples || !(sp->var > 0) || s->nbands == 1)
		return band;
	double m = (double)(sp->end - sp->start) - sp->lp_ns;
	/* The cost's distribution as the spans show it, else the
	 * calibration's mean and spread (normal). */
	struct lp_costdist normal = lp_costdist__normal(sp->cost / sp->nsamples,
							sqrt(sp->var / sp->nsamples));
	const struct lp_costdist *d = s->used_seen ? &s->dist : &normal;
	/* The span before its first sample is clean but for the part of the
	 * sample's own cost that comes before its time stamp (the interrupt's
	 * entry: 35 us before the sample in a 30 us request, seen in
	 * bench/selfcost.sh): less the cost's 99th percentile, it is a floor
	 * of the true duration. */
	double lb = (double)(sp->first - sp->start) - sp->lp_ns - lp_costdist__quantile(d, 0.99);
	if (!lp_prior__bands(prior, m, lb, d, sp->nsamples, s->cuts, s->nbands, prob))
		return band;
	size_t best = 0;
	for (size_t b = 1; b < s->nbands; b++)
		if (prob[b] > prob[best])
			best = b;
	if (prob[best] >= s->o->confidence)
		return (int32_t)best;
	return (int32_t)(s->nbands + G_UNCERTAIN);
}

/* The samples that cost their spans time: each one's time, thread and
 * what it hit. */
struct psamples {
	struct psample *v;
	size_t n, cap;
};

/* A span of the probe, whole, that the predicates keep: kept with its
 * probes' own cost.  -1 after a message. */
static int take_span(struct split *s, struct lp_reader *r, const struct lp_span *sp)
{
	if (sp->start_ns == LP_TIME_NONE)
		return 0;
	if (sp->start_ns < s->t0)
		s->t0 = sp->start_ns;
	if (sp->end_ns == LP_TIME_NONE || !is_probe(s, sp->probe) || !preds_ok(s, &sp->attrs, ""))
		return 0;
	double lp_ns;
	if (!lp_span__lp_ns(sp, &lp_ns)) {
		lp_reader__error(r, "span: bad lp_ns");
		return -1;
	}
	if (s->nspans == s->spans_cap) {
		s->spans_cap = s->spans_cap ? s->spans_cap * 2 : 1024;
		s->spans = lp_reallocarray(s->spans, s->spans_cap, sizeof(*s->spans));
	}
	int64_t child = 0;
	if (s->o->child && !child_ns(s, &sp->attrs, "", &child)) {
		lp_reader__error(r, "span: bad %s", s->child_key);
		return -1;
	}
	const char *key;
	size_t klen;
	uint64_t who = (uint32_t)sp->tid;
	if (attr_raw(&sp->attrs, "key", 3, &key, &klen)) {
		/* Without -e every probe's spans decide: a callback's too. */
		if (!s->key_attr) {
			lp_reader__error(r, "span: %s is a keyed span (key=): name it with -e %s",
					 sp->probe, sp->probe);
			return -1;
		}
		who = keyed_who(sp->pid, key, klen);
		s->keyed = true;
	}
	s->spans[s->nspans++] = (struct pspan){
		.start = sp->start_ns, .end = sp->end_ns, .pid = sp->pid, .tid = sp->tid,
		.lp_ns = s->o->raw ? 0 : lp_ns, .group = -1, .child = child, .who = who,
	};
	return 0;
}

/* One record of the first pass: costs, the period, samples that cost
 * their spans, spans.  -1 after a message. */
static int take_first(struct split *s, struct lp_reader *r, const struct lp_record *rec,
		      struct psamples *ps)
{
	if (rec->kind == LP_REC_COST) {
		lp_costs__add(s->costs, &rec->cost);
	} else if (rec->kind == LP_REC_PROBE) {
		note_mark(s, &rec->mark);
	} else if (rec->kind == LP_REC_HEADER && !s->period_ns) {
		const char *why;
		double v;
		if (lp_attrs__get(&rec->header.attrs, "period_ns", &s->value, &s->value_cap) >= 0 &&
		    lp_parse_double(s->value, &v, &why) == 0 && v > 0)
			s->period_ns = v;
	} else if (rec->kind == LP_REC_SAMPLE) {
		const struct lp_sample *x = &rec->sample;
		if (x->time_ns == LP_TIME_NONE)
			return 0;
		if (x->time_ns < s->t0)
			s->t0 = x->time_ns;
		enum lp_hit hit = lp_hit__of_sample(x);
		if (x->tid == LP_ID_NONE || hit == LP_HIT_NONE)
			return 0;
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? ps->cap * 2 : 1024;
			ps->v = lp_reallocarray(ps->v, ps->cap, sizeof(*ps->v));
		}
		ps->v[ps->n++] = (struct psample){ x->time_ns, x->pid, x->tid, hit, sample_who(s, x) };
	} else if (rec->kind == LP_REC_SPAN) {
		return take_span(s, r, &rec->span);
	}
	return 0;
}

/* Each span's duration less lp's cost in it, and the sorted durations of
 * those in the time range. */
static void settle_durations(struct split *s)
{
	s->durs = lp_reallocarray(NULL, s->nspans ? s->nspans : 1, sizeof(*s->durs));
	for (size_t i = 0; i < s->nspans; i++) {
		struct pspan *sp = &s->spans[i];
		/* --child: its calls' time, their lp_ns out (lp-join); the
		 * samples in them are not known apart from the span's */
		sp->corrected = s->o->child ? sp->child
					    : lp_less_cost(sp->end - sp->start, sp->lp_ns + sp->cost);
		if (!s->o->has_time || (sp->end > s->from && sp->start < s->to)) {
			s->durs[s->ndurs++] = sp->corrected;
			s->sampled_spans += sp->nsamples > 0;
			s->sample_cost_ns += sp->cost;
			s->probe_cost_ns += sp->lp_ns;
		}
	}
	qsort(s->durs, s->ndurs, sizeof(*s->durs), lp_cmp_i64);
}

static int first_pass(struct split *s, const char *input, char **spool_path)
{
	struct lp_reader *r = lp_reader__open(input, s->o->format);
	if (!r)
		return -1;
	struct stat st;
	bool regular = strcmp(input, "-") && stat(input, &st) == 0 && S_ISREG(st.st_mode);
	FILE *spool = NULL;
	struct lp_writer *sw = NULL;
	if (!regular) {
		if (!(spool = lp_temp_file(spool_path)))
			return -1;
		sw = lp_writer__new(spool);
	}
	struct psamples ps = { 0 };
	struct lp_record rec;
	int rc;
	while ((rc = lp_reader__next(r, &rec)) > 0) {
		if (sw && lp_writer__record(sw, &rec) < 0) {
			lp_error_errno("%s: cannot write", *spool_path);
			rc = -1;
			break;
		}
		if (take_first(s, r, &rec, &ps) < 0) {
			rc = -1;
			break;
		}
	}
	lp_reader__free(r);
	if (sw) {
		lp_writer__free(sw);
		if (fclose(spool) == EOF && rc >= 0) {
			lp_error_errno("%s: cannot write", *spool_path);
			rc = -1;
		}
	}
	if (rc >= 0) {
		set_time_bounds(s);
		charge_samples(s, ps.v, ps.n);
		use_seen_cost(s);
		settle_durations(s);
	}
	free(ps.v);
	return rc < 0 ? -1 : 0;
}

/* After the first pass: the cut points of the percentiles (--auto's is
 * decide_distribution's), then each span's group (decide) and each group's
 * sorted durations. */
static void exact_cuts(struct split *s)
{
	/* Nearest rank: the ceil(p n)-th smallest. */
	for (size_t i = 0; s->o->npercentiles && i + 1 < s->nbands; i++) {
		if (!s->ndurs) {
			s->cuts[i] = INFINITY;
			continue;
		}
		double rank = ceil(s->o->percentiles[i] / 100 * (double)s->ndurs);
		size_t k = rank < 1 ? 1 : (size_t)rank;
		if (k > s->ndurs)
			k = s->ndurs;
		s->cuts[i] = (double)s->durs[k - 1];
	}
	/* Each span's group, and each group's durations. */
	struct lp_prior *prior = lp_prior__new(s->durs, s->ndurs, sampling_period(s));
	double *prob = lp_calloc(s->nbands, sizeof(*prob));
	size_t *count = lp_calloc(s->ng, sizeof(*count));
	for (size_t i = 0; i < s->nspans; i++) {
		struct pspan *sp = &s->spans[i];
		if (s->o->has_time && !(sp->end > s->from && sp->start < s->to))
			continue;
		sp->group = decide(s, prior, sp, prob);
		count[sp->group]++;
		s->uncertain_spans += (size_t)sp->group == s->nbands + G_UNCERTAIN;
		lp_hashmap__put(&s->span_index, span_key(sp->tid, sp->start, sp->end),
				(void *)(uintptr_t)(i + 1));
	}
	for (size_t g = 0; g < s->ng; g++)
		s->g[g].durs = lp_calloc(count[g] ? count[g] : 1, sizeof(int64_t));
	for (size_t i = 0; i < s->nspans; i++)
		if (s->spans[i].group >= 0) {
			struct group *g = &s->g[s->spans[i].group];
			g->durs[g->ndurs++] = s->spans[i].corrected;
		}
	for (size_t g = 0; g < s->ng; g++)
		qsort(s->g[g].durs, s->g[g].ndurs, sizeof(int64_t), lp_cmp_i64);
	free(count);
	free(prob);
	lp_prior__free(prior);
}

/* --- the report ----------------------------------------------------------- */

static int64_t sorted_rank(const int64_t *v, size_t n, double p)
{
	double rank = ceil(p * (double)n);
	size_t k = rank < 1 ? 1 : (size_t)rank;
	return v[(k > n ? n : k) - 1];
}

/* A group's percentile in ns, printed exactly: the sorted durations' own
 * value, or the sketch's estimate, which never is above the largest
 * duration seen (its bucket's midpoint may be; near INT64_MAX a double
 * would not even convert back). */
/* The group's p-quantile of durations: false when it has none. */
static bool percentile_of(const struct group *g, double p, int64_t *v)
{
	if (!g->spans)
		return false;
	if (g->lat) {
		double e = lp_quantile__get(g->lat, p);
		if (isnan(e))
			return false;
		*v = e >= (double)g->max_ns ? g->max_ns : (int64_t)llround(e);
	} else {
		*v = sorted_rank(g->durs, g->ndurs, p);
	}
	return true;
}

static void print_percentile(FILE *f, const struct group *g, double p)
{
	int64_t v;
	if (percentile_of(g, p, &v))
		fprintf(f, "%" PRId64 "\t", v);
	else
		fputs("-\t", f);
}

/* A warning: said on stderr now, and kept for the split records. */
static void say(struct split *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct split *s, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	lp_error("warning: %s", text);
	s->notes = lp_reallocarray(s->notes, s->nnotes + 1, sizeof(*s->notes));
	s->notes[s->nnotes++] = (struct note){ lp_strdup("warning"), text };
}

/* --- the distribution: modes, --auto, the histogram, cuts in a mode ------ */

/* A duration for people: 3 significant digits and a unit, "30.5 us". */
static void fmt_human(char *b, size_t size, double ns)
{
	static const struct { const char *unit; double div; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	size_t u = 0;
	while (u + 1 < 4 && ns >= units[u + 1].div * 0.9995)
		u++;
	double v = ns / units[u].div;
	if (v >= 999.5)
		snprintf(b, size, "%.0f %s", v, units[u].unit);
	else
		snprintf(b, size, "%.3g %s", v, units[u].unit);
}

/* The same as an option's value: "117us" (lp_parse_duration reads it). */
static void fmt_option(char *b, size_t size, double ns)
{
	fmt_human(b, size, ns);
	char *sp = strchr(b, ' ');
	memmove(sp, sp + 1, strlen(sp));
}

/* "1.2-3 ms", or "800 us-1.2 ms" across units. */
static void fmt_range(char *b, size_t size, double lo, double hi)
{
	char x[32], y[32];
	fmt_human(x, sizeof(x), lo);
	fmt_human(y, sizeof(y), hi);
	const char *ux = strchr(x, ' '), *uy = strchr(y, ' ');
	if (!strcmp(ux, uy))
		snprintf(b, size, "%.*s-%s", (int)(ux - x), x, y);
	else
		snprintf(b, size, "%s-%s", x, y);
}

/* A histogram row's edge: exact, and readable ("1.25us", "640ms"). */
static void fmt_edge(char *b, size_t size, int64_t ns)
{
	if (ns == INT64_MAX) {
		snprintf(b, size, "inf");
		return;
	}
	static const struct { const char *unit; int64_t div; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	size_t u = 0;
	while (u + 1 < 4 && ns >= units[u + 1].div)
		u++;
	snprintf(b, size, "%.15g%s", (double)ns / (double)units[u].div, ns ? units[u].unit : "");
}

#define HIST_ROWS 30
#define HIST_WIDTH 40

/* A histogram of ln(duration) with the modes and cut points marked. */
static void report_distribution(struct split *s, FILE *f)
{
	const struct lp_modes *m = s->modes;
	const struct lp_split_opts *o = s->o;
	char a[32], b[32];
	if (!m || !s->ndurs)
		return;
	fprintf(f, "# distribution of the %zu span durations: %zu mode%s", s->ndurs, m->nmodes,
		m->nmodes == 1 ? "" : "s");
	for (size_t i = 0; i < m->nmodes; i++) {
		fmt_human(a, sizeof(a), (double)m->modes[i].at_ns);
		fprintf(f, "%s %s (%.1f%%)", i ? "," : ", at", a, 100 * m->modes[i].mass);
	}
	for (size_t i = 0; i + 1 < m->nmodes; i++) {
		fmt_human(a, sizeof(a), (double)m->valleys[i].at_ns);
		fprintf(f, "%s %s (density %.0f%% of the smaller peak)", i ? "," : "; valley at", a,
			100 * m->valleys[i].depth);
	}
	struct lp_histogram h;
	lp_histogram__init(&h, s->durs, s->ndurs, HIST_ROWS);
	size_t most = 0;
	for (size_t r = 0; r < h.nrows; r++)
		if (h.counts[r] > most)
			most = h.counts[r];
	/* the fullest row HIST_WIDTH long, but never a # for less than a span */
	double per = most > HIST_WIDTH ? (double)most / HIST_WIDTH : 1;
	fprintf(f, "\nfrom\tto\tspans\tlog scale, %u rows a decade; # = %.3g span%s\n", h.per_decade,
		per, per == 1 ? "" : "s");
	for (size_t r = 0; r < h.nrows; r++) {
		int64_t lo = h.edges[r], hi = h.edges[r + 1];
		bool last = r + 1 == h.nrows;
		fmt_edge(a, sizeof(a), lo);
		fmt_edge(b, sizeof(b), hi);
		fprintf(f, "%s\t%s\t%zu\t", a, b, h.counts[r]);
		size_t bar = (size_t)llround((double)h.counts[r] / per);
		for (size_t k = 0; k < bar; k++)
			putc('#', f);
		if (!bar && h.counts[r])
			putc('.', f);
		/* Marks: what falls in [lo, hi) (the last row: up to its end). */
		const char *sep = "  <- ";
		for (size_t i = 0; i < m->nmodes; i++) {
			int64_t at = m->modes[i].at_ns;
			if (at >= lo && (at < hi || last)) {
				fmt_human(a, sizeof(a), (double)at);
				fprintf(f, "%smode %s (%.1f%%)", sep, a, 100 * m->modes[i].mass);
				sep = "; ";
			}
		}
		for (size_t i = 0; i + 1 < s->nbands; i++) {
			double c = s->cuts[i];
			if (!(c >= (double)lo && (c < (double)hi || last)))
				continue;
			fmt_human(a, sizeof(a), c);
			if (o->auto_cut)
				fprintf(f, "%sauto cut %s", sep, a);
			else if (o->npercentiles)
				fprintf(f, "%sp%g cut %s", sep, o->percentiles[i], a);
			else
				fprintf(f, "%sthreshold %s", sep, a);
			sep = "; ";
		}
		putc('\n', f);
	}
	lp_histogram__free(&h);
}

/* The modes of the durations, once all are known (file mode), and for
 * --auto the cut at the valley below the slowest one.  -1 when --auto
 * finds no valley or no span: said, and the histogram shown. */
static int decide_distribution(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	s->modes = lp_modes__new(s->durs, s->ndurs);
	if (!o->auto_cut)
		return 0;
	int v = lp_modes__auto_cut(s->modes);
	if (v >= 0) {
		s->cuts[0] = (double)s->modes->valleys[v].at_ns;
		return 0;
	}
	if (!s->ndurs) {
		if (o->probe)
			lp_error("--auto: no span of probe '%s' in the input", o->probe);
		else
			lp_error("--auto: no span in the input");
		return -1;
	}
	char at[32];
	fmt_human(at, sizeof(at), (double)s->modes->modes[0].at_ns);
	if (!o->quiet) {
		FILE *f = o->report ? lp_open_output(o->report) : stderr;
		fprintf(f, "# probe %s: %zu spans, no valley\n", o->probe ? o->probe : "(any)",
			s->ndurs);
		report_distribution(s, f);
		if (o->report)
			lp_close_output(f, o->report);
		else
			fflush(f);
	}
	lp_error("no valley: the span durations have one mode, at %s; use --percentile or --threshold",
		 at);
	return -1;
}

/* A percentile whose nearest-rank cut is the last duration at or below
 * valley v, so that it splits exactly as the valley does: the shortest
 * decimal p with ceil(p / 100 * n) = k, k the durations at or below the
 * valley, computed as exact_cuts computes it from the option's text. */
static void suggest_percentile(const struct split *s, int v, char *b, size_t size)
{
	double n = (double)s->ndurs, k = (double)s->modes->valleys[v].below;
	for (int dec = 0; dec <= 9; dec++) {
		double scale = pow(10, dec);
		/* the smallest multiple of 10^-dec above 100 (k - 1) / n */
		for (double t = floor(100 * (k - 1) / n * scale); t <= ceil(100 * k / n * scale); t++) {
			snprintf(b, size, "%.*f", dec, t / scale);
			double p = strtod(b, NULL);
			if (p > 0 && p < 100 && ceil(p / 100 * n) == k)
				return;
		}
	}
	snprintf(b, size, "%.9g", 100 * k / n);	/* n beyond 10^11 */
}

/* A percentile or threshold cut inside a mode splits one population in
 * two: the groups differ by degree, not by kind, and their profiles
 * differ mostly by noise.  Said only when there is a valley to suggest
 * instead (with one mode, every cut is inside it). */
static void warn_cuts(struct split *s)
{
	const struct lp_modes *m = s->modes;
	const struct lp_split_opts *o = s->o;
	if (!m || m->nmodes < 2 || o->auto_cut)
		return;
	for (size_t i = 0; i + 1 < s->nbands; i++) {
		int v, in = lp_modes__inside(m, s->cuts[i], &v);
		if (in < 0 || v < 0)
			continue;
		char what[64], at[32], range[64], valley[32], try[64];
		fmt_human(at, sizeof(at), s->cuts[i]);
		if (o->npercentiles)
			snprintf(what, sizeof(what), "the p%g cut (%s)", o->percentiles[i], at);
		else
			snprintf(what, sizeof(what), "the threshold %s", at);
		fmt_range(range, sizeof(range), (double)m->modes[in].lo_ns, (double)m->modes[in].hi_ns);
		fmt_human(valley, sizeof(valley), (double)m->valleys[v].at_ns);
		if (o->npercentiles) {
			suggest_percentile(s, v, try, sizeof(try));
		} else {
			fmt_option(try, sizeof(try), (double)m->valleys[v].at_ns);
		}
		say(s, "%s falls inside a mode (%s, %.1f%% of spans); the valley is at %s: "
			 "try %s--%s %s", what, range, 100 * m->modes[in].mass, valley,
			 v == lp_modes__auto_cut(m) ? "--auto or " : "",
			 o->npercentiles ? "percentile" : "threshold", try);
	}
}

/* The report's first line: the probe, its spans and the cuts. */
static void report_cuts(const struct split *s, FILE *f)
{
	const struct lp_split_opts *o = s->o;
	uint64_t nspans = 0;
	for (size_t i = 0; i < s->nbands; i++)
		nspans += s->g[i].spans;
	fprintf(f, "# probe %s: %" PRIu64 " spans", o->probe ? o->probe : "(any)", nspans);
	if (o->took)
		fprintf(f, ", by whether they reached or called %s", o->took);
	if (o->child)
		fprintf(f, ", cut on their time in calls of %s", o->child);
	/* --live with no span yet has no estimate: its cuts are not 0 ns */
	bool no_cuts = o->live && !s->live_spans;
	for (size_t i = 0; o->npercentiles && i + 1 < s->nbands; i++) {
		if (no_cuts || isnan(s->cuts[i]) || isinf(s->cuts[i]))
			fprintf(f, ", p%g = -", o->percentiles[i]);
		else
			fprintf(f, ", p%g = %.0f ns", o->percentiles[i], s->cuts[i]);
	}
	for (size_t i = 0; i < o->nthresholds; i++)
		fprintf(f, ", threshold %" PRId64 " ns", o->thresholds[i]);
	if (o->auto_cut) {
		const struct lp_modes *m = s->modes;
		int v = lp_modes__auto_cut(m);
		char lo[32], hi[32];
		fmt_human(lo, sizeof(lo), (double)m->modes[v].at_ns);
		fmt_human(hi, sizeof(hi), (double)m->modes[v + 1].at_ns);
		fprintf(f, ", auto cut %.0f ns at the valley between modes at %s (%.1f%%) and %s (%.1f%%)",
			s->cuts[0], lo, 100 * m->modes[v].mass, hi, 100 * m->modes[v + 1].mass);
	}
	if (o->live && o->npercentiles)
		fprintf(f, " (live: last %.3gs, relative error <= %g%%)",
			(double)o->window_ns / 1e9, o->accuracy * 100);
	else if (o->npercentiles)
		fprintf(f, " (exact)");
	fputc('\n', f);
}

/* The table: each group's spans, samples, percentiles and coverage. */
static void report_groups(const struct split *s, FILE *f)
{
	char num[64];
	fprintf(f, "group\tspans\tsamples\tp50_ns\tp90_ns\tp99_ns\tmax_ns\tspan_ns\tsample_ns\tcoverage\n");
	for (size_t i = 0; i < s->ng; i++) {
		struct group *g = &s->g[i];
		/* The uncertain group's spans are a band's, undecided. */
		bool band = i < s->nbands || i == s->nbands + G_UNCERTAIN;
		if (!band && !g->samples && !g->spans)
			continue;
		if (i == s->nbands + G_UNCERTAIN && !g->samples && !g->spans)
			continue;
		fprintf(f, "%s\t", g->name);
		if (!band) {
			fprintf(f, "-\t%" PRIu64 "\t-\t-\t-\t-\t-\t", g->samples);
		} else {
			fprintf(f, "%" PRIu64 "\t%" PRIu64 "\t", g->spans, g->samples);
			static const double ps[3] = { 0.5, 0.9, 0.99 };
			for (int k = 0; k < 3; k++)
				print_percentile(f, g, ps[k]);
			if (g->spans)
				fprintf(f, "%" PRId64 "\t", g->max_ns);
			else
				fprintf(f, "-\t");
			lp_format_number(num, sizeof(num), g->span_ns);
			fprintf(f, "%s\t", num);
		}
		lp_format_number(num, sizeof(num), g->sample_weight);
		fprintf(f, "%s\t", num);
		/* The uncertain spans are there because they hold samples:
		 * their coverage says nothing. */
		if (i < s->nbands && g->span_ns > 0)
			fprintf(f, "%.1f%%\n", 100 * g->sample_weight / g->span_ns);
		else
			fprintf(f, "-\n");
	}
}

/* What lp's own cost did to the durations, and how it was taken out. */
static void report_costs(const struct split *s, FILE *f)
{
	const struct lp_split_opts *o = s->o;
	double mean, var;
	bool have = lp_costs__of(s->costs, LP_HIT_SAMPLE, &mean, &var);
	fprintf(f, "# lp's own cost taken out: %" PRIu64 " of %zu spans held samples",
		s->sampled_spans, s->ndurs);
	if (have)
		fprintf(f, " (%.1f us a sample, sd %.1f us)", mean / 1e3, sqrt(var) / 1e3);
	if (s->dist.empirical)
		fprintf(f, "; the spans show %.1f us a sample (sd %.1f us)%s",
			s->dist.mean / 1e3, s->dist.sd / 1e3,
			s->used_seen ? ": used" : ": too far from the calibration, not used");
	fprintf(f, ", %.3f ms of samples and %.3f ms of probes in all",
		s->sample_cost_ns / 1e6, s->probe_cost_ns / 1e6);
	if (s->uncertain_spans)
		fprintf(f, "; %" PRIu64 " sampled spans are uncertain (below %g%% sure of "
			   "their band): group uncertain", s->uncertain_spans, o->confidence * 100);
	if (!lp_costs__known(s->costs))
		fprintf(f, "; no cost records: durations are as measured");
	fputc('\n', f);
}

/* Keyed spans (requests of callbacks): each band's request time, the
 * part of it in the request's own callbacks, and the part it waited while
 * its threads ran other requests' callbacks (waits.h); the rest it waited
 * while they ran none (the loop, idle, blocked). */
static void sum_callbacks(struct split *s)
{
	if (s->waits)
		lp_waits__finish(s->waits);
	for (size_t i = 0; i < s->nspans; i++) {
		const struct pspan *sp = &s->spans[i];
		if (sp->group < 0)
			continue;
		struct group *g = &s->g[sp->group];
		g->callback_ns += sp->callback_ns;
		double waited = (double)(sp->end - sp->start) - sp->callback_ns;
		double others = s->waits ? lp_waits__others(s->waits, i, sp->start, sp->end) : 0;
		g->others_ns += fmin(others, fmax(waited, 0));
	}
}

static void report_keyed(const struct split *s, FILE *f)
{
	char num[64];
	fprintf(f, "# where the requests' time went: in their callbacks (%s), waiting while "
		   "their threads ran others' callbacks, or while they ran none\ngroup\trequests\t"
		   "time_ns\tin_callbacks\tothers\tnone\n", s->key_attr + 5);
	for (size_t i = 0; i < s->nbands; i++) {
		const struct group *g = &s->g[i];
		if (!(g->span_ns > 0))
			continue;
		lp_format_number(num, sizeof(num), g->span_ns);
		double none = 1 - (g->callback_ns + g->others_ns) / g->span_ns;
		fprintf(f, "%s\t%" PRIu64 "\t%s\t%.1f%%\t%.1f%%\t%.1f%%\n", g->name, g->spans, num,
			100 * g->callback_ns / g->span_ns, 100 * g->others_ns / g->span_ns,
			100 * (none > 0 ? none : 0));
	}
}

/* A wall-clock profile: how each group's time divides between running,
 * waiting for a CPU and blocked, and the functions the blocked time was
 * spent in, as shares of the group's blocked time. */
static void report_states(const struct split *s, FILE *f)
{
	char num[64];
	fprintf(f, "# sample weight by thread state\ngroup\trunning\trunnable\tblocked\n");
	for (size_t i = 0; i < s->ng; i++) {
		struct group *g = &s->g[i];
		double *w = g->state_weight, t = w[0] + w[1] + w[2];

		if (t > 0)
			fprintf(f, "%s\t%.1f%%\t%.1f%%\t%.1f%%\n", g->name, 100 * w[0] / t,
				100 * w[1] / t, 100 * w[2] / t);
	}
	bool header = false;
	for (size_t i = 0; i < s->ng; i++) {
		struct group *g = &s->g[i];
		size_t n;
		struct blocker **v = sorted_blockers(g, &n);

		for (size_t k = 0; k < n && k < TOP_BLOCKERS; k++) {
			if (!header) {
				fprintf(f, "# where each group blocked (top %d functions by blocked weight)\n"
					   "group\tfunction\tblocked_ns\tshare\n", TOP_BLOCKERS);
				header = true;
			}
			lp_format_number(num, sizeof(num), v[k]->weight);
			fprintf(f, "%s\t%s\t%s\t%.1f%%\n", g->name, v[k]->name, num,
				100 * v[k]->weight / g->state_weight[ST_BLOCKED]);
		}
		free(v);
	}
}

static int report(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	if (o->quiet)
		return 0;
	FILE *f = o->report ? s->report_f : stderr;
	report_cuts(s, f);
	report_groups(s, f);
	if (s->nbands >= 2) {
		const char **names = lp_calloc(s->nbands, sizeof(*names));
		for (size_t i = 0; i < s->nbands; i++)
			names[i] = s->g[i].name;
		lp_separate__report(s->sep, f, s->nbands - 1, names, 10);
		free(names);
	}
	if (s->spans && !o->raw)
		report_costs(s, f);
	report_distribution(s, f);
	if (s->keyed)
		report_keyed(s, f);
	if (s->have_states)
		report_states(s, f);
	if (o->report)
		return lp_close_output(f, o->report);
	fflush(f);
	return 0;
}

/* The split checks itself (file mode: it knows every span): a result that
 * cannot be trusted is said, with the reason and what to do, whatever the
 * exit status. */
static void self_check(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	if (!s->spans || s->nbands < 2 || !s->ndurs)
		return;
	/* Samples are taken every period of CPU time: a group's samples
	 * cannot explain much more than all of its span time. */
	for (size_t i = 0; i < s->nbands; i++) {
		const struct group *g = &s->g[i];
		if (g->samples < 30 || !(g->span_ns > 0))
			continue;
		double cov = g->sample_weight / g->span_ns;
		if (cov > 1.1 + 3 / sqrt((double)g->samples) && !s->have_states)
			say(s, "group %s: its samples explain %.0f%% of its span time: more "
				"samples landed in its spans than their length allows (are the "
				"samples and spans from the same threads and clock?)",
			     g->name, 100 * cov);
	}
	/* Too few to show anything. */
	for (size_t i = 0; i < s->nbands; i++) {
		const struct group *g = &s->g[i];
		if (g->spans < 10 || g->samples < 20)
			say(s, "group %s has %" PRIu64 " spans and %" PRIu64 " samples: too few "
				"to compare; record longer or move the cut", g->name, g->spans,
			     g->samples);
	}
	/* A keyed span holds a sample as its callbacks' time, not its
	 * length, allows: the check below does not apply. */
	if (s->keyed)
		return;
	/* A span holds a sample with the chance 1 - exp(-d c / T) (T the
	 * period, c the share of time on a CPU): with lp's cost taken out,
	 * the sampled spans must be no longer than that length bias makes
	 * them.  Longer means lp measured itself. */
	double period = sampling_period(s);
	if (!period || s->sampled_spans < 30)
		return;
	double span_ns = 0, sample_ns = 0;
	for (size_t i = 0; i < s->nbands; i++) {
		span_ns += s->g[i].span_ns;
		sample_ns += s->g[i].sample_weight;
	}
	double c = span_ns > 0 ? sample_ns / span_ns : 1;
	c = c > 1 ? 1 : c < 0.01 ? 0.01 : c;
	double pw = 0, ptw = 0, obs = 0, obs2 = 0;
	size_t n = 0;
	for (size_t i = 0; i < s->nspans; i++) {
		const struct pspan *sp = &s->spans[i];
		if (sp->group < 0)
			continue;
		double t = (double)sp->corrected, p = -expm1(-t * c / period);
		pw += p;
		ptw += p * t;
		if (sp->nsamples) {
			obs += t;
			obs2 += t * t;
			n++;
		}
	}
	if (!n || !(pw > 0))
		return;
	double want = ptw / pw, mean = obs / (double)n;
	double sd = sqrt(fmax(obs2 / (double)n - mean * mean, 0));
	if (mean > want * 1.25 && mean - want > 4 * sd / sqrt((double)n))
		say(s, "the %" PRIu64 " spans that hold samples average %.1f us, %.1f us more "
			"than their length explains (%.1f us): lp's own cost is in the durations%s",
		     s->sampled_spans, mean / 1e3, (mean - want) / 1e3, want / 1e3,
		     o->raw ? " (--raw)"
		     : lp_costs__known(s->costs) ? "; it was under-corrected: try --raw to compare, "
						   "and a lower sampling rate"
						 : "; the input has no cost records: record with "
						   "lp-record and lp-trace of this version");
}

/* --- what the split decided, as records of the labelled stream ---------- */

/* "split WHAT NAME VALUE" and the attributes in s->ab, one line
 * (formats/lp-stream.md: what lp-split decided); NAME NULL: "-". */
static void put_split(struct split *s, const char *what, const char *name, const char *value)
{
	struct output *out = &s->outs[0];
	size_t nl = name ? strlen(name) : 0;
	char *esc = lp_malloc(4 * nl + 5);
	size_t el = lp_escape(esc, name ? name : "", nl);
	struct lp_attrs a = lp_attrs_buf__attrs(&s->ab);
	char *line = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&line, &size);

	if (!name || !strcmp(name, "-") || !nl)
		el = (size_t)sprintf(esc, "%s", name && nl ? "\\x2d" : "-");
	fprintf(f, "split\t%s\t%.*s\t%s", what, (int)el, esc, value);
	if (a.len)
		fprintf(f, "\t%.*s", (int)a.len, a.text);
	fclose(f);
	struct lp_record rec = { .kind = LP_REC_OTHER, .line = line, .len = size };
	if (lp_writer__record(out->w, &rec) < 0)
		out_failed(out);
	free(line);
	free(esc);
	lp_attrs_buf__reset(&s->ab);
}

static void add_num(struct split *s, const char *key, double v)
{
	char b[64];

	snprintf(b, sizeof(b), "%.6g", v);
	lp_attrs_buf__add(&s->ab, key, b);
}

/* A band's percentiles, as lp-split's report gives them. */
static void add_percentiles(struct split *s, const struct group *g)
{
	static const double ps[] = { 0.5, 0.9, 0.99 };
	static const char *const keys[] = { "p50_ns", "p90_ns", "p99_ns" };
	int64_t v;

	for (int k = 0; k < 3; k++)
		if (percentile_of(g, ps[k], &v))
			lp_attrs_buf__add_i64(&s->ab, keys[k], strlen(keys[k]), v);
	if (g->spans)
		lp_attrs_buf__add_i64(&s->ab, "max_ns", 6, g->max_ns);
}

static void put_groups(struct split *s)
{
	static const char *const state_keys[3] = { "running_ns", "runnable_ns", "blocked_ns" };

	for (size_t i = 0; i < s->ng; i++) {
		const struct group *g = &s->g[i];
		bool band = i < s->nbands;

		if (!band && !g->samples && !g->spans)
			continue;
		if (band || g->spans)
			lp_attrs_buf__add_i64(&s->ab, "spans", 5, (int64_t)g->spans);
		lp_attrs_buf__add_i64(&s->ab, "samples", 7, (int64_t)g->samples);
		if (band)
			add_percentiles(s, g);
		if (band || g->spans)
			lp_attrs_buf__add_i64(&s->ab, "span_ns", 7, llround(g->span_ns));
		lp_attrs_buf__add_i64(&s->ab, "sample_ns", 9, llround(g->sample_weight));
		if (band && g->span_ns > 0)
			add_num(s, "coverage", g->sample_weight / g->span_ns);
		if (band && s->keyed) {
			lp_attrs_buf__add_i64(&s->ab, "callback_ns", 11, llround(g->callback_ns));
			lp_attrs_buf__add_i64(&s->ab, "others_ns", 9, llround(g->others_ns));
		}
		for (int k = 0; s->have_states && k < 3; k++)
			lp_attrs_buf__add_i64(&s->ab, state_keys[k], strlen(state_keys[k]),
					      llround(g->state_weight[k]));
		put_split(s, "group", g->name, "-");
	}
}

static void put_distribution(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	const struct lp_modes *m = s->modes;
	char v[64];

	for (size_t i = 0; i + 1 < s->nbands; i++) {
		char label[64];
		if (isnan(s->cuts[i]) || isinf(s->cuts[i]) || (o->live && !s->live_spans))
			continue;
		if (o->auto_cut)
			snprintf(label, sizeof(label), "auto");
		else if (o->npercentiles)
			snprintf(label, sizeof(label), "p%g", o->percentiles[i]);
		else
			snprintf(label, sizeof(label), "threshold");
		snprintf(v, sizeof(v), "%.0f", s->cuts[i]);
		put_split(s, "cut", label, v);
	}
	for (size_t i = 0; m && i < m->nmodes; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%zu", i);
		snprintf(v, sizeof(v), "%" PRId64, m->modes[i].at_ns);
		add_num(s, "share", m->modes[i].mass);
		lp_attrs_buf__add_i64(&s->ab, "lo_ns", 5, m->modes[i].lo_ns);
		lp_attrs_buf__add_i64(&s->ab, "hi_ns", 5, m->modes[i].hi_ns);
		put_split(s, "mode", name, v);
	}
	for (size_t i = 0; m && i + 1 < m->nmodes; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%zu", i);
		snprintf(v, sizeof(v), "%" PRId64, m->valleys[i].at_ns);
		add_num(s, "depth", m->valleys[i].depth);
		put_split(s, "valley", name, v);
	}
}

/* What separates the slowest band: lp_separate's table as records. */
static void put_features(struct split *s)
{
	enum { ROWS = 10 };
	struct lp_separate_row rows[ROWS];
	size_t hi = s->nbands - 1;

	if (s->nbands < 2)
		return;
	size_t n = lp_separate__rank(s->sep, hi, rows, ROWS);
	for (size_t i = 0; i < n; i++) {
		const struct lp_separate_row *r = &rows[i];
		char *name = lp_malloc(r->len + 32), p[64];

		snprintf(name, r->len + 32, "%s%s%.*s", r->verb ? r->verb : "", r->verb ? " " : "",
			 (int)r->len, r->name);
		snprintf(p, sizeof(p), "%.3g", pow(10, r->log10p));
		lp_attrs_buf__add(&s->ab, "group", s->g[hi].name);
		lp_attrs_buf__add_i64(&s->ab, "hi_n", 4, (int64_t)r->hi_n);
		lp_attrs_buf__add_i64(&s->ab, "lo_n", 4, (int64_t)r->lo_n);
		add_num(s, "hi_rate", r->hi_rate);
		add_num(s, "lo_rate", r->lo_rate);
		add_num(s, "log10p", r->log10p);
		put_split(s, "feature", name, p);
		free(name);
	}
}

/* lp-split's decisions at the end of its labelled stream, for the
 * programs that read it (lp-report): the probe, the cuts, the modes, each
 * group's figures, what separates the slow spans, the correction for
 * lp's own cost and the warnings. */
static void put_decisions(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	uint64_t nspans = 0;

	for (size_t i = 0; i < s->nbands; i++)
		nspans += s->g[i].spans;
	lp_attrs_buf__reset(&s->ab);
	lp_attrs_buf__add_i64(&s->ab, "spans", 5, (int64_t)nspans);
	if (o->took)
		lp_attrs_buf__add(&s->ab, "took", o->took);
	if (o->child)
		lp_attrs_buf__add(&s->ab, "child", o->child);
	lp_attrs_buf__add(&s->ab, "cuts", o->live ? "live" : "exact");
	put_split(s, "probe", o->probe, "-");
	put_distribution(s);
	put_groups(s);
	put_features(s);
	if (s->spans && !o->raw) {
		char *text = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&text, &size);

		report_costs(s, f);
		fclose(f);
		/* "# lp's own cost taken out: ...\n" as a sentence */
		size_t skip = strncmp(text, "# ", 2) ? 0 : 2;
		if (size && text[size - 1] == '\n')
			text[--size] = 0;
		lp_attrs_buf__add(&s->ab, "text", text + skip);
		put_split(s, "note", "cost", "-");
		free(text);
	}
	for (size_t i = 0; i < s->nnotes; i++) {
		lp_attrs_buf__add(&s->ab, "text", s->notes[i].text);
		put_split(s, "note", s->notes[i].kind, "-");
	}
}

static void free_split(struct split *s)
{
	for (size_t i = 0; i < s->nnotes; i++) {
		free(s->notes[i].kind);
		free(s->notes[i].text);
	}
	free(s->notes);
	for (size_t i = 0; i < s->ng; i++) {
		free(s->g[i].name);
		lp_quantile__free(s->g[i].lat);
		free(s->g[i].durs);
		free_blockers(&s->g[i]);
	}
	free(s->g);
	for (size_t i = 0; i < s->nwins; i++)
		free(s->wins[i].probe);
	free(s->wins);
	free(s->cuts);
	free(s->outs);
	free(s->durs);
	free(s->spans);
	lp_waits__free(s->waits);
	lp_hashmap__fini(&s->span_index);
	lp_costs__free(s->costs);
	lp_costdist__fini(&s->dist);
	free(s->buf);
	free(s->kbuf);
	free(s->value);
	free(s->name);
	lp_attrs_buf__free(&s->ab);
	lp_quantile__free(s->sketch);
	lp_modes__free(s->modes);
	lp_separate__free(s->sep);
	free(s->key_attr);
	free(s->took_at);
	free(s->took_calls);
	free(s->child_key);
}

/* --- the cut options, as lp-split and lp-report take them ----------------- */

static int bad_cut(const char *opt, const char *arg, const char *why)
{
	lp_error("%s '%s': %s", opt, arg, why);
	return 2;
}

/* -P LIST (opt 'P') or -t LIST (opt 't'), comma-separated, appended: 0,
 * or 2 after a message. */
static int parse_cuts(struct lp_split_cuts *c, int opt, const char *arg)
{
	const char *name = opt == 'P' ? "--percentile" : "--threshold";
	const char *why = NULL;
	char *list = lp_strdup(arg), *save = NULL;
	for (char *x = strtok_r(list, ",", &save); x && !why; x = strtok_r(NULL, ",", &save)) {
		if (opt == 'P') {
			double v;
			if (lp_parse_double(x, &v, &why) < 0)
				break;
			if (!(v > 0 && v < 100)) {
				why = "must be between 0 and 100";
				break;
			}
			c->pcts = lp_reallocarray(c->pcts, c->npcts + 1, sizeof(*c->pcts));
			c->pcts[c->npcts++] = v;
		} else {
			int64_t v;
			if (lp_parse_duration(x, &v, &why) < 0)
				break;
			c->ths = lp_reallocarray(c->ths, c->nths + 1, sizeof(*c->ths));
			c->ths[c->nths++] = v;
		}
	}
	free(list);
	return why ? bad_cut(name, arg, why) : 0;
}

int lp_split_cuts__option(struct lp_split_cuts *c, struct lp_split_opts *o, int opt,
			  const char *arg)
{
	switch (opt) {
	case 'e':
		o->probe = arg;
		return 1;
	case 'P':
	case 't':
		return parse_cuts(c, opt, arg) ? 2 : 1;
	case LP_SPLIT_OPT_AUTO:
		o->auto_cut = true;
		return 1;
	case LP_SPLIT_OPT_TOOK:
	case LP_SPLIT_OPT_CHILD:
		if (!*arg)
			return bad_cut(opt == LP_SPLIT_OPT_TOOK ? "--took" : "--child", arg,
				       "expected a probe's name");
		*(opt == LP_SPLIT_OPT_TOOK ? &o->took : &o->child) = arg;
		return 1;
	}
	return 0;
}

int lp_split_cuts__apply(struct lp_split_cuts *c, struct lp_split_opts *o)
{
	if (c->npcts && c->nths) {
		lp_error("--percentile and --threshold cannot be combined");
		return 2;
	}
	/* --took groups by a yes or no, not by a duration */
	if (o->took && (c->npcts || c->nths || o->auto_cut || o->child)) {
		lp_error("--took decides the groups: it cannot be combined with --%s",
			 c->npcts ? "percentile" : c->nths ? "threshold" : o->auto_cut ? "auto" : "child");
		return 2;
	}
	if (o->child && !c->npcts && !c->nths && !o->auto_cut) {
		lp_error("--child says what is cut: give the cut with --percentile, --threshold or --auto");
		return 2;
	}
	if (o->auto_cut && (c->npcts || c->nths)) {
		lp_error("--auto decides the cut: it cannot be combined with --%s",
			 c->npcts ? "percentile" : "threshold");
		return 2;
	}
	/* The valley is a property of the whole distribution: global by
	 * nature, like exact percentiles. */
	if (o->auto_cut && o->live) {
		lp_error("--auto needs every duration before the first sample is routed: "
			 "it cannot be combined with --live (use --live --percentile)");
		return 2;
	}
	if (c->npcts)
		qsort(c->pcts, c->npcts, sizeof(*c->pcts), lp_cmp_double);
	if (c->nths)
		qsort(c->ths, c->nths, sizeof(*c->ths), lp_cmp_i64);
	for (size_t i = 1; i < c->npcts; i++)
		if (c->pcts[i] == c->pcts[i - 1])
			return bad_cut("--percentile", "", "a cut point is given twice");
	for (size_t i = 1; i < c->nths; i++)
		if (c->ths[i] == c->ths[i - 1])
			return bad_cut("--threshold", "", "a cut point is given twice");
	o->percentiles = c->pcts;
	o->npercentiles = c->npcts;
	o->thresholds = c->ths;
	o->nthresholds = c->nths;
	return 0;
}


int lp_split__run(const char *input, const struct lp_split_opts *o)
{
	struct split s = { .o = o, .t0 = INT64_MAX, .from = INT64_MIN, .to = INT64_MAX };
	s.nbands = nbands_of(o);
	s.ng = s.nbands + G_EXTRA;
	s.g = lp_calloc(s.ng, sizeof(*s.g));
	for (size_t i = 0; i < s.ng; i++)
		lp_hashmap__init(&s.g[i].blockers);
	for (size_t i = 0; i < s.ng; i++)
		s.g[i].name = i < s.nbands ? band_name(o, i, s.nbands)
					   : lp_strdup(extra_names[i - s.nbands]);
	s.cuts = lp_calloc(s.nbands, sizeof(*s.cuts));
	s.costs = lp_costs__new();
	s.sep = lp_separate__new(s.nbands);
	if (o->took) {
		lp_contents__key(LP_CONTENTS_AT, o->took, &s.took_at, &s.took_at_cap);
		lp_contents__key(LP_CONTENTS_CALLS, o->took, &s.took_calls, &s.took_calls_cap);
	}
	if (o->child)
		lp_contents__key(LP_CONTENTS_CALLS_NS, o->child, &s.child_key, &s.child_key_cap);
	lp_hashmap__init(&s.span_index);
	if (o->probe) {
		size_t n = strlen(o->probe) + 10;
		s.key_attr = lp_malloc(n);
		snprintf(s.key_attr, n, "span.key.%s", o->probe);
	}
	for (size_t i = 0; i < o->nthresholds; i++)
		s.cuts[i] = (double)o->thresholds[i];
	char *spool = NULL;
	const char *second = input;
	/* Percentiles and --auto read the input twice (a pipe is spooled):
	 * every duration is needed first.  Thresholds do so on a file too, as
	 * a span's corrected duration needs every sample in it and its
	 * samples come after it; on a pipe they route as they read (a live
	 * pipeline's groups grow as it runs), corrected by lp_ns= only. */
	struct stat st;
	bool regular = strcmp(input, "-") ? stat(input, &st) == 0 && S_ISREG(st.st_mode)
					   : fstat(0, &st) == 0 && S_ISREG(st.st_mode);
	bool exact = (o->npercentiles || o->auto_cut || (o->nthresholds && regular)) && !o->live;
	if (exact) {
		if (first_pass(&s, input, &spool) < 0 || decide_distribution(&s) < 0) {
			if (spool)
				unlink(spool);
			free(spool);
			free_split(&s);
			return -1;
		}
		exact_cuts(&s);
		if (spool)
			second = spool;
	} else if (o->live && o->npercentiles) {
		s.sketch = lp_quantile__new(o->accuracy, o->window_ns);
		for (size_t i = 0; i < s.nbands; i++)
			s.g[i].lat = lp_quantile__new(o->accuracy, 0);
	} else if (!exact) {
		for (size_t i = 0; i < s.nbands; i++)
			s.g[i].lat = lp_quantile__new(o->accuracy, 0);
	}
	if (!exact && !o->live)
		set_time_bounds(&s);	/* thresholds: relative --time needs t0 */

	struct lp_reader *r = lp_reader__open(second, spool ? LP_INPUT_LP : o->format);
	if (spool)
		unlink(spool);
	if (!r) {
		free(spool);
		free_split(&s);
		return -1;
	}
	open_outputs(&s);
	struct lp_record rec;
	int rc;
	bool one_pass_time = !exact && o->has_time;
	while ((rc = lp_reader__next(r, &rec)) > 0) {
		if (one_pass_time && s.t0 == INT64_MAX) {
			int64_t t = rec.kind == LP_REC_SAMPLE ? rec.sample.time_ns
				  : rec.kind == LP_REC_SPAN ? rec.span.start_ns : LP_TIME_NONE;
			if (t != LP_TIME_NONE) {
				s.t0 = t;
				set_time_bounds(&s);
			}
		}
		if (route(&s, r, &rec) < 0) {
			rc = -1;
			break;
		}
	}
	lp_reader__free(r);
	free(spool);
	if (rc < 0) {
		close_outputs(&s);
		free_split(&s);
		return -1;
	}
	if (s.keyed)
		sum_callbacks(&s);
	/* The groups' records out before the report and warnings, which
	 * may share their terminal or pipe; the split records follow. */
	for (size_t i = 0; i < s.nouts; i++)
		if (fflush(s.outs[i].f) != 0)
			out_failed(&s.outs[i]);
	int out_rc = report(&s) < 0 ? -1 : 0;
	self_check(&s);
	warn_cuts(&s);
	if (o->label)
		put_decisions(&s);
	if (close_outputs(&s) < 0)
		out_rc = -1;
	/* An input that cannot be split is worth a word. */
	uint64_t nsamples = 0;
	for (size_t i = 0; i < s.ng; i++)
		nsamples += s.g[i].samples;
	if (nsamples && !s.joined_samples)
		lp_error("no sample carries a span (span=): is the input lp-join's output?");
	else if (nsamples && o->probe && !s.probe_spans)
		lp_error("no span of probe '%s' in the input", o->probe);
	free_split(&s);
	return out_rc;
}
