/* gecko.c - reads the Firefox Profiler's files as lp samples
 * (formats/foreign.md): the Gecko format Firefox writes (meta, libs,
 * threads whose samples, stackTable and frameTable are {schema, data}
 * tables over the thread's stringTable, and the child processes' profiles
 * in "processes"), and the processed format the profiler's front end and
 * samply write (meta.preprocessedProfileVersion; tables as struct of
 * arrays, in each thread or, from version 60, in "shared" with the
 * stringArray; stackTable "prefix" or, from 66, "prefixOffset"; funcTable
 * "fileName" or, from 58, "source" into shared.sources; the lib of a frame
 * from its resource or, from 70, frameTable "lib").  The mapping:
 *   - each sample of each thread is an lp sample, but those with a null
 *     stack (the profiler leaves them out of its call tree too);
 *   - its time: the sample's milliseconds since meta.startTime, from the
 *     time or the timeDeltas column, made nanoseconds and added to the
 *     profile's start: startTimeAsClockMonotonicNanosecondsSinceBoot when
 *     meta has it (CLOCK_MONOTONIC: samply on Linux, Firefox), else
 *     startTime (milliseconds of the Unix epoch: CLOCK_REALTIME);
 *   - its weight: the weight column (1 when none) times meta.interval for
 *     weightType "samples" (both the Gecko profiler and samply sample every
 *     thread every interval, sleeping ones too: the event is "wall"); a
 *     duration for "tracing-ms" ("wall"); a count for "bytes" ("bytes");
 *   - its thread: the thread's pid and tid (numbers, or strings of
 *     digits), its comm the thread's name (the process's when it has none);
 *   - its stack: the stackTable's prefix chain from the root; a frame is
 *     its function's name, its module the lib's path (its name when it has
 *     none), for JavaScript the script's URL, else the resource's name; its
 *     line the function's file and the frame's line; 'j' for JavaScript,
 *     'i' for an inlined frame (inlineDepth above 0), 'k' for the category
 *     "Kernel" (samply's), 'u' else.  Gecko's frames are location strings,
 *     read as the profiler reads them (gecko-location.c).
 * Lost: markers, counters, allocations, the CPU time between samples
 * (threadCPUDelta), frames' addresses (an unsymbolicated frame keeps its
 * hex name). */
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/codec.h"
#include "stream/foreign/gecko-location.h"
#include "stream/foreign/tree.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A table: a struct of arrays (processed), or {schema, data} rows (Gecko). */
struct gtable {
	json_t *json, *rows;
	size_t len;
};

/* One column of a table. */
struct gcol {
	json_t *arr;		/* struct of arrays: the column */
	json_t *rows;		/* rows: the data, idx the column's place */
	size_t idx;
};

/* What a thread's stacks index into: its own or the profile's shared. */
struct tables {
	bool gecko;
	struct gtable stacks, frames, funcs, resources, sources;
	json_t *strings, *libs, *categories;
	size_t *parent, *depth, *path;	/* tree.h's: the stacks' */
	const struct lp_frame **frame_cache;
	const struct lp_stack **stack_cache;
};

/* A thread, and the profile (the Gecko one of its process) it is in. */
struct gthread {
	json_t *json, *process;
	int64_t base_ns;		/* its process's meta.startTime as the clock says */
};

struct gecko_dec {
	struct lp_dict *dict;
	json_t *root;
	json_t *kept;			/* child processes parsed from text */
	bool gecko;
	struct gthread *threads;
	size_t nthreads, threads_cap;
	struct tables shared;		/* processed, from version 60 */
	bool has_shared;
	double interval_ms;
	/* the thread being read */
	size_t thread, sample;
	struct tables own;
	struct tables *t;
	struct gtable samples;
	struct gcol stack, time, delta, weight;
	double t_ms, scale;
	const char *event, *comm;
	int32_t pid, tid;
	const struct lp_frame **frames;
	size_t frames_cap;
	const char *open_why;
	char why[300];
};

/* --- tables ------------------------------------------------------------- */

/* The longest list among an object's values. */
static size_t longest(json_t *o)
{
	const char *key;
	json_t *v;
	size_t n = 0;
	json_object_foreach(o, key, v)
		if (json_array_size(v) > n)
			n = json_array_size(v);
	return n;
}

/* Table key of object o: NULL, or why it is none.  A struct of arrays
 * has its "length", which a column holds. */
static const char *table_of(struct gecko_dec *d, json_t *o, const char *key, struct gtable *t)
{
	json_t *j = json_object_get(o, key);
	*t = (struct gtable){ .json = j };
	json_t *data = json_object_get(j, "data"), *len = json_object_get(j, "length");
	if (json_is_object(json_object_get(j, "schema")) && json_is_array(data)) {
		t->rows = data;
		t->len = json_array_size(data);
	} else if (json_is_integer(len) && json_integer_value(len) >= 0) {
		t->len = (size_t)json_integer_value(len);
		if (t->len > longest(j))
			return LP_WHY(d, "%s: its length %zu is more than its columns hold", key, t->len);
	} else {
		return LP_WHY(d, "no %s", key);
	}
	return NULL;
}

static struct gcol col(const struct gtable *t, const char *key)
{
	struct gcol c = { 0 };
	if (t->rows) {
		json_t *idx = json_object_get(json_object_get(t->json, "schema"), key);
		if (json_is_integer(idx) && json_integer_value(idx) >= 0) {
			c.rows = t->rows;
			c.idx = (size_t)json_integer_value(idx);
		}
	} else if (json_is_array(json_object_get(t->json, key))) {
		c.arr = json_object_get(t->json, key);
	}
	return c;
}

static bool has(const struct gcol *c)
{
	return c->arr || c->rows;
}

/* Row i of a column: NULL when there is none ("fieldIndex in entry"). */
static json_t *at(const struct gcol *c, size_t i)
{
	return c->rows ? json_array_get(json_array_get(c->rows, i), c->idx) : json_array_get(c->arr, i);
}

static json_t *cell(const struct gtable *t, const char *key, size_t i)
{
	struct gcol c = col(t, key);
	return at(&c, i);
}

/* v an index below n (an integer, 1.0 too). */
static bool index_of(json_t *v, size_t n, size_t *out)
{
	double x = json_number_value(v);
	if (!json_is_number(v) || !(x >= 0 && x < (double)n) || x != floor(x))
		return false;
	*out = (size_t)x;
	return true;
}

/* String idx of the table, or NULL. */
static const char *string_at(const struct tables *t, json_t *idx)
{
	size_t i;
	return index_of(idx, json_array_size(t->strings), &i)
		       ? json_string_value(json_array_get(t->strings, i)) : NULL;
}

static void tables_free(struct tables *t)
{
	free(t->parent);
	free(t->depth);
	free(t->path);
	free(t->frame_cache);
	free(t->stack_cache);
	memset(t, 0, sizeof(*t));
}

/* The stacks' parents from "prefix" (an index or null) or "prefixOffset"
 * (0 for a root, else back that far). */
static const char *link_stacks(struct gecko_dec *d, struct tables *t)
{
	struct gcol frame = col(&t->stacks, "frame"), prefix = col(&t->stacks, "prefix");
	struct gcol offset = col(&t->stacks, "prefixOffset");
	size_t n = t->stacks.len, f, p;
	if (!has(&frame) || (!has(&prefix) && !has(&offset)))
		return "its stackTable has no frame or prefix column";
	for (size_t i = 0; i < n; i++) {
		json_t *pv = has(&prefix) ? at(&prefix, i) : at(&offset, i);
		if (!index_of(at(&frame, i), t->frames.len, &f))
			return LP_WHY(d, "stack %zu: no frame %.0f", i, json_number_value(at(&frame, i)));
		if (has(&prefix) && json_is_null(pv))
			t->parent[i] = 0;
		else if (has(&prefix) && index_of(pv, n, &p))
			t->parent[i] = p + 1;
		else if (!has(&prefix) && index_of(pv, i + 1, &p))
			t->parent[i] = p ? i - p + 1 : 0;
		else
			return LP_WHY(d, "stack %zu: no prefix stack %.0f", i, json_number_value(pv));
	}
	size_t looped = lp_tree__depths(t->parent, n, t->depth);
	if (looped != SIZE_MAX)
		return LP_WHY(d, "stack %zu is its own ancestor", looped);
	return NULL;
}

/* The tables of container c (a thread, or the profile's "shared"). */
static const char *tables_of(struct gecko_dec *d, struct tables *t, json_t *c, json_t *strings,
			     json_t *libs)
{
	json_t *shared = json_object_get(d->root, "shared");
	t->gecko = d->gecko;
	t->strings = strings;
	t->libs = libs;
	t->categories = json_object_get(json_object_get(d->root, "meta"), "categories");
	const char *why;
	if ((why = table_of(d, c, "stackTable", &t->stacks)) ||
	    (why = table_of(d, c, "frameTable", &t->frames)) ||
	    (!d->gecko && (why = table_of(d, c, "funcTable", &t->funcs))))
		return why;
	if (!json_is_array(strings))
		return d->gecko ? "no stringTable" : "no stringArray";
	if (table_of(d, c, "resourceTable", &t->resources))
		t->resources.len = 0;	/* optional */
	if (table_of(d, shared, "sources", &t->sources))
		t->sources.len = 0;
	size_t n = t->stacks.len ? t->stacks.len : 1, nf = t->frames.len ? t->frames.len : 1;
	t->parent = lp_calloc(n, sizeof(*t->parent));
	t->depth = lp_calloc(n, sizeof(*t->depth));
	t->path = lp_calloc(n, sizeof(*t->path));
	t->stack_cache = lp_calloc(n, sizeof(*t->stack_cache));
	t->frame_cache = lp_calloc(nf, sizeof(*t->frame_cache));
	return link_stacks(d, t);
}

/* --- frames ------------------------------------------------------------- */

static const char *lib_module(json_t *lib)
{
	const char *path = json_string_value(json_object_get(lib, "path"));
	const char *name = json_string_value(json_object_get(lib, "name"));
	return path && *path ? path : name ? name : "";
}

/* Whether category c of meta.categories is samply's "Kernel". */
static bool kernel_category(const struct tables *t, json_t *c)
{
	size_t i;
	const char *name;
	return index_of(c, json_array_size(t->categories), &i) &&
	       (name = json_string_value(json_object_get(json_array_get(t->categories, i), "name"))) &&
	       !strcmp(name, "Kernel");
}

/* line: the frame's line, or the location's (0: none). */
static const struct lp_frame *make_frame(struct gecko_dec *d, char kind, const char *module,
					 const char *name, const char *file, json_t *line, long lline)
{
	char srcline[4096] = "";
	double l = json_is_number(line) ? json_number_value(line) : (double)lline;
	if (file && *file && l > 0 && l < 1e9)
		snprintf(srcline, sizeof(srcline), "%s:%.0f", file, l);
	else if (file)
		snprintf(srcline, sizeof(srcline), "%s", file);
	return lp_dict__named_frame(d->dict, kind, module ? module : "", name, srcline);
}

/* A processed frame's function's file: "fileName" (a string index), or
 * "source" into shared.sources' "filename". */
static const char *func_file(struct gecko_dec *d, struct tables *t, size_t func)
{
	json_t *file = cell(&t->funcs, "fileName", func), *src = cell(&t->funcs, "source", func);
	size_t s;
	if (json_is_number(file))
		return string_at(t, file);
	if (index_of(src, t->sources.len, &s))
		return string_at(t, cell(&t->sources, "filename", s));
	return NULL;
}

/* The lib of processed frame f (func's resource's before version 70). */
static json_t *frame_lib(struct tables *t, size_t f, size_t func)
{
	json_t *lib = cell(&t->frames, "lib", f);
	size_t res, i;
	if (!lib && index_of(cell(&t->funcs, "resource", func), t->resources.len, &res))
		lib = cell(&t->resources, "lib", res);
	return index_of(lib, json_array_size(t->libs), &i) ? json_array_get(t->libs, i) : NULL;
}

static const struct lp_frame *processed_frame(struct gecko_dec *d, struct tables *t, size_t f,
					      const char **why)
{
	size_t func, res;
	const char *name;
	if (!index_of(cell(&t->frames, "func", f), t->funcs.len, &func)) {
		*why = LP_WHY(d, "frame %zu: no func %.0f", f, json_number_value(cell(&t->frames, "func", f)));
		return NULL;
	}
	if (!(name = string_at(t, cell(&t->funcs, "name", func)))) {
		*why = LP_WHY(d, "func %zu: its name is no string of the table", func);
		return NULL;
	}
	bool js = json_is_true(cell(&t->funcs, "isJS", func));
	const char *file = func_file(d, t, func), *module = NULL;
	json_t *lib = frame_lib(t, f, func), *line = cell(&t->frames, "line", f);
	if (!json_is_number(line))
		line = cell(&t->funcs, "lineNumber", func);
	if (lib)
		module = lib_module(lib);
	else if (js)
		module = file;
	else if (index_of(cell(&t->funcs, "resource", func), t->resources.len, &res))
		module = string_at(t, cell(&t->resources, "name", res));
	char kind = js ? LP_FRAME_JIT : LP_FRAME_USER;
	if (json_number_value(cell(&t->frames, "inlineDepth", f)) > 0)
		kind = LP_FRAME_INLINE;
	else if (kernel_category(t, cell(&t->frames, "category", f)))
		kind = LP_FRAME_KERNEL;
	return make_frame(d, kind, module, name, file, line, 0);
}

static const struct lp_frame *gecko_frame(struct gecko_dec *d, struct tables *t, size_t f,
					  const char **why)
{
	const char *loc = string_at(t, cell(&t->frames, "location", f));
	struct lp_gecko_location l;
	char buf[4096];
	if (!loc) {
		*why = LP_WHY(d, "frame %zu: its location is no string of the table", f);
		return NULL;
	}
	lp_gecko__location(loc, t->libs, &l, buf, sizeof(buf));
	char kind = l.js ? LP_FRAME_JIT
		    : kernel_category(t, cell(&t->frames, "category", f)) ? LP_FRAME_KERNEL
									    : LP_FRAME_USER;
	return make_frame(d, kind, l.module, l.name, l.file, cell(&t->frames, "line", f), l.line);
}

static const struct lp_frame *frame_of(struct gecko_dec *d, struct tables *t, size_t f,
				       const char **why)
{
	if (!t->frame_cache[f])
		t->frame_cache[f] = t->gecko ? gecko_frame(d, t, f, why) : processed_frame(d, t, f, why);
	return t->frame_cache[f];
}

/* The stack of stack index s: the prefix chain from its root. */
static const struct lp_stack *stack_of(struct gecko_dec *d, struct tables *t, size_t s,
				       const char **why)
{
	size_t depth = t->depth[s], f;
	if (t->stack_cache[s])
		return t->stack_cache[s];
	if (depth > d->frames_cap) {
		d->frames_cap = depth;
		d->frames = lp_reallocarray(d->frames, depth, sizeof(*d->frames));
	}
	lp_tree__path(t->parent, t->depth, s, t->path);
	for (size_t k = 0; k < depth; k++) {
		index_of(cell(&t->stacks, "frame", t->path[k]), t->frames.len, &f);	/* checked */
		if (!(d->frames[k] = frame_of(d, t, f, why)))
			return NULL;
	}
	return t->stack_cache[s] = lp_dict__stack(d->dict, d->frames, depth);
}

/* --- threads ------------------------------------------------------------ */

/* A pid or tid: a number, or a string of digits; else not known. */
static int32_t id32(json_t *v)
{
	const char *s = json_string_value(v);
	char *end;
	double x = json_is_number(v) ? json_number_value(v) : s && *s ? strtod(s, &end) : -1;
	if (s && *s && (*end || strspn(s, "0123456789") != strlen(s)))
		return LP_ID_NONE;
	return x >= 0 && x <= INT32_MAX && x == floor(x) ? (int32_t)x : LP_ID_NONE;
}

/* Milliseconds made nanoseconds, exactly for whole ones; -1: no time. */
static int64_t ms_to_ns(double ms)
{
	if (!(ms >= 0 && ms < 9.2e12))
		return -1;
	double whole = floor(ms);
	return (int64_t)whole * 1000000 + llround((ms - whole) * 1e6);
}

/* The start of a process's profile in the stream's clock, nanoseconds:
 * the main profile's clock, a child process's own start in it or its
 * offset from the main one's in startTime; -1: none. */
static int64_t base_ns(struct gecko_dec *d, json_t *process)
{
	const char *key = "startTimeAsClockMonotonicNanosecondsSinceBoot";
	json_t *main = json_object_get(d->root, "meta"), *meta = json_object_get(process, "meta");
	json_t *mono = json_object_get(main, key), *own = json_object_get(meta, key);
	json_t *start = json_object_get(meta, "startTime");
	double offset = json_number_value(start) - json_number_value(json_object_get(main, "startTime"));
	if (!json_is_number(start))
		return -1;
	if (json_is_integer(own) && json_is_integer(mono))
		return json_integer_value(own) >= 0 ? (int64_t)json_integer_value(own) : -1;
	if (!json_is_number(mono))
		return ms_to_ns(json_number_value(start));
	double ns = json_number_value(mono) + offset * 1e6;
	if (!(ns >= 0 && ns < 9.2e18))
		return -1;
	return json_is_integer(mono) ? (int64_t)json_integer_value(mono) + llround(offset * 1e6)
				     : (int64_t)llround(ns);
}

static void add_thread(struct gecko_dec *d, json_t *thread, json_t *process)
{
	if (d->nthreads == d->threads_cap) {
		d->threads_cap = d->threads_cap ? 2 * d->threads_cap : 16;
		d->threads = lp_reallocarray(d->threads, d->threads_cap, sizeof(*d->threads));
	}
	d->threads[d->nthreads++] = (struct gthread){ thread, process, base_ns(d, process) };
}

/* A Gecko profile's threads, then its child processes', depth first. */
static void add_process(struct gecko_dec *d, json_t *process)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(process, "threads"), i, v) {
		json_t *sub = json_is_string(v) ? json_loads(json_string_value(v), 0, NULL) : NULL;
		if (json_is_object(sub)) {	/* before version 5: a child process as text */
			json_array_append_new(d->kept, sub);
			add_process(d, sub);
		} else {
			json_decref(sub);
			add_thread(d, v, process);
		}
	}
	json_array_foreach(json_object_get(process, "processes"), i, v)
		add_process(d, v);	/* jansson's nesting limit bounds the recursion */
}

/* The sample columns, weight and thread of thread d->thread. */
static const char *enter_samples(struct gecko_dec *d, json_t *th)
{
	const char *type = json_string_value(json_object_get(json_object_get(th, "samples"),
							     "weightType"));
	const char *why = table_of(d, th, "samples", &d->samples);
	if (why)
		return why;
	d->stack = col(&d->samples, "stack");
	d->time = col(&d->samples, "time");
	d->delta = col(&d->samples, "timeDeltas");
	d->weight = col(&d->samples, "weight");
	if (!has(&d->stack) || (!has(&d->time) && !has(&d->delta)))
		return "its samples have no stack or no time column";
	d->event = "wall";
	d->scale = d->interval_ms * 1e6;
	if (type && !strcmp(type, "tracing-ms")) {
		d->scale = 1e6;
	} else if (type && !strcmp(type, "bytes")) {
		d->event = "bytes";
		d->scale = 1;
	} else if (type && strcmp(type, "samples")) {
		return LP_WHY(d, "weightType '%.40s' is not samples, tracing-ms or bytes", type);
	}
	return NULL;
}

static const char *enter_thread(struct gecko_dec *d)
{
	struct gthread *g = &d->threads[d->thread];
	json_t *th = g->json;
	if (!json_is_object(th))
		return "no thread object";
	const char *why, *name = json_string_value(json_object_get(th, "name"));
	const char *pname = json_string_value(json_object_get(th, "processName"));
	if (g->base_ns < 0)
		return "meta.startTime is not a time";
	if ((why = enter_samples(d, th)))
		return why;
	d->sample = 0;
	d->t_ms = 0;
	d->pid = id32(json_object_get(th, "pid"));
	d->tid = id32(json_object_get(th, "tid"));
	name = name && *name ? name : pname ? pname : "";
	d->comm = lp_dict__string(d->dict, name, strlen(name));
	tables_free(&d->own);
	d->t = &d->shared;
	if (d->has_shared)
		return NULL;
	d->t = &d->own;
	/* processed, versions 56 to 59: the strings shared, the tables not */
	json_t *libs = json_object_get(th, "libs");
	json_t *strings = json_object_get(json_object_get(d->root, "shared"), "stringArray");
	if (d->gecko || !json_is_array(strings))
		strings = json_object_get(th, d->gecko ? "stringTable" : "stringArray");
	return tables_of(d, &d->own, th, strings,
			 json_is_array(libs) ? libs : json_object_get(g->process, "libs"));
}

/* --- the codec ---------------------------------------------------------- */

/* The profile: the document, or the old DevTools panel's {"profile": ...}. */
static json_t *profile_of(json_t *j)
{
	json_t *p = json_object_get(j, "profile");
	return json_is_object(p) && json_is_object(json_object_get(p, "meta")) ? p : j;
}

static bool is_processed(json_t *root)
{
	json_t *meta = json_object_get(root, "meta");
	return json_is_number(json_object_get(meta, "preprocessedProfileVersion")) ||
	       json_is_array(json_object_get(json_array_get(json_object_get(root, "threads"), 0),
					     "stringArray"));
}

static void *gecko_open(struct lp_dict *dict, const struct lp_doc *doc,
			const struct lp_input_opts *opts)
{
	(void)opts;
	struct gecko_dec *d = lp_calloc(1, sizeof(*d));
	json_t *shared, *meta, *interval;
	d->dict = dict;
	d->kept = json_array();
	d->root = profile_of(doc->json);
	d->gecko = !is_processed(d->root);
	meta = json_object_get(d->root, "meta");
	shared = json_object_get(d->root, "shared");
	interval = json_object_get(meta, "interval");
	d->interval_ms = json_number_value(interval);
	d->has_shared = !d->gecko && json_is_object(json_object_get(shared, "stackTable"));
	if (!json_is_object(meta) || !json_is_array(json_object_get(d->root, "threads")))
		d->open_why = "no meta or threads";
	else if (!json_is_number(interval) || !(d->interval_ms > 0 && d->interval_ms < 1e9))
		d->open_why = "meta.interval is no interval";
	else if (d->has_shared)
		d->open_why = tables_of(d, &d->shared, shared, json_object_get(shared, "stringArray"),
					json_object_get(d->root, "libs"));
	if (d->open_why)
		return d;
	add_process(d, d->root);
	if (d->nthreads && (d->open_why = enter_thread(d)))
		d->open_why = LP_WHY(d, "thread 0: %s", d->open_why);
	return d;
}

/* Sample d->sample of the thread, into rec: 1, 0 (no stack: none), -1. */
static int read_sample(struct gecko_dec *d, struct lp_record *rec, const char **why)
{
	size_t i = d->sample, s;
	json_t *sv = at(&d->stack, i), *w = at(&d->weight, i);
	json_t *tv = has(&d->time) ? at(&d->time, i) : at(&d->delta, i);
	if (!json_is_number(tv)) {
		*why = "no time";
		return -1;
	}
	d->t_ms = has(&d->time) ? json_number_value(tv) : d->t_ms + json_number_value(tv);
	if (json_is_null(sv) || !sv)
		return 0;
	if (!index_of(sv, d->t->stacks.len, &s)) {
		*why = LP_WHY(d, "no stack %.0f", json_number_value(sv));
		return -1;
	}
	double weight = w && !json_is_null(w) ? json_number_value(w) : 1;
	double ns = (double)d->threads[d->thread].base_ns + d->t_ms * 1e6;
	if (!(ns >= 0 && ns < 9.2e18)) {
		*why = LP_WHY(d, "time %g ms from the start is no time of the clock", d->t_ms);
		return -1;
	}
	if (!json_is_number(w) && w && !json_is_null(w)) {
		*why = "its weight is no number";
		return -1;
	}
	if (!(weight >= 0 && weight * d->scale < 1e300)) {
		*why = LP_WHY(d, "weight %g is not a weight (lp weights are not negative)", weight);
		return -1;
	}
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){
		.time_ns = d->threads[d->thread].base_ns + (int64_t)llround(d->t_ms * 1e6),
		.pid = d->pid, .tid = d->tid, .cpu = LP_ID_NONE, .comm = d->comm,
		.event = d->event, .weight = weight * d->scale,
	};
	rec->sample.stack = stack_of(d, d->t, s, why);
	return rec->sample.stack ? 1 : -1;
}

static int gecko_next(void *dec, struct lp_record *rec, const char **why)
{
	struct gecko_dec *d = dec;
	while (!d->open_why && d->thread < d->nthreads) {
		if (d->sample == d->samples.len) {
			if (++d->thread < d->nthreads && (d->open_why = enter_thread(d)))
				d->open_why = LP_WHY(d, "thread %zu: %s", d->thread, d->open_why);
			continue;
		}
		const char *e = NULL;
		int rc = read_sample(d, rec, &e);
		d->sample++;
		if (rc > 0)
			return 1;
		if (rc < 0)
			d->open_why = LP_WHY(d, "thread %zu: sample %zu: %s", d->thread, d->sample - 1, e);
	}
	if (d->open_why) {
		*why = d->open_why;
		return LP_CODEC_BAD;
	}
	return 0;
}

static void gecko_close(void *dec)
{
	struct gecko_dec *d = dec;
	tables_free(&d->shared);
	tables_free(&d->own);
	free(d->threads);
	free(d->frames);
	json_decref(d->kept);
	free(d);
}

/* meta and threads: the Firefox Profiler's, in either format. */
static bool gecko_claims(const struct lp_doc *doc)
{
	json_t *root = profile_of(doc->json);
	return json_is_object(json_object_get(root, "meta")) &&
	       json_is_array(json_object_get(root, "threads"));
}

const struct lp_codec lp_codec_gecko = {
	.name = "gecko", .format = LP_INPUT_GECKO, .claims = gecko_claims,
	.open_doc = gecko_open, .next_doc = gecko_next, .close = gecko_close,
};
