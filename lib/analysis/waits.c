/* waits.c - where a request of callbacks waited (waits.h). */
#include "analysis/waits.h"

#include <stdlib.h>

#include "base/util.h"

struct cb {
	int32_t pid, tid;
	int64_t start, end;
	double ns;
	size_t req;
	double cum;		/* finish: ns of the thread's callbacks up to this one */
	size_t lo, hi;		/* finish: the thread's callbacks, cbs[lo, hi) */
};

/* A callback of a request: finish sorts them by request, then cbs' order. */
struct of_req {
	size_t req, i;
};

struct lp_waits {
	struct cb *cbs;		/* finish: by thread, then start; outer ones only */
	size_t n, cap;
	struct of_req *by_req;
};

struct lp_waits *lp_waits__new(void)
{
	return lp_calloc(1, sizeof(struct lp_waits));
}

void lp_waits__free(struct lp_waits *w)
{
	if (!w)
		return;
	free(w->cbs);
	free(w->by_req);
	free(w);
}

void lp_waits__add(struct lp_waits *w, int32_t pid, int32_t tid, int64_t start, int64_t end,
		   double ns, size_t req)
{
	if (end <= start)
		return;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->cbs = lp_reallocarray(w->cbs, w->cap, sizeof(*w->cbs));
	}
	w->cbs[w->n++] = (struct cb){ .pid = pid, .tid = tid, .start = start, .end = end,
				      .ns = ns, .req = req };
}

static int same_thread(const struct cb *a, const struct cb *b)
{
	return a->pid == b->pid && a->tid == b->tid;
}

/* By thread, then start; of two starting together the outer first. */
static int cmp_thread(const void *pa, const void *pb)
{
	const struct cb *a = pa, *b = pb;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end;
}

static int cmp_req(const void *pa, const void *pb)
{
	const struct of_req *a = pa, *b = pb;
	if (a->req != b->req)
		return a->req < b->req ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void lp_waits__finish(struct lp_waits *w)
{
	if (!w->n)
		return;
	qsort(w->cbs, w->n, sizeof(*w->cbs), cmp_thread);
	/* Keep the outer callbacks: on one thread they follow one another. */
	size_t k = 0;
	for (size_t i = 0; i < w->n; i++) {
		if (k && same_thread(&w->cbs[k - 1], &w->cbs[i]) && w->cbs[i].start < w->cbs[k - 1].end)
			continue;
		w->cbs[k] = w->cbs[i];
		w->cbs[k].cum = w->cbs[k].ns + (k && same_thread(&w->cbs[k - 1], &w->cbs[k]) ? w->cbs[k - 1].cum : 0);
		k++;
	}
	w->n = k;
	for (size_t lo = 0, hi; lo < w->n; lo = hi) {
		for (hi = lo + 1; hi < w->n && same_thread(&w->cbs[lo], &w->cbs[hi]); hi++)
			;
		for (size_t i = lo; i < hi; i++) {
			w->cbs[i].lo = lo;
			w->cbs[i].hi = hi;
		}
	}
	/* Each request's callbacks, by thread (cbs' order kept within). */
	w->by_req = lp_reallocarray(NULL, w->n, sizeof(*w->by_req));
	for (size_t i = 0; i < w->n; i++)
		w->by_req[i] = (struct of_req){ w->cbs[i].req, i };
	qsort(w->by_req, w->n, sizeof(*w->by_req), cmp_req);
}

/* The part of callback c (its own ns) inside [a, b]. */
static double clipped(const struct cb *c, int64_t a, int64_t b)
{
	int64_t lo = c->start > a ? c->start : a, hi = c->end < b ? c->end : b;
	if (hi <= lo)
		return 0;
	return c->ns * (double)(hi - lo) / (double)(c->end - c->start);
}

/* The callbacks' own time inside [a, b] on the thread whose callbacks are
 * cbs[lo, hi). */
static double thread_time(const struct lp_waits *w, size_t lo, size_t hi, int64_t a, int64_t b)
{
	size_t l = lo, h = hi;
	while (l < h) {		/* the first that ends after a */
		size_t m = l + (h - l) / 2;
		if (w->cbs[m].end <= a)
			l = m + 1;
		else
			h = m;
	}
	size_t first = l;
	h = hi;
	while (l < h) {		/* the first that starts at or after b */
		size_t m = l + (h - l) / 2;
		if (w->cbs[m].start < b)
			l = m + 1;
		else
			h = m;
	}
	if (l <= first)
		return 0;
	size_t last = l - 1;
	const struct cb *f = &w->cbs[first], *e = &w->cbs[last];
	if (first == last)
		return clipped(f, a, b);
	/* Whole ones between, the two ends clipped. */
	double between = w->cbs[last - 1].cum - f->cum;
	return clipped(f, a, b) + between + clipped(e, a, b);
}

double lp_waits__others(const struct lp_waits *w, size_t req, int64_t start, int64_t end)
{
	size_t l = 0, h = w->n;
	while (l < h) {		/* req's first callback */
		size_t m = l + (h - l) / 2;
		if (w->by_req[m].req < req)
			l = m + 1;
		else
			h = m;
	}
	double others = 0;
	size_t nthreads = 0;
	for (size_t i = l, j; i < w->n && w->by_req[i].req == req; i = j) {
		/* One thread of req's: its own callbacks there. */
		const struct cb *c = &w->cbs[w->by_req[i].i];
		double own = 0;
		for (j = i; j < w->n && w->by_req[j].req == req && w->cbs[w->by_req[j].i].lo == c->lo; j++)
			own += clipped(&w->cbs[w->by_req[j].i], start, end);
		double theirs = thread_time(w, c->lo, c->hi, start, end) - own;
		others += theirs > 0 ? theirs : 0;
		nthreads++;
	}
	return nthreads ? others / (double)nthreads : 0;
}
