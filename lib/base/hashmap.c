/* hashmap.c - linear probing over a power-of-two table, kept at most 70%
 * full (lp_hashmap__slot and __next are in the header). */
#include "base/hashmap.h"
#include "base/util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define slot_of lp_hashmap__slot

void lp_hashmap__init(struct lp_hashmap *m)
{
	m->cap = 64;
	m->count = 0;
	m->keys = lp_calloc(m->cap, sizeof(*m->keys));
	m->values = lp_calloc(m->cap, sizeof(*m->values));
}

void lp_hashmap__fini(struct lp_hashmap *m)
{
	free(m->keys);
	free(m->values);
	m->keys = NULL;
	m->values = NULL;
	m->cap = m->count = 0;
}

void lp_hashmap__clear(struct lp_hashmap *m)
{
	memset(m->keys, 0, m->cap * sizeof(*m->keys));
	memset(m->values, 0, m->cap * sizeof(*m->values));
	m->count = 0;
}

void *lp_hashmap__get(const struct lp_hashmap *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & mask) {
		if (m->keys[i] == key)
			return m->values[i];
		if (!m->keys[i])
			return NULL;
	}
}

/* Twice the slots; multi: a map of __add, whose equal keys stay apart. */
static void grow(struct lp_hashmap *m, bool multi)
{
	struct lp_hashmap bigger = {
		.cap = m->cap * 2,
		.keys = lp_calloc(m->cap * 2, sizeof(uint64_t)),
		.values = lp_calloc(m->cap * 2, sizeof(void *)),
	};
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] && multi)
			lp_hashmap__add(&bigger, m->keys[i], m->values[i]);
		else if (m->keys[i])
			lp_hashmap__put(&bigger, m->keys[i], m->values[i]);
	lp_hashmap__fini(m);
	*m = bigger;
}

void *lp_hashmap__put(struct lp_hashmap *m, uint64_t key, void *value)
{
	if ((m->count + 1) * 10 > m->cap * 7)
		grow(m, false);
	size_t mask = m->cap - 1;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & mask) {
		if (m->keys[i] == key) {
			void *old = m->values[i];
			m->values[i] = value;
			return old;
		}
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->values[i] = value;
			m->count++;
			return NULL;
		}
	}
}

void lp_hashmap__add(struct lp_hashmap *m, uint64_t key, void *value)
{
	if ((m->count + 1) * 10 > m->cap * 7)
		grow(m, true);
	size_t mask = m->cap - 1, i = slot_of(key, m->cap);
	while (m->keys[i])
		i = (i + 1) & mask;
	m->keys[i] = key;
	m->values[i] = value;
	m->count++;
}

void *lp_hashmap__del(struct lp_hashmap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = slot_of(key, m->cap);
	while (m->keys[i] != key) {
		if (!m->keys[i])
			return NULL;
		i = (i + 1) & mask;
	}
	void *old = m->values[i];
	/* Linear probing without tombstones: each later key of the run that
	 * could live in the hole moves into it (Knuth's algorithm R). */
	for (size_t j = i;;) {
		j = (j + 1) & mask;
		if (!m->keys[j])
			break;
		size_t k = slot_of(m->keys[j], m->cap);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->values[i] = m->values[j];
		i = j;
	}
	m->keys[i] = 0;
	m->values[i] = NULL;
	m->count--;
	return old;
}
