/* join-hold.c - lp-join's per-thread state: samples held by time and spans
 * kept by end, each sample given its innermost enclosing span (or all of
 * them) as it is released, and what is let go as the watermarks pass. */
#include "analysis/join.h"
#include "analysis/join-internal.h"

#include <stdlib.h>

#include "analysis/contents.h"
#include "base/util.h"

static inline struct item *dq_at(const struct deque *d, size_t i)
{
	return d->v[(d->head + i) & (d->cap - 1)].it;
}

static inline int64_t dq_key(const struct deque *d, size_t i)
{
	return d->v[(d->head + i) & (d->cap - 1)].key;
}

static void dq_grow(struct deque *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 8;
	struct dq_ent *nv = lp_reallocarray(NULL, ncap, sizeof(*nv));
	for (size_t i = 0; i < d->len; i++)
		nv[i] = d->v[(d->head + i) & (d->cap - 1)];
	free(d->v);
	d->v = nv;
	d->head = 0;
	d->cap = ncap;
}

/* Inserts keeping key order; arrival is nearly in order, so the search
 * from the back is short.  Equal keys keep arrival order. */
static void dq_insert(struct deque *d, struct item *it, int64_t (*key)(const struct item *))
{
	if (d->len == d->cap)
		dq_grow(d);
	int64_t k = key(it);
	size_t pos = d->len;
	while (pos > 0 && dq_key(d, pos - 1) > k)
		pos--;
	for (size_t i = d->len; i > pos; i--)
		d->v[(d->head + i) & (d->cap - 1)] = d->v[(d->head + i - 1) & (d->cap - 1)];
	d->v[(d->head + pos) & (d->cap - 1)] = (struct dq_ent){ k, it };
	d->len++;
}

static struct item *dq_shift(struct deque *d)
{
	struct item *it = dq_at(d, 0);
	d->head = (d->head + 1) & (d->cap - 1);
	d->len--;
	return it;
}

/* First index whose key is >= k (or > k when strict). */
static size_t dq_lower(const struct deque *d, int64_t k, bool strict)
{
	size_t lo = 0, hi = d->len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t m = dq_key(d, mid);
		if (strict ? m <= k : m < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int64_t sample_time(const struct item *it)
{
	return it->rec.sample.time_ns;
}

static int64_t span_end(const struct item *it)
{
	return it->rec.span.end_ns;
}

/* Threads are keyed by tid alone: a tid is unique on a host, and `perf
 * script` prints only the tid by default.  encloses() checks the pid (when
 * both sides know it) and the host.  The key is the tid itself, never 0. */
static uint64_t thr_key(int32_t tid)
{
	return (uint64_t)(uint32_t)tid | 1ULL << 32;
}

static struct thr *thr_get(struct state *s, int32_t pid, int32_t tid, bool create)
{
	struct thr *t = lp_hashmap__get(&s->threads, thr_key(tid));
	if (t || !create)
		return t;
	t = lp_calloc(1, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	lp_hashmap__put(&s->threads, thr_key(tid), t);
	return t;
}

static void thr_remove(struct state *s, struct thr *t)
{
	lp_hashmap__del(&s->threads, thr_key(t->tid));
	free(t->samples.v);
	free(t->spans.v);
	free(t);
}

/* --- joining -------------------------------------------------------------- */

static void unref(struct item *span)
{
	if (span && --span->refs == 0)
		lp_join_item_free(span);
}

static bool probe_wanted(const struct state *s, const char *probe)
{
	if (!s->o->nprobes)
		return true;
	for (size_t i = 0; i < s->o->nprobes; i++)
		if (!strcmp(s->o->probes[i], probe))
			return true;
	return false;
}

/* Innermost first: the latest start, then the deepest, then the earliest
 * end; a tie keeps the span that arrived first. */
static bool inner(const struct item *a, const struct item *b)
{
	const struct lp_span *x = &a->rec.span, *y = &b->rec.span;
	if (x->start_ns != y->start_ns)
		return x->start_ns > y->start_ns;
	if (x->depth != y->depth)
		return x->depth > y->depth;
	return x->end_ns < y->end_ns;
}

static bool encloses(const struct item *span, const struct item *sample)
{
	const struct lp_span *sp = &span->rec.span;
	const struct lp_sample *smp = &sample->rec.sample;
	int64_t t = smp->time_ns;
	if (!(sp->start_ns <= t && t < sp->end_ns))
		return false;
	if (sp->pid != smp->pid && sp->pid != LP_ID_NONE && smp->pid != LP_ID_NONE)
		return false;
	return !span->host || !sample->host || span->host == sample->host;
}

static void attach(struct state *s, struct item *sample, struct item *span)
{
	if (!s->o->all_spans) {
		if (sample->best && !inner(span, sample->best))
			return;
		unref(sample->best);
		sample->best = span;
		span->refs++;
		return;
	}
	if (sample->nall == sample->capall) {
		sample->capall = sample->capall ? sample->capall * 2 : 4;
		sample->all = lp_reallocarray(sample->all, sample->capall, sizeof(*sample->all));
	}
	/* Kept innermost first; insertion sort, the lists are short. */
	size_t i = sample->nall;
	while (i > 0 && inner(span, sample->all[i - 1])) {
		sample->all[i] = sample->all[i - 1];
		i--;
	}
	sample->all[i] = span;
	sample->nall++;
	span->refs++;
}

void lp_join_out_failed(struct state *s)
{
	lp_write_failed(s->o->output && strcmp(s->o->output, "-") ? s->o->output : "stdout");
}

/* span=PROBE span_start=NS span_end=NS span_depth=N and the span's own
 * captured values as span.KEY=VALUE; the i-th enclosing span outwards (from
 * 1, --all-spans) as spanI=, spanI_start=, ..., spanI.KEY=. */
static void add_span(struct state *s, const struct item *span, size_t i)
{
	const struct lp_span *sp = &span->rec.span;
	char pfx[32];
	if (i) {
		char key[64];
		snprintf(pfx, sizeof(pfx), "span%zu", i);
		lp_attrs_buf__add(&s->ab, pfx, sp->probe);
		lp_attrs_buf__add_i64(&s->ab, key, snprintf(key, sizeof(key), "%s_start", pfx),
				      sp->start_ns);
		lp_attrs_buf__add_i64(&s->ab, key, snprintf(key, sizeof(key), "%s_end", pfx),
				      sp->end_ns);
		lp_attrs_buf__add_i64(&s->ab, key, snprintf(key, sizeof(key), "%s_depth", pfx),
				      sp->depth);
	} else {
		/* The common case, without formatting keys. */
		strcpy(pfx, "span");
		lp_attrs_buf__add(&s->ab, "span", sp->probe);
		lp_attrs_buf__add_i64(&s->ab, "span_start", strlen("span_start"), sp->start_ns);
		lp_attrs_buf__add_i64(&s->ab, "span_end", strlen("span_end"), sp->end_ns);
		lp_attrs_buf__add_i64(&s->ab, "span_depth", strlen("span_depth"), sp->depth);
	}
	/* a field without a key is no value to carry */
	struct lp_attrs_iter at = LP_ATTRS_ITER(&sp->attrs);
	struct lp_attr a;
	while (lp_attrs__next(&at, &a))
		if (a.value && a.key_len)
			lp_attrs_buf__add_attr(&s->ab, pfx, &a);
}

static void release(struct state *s, struct item *it)
{
	struct lp_sample smp = it->rec.sample;
	size_t n = s->o->all_spans ? it->nall : (it->best != NULL);
	if (n) {
		lp_attrs_buf__set(&s->ab, &smp.attrs);
		if (s->o->all_spans) {
			for (size_t i = 0; i < it->nall; i++)
				add_span(s, it->all[i], i);
		} else if (!it->best->joined) {
			/* add_span appends a tab first when the buffer holds
			 * something, then the same text whatever it holds. */
			size_t from = s->ab.len + (s->ab.len > 0);
			add_span(s, it->best, 0);
			it->best->joined_len = s->ab.len - from;
			it->best->joined = lp_malloc(it->best->joined_len);
			memcpy(it->best->joined, s->ab.text + from, it->best->joined_len);
		} else {
			lp_attrs_buf__raw(&s->ab, it->best->joined, it->best->joined_len);
		}
		smp.attrs = lp_attrs_buf__attrs(&s->ab);
		s->st->joined++;
	}
	if (lp_writer__sample(s->w, &smp) < 0)
		lp_join_out_failed(s);
	unref(it->best);
	for (size_t i = 0; i < it->nall; i++)
		unref(it->all[i]);
	free(it->all);
	lp_join_item_free(it);
}

/* How far one side has come, less the out-of-order bound: the other side's
 * records before it are settled.  Everything once the side has ended,
 * nothing before its first record. */
static int64_t settled_mark(bool done, int64_t mark, int64_t max_delay_ns)
{
	if (done)
		return INT64_MAX;
	if (mark == INT64_MIN)
		return INT64_MIN;
	return mark - max_delay_ns;
}

/* Samples before it have seen every span that could enclose them. */
int64_t lp_join_release_mark(const struct state *s)
{
	return settled_mark(s->spans_done, s->span_mark, s->o->max_delay_ns);
}

/* Spans ending before it can enclose no sample still to come. */
int64_t lp_join_prune_mark(const struct state *s)
{
	return settled_mark(s->samples_done, s->sample_mark, s->o->max_delay_ns);
}

/* Releases the thread's samples older than the release mark and drops the
 * spans no later sample can fall in; frees the thread when it is empty. */
static void thr_sweep(struct state *s, struct thr *t, int64_t rel, int64_t prune)
{
	/* INT64_MAX is "after every time": it lets go of records at that very
	 * time too, which a stream may hold (formats/lp-stream.md). */
	while (t->samples.len && (dq_key(&t->samples, 0) < rel || rel == INT64_MAX)) {
		/* Held samples have left the cache by now: fetch ahead. */
		if (t->samples.len > PREFETCH_AHEAD)
			PREFETCH_ITEM(dq_at(&t->samples, PREFETCH_AHEAD), 0);
		release(s, dq_shift(&t->samples));
		s->held--;
	}
	while (t->spans.len && (dq_key(&t->spans, 0) < prune || prune == INT64_MAX)) {
		unref(dq_shift(&t->spans));
		s->kept--;
	}
	if (!t->samples.len && !t->spans.len)
		thr_remove(s, t);
}

void lp_join_sweep_all(struct state *s, int64_t rel, int64_t prune)
{
	/* a list first: a sweep may remove its thread from the table */
	size_t n = 0;
	if (s->threads.count > s->sweep_cap) {
		s->sweep_cap = s->threads.count * 2;
		s->sweep = lp_reallocarray(s->sweep, s->sweep_cap, sizeof(*s->sweep));
	}
	for (size_t i = 0; i < s->threads.cap; i++)
		if (s->threads.keys[i])
			s->sweep[n++] = s->threads.values[i];
	for (size_t i = 0; i < n; i++)
		thr_sweep(s, s->sweep[i], rel, prune);
	/* Events and spans no span still to come can hold (contents.h): the
	 * same rule as for the samples, less the longest span so far. */
	lp_contents__prune(s->contents, lp_join_release_mark(s));
}

static void on_sample(struct state *s, struct item *it)
{
	const struct lp_sample *smp = &it->rec.sample;
	s->st->samples++;
	if (smp->time_ns == LP_TIME_NONE || smp->tid == LP_ID_NONE) {
		s->st->untimed += smp->time_ns == LP_TIME_NONE;
		release(s, it);
		return;
	}
	if (smp->time_ns < s->st->sample_min)
		s->st->sample_min = smp->time_ns;
	if (smp->time_ns > s->st->sample_max)
		s->st->sample_max = smp->time_ns;
	if (smp->time_ns > s->sample_mark)
		s->sample_mark = smp->time_ns;
	struct thr *t = thr_get(s, smp->pid, smp->tid, true);
	/* Kept spans enclosing t end after it, and no later than t plus the
	 * longest span kept on the thread. */
	size_t i = dq_lower(&t->spans, smp->time_ns, true);
	for (; i < t->spans.len; i++) {
		if (dq_key(&t->spans, i) - t->max_span_ns > smp->time_ns)
			break;
		struct item *sp = dq_at(&t->spans, i);
		if (encloses(sp, it))
			attach(s, it, sp);
	}
	if (smp->time_ns < lp_join_release_mark(s)) {
		release(s, it);
		thr_sweep(s, t, lp_join_release_mark(s), lp_join_prune_mark(s));
		return;
	}
	dq_insert(&t->samples, it, sample_time);
	s->held++;
}

static void on_span(struct state *s, struct item *it)
{
	struct lp_span *sp = &it->rec.span;
	s->st->spans++;
	/* A request of lp-trace's key: probes (key=) is no call of its
	 * thread: the work it holds there is other requests' too.  Its
	 * samples are its callbacks' (key.NAME=, lp-split -e NAME). */
	size_t klen;
	if (lp_attrs__raw(&sp->attrs, "key", 3, &klen)) {
		if (lp_writer__span(s->w, sp) < 0)
			lp_join_out_failed(s);
		lp_join_item_free(it);
		return;
	}
	/* Everything it holds came before it on its thread: what happened
	 * inside it is known now, and becomes part of it for the samples. */
	if (it->src == s->spans_in && !s->o->no_contents) {
		lp_contents__span(s->contents, it->host, sp, &s->ab);
		it->attrs = lp_strndup(s->ab.text ? s->ab.text : "", s->ab.len);
		sp->attrs = (struct lp_attrs){ it->attrs, s->ab.len };
	}
	if (lp_writer__span(s->w, sp) < 0)
		lp_join_out_failed(s);
	if (sp->end_ns == LP_TIME_NONE || sp->start_ns == LP_TIME_NONE) {
		s->st->unfinished++;
		lp_join_item_free(it);
		return;
	}
	if (sp->end_ns > s->span_mark && !s->spans_done)
		s->span_mark = sp->end_ns;
	if (sp->start_ns < s->st->span_min)
		s->st->span_min = sp->start_ns;
	if (sp->end_ns > s->st->span_max)
		s->st->span_max = sp->end_ns;
	if (!probe_wanted(s, sp->probe)) {
		lp_join_item_free(it);
		return;
	}
	/* After the samples' end a span still matters to the held ones. */
	struct thr *t = thr_get(s, sp->pid, sp->tid, !s->samples_done);
	if (!t) {
		lp_join_item_free(it);
		return;
	}
	it->refs = 1;
	size_t i = dq_lower(&t->samples, sp->start_ns, false);
	for (; i < t->samples.len; i++) {
		if (dq_key(&t->samples, i) >= sp->end_ns)
			break;
		struct item *smp = dq_at(&t->samples, i);
		if (encloses(it, smp))
			attach(s, smp, it);
	}
	if (sp->end_ns >= lp_join_prune_mark(s)) {
		if (sp->end_ns - sp->start_ns > t->max_span_ns)
			t->max_span_ns = sp->end_ns - sp->start_ns;
		dq_insert(&t->spans, it, span_end);
		s->kept++;
	} else
		unref(it);
	thr_sweep(s, t, lp_join_release_mark(s), lp_join_prune_mark(s));
}

static void on_header(struct state *s, struct item *it)
{
	/* Both inputs open with a header; an identical one is written once. */
	for (size_t i = 0; i < s->nheaders; i++)
		if (!strcmp(s->headers[i], it->rec.header.attrs.text)) {
			lp_join_item_free(it);
			return;
		}
	if (s->nheaders < sizeof(s->headers) / sizeof(s->headers[0]))
		s->headers[s->nheaders++] = lp_strdup(it->rec.header.attrs.text);
	if (lp_writer__header(s->w, &it->rec.header) < 0)
		lp_join_out_failed(s);
	lp_join_item_free(it);
}

void lp_join_on_item(struct state *s, struct item *it)
{
	int r = 0;
	switch (it->rec.kind) {
	case LP_REC_SAMPLE:
		on_sample(s, it);
		return;
	case LP_REC_SPAN:
		on_span(s, it);
		return;
	case LP_REC_HEADER:
		on_header(s, it);
		return;
	case LP_REC_FRAME:
		r = lp_writer__frame(s->w, it->rec.frame);
		break;
	case LP_REC_STACK:
		r = lp_writer__stack(s->w, it->rec.stack);
		break;
	case LP_REC_EVENT:
		if (it->src == s->spans_in && !s->o->no_contents)
			lp_contents__event(s->contents, it->host, &it->rec.event);
		if (it->src == s->spans_in) {
			/* the tracer writes in time order: spans ending before
			 * it less D have come, as after a span's end */
			if (it->rec.event.time_ns > s->span_mark && !s->spans_done)
				s->span_mark = it->rec.event.time_ns;
		}
		r = lp_writer__event(s->w, &it->rec.event);
		break;
	case LP_REC_LOST:
		r = lp_writer__lost(s->w, &it->rec.lost);
		break;
	default:
		s->st->other++;
		r = lp_writer__record(s->w, &it->rec);
		break;
	}
	if (r < 0)
		lp_join_out_failed(s);
	lp_join_item_free(it);
}

/* Samples let go before every span that could enclose them was read, and
 * spans dropped before every sample they could enclose: their joins may be
 * missing, which is lost data, so it goes into the stream where it
 * happened (formats/lp-stream.md, kinds join-samples and join-spans). */
void lp_join_write_early(struct state *s, size_t samples, size_t spans)
{
	/* At the newest time read on each side (LP_TIME_NONE is INT64_MIN). */
	struct lp_lost l = { .time_ns = s->st->sample_max, .what = "join-samples",
			     .count = samples };
	if (samples && lp_writer__lost(s->w, &l) < 0)
		lp_join_out_failed(s);
	l = (struct lp_lost){ .time_ns = s->st->span_max, .what = "join-spans", .count = spans };
	if (spans && lp_writer__lost(s->w, &l) < 0)
		lp_join_out_failed(s);
}
