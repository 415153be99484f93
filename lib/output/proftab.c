/* proftab.c - the tables pprof and OTLP profiles share (proftab.h): each
 * entry interned by a hash of its content, the hash maps keeping ids. */
#include "output/proftab.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Roughly what a hash map's slot costs, beside the entry. */
#define SLOT_BYTES 32

/* Ids are indexes + 1 kept in the maps' pointers; a hash that collides
 * with another content moves on to the next key. */
static uint64_t intern_string(struct lp_proftab *t, const char *s, size_t len)
{
	uint64_t key = lp_hash_bytes(LP_HASH_INIT, s, len);
	for (;; key++) {
		uintptr_t id = (uintptr_t)lp_hashmap__get(&t->string_ids, lp_hashmap__key(key));
		if (!id)
			break;
		if (strlen(t->strings[id - 1]) == len && !memcmp(t->strings[id - 1], s, len))
			return id - 1;
	}
	t->strings = lp_reallocarray(t->strings, t->nstrings + 1, sizeof(*t->strings));
	t->strings[t->nstrings] = lp_malloc(len + 1);
	memcpy(t->strings[t->nstrings], s, len);
	t->strings[t->nstrings][len] = '\0';
	lp_hashmap__put(&t->string_ids, lp_hashmap__key(key), (void *)(uintptr_t)++t->nstrings);
	t->held += len + 1 + sizeof(char *) + SLOT_BYTES;
	return t->nstrings - 1;
}

uint64_t lp_proftab__string(struct lp_proftab *t, const char *s)
{
	return intern_string(t, s, strlen(s));
}

static uint64_t str(struct lp_proftab *t, const char *s)
{
	return intern_string(t, s, strlen(s));
}

/* Events whose period is time, so the weight is nanoseconds. */
static bool timed_event(const char *event)
{
	static const char *const timed[] = { "cpu-clock", "task-clock", "offcpu", "wall", "snapshot" };
	for (size_t i = 0; i < sizeof(timed) / sizeof(*timed); i++)
		if (!strcmp(event, timed[i]))
			return true;
	return false;
}

static void take_event(struct lp_proftab *t, const char *event)
{
	t->event = lp_strdup(event);
	t->timed = timed_event(event);
}

struct lp_proftab *lp_proftab__new(bool keep_times)
{
	struct lp_proftab *t = lp_calloc(1, sizeof(*t));
	lp_hashmap__init(&t->string_ids);
	lp_hashmap__init(&t->mapping_ids);
	lp_hashmap__init(&t->function_ids);
	lp_hashmap__init(&t->location_ids);
	lp_hashmap__init(&t->stack_ids);
	lp_hashmap__init(&t->sample_ids);
	t->keep_times = keep_times;
	t->times = true;
	str(t, "");	/* string_table[0] must be "" */
	return t;
}

struct lp_proftab *lp_proftab__next(const struct lp_proftab *t)
{
	struct lp_proftab *n = lp_proftab__new(t->keep_times);
	if (t->event)
		take_event(n, t->event);
	n->period_ns = t->period_ns;
	n->host = t->host ? lp_strdup(t->host) : NULL;
	n->offset_known = t->offset_known;
	n->offset_ns = t->offset_ns;
	return n;
}

static void drop_times(struct lp_proftab *t)
{
	for (size_t i = 0; i < t->nsamples; i++) {
		struct lp_proftab_sample *s = &t->samples[i];
		t->held -= s->capobs * 16;
		free(s->unix_ns);
		free(s->weights);
		s->unix_ns = NULL;
		s->weights = NULL;
		s->nobs = s->capobs = 0;
	}
	t->times = false;
	t->first_unix_ns = t->last_unix_ns = 0;
}

void lp_proftab__free(struct lp_proftab *t)
{
	if (!t)
		return;
	drop_times(t);
	for (size_t i = 0; i < t->nstrings; i++)
		free(t->strings[i]);
	for (size_t i = 0; i < t->nlocations; i++) {
		free(t->locations[i].functions);
		free(t->locations[i].lines);
	}
	for (size_t i = 0; i < t->nstacks; i++)
		free(t->stacks[i].locs);
	free(t->strings);
	free(t->mappings);
	free(t->functions);
	free(t->locations);
	free(t->stacks);
	free(t->samples);
	free(t->event);
	free(t->host);
	lp_hashmap__fini(&t->string_ids);
	lp_hashmap__fini(&t->mapping_ids);
	lp_hashmap__fini(&t->function_ids);
	lp_hashmap__fini(&t->location_ids);
	lp_hashmap__fini(&t->stack_ids);
	lp_hashmap__fini(&t->sample_ids);
	free(t);
}

void lp_proftab__input(struct lp_proftab *t)
{
	t->offset_known = false;
}

void lp_proftab__header(struct lp_proftab *t, const struct lp_header *h)
{
	char *v = NULL;
	size_t cap = 0;
	int64_t ns;
	const char *why;
	if (!t->event && lp_attrs__get(&h->attrs, "event", &v, &cap) > 0)
		take_event(t, v);
	if (!t->period_ns && lp_attrs__get(&h->attrs, "period_ns", &v, &cap) > 0 &&
	    lp_parse_i64(v, 1, INT64_MAX, &ns, &why) == 0)
		t->period_ns = ns;
	if (!t->host && lp_attrs__get(&h->attrs, "host", &v, &cap) > 0)
		t->host = lp_strdup(v);
	t->offset_known = lp_attrs__get(&h->attrs, "realtime_offset_ns", &v, &cap) > 0 &&
			  lp_parse_i64(v, INT64_MIN, INT64_MAX, &ns, &why) == 0;
	t->offset_ns = t->offset_known ? ns : 0;
	free(v);
}

static uint64_t mapping_id(struct lp_proftab *t, const struct lp_frame *f)
{
	if (!f->module[0])
		return 0;
	uint64_t file = str(t, f->module);
	uintptr_t id = (uintptr_t)lp_hashmap__get(&t->mapping_ids, lp_hashmap__key(file + 1));
	if (id) {
		if (!t->mappings[id - 1][1] && f->build_id && f->build_id[0])
			t->mappings[id - 1][1] = str(t, f->build_id);
		return id;
	}
	t->mappings = lp_reallocarray(t->mappings, t->nmappings + 1, sizeof(*t->mappings));
	t->mappings[t->nmappings][0] = file;
	t->mappings[t->nmappings][1] = f->build_id && f->build_id[0] ? str(t, f->build_id) : 0;
	lp_hashmap__put(&t->mapping_ids, lp_hashmap__key(file + 1), (void *)(uintptr_t)++t->nmappings);
	t->held += sizeof(*t->mappings) + SLOT_BYTES;
	return t->nmappings;
}

/* A frame's name as folded output names an unresolved frame: [module],
 * or [unknown]; NULL when it has a name of its own. */
static char *unresolved_name(const struct lp_frame *f)
{
	if (f->symbol[0] || f->named)
		return NULL;
	const char *base = strrchr(f->module, '/');
	base = base ? base + 1 : f->module;
	size_t size = strlen(base) + sizeof("[unknown]");
	char *name = lp_malloc(size);	/* a module's name may be any length */
	if (base[0] == '[')	/* [kernel.kallsyms], [unknown], [vdso]... */
		snprintf(name, size, "%s", base);
	else
		snprintf(name, size, "[%s]", base[0] ? base : "unknown");
	return name;
}

/* A frame's function (name, file) and line. */
static uint64_t function_id(struct lp_proftab *t, const struct lp_frame *f, int64_t *line)
{
	char *name = unresolved_name(f);
	size_t flen = strlen(f->srcline);
	const char *colon = strrchr(f->srcline, ':');
	*line = 0;
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		*line = strtoll(colon + 1, NULL, 10);
		flen = (size_t)(colon - f->srcline);
	}
	uint64_t n = str(t, name ? name : f->symbol), file = intern_string(t, f->srcline, flen);
	free(name);
	uint64_t key = lp_hashmap__key(lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, &n, 8), &file, 8));
	for (;; key = lp_hashmap__key(key + 1)) {
		uintptr_t id = (uintptr_t)lp_hashmap__get(&t->function_ids, key);
		if (!id)
			break;
		if (t->functions[id - 1][0] == n && t->functions[id - 1][1] == file)
			return id;
	}
	t->functions = lp_reallocarray(t->functions, t->nfunctions + 1, sizeof(*t->functions));
	t->functions[t->nfunctions][0] = n;
	t->functions[t->nfunctions][1] = file;
	lp_hashmap__put(&t->function_ids, key, (void *)(uintptr_t)++t->nfunctions);
	t->held += sizeof(*t->functions) + SLOT_BYTES;
	return t->nfunctions;
}

/* The location of frames[0..n): a frame and the frames inlined into it
 * (after it in the stack), keyed by their ids. */
static uint64_t location_id(struct lp_proftab *t, const struct lp_frame *const *frames, size_t n)
{
	uint64_t key = LP_HASH_INIT;
	for (size_t i = 0; i < n; i++)
		key = lp_hash_bytes(key, &frames[i]->id, sizeof(frames[i]->id));
	uintptr_t id = (uintptr_t)lp_hashmap__get(&t->location_ids, lp_hashmap__key(key));
	if (id)
		return id;
	t->locations = lp_reallocarray(t->locations, t->nlocations + 1, sizeof(*t->locations));
	struct lp_proftab_location *l = &t->locations[t->nlocations];
	l->mapping = mapping_id(t, frames[0]);
	l->address = frames[0]->addr;
	l->nlines = n;
	l->functions = lp_calloc(n, sizeof(*l->functions));
	l->lines = lp_calloc(n, sizeof(*l->lines));
	for (size_t i = 0; i < n; i++)
		l->functions[n - 1 - i] = function_id(t, frames[i], &l->lines[n - 1 - i]);
	lp_hashmap__put(&t->location_ids, lp_hashmap__key(key), (void *)(uintptr_t)++t->nlocations);
	t->held += sizeof(*l) + n * 16 + SLOT_BYTES;
	return t->nlocations;
}

/* The stack's id, its locations made once: outermost first in the
 * stream, leaf first in both formats; each frame with the inlined frames
 * after it makes one location.  0 for no frames. */
static uint64_t stack_id(struct lp_proftab *t, const struct lp_stack *stack)
{
	if (!stack || !stack->nframes)
		return 0;
	uintptr_t id = (uintptr_t)lp_hashmap__get(&t->stack_ids, lp_hashmap__key(stack->id));
	if (id)
		return id;
	struct lp_proftab_stack st = { 0, lp_calloc(stack->nframes, sizeof(*st.locs)) };
	for (size_t i = 0, n = stack->nframes; i < n;) {
		size_t j = i + 1;
		while (j < n && stack->frames[j]->kind == LP_FRAME_INLINE)
			j++;
		st.locs[st.nlocs++] = location_id(t, stack->frames + i, j - i);
		i = j;
	}
	for (size_t a = 0, b = st.nlocs; a + 1 < b; a++, b--) {
		uint64_t x = st.locs[a];
		st.locs[a] = st.locs[b - 1];
		st.locs[b - 1] = x;
	}
	t->stacks = lp_reallocarray(t->stacks, t->nstacks + 1, sizeof(*t->stacks));
	t->stacks[t->nstacks] = st;
	lp_hashmap__put(&t->stack_ids, lp_hashmap__key(stack->id), (void *)(uintptr_t)++t->nstacks);
	t->held += sizeof(st) + stack->nframes * 8 + SLOT_BYTES;
	return t->nstacks;
}

static struct lp_proftab_sample *sample_of(struct lp_proftab *t, const struct lp_sample *s,
					   uint64_t comm)
{
	int64_t pid = s->pid;
	uint64_t stack = stack_id(t, s->stack);
	uint64_t key = lp_hash_bytes(LP_HASH_INIT, &stack, 8);
	key = lp_hash_bytes(key, &pid, 8);
	key = lp_hashmap__key(lp_hash_bytes(key, &comm, 8));
	for (;; key = lp_hashmap__key(key + 1)) {
		uintptr_t id = (uintptr_t)lp_hashmap__get(&t->sample_ids, key);
		if (!id)
			break;
		struct lp_proftab_sample *sm = &t->samples[id - 1];
		if (sm->stack == stack && sm->pid == pid && sm->comm == comm)
			return sm;
	}
	t->samples = lp_reallocarray(t->samples, t->nsamples + 1, sizeof(*t->samples));
	struct lp_proftab_sample *sm = &t->samples[t->nsamples];
	*sm = (struct lp_proftab_sample){ .stack = stack, .pid = pid, .comm = comm };
	lp_hashmap__put(&t->sample_ids, key, (void *)(uintptr_t)++t->nsamples);
	t->held += sizeof(*sm) + SLOT_BYTES;
	return sm;
}

/* The sample's time, as Unix time; false when it cannot be had. */
static bool unix_time(const struct lp_proftab *t, const struct lp_sample *s, uint64_t *out)
{
	if (s->time_ns == LP_TIME_NONE || !t->offset_known)
		return false;
	int64_t u = lp_add_sat(s->time_ns, t->offset_ns);
	if (u <= 0)
		return false;
	*out = (uint64_t)u;
	return true;
}

static void add_time(struct lp_proftab *t, struct lp_proftab_sample *sm, const struct lp_sample *s)
{
	uint64_t u;
	if (!unix_time(t, s, &u)) {
		drop_times(t);
		return;
	}
	if (!t->first_unix_ns || u < t->first_unix_ns)
		t->first_unix_ns = u;
	if (u > t->last_unix_ns)
		t->last_unix_ns = u;
	if (!t->keep_times)
		return;
	if (sm->nobs == sm->capobs) {
		size_t cap = sm->capobs ? sm->capobs * 2 : 4;
		sm->unix_ns = lp_reallocarray(sm->unix_ns, cap, sizeof(*sm->unix_ns));
		sm->weights = lp_reallocarray(sm->weights, cap, sizeof(*sm->weights));
		t->held += (cap - sm->capobs) * 16;
		sm->capobs = cap;
	}
	sm->unix_ns[sm->nobs] = u;
	sm->weights[sm->nobs++] = lp_proftab__round(s->weight);
}

void lp_proftab__add(struct lp_proftab *t, const struct lp_sample *s)
{
	if (!t->event && s->event && s->event[0])
		take_event(t, s->event);
	uint64_t comm = s->comm && s->comm[0] ? str(t, s->comm) : 0;
	struct lp_proftab_sample *sm = sample_of(t, s, comm);
	sm->count++;
	sm->weight += s->weight;
	if (t->times)
		add_time(t, sm, s);
}
