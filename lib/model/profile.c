/* profile.c - distinct folded stacks and their summed weights.  Keyed by a
 * hash of the stack text; a (64-bit) collision is another value under the
 * same key (lp_hashmap__add). */
#include "model/profile.h"
#include "base/hashmap.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

struct entry {
	struct lp_profile_entry pub;
};

struct lp_profile {
	struct lp_hashmap map;
	struct entry **all;
	size_t count, cap;
	double total[2];
	int sorted;
};

struct lp_profile *lp_profile__new(void)
{
	struct lp_profile *p = lp_calloc(1, sizeof(*p));
	lp_hashmap__init(&p->map);
	return p;
}

void lp_profile__free(struct lp_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->count; i++) {
		free((char *)p->all[i]->pub.stack);
		free((char *)p->all[i]->pub.kinds);
		free(p->all[i]);
	}
	free(p->all);
	lp_hashmap__fini(&p->map);
	free(p);
}

void lp_profile__add(struct lp_profile *p, const char *stack, size_t len,
		     const char *kinds, int side, double weight)
{
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, stack, len));
	struct entry *e;
	for (size_t pos = 0; (e = lp_hashmap__next(&p->map, key, &pos));)
		if (e->pub.len == len && !memcmp(e->pub.stack, stack, len))
			break;
	if (!e) {
		e = lp_calloc(1, sizeof(*e));
		e->pub.stack = lp_strndup(stack, len);
		e->pub.len = len;
		if (kinds) {
			size_t nframes = 1;
			for (size_t i = 0; i < len; i++)
				nframes += stack[i] == ';';
			e->pub.kinds = lp_strndup(kinds, len ? nframes : 0);
		}
		lp_hashmap__add(&p->map, key, e);
		if (p->count == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 1024;
			p->all = lp_reallocarray(p->all, p->cap, sizeof(*p->all));
		}
		p->all[p->count++] = e;
		p->sorted = 0;
	}
	e->pub.weight[side] += weight;
	p->total[side] += weight;
}

/* Bytewise, as Perl's default sort compares strings. */
static int by_stack(const void *a, const void *b)
{
	const struct lp_profile_entry *x = *(const struct lp_profile_entry *const *)a;
	const struct lp_profile_entry *y = *(const struct lp_profile_entry *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->stack, y->stack, n);
	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

const struct lp_profile_entry *const *lp_profile__sorted(struct lp_profile *p, size_t *n)
{
	if (!p->sorted) {
		/* struct entry starts with its public part; an empty profile
		 * has no array, and qsort's may not be NULL (UBSan) */
		if (p->count > 1)
			qsort(p->all, p->count, sizeof(*p->all), by_stack);
		p->sorted = 1;
	}
	*n = p->count;
	return (const struct lp_profile_entry *const *)p->all;
}

size_t lp_profile__count(const struct lp_profile *p) { return p->count; }
double lp_profile__total(const struct lp_profile *p, int side) { return p->total[side]; }
