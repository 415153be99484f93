/* hashmap.h - an open-addressing map from 64-bit keys (already hashes) to
 * pointers: the one hash table lp's dictionaries, caches and aggregations
 * are built on.  Key 0 is reserved for empty slots (callers remap it). */
#ifndef LP_HASHMAP_H
#define LP_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct lp_hashmap {
	uint64_t *keys;
	void **values;
	size_t cap;	/* a power of two */
	size_t count;
};

void lp_hashmap__init(struct lp_hashmap *m);
void lp_hashmap__fini(struct lp_hashmap *m);
/* Empties the map, keeping its slots. */
void lp_hashmap__clear(struct lp_hashmap *m);
void *lp_hashmap__get(const struct lp_hashmap *m, uint64_t key);
/* Inserts or replaces; returns the previous value or NULL. */
void *lp_hashmap__put(struct lp_hashmap *m, uint64_t key, void *value);
/* Removes key's value (one of them, under __add); returns it, or NULL. */
void *lp_hashmap__del(struct lp_hashmap *m, uint64_t key);
/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->keys[i]) ... */

/* Tables keyed by a hash of content that may collide (a stack's text, a
 * name): __add keeps several values under one key and __next yields them
 * in turn, for the caller to tell apart by their content.  *pos starts at
 * 0; NULL after the last.  Positions last until the next add, put or del.
 * A map is used either this way or with __put, not both. */
void lp_hashmap__add(struct lp_hashmap *m, uint64_t key, void *value);
static inline void *lp_hashmap__next(const struct lp_hashmap *m, uint64_t key, size_t *pos);

static inline uint64_t lp_hashmap__key(uint64_t h)
{
	return h ? h : 0x9e3779b97f4a7c15ULL;
}

/* Where key's run starts.  Keys are hashes already: a multiplicative mix
 * spreads them. */
static inline size_t lp_hashmap__slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
}

/* Inline: the aggregations call it once or twice a sample. */
static inline void *lp_hashmap__next(const struct lp_hashmap *m, uint64_t key, size_t *pos)
{
	size_t mask = m->cap - 1;
	/* *pos: one more than the slot to look at next */
	for (size_t i = *pos ? *pos - 1 : lp_hashmap__slot(key, m->cap); m->keys[i];
	     i = (i + 1) & mask) {
		if (m->keys[i] == key) {
			*pos = ((i + 1) & mask) + 1;
			return m->values[i];
		}
	}
	return NULL;
}

#endif
