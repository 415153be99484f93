/* dict.c - the dictionary (dict.h): frames, stacks and strings interned by
 * content in hash tables, their bytes in an arena freed with it. */
#include "model/dict.h"
#include "model/lpframe.h"
#include "base/hashmap.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (1 << 20)

/* Bump allocation in chunks, all freed at once. */
struct arena {
	char **chunks;
	size_t nchunks;
	char *cur;
	size_t left;
	size_t used;		/* bytes handed out */
};

struct lp_dict {
	struct lp_hashmap frames;	/* content id -> struct lp_frame */
	struct lp_hashmap stacks;	/* content id -> struct lp_stack */
	struct lp_hashmap strings;	/* hash -> NUL-terminated copy */
	struct arena arena;		/* frames and strings */
	/* Stacks in an arena of their own: lp_dict__forget_stacks frees it
	 * while the frames, which caches point to, stay. */
	struct arena stack_arena;
};

static void *arena_alloc(struct arena *a, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	if (size > a->left) {
		size_t cap = size > ARENA_CHUNK / 4 ? size : ARENA_CHUNK;
		a->chunks = lp_reallocarray(a->chunks, a->nchunks + 1, sizeof(*a->chunks));
		a->cur = a->chunks[a->nchunks++] = lp_malloc(cap);
		a->left = cap;
	}
	void *p = a->cur;
	a->cur += size;
	a->left -= size;
	a->used += size;
	return p;
}

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nchunks; i++)
		free(a->chunks[i]);
	free(a->chunks);
	*a = (struct arena){ 0 };
}

static char *arena_strdup(struct arena *a, const char *s, size_t len)
{
	char *p = arena_alloc(a, len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

struct lp_dict *lp_dict__new(void)
{
	struct lp_dict *d = lp_calloc(1, sizeof(*d));
	lp_hashmap__init(&d->frames);
	lp_hashmap__init(&d->stacks);
	lp_hashmap__init(&d->strings);
	return d;
}

void lp_dict__free(struct lp_dict *d)
{
	if (!d)
		return;
	lp_hashmap__fini(&d->frames);
	lp_hashmap__fini(&d->stacks);
	lp_hashmap__fini(&d->strings);
	arena_free(&d->arena);
	arena_free(&d->stack_arena);
	free(d);
}

const char *lp_dict__string(struct lp_dict *d, const char *s, size_t len)
{
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, s, len));
	const char *old = lp_hashmap__get(&d->strings, key);
	if (old && strlen(old) == len && !memcmp(old, s, len))
		return old;
	char *copy = arena_strdup(&d->arena, s, len);
	if (!old)	/* on a (64-bit) collision the first string keeps the slot */
		lp_hashmap__put(&d->strings, key, copy);
	return copy;
}

static uint64_t frame_hash(char kind, uint64_t addr, const char *module,
			   const char *symbol, const char *srcline, const char *build_id,
			   bool named)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &kind, 1);
	h = lp_hash_bytes(h, &addr, sizeof(addr));
	h = lp_hash_bytes(h, module, strlen(module) + 1);
	h = lp_hash_bytes(h, symbol, strlen(symbol) + 1);
	h = lp_hash_bytes(h, srcline, strlen(srcline) + 1);
	/* Only raw frames have one: every other frame's id is as it was. */
	if (build_id[0])
		h = lp_hash_bytes(h, build_id, strlen(build_id) + 1);
	/* Only an empty name differs from the unresolved frame; "a" is "a". */
	return named && !symbol[0] ? lp_hash_bytes(h, "n", 1) : h;
}

/* lp: the frame is said to be lp's own (a stream's lp=1, a copy of a
 * marked frame); lp_frame__is_lps marks it from its symbol anyway. */
static const struct lp_frame *intern_frame(struct lp_dict *d, char kind, uint64_t addr,
					   const char *module, const char *symbol,
					   const char *srcline, const char *build_id, bool named,
					   bool lp)
{
	module = module ? module : "";
	symbol = symbol ? symbol : "";
	srcline = srcline ? srcline : "";
	build_id = build_id ? build_id : "";
	uint64_t id = frame_hash(kind, addr, module, symbol, srcline, build_id, named);
	struct lp_frame *f = lp_hashmap__get(&d->frames, lp_hashmap__key(id));
	if (f) {
		/* A definition that says lp=1 marks the frame for good (one
		 * that does not never unmarks it: the symbol still matches).
		 * Written only then: lp-join's readers intern into the
		 * dictionary its writer reads frames from (TSan saw a race on
		 * the `|=` that rewrote the same value). */
		if (lp && !f->lp)
			f->lp = true;
		return f;
	}
	f = arena_alloc(&d->arena, sizeof(*f));
	f->id = id;
	f->kind = kind;
	f->addr = addr;
	f->module = lp_dict__string(d, module, strlen(module));
	f->symbol = arena_strdup(&d->arena, symbol, strlen(symbol));
	f->srcline = srcline[0] ? lp_dict__string(d, srcline, strlen(srcline)) : "";
	f->build_id = build_id[0] ? lp_dict__string(d, build_id, strlen(build_id)) : "";
	f->named = named && !symbol[0];
	f->lp = lp || lp_frame__is_lps(kind, module, symbol);
	lp_hashmap__put(&d->frames, lp_hashmap__key(id), f);
	return f;
}

const struct lp_frame *lp_dict__frame(struct lp_dict *d, char kind, uint64_t addr,
				      const char *module, const char *symbol,
				      const char *srcline)
{
	return intern_frame(d, kind, addr, module, symbol, srcline, "", false, false);
}

const struct lp_frame *lp_dict__named_frame(struct lp_dict *d, char kind, const char *module,
					    const char *name, const char *srcline)
{
	return intern_frame(d, kind, 0, module, name, srcline, "", true, false);
}

const struct lp_frame *lp_dict__raw_frame(struct lp_dict *d, uint64_t addr, const char *module,
					  const char *build_id)
{
	return intern_frame(d, LP_FRAME_USER, addr, module, "", "", build_id, false, false);
}

const struct lp_frame *lp_dict__frame_copy(struct lp_dict *d, const struct lp_frame *f)
{
	return intern_frame(d, f->kind, f->addr, f->module, f->symbol, f->srcline, f->build_id,
			    f->named, f->lp);
}

static uint64_t stack_hash(const struct lp_frame *const *frames, size_t n)
{
	uint64_t h = LP_HASH_INIT;
	for (size_t i = 0; i < n; i++)
		h = lp_hash_bytes(h, &frames[i]->id, sizeof(frames[i]->id));
	return h;
}

const struct lp_stack *lp_dict__stack(struct lp_dict *d,
				      const struct lp_frame *const *frames, size_t n)
{
	uint64_t id = stack_hash(frames, n);
	struct lp_stack *s = lp_hashmap__get(&d->stacks, lp_hashmap__key(id));
	if (s)
		return s;
	s = arena_alloc(&d->stack_arena, sizeof(*s));
	const struct lp_frame **copy = arena_alloc(&d->stack_arena, n * sizeof(*copy));
	if (n)
		memcpy(copy, frames, n * sizeof(*copy));
	s->id = id;
	s->nframes = n;
	s->frames = copy;
	lp_hashmap__put(&d->stacks, lp_hashmap__key(id), s);
	return s;
}

const struct lp_frame *lp_dict__frame_by_id(const struct lp_dict *d, uint64_t id)
{
	return lp_hashmap__get(&d->frames, lp_hashmap__key(id));
}

const struct lp_stack *lp_dict__stack_by_id(const struct lp_dict *d, uint64_t id)
{
	return lp_hashmap__get(&d->stacks, lp_hashmap__key(id));
}

size_t lp_dict__stacks_bytes(const struct lp_dict *d)
{
	return d->stack_arena.used +
	       d->stacks.cap * (sizeof(*d->stacks.keys) + sizeof(*d->stacks.values));
}

void lp_dict__forget_stacks(struct lp_dict *d)
{
	lp_hashmap__fini(&d->stacks);
	lp_hashmap__init(&d->stacks);
	arena_free(&d->stack_arena);
}
