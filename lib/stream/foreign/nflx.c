/* nflx.c - reads nflxprofile (github.com/Netflix/nflxprofile,
 * nflxprofile.proto: FlameScope's format) as lp samples (formats/foreign.md):
 *   - a sample is an entry of samples (3), a node's id; its time is
 *     start_time (1) plus the time_deltas (4) up to it, seconds made
 *     nanoseconds (the producer's clock: perf's and V8's, CLOCK_MONOTONIC);
 *   - its weight the time to the next sample (the last one's: to end_time
 *     (2)), so the weights add up to the profile's length, its event "wall";
 *   - its stack as FlameScope finds it from the params (8): with
 *     has_node_stack, the node's own stack (10), the outermost first, the
 *     node's function_name then being the process's name (the comm); with
 *     has_parent, the node and its parents (5) up to a node with none; else
 *     the tree the nodes' children (3) make, from its root;
 *   - a frame is a function_name, its kind the libtype ("kernel" 'k',
 *     "jit" 'j', "inlined" 'i', else 'u'), its line the File's file_name
 *     and line; nflxprofile has no module;
 *   - pid, tid and cpu from samples_pid, samples_tid and samples_cpu (10,
 *     11, 9) when they are there, one per sample, else the node's own. */
#include "base/protobuf.h"
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/codec.h"
#include "stream/foreign/tree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct blob {
	const unsigned char *data;
	size_t len;
};

struct nnode {
	uint64_t id;
	size_t order;			/* in the file: the last of an id wins */
	struct blob name, libtype, file, body;
	uint64_t parent;		/* an id; 0: none */
	int32_t pid, tid, cpu;
	const struct lp_stack *stack;	/* made at its first sample */
};


enum stacks { BY_CHILDREN, BY_PARENT, BY_NODE_STACK };

struct nflx_dec {
	struct lp_dict *dict;
	double start, end;
	VEC(uint64_t) samples, cpus, pids, tids;
	VEC(double) times;		/* deltas, then absolute, seconds */
	VEC(struct nnode) nodes;	/* sorted by id */
	enum stacks stacks;
	size_t *parent, *depth, *path;	/* tree.h's */
	size_t next;
	VEC(const struct lp_frame *) frames;
	const char *open_why;
	char why[200];
};

/* The message in a blob or a field's bytes (none: an empty one). */
static struct lp_pb of(const unsigned char *data, size_t len)
{
	return lp_pb__of(data ? (const void *)data : "", len);
}

static double as_double(uint64_t bits)
{
	double x;
	memcpy(&x, &bits, sizeof(x));
	return x;
}

static bool is(const struct blob *b, const char *s)
{
	return b->len == strlen(s) && !memcmp(b->data, s, b->len);
}

static int32_t id32(uint64_t v)
{
	return v <= INT32_MAX ? (int32_t)v : LP_ID_NONE;
}

/* time_deltas: packed doubles, or one double a field. */
static bool add_deltas(struct nflx_dec *d, const struct lp_pb_field *f)
{
	if (f->wire == LP_PB_I64) {
		LP_PUSH(d->times, as_double(f->value));
		return true;
	}
	if (f->wire != LP_PB_LEN || f->len % 8)
		return false;
	for (size_t at = 0; at < f->len; at += 8) {
		uint64_t bits = 0;
		for (size_t k = 0; k < 8; k++)
			bits |= (uint64_t)f->data[at + k] << (8 * k);
		LP_PUSH(d->times, as_double(bits));
	}
	return true;
}

#define PUSHER(name, field)                                \
	static bool name(void *ctx, uint64_t v)            \
	{                                                  \
		struct nflx_dec *d = ctx;                  \
		LP_PUSH(d->field, v);                         \
		return true;                               \
	}
PUSHER(push_sample, samples)
PUSHER(push_cpu, cpus)
PUSHER(push_pid, pids)
PUSHER(push_tid, tids)

/* A map entry's key (1) and value (2). */
static int map_entry(const struct lp_pb_field *f, struct lp_pb_field *key, struct lp_pb_field *value)
{
	struct lp_pb m = of(f->data, f->len);
	struct lp_pb_field g;
	int rc;
	*key = (struct lp_pb_field){ .wire = LP_PB_VARINT };
	*value = (struct lp_pb_field){ .wire = LP_PB_LEN };
	while ((rc = lp_pb__next(&m, &g)) > 0)
		if (g.number == 1)
			*key = g;
		else if (g.number == 2)
			*value = g;
	return rc;
}

static int read_node(struct nflx_dec *d, const struct lp_pb_field *f)
{
	struct lp_pb_field key, value, g;
	if (map_entry(f, &key, &value) < 0 || key.wire != LP_PB_VARINT || value.wire != LP_PB_LEN)
		return -1;
	struct nnode n = { .id = key.value, .order = d->nodes.n, .pid = LP_ID_NONE,
			   .tid = LP_ID_NONE, .cpu = LP_ID_NONE,
			   .body = { value.data, value.len } };
	struct lp_pb m = of(value.data, value.len);
	int rc;
	while ((rc = lp_pb__next(&m, &g)) > 0) {
		struct blob b = { g.data, g.len };
		switch (g.number * 8 + g.wire) {
		case 1 * 8 + LP_PB_LEN: n.name = b; break;
		case 4 * 8 + LP_PB_LEN: n.libtype = b; break;
		case 11 * 8 + LP_PB_LEN: n.file = b; break;
		case 5 * 8 + LP_PB_VARINT: n.parent = g.value; break;
		case 6 * 8 + LP_PB_VARINT: n.pid = id32(g.value); break;
		case 7 * 8 + LP_PB_VARINT: n.tid = id32(g.value); break;
		case 8 * 8 + LP_PB_VARINT: n.cpu = id32(g.value); break;
		}
	}
	LP_PUSH(d->nodes, n);
	return rc;
}

/* params: the two that say where stacks are. */
static int read_param(struct nflx_dec *d, const struct lp_pb_field *f)
{
	struct lp_pb_field key, value;
	if (map_entry(f, &key, &value) < 0 || key.wire != LP_PB_LEN || value.wire != LP_PB_LEN)
		return -1;
	struct blob k = { key.data, key.len }, v = { value.data, value.len };
	if (is(&k, "has_node_stack") && is(&v, "true"))
		d->stacks = BY_NODE_STACK;
	else if (is(&k, "has_parent") && is(&v, "true") && d->stacks != BY_NODE_STACK)
		d->stacks = BY_PARENT;
	return 0;
}

static const char *read_profile(struct nflx_dec *d, const struct lp_doc *doc)
{
	struct lp_pb m = of(doc->data, doc->len);
	struct lp_pb_field f = { 0 };
	int rc = 0;
	bool ok = true;
	while (ok && (rc = lp_pb__next(&m, &f)) > 0) {
		switch (f.number) {
		case 1: case 2:
			ok = f.wire == LP_PB_I64;
			*(f.number == 1 ? &d->start : &d->end) = as_double(f.value);
			break;
		case 3: ok = lp_pb__varints(&f, push_sample, d); break;
		case 4: ok = add_deltas(d, &f); break;
		case 5: ok = f.wire == LP_PB_LEN && read_node(d, &f) == 0; break;
		case 8: ok = f.wire == LP_PB_LEN && read_param(d, &f) == 0; break;
		case 9: ok = lp_pb__varints(&f, push_cpu, d); break;
		case 10: ok = lp_pb__varints(&f, push_pid, d); break;
		case 11: ok = lp_pb__varints(&f, push_tid, d); break;
		}
	}
	if (!ok)
		return LP_WHY(d, "field %u is not as nflxprofile.proto says", f.number);
	if (rc < 0)
		return "not a well-formed protocol buffer";
	return NULL;
}

static int node_cmp(const void *a, const void *b)
{
	const struct nnode *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The node of id: its index + 1, or 0. */
static size_t find(const struct nflx_dec *d, uint64_t id)
{
	size_t lo = 0, hi = d->nodes.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->nodes.v[mid].id == id)
			return mid + 1;
		if (d->nodes.v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Sorted by id, a map's later entry of an id replacing the earlier. */
static void sort_nodes(struct nflx_dec *d)
{
	size_t n = 0;
	if (d->nodes.n)
		qsort(d->nodes.v, d->nodes.n, sizeof(*d->nodes.v), node_cmp);
	for (size_t i = 0; i < d->nodes.n; i++) {
		if (n && d->nodes.v[n - 1].id == d->nodes.v[i].id)
			n--;
		d->nodes.v[n++] = d->nodes.v[i];
	}
	d->nodes.n = n;
}

static const char *set_parent(struct nflx_dec *d, size_t child, size_t parent)
{
	if (d->parent[child - 1] && d->parent[child - 1] != parent)
		return LP_WHY(d, "node %llu has two parents", (unsigned long long)d->nodes.v[child - 1].id);
	d->parent[child - 1] = parent;
	return NULL;
}

/* A node's children (3) made their parent links. */
struct linking {
	struct nflx_dec *d;
	size_t node;
	const char *why;
};

static bool link_child(void *ctx, uint64_t id)
{
	struct linking *l = ctx;
	size_t child = find(l->d, id);
	if (!child) {
		l->why = LP_WHY(l->d, "node %llu: no child %llu",
			     (unsigned long long)l->d->nodes.v[l->node - 1].id, (unsigned long long)id);
		return false;
	}
	l->why = set_parent(l->d, child, l->node);
	return !l->why;
}

static const char *link_node(struct nflx_dec *d, size_t i)
{
	const struct nnode *n = &d->nodes.v[i];
	if (d->stacks == BY_PARENT) {
		size_t at = n->parent ? find(d, n->parent) : 0;
		if (n->parent && !at)
			return LP_WHY(d, "node %llu: no parent %llu", (unsigned long long)n->id,
				   (unsigned long long)n->parent);
		d->parent[i] = at;
		return NULL;
	}
	struct lp_pb m = of(n->body.data, n->body.len);
	struct lp_pb_field g;
	struct linking l = { d, i + 1, NULL };
	while (lp_pb__next(&m, &g) > 0)
		if (g.number == 3 && !lp_pb__varints(&g, link_child, &l))
			return l.why ? l.why : LP_WHY(d, "node %llu: its children are not well-formed",
						   (unsigned long long)n->id);
	return NULL;
}

static const char *link_tree(struct nflx_dec *d)
{
	size_t n = d->nodes.n ? d->nodes.n : 1;
	const char *why;
	d->parent = lp_calloc(n, sizeof(*d->parent));
	d->depth = lp_calloc(n, sizeof(*d->depth));
	d->path = lp_calloc(n, sizeof(*d->path));
	for (size_t i = 0; d->stacks != BY_NODE_STACK && i < d->nodes.n; i++)
		if ((why = link_node(d, i)))
			return why;
	size_t looped = lp_tree__depths(d->parent, d->nodes.n, d->depth);
	if (looped != SIZE_MAX)
		return LP_WHY(d, "node %llu is its own ancestor", (unsigned long long)d->nodes.v[looped].id);
	return NULL;
}

/* The samples' times, absolute, each checked. */
static const char *times(struct nflx_dec *d)
{
	if (d->times.n != d->samples.n)
		return LP_WHY(d, "%zu time_deltas for %zu samples", d->times.n, d->samples.n);
	if ((d->cpus.n && d->cpus.n != d->samples.n) || (d->pids.n && d->pids.n != d->samples.n) ||
	    (d->tids.n && d->tids.n != d->samples.n))
		return LP_WHY(d, "samples_cpu, samples_pid or samples_tid do not match the %zu samples",
			   d->samples.n);
	if (!(d->start >= 0 && d->start <= 9.2e9) || !isfinite(d->end))
		return LP_WHY(d, "start_time %g and end_time %g are no span of time", d->start, d->end);
	double t = d->start;
	for (size_t i = 0; i < d->samples.n; i++) {
		t += d->times.v[i];
		if (!(t >= 0 && t <= 9.2e9))
			return LP_WHY(d, "sample %zu: time %g s is not a time", i, t);
		d->times.v[i] = t;
	}
	return NULL;
}

static void *nflx_open(struct lp_dict *dict, const struct lp_doc *doc,
		       const struct lp_input_opts *opts)
{
	(void)opts;
	struct nflx_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	if (!(d->open_why = read_profile(d, doc))) {
		sort_nodes(d);
		if (!(d->open_why = link_tree(d)))
			d->open_why = times(d);
	}
	return d;
}

static const char *string(struct nflx_dec *d, const struct blob *b)
{
	return b->len ? lp_dict__string(d->dict, (const char *)b->data, b->len) : "";
}

/* A frame from a name, a libtype and a File message. */
static const struct lp_frame *frame(struct nflx_dec *d, const struct blob *name,
				    const struct blob *libtype, const struct blob *file)
{
	struct lp_pb m = of(file->data, file->len);
	struct lp_pb_field g;
	struct blob path = { NULL, 0 };
	uint64_t line = 0;
	while (lp_pb__next(&m, &g) > 0)
		if (g.number == 1 && g.wire == LP_PB_LEN)
			path = (struct blob){ g.data, g.len };
		else if (g.number == 2 && g.wire == LP_PB_VARINT)
			line = g.value;
	char srcline[4096] = "";
	if (path.len && line)
		snprintf(srcline, sizeof(srcline), "%.*s:%llu", (int)(path.len > 4000 ? 4000 : path.len),
			 (const char *)path.data, (unsigned long long)line);
	else if (path.len)
		snprintf(srcline, sizeof(srcline), "%.*s", (int)(path.len > 4000 ? 4000 : path.len),
			 (const char *)path.data);
	char kind = is(libtype, "kernel") ? LP_FRAME_KERNEL
		    : is(libtype, "jit")   ? LP_FRAME_JIT
		    : is(libtype, "inlined") ? LP_FRAME_INLINE
					     : LP_FRAME_USER;
	return lp_dict__named_frame(d->dict, kind, "", string(d, name), srcline);
}

/* A node's own stack (10): StackFrame {function_name, libtype, file}. */
static const char *node_stack(struct nflx_dec *d, const struct nnode *n)
{
	struct lp_pb m = of(n->body.data, n->body.len);
	struct lp_pb_field g, h;
	int rc;
	while ((rc = lp_pb__next(&m, &g)) > 0) {
		if (g.number != 10 || g.wire != LP_PB_LEN)
			continue;
		struct lp_pb sf = of(g.data, g.len);
		struct blob name = { NULL, 0 }, libtype = { NULL, 0 }, file = { NULL, 0 };
		while ((rc = lp_pb__next(&sf, &h)) > 0) {
			struct blob b = { h.data, h.len };
			if (h.wire == LP_PB_LEN && h.number == 1)
				name = b;
			else if (h.wire == LP_PB_LEN && h.number == 2)
				libtype = b;
			else if (h.wire == LP_PB_LEN && h.number == 3)
				file = b;
		}
		if (rc < 0)
			break;
		LP_PUSH(d->frames, frame(d, &name, &libtype, &file));
	}
	return rc < 0 ? LP_WHY(d, "node %llu: its stack is not well-formed", (unsigned long long)n->id)
		      : NULL;
}

static const char *stack_of(struct nflx_dec *d, size_t idx, const struct lp_stack **out)
{
	struct nnode *n = &d->nodes.v[idx];
	const char *why = NULL;
	d->frames.n = 0;
	if (!n->stack && d->stacks == BY_NODE_STACK) {
		why = node_stack(d, n);
	} else if (!n->stack) {
		lp_tree__path(d->parent, d->depth, idx, d->path);
		for (size_t k = 0; k < d->depth[idx]; k++) {
			const struct nnode *p = &d->nodes.v[d->path[k]];
			LP_PUSH(d->frames, frame(d, &p->name, &p->libtype, &p->file));
		}
	}
	if (!n->stack && !why)
		n->stack = lp_dict__stack(d->dict, d->frames.v, d->frames.n);
	*out = n->stack;
	return why;
}

static int nflx_next(void *dec, struct lp_record *rec, const char **why)
{
	struct nflx_dec *d = dec;
	if (d->open_why) {
		*why = d->open_why;
		return LP_CODEC_BAD;
	}
	if (d->next == d->samples.n)
		return 0;
	size_t i = d->next++, at = find(d, d->samples.v[i]);
	if (!at) {
		*why = LP_WHY(d, "sample %zu: no node %llu", i, (unsigned long long)d->samples.v[i]);
		return LP_CODEC_BAD;
	}
	const struct nnode *n = &d->nodes.v[at - 1];
	double t = d->times.v[i], next = i + 1 < d->samples.n ? d->times.v[i + 1] : d->end;
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){
		.time_ns = (int64_t)llround(t * 1e9),
		.pid = d->pids.n ? id32(d->pids.v[i]) : n->pid,
		.tid = d->tids.n ? id32(d->tids.v[i]) : n->tid,
		.cpu = d->cpus.n ? id32(d->cpus.v[i]) : n->cpu,
		.comm = d->stacks == BY_NODE_STACK ? string(d, &n->name) : "",
		.event = "wall",
		.weight = next > t ? (next - t) * 1e9 : 0,
	};
	if ((*why = stack_of(d, at - 1, &rec->sample.stack)))
		return LP_CODEC_BAD;
	return 1;
}

static void nflx_close(void *dec)
{
	struct nflx_dec *d = dec;
	free(d->samples.v);
	free(d->cpus.v);
	free(d->pids.v);
	free(d->tids.v);
	free(d->times.v);
	free(d->nodes.v);
	free(d->parent);
	free(d->depth);
	free(d->path);
	free(d->frames.v);
	free(d);
}

/* start_time and end_time (doubles, fields 1 and 2) first, as every
 * producer writes them, then fields of the types nflxprofile.proto gives
 * them up to the end, or to where the bytes stop being a protocol buffer
 * (a file cut short is nflxprofile's to say). */
static bool nflx_claims(const struct lp_doc *doc)
{
	if (doc->json || doc->len < 18 || doc->data[0] != 0x09 || doc->data[9] != 0x11)
		return false;
	struct lp_pb m = of(doc->data, doc->len);
	struct lp_pb_field f;
	while (lp_pb__next(&m, &f) > 0) {
		bool ok;
		switch (f.number) {
		case 1: case 2: ok = f.wire == LP_PB_I64; break;
		case 3: case 9: case 10: case 11: case 12:
			ok = f.wire == LP_PB_LEN || f.wire == LP_PB_VARINT;
			break;
		case 4: ok = f.wire == LP_PB_LEN || f.wire == LP_PB_I64; break;
		case 5: case 6: case 7: case 8: ok = f.wire == LP_PB_LEN; break;
		case 13: ok = f.wire == LP_PB_VARINT; break;
		default: ok = true;
		}
		if (!ok)
			return false;
	}
	return true;
}

const struct lp_codec lp_codec_nflx = {
	.name = "nflx", .format = LP_INPUT_NFLX, .claims = nflx_claims,
	.open_doc = nflx_open, .next_doc = nflx_next, .close = nflx_close,
};
