/* contents.c - what happened inside a span on its thread (contents.h).
 *
 * Each thread has a list of what is waiting for a span to hold it: point
 * events and finished spans, each with the summary of what happened inside
 * it, in the order they came.  On one thread calls nest, and a tracer
 * writes a span when it returns: what a span holds came before it and
 * after every earlier sibling, so it is the tail of the list from the
 * span's start on.  The span takes that tail, merges its summaries in time
 * order (the first of each probe stays the first) and waits in its place.
 */
#include "analysis/contents.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/selfcost.h"
#include "base/hashmap.h"
#include "base/util.h"

/* A probe's name, and as a key's part (lp_contents__key): made once per
 * probe, so that a record costs no copy of it. */
struct probe {
	char *name, *key;
	size_t klen;
};

/* One probe's part of a summary. */
struct sum {
	const struct probe *p;
	bool call;		/* spans of the probe, else point events */
	uint64_t n;
	int64_t ns;		/* calls: the outermost ones' time, less lp_ns */
	char *first;		/* the first one's captured values, fields as written */
	size_t first_len;
};

struct summary {
	struct sum *v;
	size_t n, cap;
};

struct entry {
	int64_t start, end;	/* an event: its time, twice */
	struct summary sum;
};

struct thr {
	int32_t pid, tid;
	uint64_t key;
	struct entry *e;	/* waiting: e[head..n), in the order they came */
	size_t head, n, cap;
	int64_t max_span_ns;	/* the longest span seen on the thread */
};

struct lp_contents {
	struct lp_hashmap threads;	/* key(host, tid) -> struct thr */
	struct lp_hashmap probes;	/* hash(name) -> struct probe (__add) */
	size_t held;
	char *fbuf;
	size_t fcap;
	struct lp_attrs_buf scratch;
};

size_t lp_contents__key(const char *prefix, const char *probe, char **buf, size_t *cap)
{
	size_t pl = strlen(prefix), n = strlen(probe);
	lp_grow(buf, cap, pl + 4 * n + 1);
	char *d = *buf;
	memcpy(d, prefix, pl);
	size_t len = pl;
	/* lp_escape's escapes, and '=', which would end the key */
	for (const char *p = probe, *end = probe + n; p < end;) {
		const char *eq = memchr(p, '=', (size_t)(end - p));
		const char *stop = eq ? eq : end;
		len += lp_escape(d + len, p, (size_t)(stop - p));
		if (eq) {
			memcpy(d + len, "\\x3d", 4);
			len += 4;
			stop++;
		}
		p = stop;
	}
	d[len] = '\0';
	return len;
}

static bool has_prefix(const char *key, size_t klen, const char *prefix)
{
	size_t n = strlen(prefix);
	return klen > n && !memcmp(key, prefix, n);
}

bool lp_contents__is_key(const char *key, size_t klen)
{
	return has_prefix(key, klen, LP_CONTENTS_AT) || has_prefix(key, klen, LP_CONTENTS_CALLS) ||
	       has_prefix(key, klen, LP_CONTENTS_CALLS_NS) || has_prefix(key, klen, LP_CONTENTS_FIRST);
}

struct lp_contents *lp_contents__new(void)
{
	struct lp_contents *in = lp_calloc(1, sizeof(*in));
	lp_hashmap__init(&in->threads);
	lp_hashmap__init(&in->probes);
	return in;
}

static const struct probe *probe_of(struct lp_contents *in, const char *name)
{
	size_t n = strlen(name);
	uint64_t h = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, name, n));
	struct probe *p;
	for (size_t pos = 0; (p = lp_hashmap__next(&in->probes, h, &pos));)
		if (!strcmp(p->name, name))
			return p;
	p = lp_calloc(1, sizeof(*p));
	p->name = lp_strndup(name, n);
	p->klen = lp_contents__key("", name, &p->key, &(size_t){ 0 });
	lp_hashmap__add(&in->probes, h, p);
	return p;
}

static void summary_free(struct summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].first);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void thr_free(struct thr *t)
{
	for (size_t i = t->head; i < t->n; i++)
		summary_free(&t->e[i].sum);
	free(t->e);
	free(t);
}

void lp_contents__free(struct lp_contents *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->threads.cap; i++)
		if (in->threads.keys[i])
			thr_free(in->threads.values[i]);
	lp_hashmap__fini(&in->threads);
	for (size_t i = 0; i < in->probes.cap; i++)
		if (in->probes.keys[i]) {
			struct probe *p = in->probes.values[i];
			free(p->name);
			free(p->key);
			free(p);
		}
	lp_hashmap__fini(&in->probes);
	free(in->fbuf);
	lp_attrs_buf__free(&in->scratch);
	free(in);
}

size_t lp_contents__held(const struct lp_contents *in)
{
	return in->held;
}

/* The thread's list; a tid that now belongs to another process starts
 * afresh (its old entries can belong to no span of the new one). */
static struct thr *thr_get(struct lp_contents *in, uint64_t host, int32_t pid, int32_t tid)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &host, sizeof(host));
	uint64_t key = lp_hashmap__key(lp_hash_bytes(h, &tid, sizeof(tid)));
	struct thr *t = lp_hashmap__get(&in->threads, key);
	if (t && t->pid != pid && pid != LP_ID_NONE && t->pid != LP_ID_NONE) {
		in->held -= t->n - t->head;
		lp_hashmap__del(&in->threads, key);
		thr_free(t);
		t = NULL;
	}
	if (!t) {
		t = lp_calloc(1, sizeof(*t));
		t->pid = pid;
		t->tid = tid;
		t->key = key;
		lp_hashmap__put(&in->threads, key, t);
	}
	return t;
}

static struct sum *sum_find(struct summary *s, bool call, const struct probe *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].call == call && s->v[i].p == p)
			return &s->v[i];
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4;
		s->v = lp_reallocarray(s->v, s->cap, sizeof(*s->v));
	}
	struct sum *x = &s->v[s->n++];
	memset(x, 0, sizeof(*x));
	x->p = p;
	x->call = call;
	return x;
}

/* The captured values a record carries, as written: not lp's own
 * bookkeeping (lp_ns=, nspid=), nor what happened inside (a span read
 * from a stream joined before). */
static char *captured(struct lp_contents *in, const struct lp_attrs *a, size_t *len)
{
	struct lp_attrs_iter it = LP_ATTRS_ITER(a);
	struct lp_attr f;
	lp_attrs_buf__reset(&in->scratch);
	while (lp_attrs__next(&it, &f)) {
		if (!f.value || !f.key_len || lp_contents__is_key(f.key, f.key_len))
			continue;
		if ((f.key_len == 5 && !memcmp(f.key, "lp_ns", 5)) ||
		    (f.key_len == 5 && !memcmp(f.key, "nspid", 5)))
			continue;
		lp_attrs_buf__raw(&in->scratch, f.field, f.field_len);
	}
	*len = in->scratch.len;
	return in->scratch.len ? lp_strndup(in->scratch.text, in->scratch.len) : NULL;
}

/* from's counts into into's; into keeps its firsts (it came first).  from
 * is emptied. */
static void merge(struct summary *into, struct summary *from)
{
	for (size_t i = 0; i < from->n; i++) {
		struct sum *f = &from->v[i];
		struct sum *x = sum_find(into, f->call, f->p);
		if (!x->n) {
			x->first = f->first;
			x->first_len = f->first_len;
			f->first = NULL;
		}
		x->n += f->n;
		x->ns = lp_add_sat(x->ns, f->ns);
	}
	summary_free(from);
}

static void push(struct lp_contents *in, struct thr *t, int64_t start, int64_t end,
		 struct summary *sum)
{
	if (t->head && t->n == t->cap) {
		memmove(t->e, t->e + t->head, (t->n - t->head) * sizeof(*t->e));
		t->n -= t->head;
		t->head = 0;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->e = lp_reallocarray(t->e, t->cap, sizeof(*t->e));
	}
	t->e[t->n++] = (struct entry){ .start = start, .end = end, .sum = *sum };
	in->held++;
}

void lp_contents__event(struct lp_contents *in, uint64_t host, const struct lp_event *ev)
{
	if (ev->time_ns == LP_TIME_NONE || ev->tid == LP_ID_NONE)
		return;
	struct thr *t = thr_get(in, host, ev->pid, ev->tid);
	struct summary s = { 0 };
	struct sum *x = sum_find(&s, false, probe_of(in, ev->probe));
	x->n = 1;
	x->first = captured(in, &ev->attrs, &x->first_len);
	push(in, t, ev->time_ns, ev->time_ns, &s);
}

/* "PREFIX PROBE=N" */
static void add_count(struct lp_contents *in, struct lp_attrs_buf *out, const char *prefix,
		      const struct sum *x, int64_t v)
{
	size_t pl = strlen(prefix), kl = x->p->klen;
	lp_grow(&in->fbuf, &in->fcap, pl + kl + 1);
	memcpy(in->fbuf, prefix, pl);
	memcpy(in->fbuf + pl, x->p->key, kl);
	lp_attrs_buf__add_i64(out, in->fbuf, pl + kl, v);
}

/* "first.PROBE.KEY=VALUE" for each captured value of the first. */
static void add_first(struct lp_contents *in, struct lp_attrs_buf *out, const struct sum *x)
{
	struct lp_attrs a = { x->first ? x->first : "", x->first_len };
	struct lp_attrs_iter it = LP_ATTRS_ITER(&a);
	struct lp_attr f;
	size_t pl = strlen(LP_CONTENTS_FIRST), kl = x->p->klen;
	while (lp_attrs__next(&it, &f)) {
		size_t n = pl + kl + 1 + f.field_len;
		lp_grow(&in->fbuf, &in->fcap, n + 1);
		memcpy(in->fbuf, LP_CONTENTS_FIRST, pl);
		memcpy(in->fbuf + pl, x->p->key, kl);
		in->fbuf[pl + kl] = '.';
		memcpy(in->fbuf + pl + kl + 1, f.field, f.field_len);
		lp_attrs_buf__raw(out, in->fbuf, n);
	}
}

void lp_contents__span(struct lp_contents *in, uint64_t host, const struct lp_span *sp,
		     struct lp_attrs_buf *out)
{
	/* its own attributes, less those of an earlier join */
	struct lp_attrs_iter it = LP_ATTRS_ITER(&sp->attrs);
	struct lp_attr f;
	lp_attrs_buf__reset(out);
	while (lp_attrs__next(&it, &f))
		if (!lp_contents__is_key(f.key, f.key_len))
			lp_attrs_buf__raw(out, f.field, f.field_len);
	if (sp->start_ns == LP_TIME_NONE || sp->end_ns == LP_TIME_NONE || sp->tid == LP_ID_NONE)
		return;

	struct thr *t = thr_get(in, host, sp->pid, sp->tid);
	int64_t len = sp->end_ns - sp->start_ns;
	if (len > t->max_span_ns)
		t->max_span_ns = len;
	/* The tail from its start on; within it, what lies in [start, end)
	 * is the span's (a record of the same thread after its end, out of
	 * order, stays). */
	size_t k = t->n;
	while (k > t->head && t->e[k - 1].start >= sp->start_ns)
		k--;
	struct summary acc = { 0 };
	size_t keep = k;
	for (size_t i = k; i < t->n; i++) {
		struct entry *e = &t->e[i];
		bool in_span = e->start < sp->end_ns && e->end <= sp->end_ns;
		if (e->start == e->end && e->start == sp->end_ns)
			in_span = false;	/* an event at the end: after the return */
		if (in_span) {
			merge(&acc, &e->sum);
			in->held--;
		} else {
			t->e[keep++] = *e;
		}
	}
	t->n = keep;

	for (size_t i = 0; i < acc.n; i++) {
		const struct sum *x = &acc.v[i];
		if (x->call) {
			add_count(in, out, LP_CONTENTS_CALLS, x, (int64_t)x->n);
			add_count(in, out, LP_CONTENTS_CALLS_NS, x, x->ns);
		} else {
			add_count(in, out, LP_CONTENTS_AT, x, (int64_t)x->n);
		}
		add_first(in, out, x);
	}

	/* The span itself, for its callers: its own time replaces that of
	 * calls of its probe inside it (recursion), and it is the first of
	 * them. */
	double lp_ns = 0;
	lp_span__lp_ns(sp, &lp_ns);
	struct sum *self = sum_find(&acc, true, probe_of(in, sp->probe));
	self->n++;
	self->ns = lp_less_cost(len, lp_ns);
	free(self->first);
	self->first = captured(in, &sp->attrs, &self->first_len);
	/* it goes before the records after its end, which came before it
	 * (push may move the list: places counted from its end) */
	size_t after = t->n - k;
	push(in, t, sp->start_ns, sp->end_ns, &acc);
	if (after) {
		struct entry e = t->e[t->n - 1];
		memmove(&t->e[t->n - after], &t->e[t->n - 1 - after], after * sizeof(*t->e));
		t->e[t->n - 1 - after] = e;
	}
}

void lp_contents__prune(struct lp_contents *in, int64_t mark)
{
	struct thr **empty = NULL;
	size_t nempty = 0;
	for (size_t i = 0; i < in->threads.cap; i++) {
		if (!in->threads.keys[i])
			continue;
		struct thr *t = in->threads.values[i];
		int64_t before = mark == INT64_MAX ? INT64_MAX : lp_add_sat(mark, -t->max_span_ns);
		while (t->head < t->n && (t->e[t->head].end < before || mark == INT64_MAX)) {
			summary_free(&t->e[t->head].sum);
			t->head++;
			in->held--;
		}
		if (t->head == t->n) {
			empty = lp_reallocarray(empty, nempty + 1, sizeof(*empty));
			empty[nempty++] = t;
		}
	}
	/* a list first: deleting moves other threads' slots */
	for (size_t i = 0; i < nempty; i++) {
		lp_hashmap__del(&in->threads, empty[i]->key);
		thr_free(empty[i]);
	}
	free(empty);
}
