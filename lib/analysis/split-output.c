/* split-output.c - what a group gets: its tallies (spans, samples, thread
 * states, the functions it blocked in) and its records, written to its file
 * or, with --label, to the one stream with group=. */
#include "analysis/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/quantile.h"
#include "base/util.h"
#include "stream/frame.h"
#include "analysis/separate.h"
#include "analysis/split-internal.h"

/* --- output ------------------------------------------------------------ */

void lp_split__out_failed(const struct output *out)
{
	lp_write_failed(out->path ? out->path : "stdout");
}

void lp_split__to_all(struct split *s, const struct lp_record *rec)
{
	for (size_t i = 0; i < s->nouts; i++)
		if (lp_writer__record(s->outs[i].w, rec) < 0)
			lp_split__out_failed(&s->outs[i]);
}

static void with_group(struct split *s, const struct lp_attrs *a, const char *name)
{
	lp_attrs_buf__set(&s->ab, a);
	lp_attrs_buf__add(&s->ab, "group", name);
}

static const char *const state_names[3] = { "running", "runnable", "blocked" };

static void add_blocked(struct split *s, struct group *g, const struct lp_stack *st,
			double weight)
{
	const struct lp_frame *f = lp_stack__blocking_frame(st);
	const char *name = f ? lp_frame__name(f, &s->name, &s->name_cap) : "[unknown]";
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, name, strlen(name)));
	struct blocker *b;

	for (size_t pos = 0; (b = lp_hashmap__next(&g->blockers, key, &pos));)
		if (!strcmp(b->name, name))
			break;
	if (!b) {
		b = lp_calloc(1, sizeof(*b));
		b->name = lp_strdup(name);
		/* a symbol is the target's text: no tab or newline in the table */
		for (char *c = b->name; *c; c++)
			if ((unsigned char)*c < ' ')
				*c = '?';
		lp_hashmap__add(&g->blockers, key, b);
	}
	b->weight += weight;
}

/* Heaviest first, then by name: a total order. */
static int blocker_cmp(const void *pa, const void *pb)
{
	const struct blocker *a = *(const struct blocker *const *)pa;
	const struct blocker *b = *(const struct blocker *const *)pb;

	if (a->weight != b->weight)
		return (b->weight > a->weight) - (b->weight < a->weight);
	return strcmp(a->name, b->name);
}

/* The group's blockers, heaviest first; *n their count.  Free the array. */
struct blocker **lp_split__sorted_blockers(const struct group *g, size_t *n)
{
	struct blocker **v = lp_calloc(g->blockers.count ? g->blockers.count : 1, sizeof(*v));
	size_t len = 0;

	for (size_t i = 0; i < g->blockers.cap; i++)
		if (g->blockers.keys[i])
			v[len++] = g->blockers.values[i];
	qsort(v, len, sizeof(*v), blocker_cmp);
	*n = len;
	return v;
}

void lp_split__free_blockers(struct group *g)
{
	for (size_t i = 0; i < g->blockers.cap; i++)
		if (g->blockers.keys[i]) {
			struct blocker *b = g->blockers.values[i];
			free(b->name);
			free(b);
		}
	lp_hashmap__fini(&g->blockers);
}

/* lp_separate__span's question about one span. */
struct span_watch {
	const struct split *s;
	int64_t start, end;
};

static bool span_watched(void *arg, const char *probe, size_t len)
{
	const struct span_watch *w = arg;
	return lp_split__watched(w->s, probe, len, w->start, w->end);
}

void lp_split__emit_sample(struct split *s, const struct lp_sample *smp, struct group *g)
{
	g->samples++;
	g->sample_weight += smp->weight;
	ssize_t n = lp_attrs__get(&smp->attrs, "state", &s->value, &s->value_cap);
	for (int k = 0; n >= 0 && k < 3; k++)
		if ((size_t)n == strlen(state_names[k]) && !memcmp(s->value, state_names[k], n)) {
			g->state_weight[k] += smp->weight;
			s->have_states = true;
			if (k == ST_BLOCKED)
				add_blocked(s, g, smp->stack, smp->weight);
		}
	if (g->out < 0)
		return;
	struct output *out = &s->outs[g->out];
	struct lp_sample copy = *smp;
	if (s->o->label) {
		with_group(s, &smp->attrs, g->name);
		copy.attrs = lp_attrs_buf__attrs(&s->ab);
	}
	if (lp_writer__sample(out->w, &copy) < 0)
		lp_split__out_failed(out);
}

/* d: the span's duration as decided on (corrected for lp's cost); the
 * group's span time stays the measured one, which its samples cover. */
void lp_split__emit_span(struct split *s, const struct lp_span *sp, struct group *g,
			 bool counted, int64_t d)
{
	if (counted && (size_t)(g - s->g) < s->nbands)
		lp_separate__span(s->sep, (size_t)(g - s->g), &sp->attrs, span_watched,
				  &(struct span_watch){ s, sp->start_ns, sp->end_ns });
	if (counted) {
		g->spans++;
		g->span_ns += (double)(sp->end_ns - sp->start_ns);
		if (d > g->max_ns)
			g->max_ns = d;
		if (g->lat)
			lp_quantile__add(g->lat, (double)d, 0);
	}
	if (g->out < 0)
		return;
	struct output *out = &s->outs[g->out];
	struct lp_span copy = *sp;
	if (s->o->label) {
		/* The duration the split decided on, so that readers of the
		 * labelled stream (lp-report) draw the same distribution;
		 * group= last, as on samples. */
		lp_attrs_buf__set(&s->ab, &sp->attrs);
		if (counted)
			lp_attrs_buf__add_i64(&s->ab, "corrected_ns", 12, d);
		lp_attrs_buf__add(&s->ab, "group", g->name);
		copy.attrs = lp_attrs_buf__attrs(&s->ab);
	}
	if (lp_writer__span(out->w, &copy) < 0)
		lp_split__out_failed(out);
}

/* Large writes.  stdout's buffer outlives it (stdio may flush it at exit);
 * a file's is freed once the file is closed. */
#define OUTBUF (1 << 16)
static void set_buffer(struct output *out)
{
	static char stdout_buf[OUTBUF];

	out->buf = out->f == stdout ? NULL : lp_malloc(OUTBUF);
	setvbuf(out->f, out->buf ? out->buf : stdout_buf, _IOFBF, OUTBUF);
}

/* Whether group was given a file of its own (--group NAME=FILE). */
static bool made_by_name(const struct lp_split_opts *o, const char *group)
{
	for (size_t k = 0; k < o->nfiles; k++)
		if (!strcmp(o->files[k].group, group))
			return true;
	return false;
}

int lp_split__open_outputs(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	if (o->report && !o->quiet)
		s->report_f = lp_open_output(o->report);
	for (size_t i = 0; i < s->ng; i++)
		s->g[i].out = -1;
	if (o->label) {
		s->outs = lp_calloc(1, sizeof(*s->outs));
		s->nouts = 1;
		s->outs[0].path = o->output && strcmp(o->output, "-") ? lp_strdup(o->output) : NULL;
		s->outs[0].f = lp_open_output(o->output);
		set_buffer(&s->outs[0]);
		s->outs[0].w = lp_writer__new(s->outs[0].f);
		for (size_t i = 0; i < s->ng; i++)
			s->g[i].out = 0;
		return 0;
	}
	s->outs = lp_calloc(s->ng, sizeof(*s->outs));
	for (size_t i = 0; i < s->ng; i++) {
		const char *path = NULL;
		char *made = NULL;
		for (size_t k = 0; k < o->nfiles; k++)
			if (!strcmp(o->files[k].group, s->g[i].name))
				path = o->files[k].path;
		if (!path && o->pattern) {
			const char *pc = strstr(o->pattern, "%s");
			size_t n = strlen(o->pattern) + strlen(s->g[i].name);
			made = lp_malloc(n + 1);
			snprintf(made, n + 1, "%.*s%s%s", (int)(pc - o->pattern), o->pattern,
				 s->g[i].name, pc + 2);
			path = made;
		}
		/* Groups these options cannot produce get no file. */
		if (i == s->nbands + G_EXCLUDED && !o->has_time && !o->npreds)
			path = NULL;
		if (i == s->nbands + G_UNRANKED && !(o->live && o->npercentiles))
			path = NULL;
		if (i == s->nbands + G_UNCERTAIN && (o->raw || s->nbands == 1))
			path = NULL;
		/* Known only once the input is read: a file when named. */
		if (i == s->nbands + G_UNPROBED && !made_by_name(o, s->g[i].name))
			path = NULL;
		if (path) {
			struct output *out = &s->outs[s->nouts];
			out->path = lp_strdup(path);
			out->f = lp_open_output(path);
			set_buffer(out);
			out->w = lp_writer__new(out->f);
			s->g[i].out = (int)s->nouts++;
		}
		free(made);
	}
	return 0;
}

int lp_split__close_outputs(struct split *s)
{
	int rc = 0;
	for (size_t i = 0; i < s->nouts; i++) {
		lp_writer__free(s->outs[i].w);
		if (lp_close_output(s->outs[i].f, s->outs[i].path ? s->outs[i].path : "stdout") < 0)
			rc = -1;
		free(s->outs[i].buf);
		free(s->outs[i].path);
	}
	return rc;
}
