/* addrspace.c - a process's mapped files, laid over one another
 * (addrspace.h). */
#include "model/addrspace.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* The first map that ends after addr. */
static size_t after(const struct lp_addrspace *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct lp_addrmap *lp_addrspace__find(const struct lp_addrspace *s, uint64_t addr)
{
	size_t i = s ? after(s, addr) : 0;
	return s && i < s->n && s->v[i].start <= addr ? &s->v[i] : NULL;
}

bool lp_addrspace__has(const struct lp_addrspace *s, const struct lp_addrmap *x)
{
	size_t i = after(s, x->start);
	return i < s->n && s->v[i].start == x->start && s->v[i].end == x->end &&
	       s->v[i].bias == x->bias && !strcmp(s->v[i].module, x->module) &&
	       !strcmp(s->v[i].build_id, x->build_id);
}

void lp_addrspace__insert(struct lp_addrspace *s, const struct lp_addrmap *x)
{
	if (x->end <= x->start)
		return;
	size_t i = after(s, x->start), j = i;
	while (j < s->n && s->v[j].start < x->end)
		j++;
	struct lp_addrmap head = i < j ? s->v[i] : (struct lp_addrmap){ 0 };
	struct lp_addrmap tail = j > i ? s->v[j - 1] : head;
	bool keep_head = i < j && head.start < x->start, keep_tail = j > i && tail.end > x->end;
	size_t n = keep_head + 1 + keep_tail, total = s->n - (j - i) + n;
	if (total > s->cap) {
		s->cap = 2 * total;
		s->v = lp_reallocarray(s->v, s->cap, sizeof(*s->v));
	}
	memmove(s->v + i + n, s->v + j, (s->n - j) * sizeof(*s->v));
	s->n = total;
	if (keep_head) {
		head.end = x->start;
		s->v[i++] = head;
	}
	s->v[i++] = *x;
	if (keep_tail) {
		tail.start = x->end;
		s->v[i] = tail;
	}
}

void lp_addrspace__copy(struct lp_addrspace *out, const struct lp_addrspace *s)
{
	out->cap = s->n + 1;
	out->v = lp_reallocarray(NULL, out->cap, sizeof(*out->v));
	if (s->n)
		memcpy(out->v, s->v, s->n * sizeof(*s->v));
	out->n = s->n;
}

void lp_addrspace__fini(struct lp_addrspace *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
