/* tracejson.c - Chrome trace-event JSON, written as records arrive
 * (tracejson.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "output/tracejson.h"
#include "base/hashmap.h"
#include "base/util.h"

/* Stack-frame tree: node = (parent node, frame).  Node ids start at 1 (0 is
 * "no parent"); a node's name and category live in one string arena. */
struct node {
	uint32_t parent;
	uint32_t name, category;	/* offsets into the arena */
	uint64_t frame_id;		/* the lp frame's content id */
};

struct lp_tracejson {
	FILE *out;
	uint64_t nevents, untimed;
	struct node *nodes;		/* [0] unused */
	size_t nnodes, capnodes;
	struct lp_hashmap node_map;	/* hash of (parent, frame_id) -> node */
	char *arena;
	size_t arena_len, arena_cap;
	struct lp_hashmap threads;	/* named (pid, tid) pairs */
	char *other;			/* the first header's attributes */
	size_t other_len;
	int have_header;
	char *buf;			/* scratch for unescaping */
	size_t buf_cap;
};

struct lp_tracejson *lp_tracejson__new(FILE *out)
{
	struct lp_tracejson *t = lp_calloc(1, sizeof(*t));

	t->out = out;
	t->nnodes = 1;
	t->capnodes = 1024;
	t->nodes = lp_calloc(t->capnodes, sizeof(*t->nodes));
	lp_hashmap__init(&t->node_map);
	lp_hashmap__init(&t->threads);
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	return t;
}

void lp_tracejson__free(struct lp_tracejson *t)
{
	if (!t)
		return;
	free(t->nodes);
	lp_hashmap__fini(&t->node_map);
	free(t->arena);
	lp_hashmap__fini(&t->threads);
	free(t->other);
	free(t->buf);
	free(t);
}

uint64_t lp_tracejson__untimed(const struct lp_tracejson *t)
{
	return t->untimed;
}

static uint32_t arena_add(struct lp_tracejson *t, const char *s, size_t len)
{
	uint32_t off = (uint32_t)t->arena_len;

	if (t->arena_len + len + 1 > t->arena_cap) {
		t->arena_cap = (t->arena_len + len + 1) * 2;
		t->arena = lp_realloc(t->arena, t->arena_cap);
	}
	memcpy(t->arena + t->arena_len, s, len);
	t->arena[t->arena_len + len] = '\0';
	t->arena_len += len + 1;
	return off;
}

/* frame_id is a hash already: mixing the parent in is enough (the map's
 * slot multiplies again). */
static uint64_t node_hash(uint32_t parent, uint64_t frame_id)
{
	uint64_t h = frame_id ^ ((uint64_t)parent + 1) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static void frame_name(struct lp_tracejson *t, const struct lp_frame *f,
		       uint32_t *name, uint32_t *category)
{
	static const char *const kinds[] = {
		['u'] = "user", ['k'] = "kernel", ['j'] = "jit", ['i'] = "inline",
	};
	char addr[32];
	const char *kind = (unsigned char)f->kind < sizeof(kinds) / sizeof(kinds[0]) &&
		kinds[(unsigned char)f->kind] ? kinds[(unsigned char)f->kind] : "user";

	if (f->symbol && (*f->symbol || f->named)) {
		*name = arena_add(t, f->symbol, strlen(f->symbol));
	} else if (f->addr) {
		int n = snprintf(addr, sizeof(addr), "0x%" PRIx64, f->addr);
		*name = arena_add(t, addr, (size_t)n);
	} else {
		*name = arena_add(t, "[unknown]", 9);
	}
	if (f->module && *f->module)
		*category = arena_add(t, f->module, strlen(f->module));
	else
		*category = arena_add(t, kind, strlen(kind));
}

/* The node of frame f under parent, made on first sight. */
static uint32_t node_get(struct lp_tracejson *t, uint32_t parent, const struct lp_frame *f)
{
	uint64_t h = lp_hashmap__key(node_hash(parent, f->id));
	void *v;
	for (size_t pos = 0; (v = lp_hashmap__next(&t->node_map, h, &pos));) {
		const struct node *n = &t->nodes[(uintptr_t)v];
		if (n->parent == parent && n->frame_id == f->id)
			return (uint32_t)(uintptr_t)v;
	}
	if (t->nnodes == t->capnodes) {
		t->capnodes *= 2;
		t->nodes = lp_reallocarray(t->nodes, t->capnodes, sizeof(*t->nodes));
	}
	uint32_t id = (uint32_t)t->nnodes++;
	struct node *n = &t->nodes[id];
	n->parent = parent;
	n->frame_id = f->id;
	frame_name(t, f, &n->name, &n->category);
	lp_hashmap__add(&t->node_map, h, (void *)(uintptr_t)id);	/* ids start at 1 */
	return id;
}

static int32_t id_or_zero(int32_t v)
{
	return v == LP_ID_NONE ? 0 : v;
}

/* Opens an event object: {"ph":PH,"ts":..,"pid":..,"tid":.., */
static void event_open(struct lp_tracejson *t, const char *ph, int64_t ts,
		       int32_t pid, int32_t tid)
{
	FILE *out = t->out;

	fputs(t->nevents++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"", out);
	fputs(ph, out);
	fputs("\",\"ts\":", out);
	lp_json__ns_as_us(out, ts == LP_TIME_NONE ? 0 : ts);
	fprintf(out, ",\"pid\":%" PRId32 ",\"tid\":%" PRId32, id_or_zero(pid),
		tid == LP_ID_NONE ? id_or_zero(pid) : tid);
}

static int is_json_integer(const char *s, size_t n)
{
	size_t i = s[0] == '-';

	if (n <= i || n - i > 15 || (s[i] == '0' && n - i > 1))
		return 0;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* The stream's "key=value" fields (tab-separated, escaped) as JSON members,
 * a comma before each but the very first when *first is set.  Plain decimal
 * integers stay numbers. */
static void put_attrs(struct lp_tracejson *t, const char *text, size_t len, int *first)
{
	struct lp_attrs_iter it = { text, text + len };
	struct lp_attr a;
	while (lp_attrs__next(&it, &a)) {
		const char *k = a.key;
		size_t klen = a.key_len;
		while (klen && *k == ' ')
			k++, klen--;
		if (!a.value || !klen)
			continue;
		size_t n;
		const char *v = lp_attr__value(&a, &t->buf, &t->buf_cap, &n);
		if (!*first)
			putc_unlocked(',', t->out);
		*first = 0;
		lp_json__string(t->out, k, klen);
		putc_unlocked(':', t->out);
		if (is_json_integer(v, n))
			fwrite(v, 1, n, t->out);
		else
			lp_json__string(t->out, v, n);
	}
}

/* A "thread_name" metadata event the first time a thread shows its comm. */
static void name_thread(struct lp_tracejson *t, int32_t pid, int32_t tid, const char *comm)
{
	uint64_t key = lp_hashmap__key((uint64_t)(uint32_t)id_or_zero(pid) << 32 | (uint32_t)tid);

	if (!comm || !*comm || tid == LP_ID_NONE)
		return;
	if (lp_hashmap__put(&t->threads, key, t))	/* any non-NULL value */
		return;
	event_open(t, "M", 0, pid, tid);
	fputs(",\"name\":\"thread_name\",\"args\":{\"name\":", t->out);
	lp_json__cstring(t->out, comm);
	fputs("}}", t->out);
}

static void put_sample(struct lp_tracejson *t, const struct lp_sample *s)
{
	FILE *out = t->out;
	uint32_t sf = 0;
	int first = 0;

	if (s->time_ns == LP_TIME_NONE) {
		t->untimed++;
		return;
	}
	name_thread(t, s->pid, s->tid, s->comm);
	if (s->stack)
		for (size_t i = 0; i < s->stack->nframes; i++)
			sf = node_get(t, sf, s->stack->frames[i]);
	event_open(t, "i", s->time_ns, s->pid, s->tid);
	fputs(",\"s\":\"t\",\"cat\":\"sample\",\"name\":", out);
	if (sf)
		lp_json__cstring(out, t->arena + t->nodes[sf].name);
	else
		fputs("\"[no stack]\"", out);
	if (sf)
		fprintf(out, ",\"sf\":\"%" PRIu32 "\"", sf);
	fputs(",\"args\":{\"weight\":", out);
	lp_json__number(out, s->weight);
	if (s->cpu != LP_ID_NONE)
		fprintf(out, ",\"cpu\":%" PRId32, s->cpu);
	if (s->event && *s->event) {
		fputs(",\"event\":", out);
		lp_json__cstring(out, s->event);
	}
	put_attrs(t, s->attrs.text, s->attrs.len, &first);
	fputs("}}", out);
}

static void put_span(struct lp_tracejson *t, const struct lp_span *s)
{
	FILE *out = t->out;
	int done = s->end_ns != LP_TIME_NONE, first = 0;

	event_open(t, done ? "X" : "B", s->start_ns, s->pid, s->tid);
	if (done) {
		fputs(",\"dur\":", out);
		lp_json__ns_as_us(out, s->end_ns - s->start_ns);
	}
	fputs(",\"cat\":\"span\",\"name\":", out);
	lp_json__cstring(out, s->probe ? s->probe : "");
	fprintf(out, ",\"args\":{\"depth\":%" PRId32, s->depth);
	put_attrs(t, s->attrs.text, s->attrs.len, &first);
	fputs("}}", out);
}

static void put_event(struct lp_tracejson *t, const struct lp_event *e)
{
	FILE *out = t->out;
	int first = 1;

	event_open(t, "i", e->time_ns, e->pid, e->tid);
	fputs(",\"s\":\"t\",\"cat\":\"event\",\"name\":", out);
	lp_json__cstring(out, e->probe ? e->probe : "");
	fputs(",\"args\":{", out);
	put_attrs(t, e->attrs.text, e->attrs.len, &first);
	fputs("}}", out);
}

static void put_lost(struct lp_tracejson *t, const struct lp_lost *l)
{
	FILE *out = t->out;
	const char *what = l->what ? l->what : "";
	size_t n = strlen(what);
	char *name = lp_malloc(n + 6);

	memcpy(name, "lost ", 5);
	memcpy(name + 5, what, n + 1);
	event_open(t, "i", l->time_ns, 0, 0);
	fputs(",\"s\":\"g\",\"cat\":\"lost\",\"name\":", out);
	lp_json__string(out, name, n + 5);
	fprintf(out, ",\"args\":{\"count\":%" PRIu64 "}}", l->count);
	free(name);
}

int lp_tracejson__record(struct lp_tracejson *t, const struct lp_record *rec)
{
	switch (rec->kind) {
	case LP_REC_HEADER:
		if (!t->have_header) {
			t->have_header = 1;
			t->other = lp_strndup(rec->header.attrs.text, rec->header.attrs.len);
			t->other_len = rec->header.attrs.len;
		}
		break;
	case LP_REC_SAMPLE:
		put_sample(t, &rec->sample);
		break;
	case LP_REC_SPAN:
		put_span(t, &rec->span);
		break;
	case LP_REC_EVENT:
		put_event(t, &rec->event);
		break;
	case LP_REC_LOST:
		put_lost(t, &rec->lost);
		break;
	default:
		break;
	}
	return ferror(t->out) ? -1 : 0;
}

int lp_tracejson__finish(struct lp_tracejson *t)
{
	FILE *out = t->out;

	fputs("\n],\n\"stackFrames\":{", out);
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct node *n = &t->nodes[i];
		fprintf(out, "%s\"%zu\":{\"name\":", i > 1 ? ",\n" : "\n", i);
		lp_json__cstring(out, t->arena + n->name);
		fputs(",\"category\":", out);
		lp_json__cstring(out, t->arena + n->category);
		if (n->parent)
			fprintf(out, ",\"parent\":\"%" PRIu32 "\"", n->parent);
		putc_unlocked('}', out);
	}
	fputs("},\n\"otherData\":{\"exporter\":\"lp-collapse " LP_VERSION "\"", out);
	if (t->other) {
		int first = 0;
		put_attrs(t, t->other, t->other_len, &first);
	}
	fputs("}}\n", out);
	if (t->untimed)
		lp_error("%" PRIu64 " sample%s without a timestamp left out of the trace",
			 t->untimed, t->untimed == 1 ? "" : "s");
	return ferror(out) ? -1 : 0;
}
