/* v8nodes.c - one V8 CPU profile as lp samples (v8nodes.h): its nodes
 * sorted by id, linked to their parents and checked for cycles once all
 * are in; its samples' times made absolute and checked before the first
 * one is read. */
#include "stream/foreign/v8nodes.h"
#include "stream/foreign/tree.h"
#include "base/util.h"
#include "model/record.h"
#include "stream/codec.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_US 9.2e15	/* the largest time in microseconds that is ns in int64 */

struct node {
	int64_t id;
	json_t *json;
	const struct lp_stack *stack;	/* made at its first sample */
};

struct lp_v8_profile {
	struct lp_dict *dict;
	struct node *nodes;
	size_t *parent, *depth;		/* tree.h's, by node index */
	size_t nnodes, nodes_cap;
	size_t *by_id;			/* node indexes sorted by id */
	int64_t *samples;		/* node ids */
	double *times;			/* deltas, then (linked) absolute, in us */
	size_t nsamples, samples_cap, next;
	bool has_end;
	bool tree;			/* the oldest form: parents known */
	double end_us;
	const struct lp_frame **frames;
	size_t frames_cap;
	size_t *path;			/* a node's path from the root */
	char why[200];
};

/* A JSON number that is an integer in int64 (1.0 is, 1.5 and 1e300 not). */
static bool id_of(json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return true;
	}
	double d = json_is_real(v) ? json_real_value(v) : NAN;
	if (!(d >= -9.2e18 && d <= 9.2e18) || d != floor(d))
		return false;
	*out = (int64_t)d;
	return true;
}

struct lp_v8_profile *lp_v8__new(struct lp_dict *dict)
{
	struct lp_v8_profile *p = lp_calloc(1, sizeof(*p));
	p->dict = dict;
	return p;
}

void lp_v8__free(struct lp_v8_profile *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->parent);
	free(p->depth);
	free(p->by_id);
	free(p->samples);
	free(p->times);
	free(p->frames);
	free(p->path);
	free(p);
}

static size_t add_node(struct lp_v8_profile *p, json_t *n, int64_t id, size_t parent)
{
	if (p->nnodes == p->nodes_cap) {
		p->nodes_cap = p->nodes_cap ? 2 * p->nodes_cap : 256;
		p->nodes = lp_reallocarray(p->nodes, p->nodes_cap, sizeof(*p->nodes));
		p->parent = lp_reallocarray(p->parent, p->nodes_cap, sizeof(*p->parent));
	}
	p->nodes[p->nnodes] = (struct node){ .id = id, .json = n };
	p->parent[p->nnodes] = parent;
	return ++p->nnodes;
}

const char *lp_v8__nodes(struct lp_v8_profile *p, json_t *nodes)
{
	size_t i;
	json_t *n;
	if (!json_is_array(nodes))
		return "its nodes are no list";
	json_array_foreach(nodes, i, n) {
		int64_t id;
		if (!json_is_object(n) || !id_of(json_object_get(n, "id"), &id))
			return LP_WHY(p, "node %zu has no id", i);
		add_node(p, n, id, 0);
	}
	return NULL;
}

static void tree_node(struct lp_v8_profile *p, json_t *n, size_t parent)
{
	size_t i;
	json_t *c;
	int64_t id;
	if (!json_is_object(n))
		return;
	if (!id_of(json_object_get(n, "id"), &id))
		id = INT64_MIN + (int64_t)p->nnodes;	/* none: its own, that no sample names */
	size_t self = add_node(p, n, id, parent);
	/* jansson's nesting limit (2048) bounds the recursion */
	json_array_foreach(json_object_get(n, "children"), i, c)
		tree_node(p, c, self);
}

void lp_v8__tree(struct lp_v8_profile *p, json_t *head)
{
	p->tree = true;
	tree_node(p, head, 0);
}

const char *lp_v8__samples(struct lp_v8_profile *p, json_t *samples, json_t *deltas)
{
	if (!json_is_array(samples))
		return "no samples";
	size_t n = json_array_size(samples);
	if (deltas && (!json_is_array(deltas) || json_array_size(deltas) != n))
		return LP_WHY(p, "%zu timeDeltas for %zu samples", json_array_size(deltas), n);
	if (p->nsamples + n > p->samples_cap) {
		p->samples_cap = p->nsamples + n > 2 * p->samples_cap ? p->nsamples + n
								      : 2 * p->samples_cap;
		p->samples = lp_reallocarray(p->samples, p->samples_cap, sizeof(*p->samples));
		p->times = lp_reallocarray(p->times, p->samples_cap, sizeof(*p->times));
	}
	for (size_t i = 0; i < n; i++, p->nsamples++) {
		json_t *d = deltas ? json_array_get(deltas, i) : NULL;
		if (!id_of(json_array_get(samples, i), &p->samples[p->nsamples]))
			return LP_WHY(p, "sample %zu is no node id", p->nsamples);
		if (d && !json_is_number(d))
			return LP_WHY(p, "sample %zu: its timeDelta is no number", p->nsamples);
		p->times[p->nsamples] = d ? json_number_value(d) : 0;
	}
	return NULL;
}

static int by_id_cmp(const void *a, const void *b, void *ctx)
{
	const struct lp_v8_profile *p = ctx;
	int64_t x = p->nodes[*(const size_t *)a].id, y = p->nodes[*(const size_t *)b].id;
	return (x > y) - (x < y);
}

/* The node with id: its index + 1, or 0. */
static size_t find(const struct lp_v8_profile *p, int64_t id)
{
	size_t lo = 0, hi = p->nnodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t m = p->nodes[p->by_id[mid]].id;
		if (m == id)
			return p->by_id[mid] + 1;
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static const char *set_parent(struct lp_v8_profile *p, size_t child, size_t parent)
{
	if (p->parent[child - 1] && p->parent[child - 1] != parent)
		return LP_WHY(p, "node %lld has two parents", (long long)p->nodes[child - 1].id);
	p->parent[child - 1] = parent;
	return NULL;
}

/* Parents from the nodes' "parent" ids and "children" lists. */
static const char *link_parents(struct lp_v8_profile *p)
{
	for (size_t i = 0; i < p->nnodes; i++) {
		json_t *n = p->nodes[i].json, *c;
		json_t *parent = json_object_get(n, "parent");
		int64_t id;
		size_t k, at;
		const char *why;
		if (parent) {
			if (!id_of(parent, &id) || !(at = find(p, id)))
				return LP_WHY(p, "node %lld: no parent node %s", (long long)p->nodes[i].id,
					   json_is_number(parent) ? "of that id" : "id");
			if ((why = set_parent(p, i + 1, at)))
				return why;
		}
		json_array_foreach(json_object_get(n, "children"), k, c) {
			if (!id_of(c, &id) || !(at = find(p, id)))
				return LP_WHY(p, "node %lld: no child %lld", (long long)p->nodes[i].id,
					   json_is_number(c) ? (long long)json_number_value(c) : -1LL);
			if ((why = set_parent(p, at, i + 1)))
				return why;
		}
	}
	return NULL;
}

/* Every node's depth; a loop of parents named. */
static const char *depths(struct lp_v8_profile *p)
{
	p->depth = lp_reallocarray(p->depth, p->nnodes ? p->nnodes : 1, sizeof(*p->depth));
	p->path = lp_reallocarray(p->path, p->nnodes ? p->nnodes : 1, sizeof(*p->path));
	size_t looped = lp_tree__depths(p->parent, p->nnodes, p->depth);
	if (looped != SIZE_MAX)
		return LP_WHY(p, "node %lld is its own ancestor", (long long)p->nodes[looped].id);
	return NULL;
}

const char *lp_v8__link(struct lp_v8_profile *p, double start_us, bool has_end, double end_us)
{
	const char *why;
	p->by_id = lp_reallocarray(p->by_id, p->nnodes ? p->nnodes : 1, sizeof(*p->by_id));
	for (size_t i = 0; i < p->nnodes; i++)
		p->by_id[i] = i;
	qsort_r(p->by_id, p->nnodes, sizeof(*p->by_id), by_id_cmp, p);
	for (size_t i = 1; i < p->nnodes; i++)
		if (p->nodes[p->by_id[i]].id == p->nodes[p->by_id[i - 1]].id)
			return LP_WHY(p, "two nodes with id %lld", (long long)p->nodes[p->by_id[i]].id);
	if ((!p->tree && (why = link_parents(p))) || (why = depths(p)))
		return why;
	if (!(start_us >= 0) || start_us > MAX_US || (has_end && !(end_us >= start_us && end_us <= MAX_US)))
		return LP_WHY(p, "startTime %.0f and endTime %.0f are no span of time", start_us,
			   has_end ? end_us : start_us);
	p->has_end = has_end;
	p->end_us = end_us;
	double t = start_us;
	for (size_t i = 0; i < p->nsamples; i++) {
		if (!find(p, p->samples[i]))
			return LP_WHY(p, "sample %zu: no node %lld", i, (long long)p->samples[i]);
		t += p->times[i];
		if (!(t >= 0) || t > MAX_US)
			return LP_WHY(p, "sample %zu: time %.0f us is not a time", i, t);
		p->times[i] = t;
	}
	return NULL;
}

static const struct lp_frame *frame_of(struct lp_v8_profile *p, const struct node *n)
{
	json_t *cf = json_object_get(n->json, "callFrame");
	if (!json_is_object(cf))
		cf = n->json;	/* the oldest form: the frame's keys in the node */
	const char *name = json_string_value(json_object_get(cf, "functionName"));
	const char *url = json_string_value(json_object_get(cf, "url"));
	json_t *line = json_object_get(cf, "lineNumber");
	if (!name || !*name)
		name = "(anonymous)";
	if (!url)
		url = "";
	char srcline[4096] = "";
	if (*url && json_is_number(line) && json_number_value(line) >= 0 &&
	    json_number_value(line) < 1e9)
		snprintf(srcline, sizeof(srcline), "%s:%lld", url,
			 (long long)json_number_value(line) + 1);
	/* trace events' nodes say "codeType": "JS" where a script has no URL */
	const char *type = json_string_value(json_object_get(cf, "codeType"));
	bool js = *url || (type && !strcmp(type, "JS"));
	return lp_dict__frame(p->dict, js ? LP_FRAME_JIT : LP_FRAME_USER, 0, url, name, srcline);
}

/* The stack of node idx: its path from the root, the root left out. */
static const struct lp_stack *stack_of(struct lp_v8_profile *p, size_t idx)
{
	struct node *n = &p->nodes[idx];
	size_t depth = p->depth[idx];
	if (n->stack)
		return n->stack;
	if (depth > p->frames_cap) {
		p->frames_cap = depth;
		p->frames = lp_reallocarray(p->frames, depth, sizeof(*p->frames));
	}
	lp_tree__path(p->parent, p->depth, idx, p->path);
	for (size_t k = 1; k < depth; k++)
		p->frames[k - 1] = frame_of(p, &p->nodes[p->path[k]]);
	n->stack = lp_dict__stack(p->dict, p->frames, depth - 1);
	return n->stack;
}

int lp_v8__next(struct lp_v8_profile *p, struct lp_sample *s, const char **why)
{
	(void)why;
	if (p->next == p->nsamples)
		return 0;
	size_t i = p->next++;
	double t = p->times[i];
	/* the last: to the end, or as long as the gap before it */
	double next = i + 1 < p->nsamples ? p->times[i + 1]
		      : p->has_end	   ? p->end_us
		      : i		   ? 2 * t - p->times[i - 1]
					   : t;
	s->time_ns = (int64_t)llround(t * 1000);
	s->event = "wall";
	/* V8 may write a sample before the one it follows: no weight then */
	s->weight = next > t ? (next - t) * 1000 : 0;
	s->stack = stack_of(p, find(p, p->samples[i]) - 1);
	return 1;
}
