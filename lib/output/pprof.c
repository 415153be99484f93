/* pprof.c - samples as a gzipped pprof profile (profile.proto).  The
 * tables pprof wants (strings, mappings, functions, locations) are interned
 * as samples arrive, keyed by content hashes, and the protobuf is written
 * once at the end: field numbers are those of google/pprof's
 * proto/profile.proto, encoded by the few lines of wire format below. */
#include "output/pprof.h"
#include "base/hashmap.h"
#include "base/util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct buf {
	unsigned char *p;
	size_t len, cap;
};

struct location {
	uint64_t mapping, address;
	size_t nlines;
	uint64_t *functions;	/* innermost first: pprof's order of inlining */
	int64_t *lines;
};

struct sample {
	uint64_t stack;		/* the stack's content id */
	size_t nlocs;
	uint64_t *locs;		/* leaf first */
	int64_t count;
	double weight;
	int64_t pid;		/* LP_ID_NONE: no label */
	uint64_t comm;		/* string index; 0: no label */
};

struct lp_pprof {
	struct lp_hashmap string_ids, mapping_ids, function_ids, location_ids, sample_ids;
	char **strings;
	size_t nstrings;
	uint64_t (*mappings)[2];	/* filename, build_id strings of mapping i + 1 */
	size_t nmappings;
	uint64_t (*functions)[2];	/* name, filename strings */
	size_t nfunctions;
	struct location *locations;
	size_t nlocations;
	struct sample *samples;
	size_t nsamples;
	char *event;		/* the second value's type */
	int64_t period_ns;	/* 0: not known */
	bool timed;		/* the weights are nanoseconds */
};

/* Ids are indexes + 1 kept in the maps' pointers; a hash that collides
 * with another content moves on to the next key. */
static uint64_t intern_string(struct lp_pprof *p, const char *s, size_t len)
{
	uint64_t key = lp_hash_bytes(LP_HASH_INIT, s, len);
	for (;; key++) {
		uintptr_t id = (uintptr_t)lp_hashmap__get(&p->string_ids, lp_hashmap__key(key));
		if (!id)
			break;
		if (strlen(p->strings[id - 1]) == len && !memcmp(p->strings[id - 1], s, len))
			return id - 1;
	}
	p->strings = lp_reallocarray(p->strings, p->nstrings + 1, sizeof(*p->strings));
	p->strings[p->nstrings] = lp_malloc(len + 1);
	memcpy(p->strings[p->nstrings], s, len);
	p->strings[p->nstrings][len] = '\0';
	lp_hashmap__put(&p->string_ids, lp_hashmap__key(key), (void *)(uintptr_t)++p->nstrings);
	return p->nstrings - 1;
}

static uint64_t str(struct lp_pprof *p, const char *s)
{
	return intern_string(p, s, strlen(s));
}

struct lp_pprof *lp_pprof__new(void)
{
	struct lp_pprof *p = lp_calloc(1, sizeof(*p));
	lp_hashmap__init(&p->string_ids);
	lp_hashmap__init(&p->mapping_ids);
	lp_hashmap__init(&p->function_ids);
	lp_hashmap__init(&p->location_ids);
	lp_hashmap__init(&p->sample_ids);
	str(p, "");	/* string_table[0] must be "" */
	return p;
}

void lp_pprof__free(struct lp_pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	for (size_t i = 0; i < p->nlocations; i++) {
		free(p->locations[i].functions);
		free(p->locations[i].lines);
	}
	for (size_t i = 0; i < p->nsamples; i++)
		free(p->samples[i].locs);
	free(p->strings);
	free(p->mappings);
	free(p->functions);
	free(p->locations);
	free(p->samples);
	free(p->event);
	lp_hashmap__fini(&p->string_ids);
	lp_hashmap__fini(&p->mapping_ids);
	lp_hashmap__fini(&p->function_ids);
	lp_hashmap__fini(&p->location_ids);
	lp_hashmap__fini(&p->sample_ids);
	free(p);
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

void lp_pprof__header(struct lp_pprof *p, const struct lp_header *h)
{
	char *v = NULL;
	size_t cap = 0;
	int64_t ns;
	const char *why;
	if (!p->event && lp_attrs__get(&h->attrs, "event", &v, &cap) > 0) {
		p->event = lp_strdup(v);
		p->timed = timed_event(v);
	}
	if (!p->period_ns && lp_attrs__get(&h->attrs, "period_ns", &v, &cap) > 0 &&
	    lp_parse_i64(v, 1, INT64_MAX, &ns, &why) == 0)
		p->period_ns = ns;
	free(v);
}

static uint64_t mapping_id(struct lp_pprof *p, const struct lp_frame *f)
{
	if (!f->module[0])
		return 0;
	uint64_t file = str(p, f->module);
	uintptr_t id = (uintptr_t)lp_hashmap__get(&p->mapping_ids, lp_hashmap__key(file + 1));
	if (id) {
		if (!p->mappings[id - 1][1] && f->build_id && f->build_id[0])
			p->mappings[id - 1][1] = str(p, f->build_id);
		return id;
	}
	p->mappings = lp_reallocarray(p->mappings, p->nmappings + 1, sizeof(*p->mappings));
	p->mappings[p->nmappings][0] = file;
	p->mappings[p->nmappings][1] = f->build_id && f->build_id[0] ? str(p, f->build_id) : 0;
	lp_hashmap__put(&p->mapping_ids, lp_hashmap__key(file + 1), (void *)(uintptr_t)++p->nmappings);
	return p->nmappings;
}

/* A frame's function (name, file) and line, as folded output names an
 * unresolved frame: [module], or [unknown]. */
static uint64_t function_id(struct lp_pprof *p, const struct lp_frame *f, int64_t *line)
{
	char *name = NULL;	/* a module's name may be any length */
	const char *sym = f->symbol;
	if (!sym[0] && !f->named) {
		const char *base = strrchr(f->module, '/');
		base = base ? base + 1 : f->module;
		size_t size = strlen(base) + sizeof("[unknown]");
		name = lp_malloc(size);
		if (base[0] == '[')	/* [kernel.kallsyms], [unknown], [vdso]... */
			snprintf(name, size, "%s", base);
		else
			snprintf(name, size, "[%s]", base[0] ? base : "unknown");
		sym = name;
	}
	size_t flen = strlen(f->srcline);
	const char *colon = strrchr(f->srcline, ':');
	*line = 0;
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		*line = strtoll(colon + 1, NULL, 10);
		flen = (size_t)(colon - f->srcline);
	}
	uint64_t n = str(p, sym), file = intern_string(p, f->srcline, flen);
	free(name);
	uint64_t key = lp_hashmap__key(lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, &n, 8), &file, 8));
	for (;; key = lp_hashmap__key(key + 1)) {
		uintptr_t id = (uintptr_t)lp_hashmap__get(&p->function_ids, key);
		if (!id)
			break;
		if (p->functions[id - 1][0] == n && p->functions[id - 1][1] == file)
			return id;
	}
	p->functions = lp_reallocarray(p->functions, p->nfunctions + 1, sizeof(*p->functions));
	p->functions[p->nfunctions][0] = n;
	p->functions[p->nfunctions][1] = file;
	lp_hashmap__put(&p->function_ids, key, (void *)(uintptr_t)++p->nfunctions);
	return p->nfunctions;
}

/* The location of frames[0..n): a frame and the frames inlined into it
 * (after it in the stack), keyed by their ids. */
static uint64_t location_id(struct lp_pprof *p, const struct lp_frame *const *frames, size_t n)
{
	uint64_t key = LP_HASH_INIT;
	for (size_t i = 0; i < n; i++)
		key = lp_hash_bytes(key, &frames[i]->id, sizeof(frames[i]->id));
	uintptr_t id = (uintptr_t)lp_hashmap__get(&p->location_ids, lp_hashmap__key(key));
	if (id)
		return id;
	p->locations = lp_reallocarray(p->locations, p->nlocations + 1, sizeof(*p->locations));
	struct location *l = &p->locations[p->nlocations];
	l->mapping = mapping_id(p, frames[0]);
	l->address = frames[0]->addr;
	l->nlines = n;
	l->functions = lp_calloc(n, sizeof(*l->functions));
	l->lines = lp_calloc(n, sizeof(*l->lines));
	for (size_t i = 0; i < n; i++)
		l->functions[n - 1 - i] = function_id(p, frames[i], &l->lines[n - 1 - i]);
	lp_hashmap__put(&p->location_ids, lp_hashmap__key(key), (void *)(uintptr_t)++p->nlocations);
	return p->nlocations;
}

void lp_pprof__add(struct lp_pprof *p, const struct lp_sample *s)
{
	if (!p->event && s->event && s->event[0]) {
		p->event = lp_strdup(s->event);
		p->timed = timed_event(s->event);
	}
	uint64_t comm = s->comm && s->comm[0] ? str(p, s->comm) : 0;
	int64_t pid = s->pid;
	uint64_t stack = s->stack ? s->stack->id : 0;
	uint64_t key = lp_hash_bytes(LP_HASH_INIT, &stack, 8);
	key = lp_hash_bytes(key, &pid, 8);
	key = lp_hashmap__key(lp_hash_bytes(key, &comm, 8));
	struct sample *sm = NULL;
	for (;; key = lp_hashmap__key(key + 1)) {
		uintptr_t id = (uintptr_t)lp_hashmap__get(&p->sample_ids, key);
		if (!id)
			break;
		sm = &p->samples[id - 1];
		if (sm->stack == stack && sm->pid == pid && sm->comm == comm)
			break;
		sm = NULL;
	}
	if (!sm) {
		p->samples = lp_reallocarray(p->samples, p->nsamples + 1, sizeof(*p->samples));
		sm = &p->samples[p->nsamples];
		memset(sm, 0, sizeof(*sm));
		sm->stack = stack;
		sm->pid = pid;
		sm->comm = comm;
		size_t n = s->stack ? s->stack->nframes : 0;
		sm->locs = lp_calloc(n ? n : 1, sizeof(*sm->locs));
		/* Outermost first in the stack, leaf first in pprof: each frame
		 * with the inlined frames after it makes one location. */
		for (size_t i = 0; i < n;) {
			size_t j = i + 1;
			while (j < n && s->stack->frames[j]->kind == LP_FRAME_INLINE)
				j++;
			sm->locs[sm->nlocs++] = location_id(p, s->stack->frames + i, j - i);
			i = j;
		}
		for (size_t a = 0, b = sm->nlocs; a + 1 < b; a++, b--) {
			uint64_t t = sm->locs[a];
			sm->locs[a] = sm->locs[b - 1];
			sm->locs[b - 1] = t;
		}
		lp_hashmap__put(&p->sample_ids, key, (void *)(uintptr_t)++p->nsamples);
	}
	sm->count++;
	sm->weight += s->weight;
}

/* --- the wire format ------------------------------------------------ */

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = b->cap ? b->cap * 2 : 4096;
		if (b->cap < b->len + n)
			b->cap = b->len + n;
		b->p = lp_realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void varint(struct buf *b, uint64_t v)
{
	unsigned char c[10];
	size_t n = 0;
	do {
		c[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(b, c, n);
}

/* Field `field` as a varint; zero is the default and is left out. */
static void field_varint(struct buf *b, int field, uint64_t v)
{
	if (!v)
		return;
	varint(b, (uint64_t)field << 3);
	varint(b, v);
}

static void field_bytes(struct buf *b, int field, const void *data, size_t n)
{
	varint(b, (uint64_t)field << 3 | 2);
	varint(b, n);
	put(b, data, n);
}

static void field_packed(struct buf *b, int field, const uint64_t *v, size_t n, struct buf *tmp)
{
	if (!n)
		return;
	tmp->len = 0;
	for (size_t i = 0; i < n; i++)
		varint(tmp, v[i]);
	field_bytes(b, field, tmp->p, tmp->len);
}

/* A message of n varint fields, tags[i] = vals[i], as field `field`;
 * tmp is scratch. */
static void field_message(struct buf *b, int field, const int *tags, const uint64_t *vals,
			  size_t n, struct buf *tmp)
{
	tmp->len = 0;
	for (size_t i = 0; i < n; i++)
		field_varint(tmp, tags[i], vals[i]);
	field_bytes(b, field, tmp->p, tmp->len);
}

/* ValueType: type (1), unit (2). */
static void value_type(struct buf *b, int field, uint64_t type, uint64_t unit, struct buf *tmp)
{
	static const int tags[] = { 1, 2 };
	field_message(b, field, tags, (const uint64_t[]){ type, unit }, 2, tmp);
}

static void encode(struct lp_pprof *p, struct buf *b)
{
	struct buf m = { 0 }, t = { 0 };
	const char *event = p->event ? p->event : "weight";
	uint64_t unit = str(p, p->timed ? "nanoseconds" : "count");
	uint64_t samples = str(p, "samples"), count = str(p, "count"), ev = str(p, event);
	uint64_t pid_key = str(p, "pid"), comm_key = str(p, "comm");

	/* Profile.sample_type (1): the sample count, then the weight. */
	value_type(b, 1, samples, count, &t);
	value_type(b, 1, ev, unit, &t);
	/* Profile.sample (2): location_id (1), value (2), label (3). */
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		uint64_t values[2] = { (uint64_t)s->count, (uint64_t)(int64_t)(s->weight + 0.5) };
		m.len = 0;
		field_packed(&m, 1, s->locs, s->nlocs, &t);
		field_packed(&m, 2, values, 2, &t);
		if (s->pid != LP_ID_NONE) {	/* Label: key (1), num (3) */
			t.len = 0;
			field_varint(&t, 1, pid_key);
			field_varint(&t, 3, (uint64_t)s->pid);
			field_bytes(&m, 3, t.p, t.len);
		}
		if (s->comm) {		/* Label: key (1), str (2) */
			t.len = 0;
			field_varint(&t, 1, comm_key);
			field_varint(&t, 2, s->comm);
			field_bytes(&m, 3, t.p, t.len);
		}
		field_bytes(b, 2, m.p, m.len);
	}
	/* Profile.mapping (3): id (1), filename (5), build_id (6), has_functions (7). */
	static const int mapping_tags[] = { 1, 5, 6, 7 };
	for (size_t i = 0; i < p->nmappings; i++)
		field_message(b, 3, mapping_tags,
			      (const uint64_t[]){ i + 1, p->mappings[i][0], p->mappings[i][1], 1 }, 4, &m);
	/* Profile.location (4): id (1), mapping_id (2), address (3), line (4:
	 * function_id (1), line (2)). */
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct location *l = &p->locations[i];
		m.len = 0;
		field_varint(&m, 1, i + 1);
		field_varint(&m, 2, l->mapping);
		field_varint(&m, 3, l->address);
		for (size_t k = 0; k < l->nlines; k++) {
			t.len = 0;
			field_varint(&t, 1, l->functions[k]);
			field_varint(&t, 2, (uint64_t)l->lines[k]);
			field_bytes(&m, 4, t.p, t.len);
		}
		field_bytes(b, 4, m.p, m.len);
	}
	/* Profile.function (5): id (1), name (2), system_name (3), filename (4). */
	static const int function_tags[] = { 1, 2, 3, 4 };
	for (size_t i = 0; i < p->nfunctions; i++)
		field_message(b, 5, function_tags,
			      (const uint64_t[]){ i + 1, p->functions[i][0], p->functions[i][0],
						  p->functions[i][1] }, 4, &m);
	/* Profile.string_table (6), every string, "" first. */
	for (size_t i = 0; i < p->nstrings; i++)
		field_bytes(b, 6, p->strings[i], strlen(p->strings[i]));
	/* period_type (11), period (12). */
	value_type(b, 11, ev, unit, &t);
	field_varint(b, 12, (uint64_t)p->period_ns);
	free(m.p);
	free(t.p);
}

int lp_pprof__write(struct lp_pprof *p, FILE *out)
{
	struct buf b = { 0 };
	encode(p, &b);
	z_stream z = { 0 };
	/* 15 + 16: a gzip wrapper, as pprof files are. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		lp_die(1, "cannot start zlib");
	unsigned char chunk[65536];
	z.next_in = b.p;
	z.avail_in = (uInt)b.len;
	int zr, ret = 0;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		size_t n = sizeof(chunk) - z.avail_out;
		if (n && fwrite(chunk, 1, n, out) != n)
			ret = -1;
	} while (zr == Z_OK && ret == 0);
	if (zr != Z_STREAM_END && ret == 0)
		lp_die(1, "zlib failed to compress the profile");
	deflateEnd(&z);
	free(b.p);
	return ret;
}
