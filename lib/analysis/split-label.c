/* split-label.c - what the split decided, as "split" records at the end of
 * the labelled stream (--label): the probe, the cuts, the modes, each
 * group's figures, the separating features and the notes. */
#include "analysis/split.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "analysis/modes.h"
#include "analysis/separate.h"
#include "analysis/split-internal.h"

/* --- what the split decided, as records of the labelled stream ---------- */

/* "split WHAT NAME VALUE" and the attributes in s->ab, one line
 * (formats/lp-stream.md: what lp-split decided); NAME NULL: "-". */
static void put_split(struct split *s, const char *what, const char *name, const char *value)
{
	struct output *out = &s->outs[0];
	size_t nl = name ? strlen(name) : 0;
	char *esc = lp_malloc(4 * nl + 5);
	size_t el = lp_escape(esc, name ? name : "", nl);
	struct lp_attrs a = lp_attrs_buf__attrs(&s->ab);
	char *line = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&line, &size);

	if (!name || !strcmp(name, "-") || !nl)
		el = (size_t)sprintf(esc, "%s", name && nl ? "\\x2d" : "-");
	fprintf(f, "split\t%s\t%.*s\t%s", what, (int)el, esc, value);
	if (a.len)
		fprintf(f, "\t%.*s", (int)a.len, a.text);
	fclose(f);
	struct lp_record rec = { .kind = LP_REC_OTHER, .line = line, .len = size };
	if (lp_writer__record(out->w, &rec) < 0)
		lp_split__out_failed(out);
	free(line);
	free(esc);
	lp_attrs_buf__reset(&s->ab);
}

static void add_num(struct split *s, const char *key, double v)
{
	char b[64];

	snprintf(b, sizeof(b), "%.6g", v);
	lp_attrs_buf__add(&s->ab, key, b);
}

/* A band's percentiles, as lp-split's report gives them. */
static void add_percentiles(struct split *s, const struct group *g)
{
	static const double ps[] = { 0.5, 0.9, 0.99 };
	static const char *const keys[] = { "p50_ns", "p90_ns", "p99_ns" };
	int64_t v;

	for (int k = 0; k < 3; k++)
		if (lp_split__percentile_of(g, ps[k], &v))
			lp_attrs_buf__add_i64(&s->ab, keys[k], strlen(keys[k]), v);
	if (g->spans)
		lp_attrs_buf__add_i64(&s->ab, "max_ns", 6, g->max_ns);
}

static void put_groups(struct split *s)
{
	static const char *const state_keys[3] = { "running_ns", "runnable_ns", "blocked_ns" };

	for (size_t i = 0; i < s->ng; i++) {
		const struct group *g = &s->g[i];
		bool band = i < s->nbands;

		if (!band && !g->samples && !g->spans)
			continue;
		if (band || g->spans)
			lp_attrs_buf__add_i64(&s->ab, "spans", 5, (int64_t)g->spans);
		lp_attrs_buf__add_i64(&s->ab, "samples", 7, (int64_t)g->samples);
		if (band)
			add_percentiles(s, g);
		if (band || g->spans)
			lp_attrs_buf__add_i64(&s->ab, "span_ns", 7, llround(g->span_ns));
		lp_attrs_buf__add_i64(&s->ab, "sample_ns", 9, llround(g->sample_weight));
		if (band && g->span_ns > 0)
			add_num(s, "coverage", g->sample_weight / g->span_ns);
		if (band && s->keyed) {
			lp_attrs_buf__add_i64(&s->ab, "callback_ns", 11, llround(g->callback_ns));
			lp_attrs_buf__add_i64(&s->ab, "others_ns", 9, llround(g->others_ns));
		}
		for (int k = 0; s->have_states && k < 3; k++)
			lp_attrs_buf__add_i64(&s->ab, state_keys[k], strlen(state_keys[k]),
					      llround(g->state_weight[k]));
		put_split(s, "group", g->name, "-");
	}
}

static void put_distribution(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	const struct lp_modes *m = s->modes;
	char v[64];

	for (size_t i = 0; i + 1 < s->nbands; i++) {
		char label[64];
		if (isnan(s->cuts[i]) || isinf(s->cuts[i]) || (o->live && !s->live_spans))
			continue;
		if (o->auto_cut)
			snprintf(label, sizeof(label), "auto");
		else if (o->npercentiles)
			snprintf(label, sizeof(label), "p%g", o->percentiles[i]);
		else
			snprintf(label, sizeof(label), "threshold");
		snprintf(v, sizeof(v), "%.0f", s->cuts[i]);
		put_split(s, "cut", label, v);
	}
	for (size_t i = 0; m && i < m->nmodes; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%zu", i);
		snprintf(v, sizeof(v), "%" PRId64, m->modes[i].at_ns);
		add_num(s, "share", m->modes[i].mass);
		lp_attrs_buf__add_i64(&s->ab, "lo_ns", 5, m->modes[i].lo_ns);
		lp_attrs_buf__add_i64(&s->ab, "hi_ns", 5, m->modes[i].hi_ns);
		put_split(s, "mode", name, v);
	}
	for (size_t i = 0; m && i + 1 < m->nmodes; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%zu", i);
		snprintf(v, sizeof(v), "%" PRId64, m->valleys[i].at_ns);
		add_num(s, "depth", m->valleys[i].depth);
		put_split(s, "valley", name, v);
	}
}

/* What separates the slowest band: lp_separate's table as records. */
static void put_features(struct split *s)
{
	enum { ROWS = 10 };
	struct lp_separate_row rows[ROWS];
	size_t hi = s->nbands - 1;

	if (s->nbands < 2)
		return;
	size_t n = lp_separate__rank(s->sep, hi, rows, ROWS);
	for (size_t i = 0; i < n; i++) {
		const struct lp_separate_row *r = &rows[i];
		char *name = lp_malloc(r->len + 32), p[64];

		snprintf(name, r->len + 32, "%s%s%.*s", r->verb ? r->verb : "", r->verb ? " " : "",
			 (int)r->len, r->name);
		snprintf(p, sizeof(p), "%.3g", pow(10, r->log10p));
		lp_attrs_buf__add(&s->ab, "group", s->g[hi].name);
		lp_attrs_buf__add_i64(&s->ab, "hi_n", 4, (int64_t)r->hi_n);
		lp_attrs_buf__add_i64(&s->ab, "lo_n", 4, (int64_t)r->lo_n);
		add_num(s, "hi_rate", r->hi_rate);
		add_num(s, "lo_rate", r->lo_rate);
		add_num(s, "log10p", r->log10p);
		put_split(s, "feature", name, p);
		free(name);
	}
}

/* lp-split's decisions at the end of its labelled stream, for the
 * programs that read it (lp-report): the probe, the cuts, the modes, each
 * group's figures, what separates the slow spans, the correction for
 * lp's own cost and the warnings. */
void lp_split__put_decisions(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	uint64_t nspans = 0;

	for (size_t i = 0; i < s->nbands; i++)
		nspans += s->g[i].spans;
	lp_attrs_buf__reset(&s->ab);
	lp_attrs_buf__add_i64(&s->ab, "spans", 5, (int64_t)nspans);
	if (o->took)
		lp_attrs_buf__add(&s->ab, "took", o->took);
	if (o->child)
		lp_attrs_buf__add(&s->ab, "child", o->child);
	lp_attrs_buf__add(&s->ab, "cuts", o->live ? "live" : "exact");
	put_split(s, "probe", o->probe, "-");
	put_distribution(s);
	put_groups(s);
	put_features(s);
	if (s->spans && !o->raw) {
		char *text = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&text, &size);

		lp_split__report_costs(s, f);
		fclose(f);
		/* "# lp's own cost taken out: ...\n" as a sentence */
		size_t skip = strncmp(text, "# ", 2) ? 0 : 2;
		if (size && text[size - 1] == '\n')
			text[--size] = 0;
		lp_attrs_buf__add(&s->ab, "text", text + skip);
		put_split(s, "note", "cost", "-");
		free(text);
	}
	for (size_t i = 0; i < s->nnotes; i++) {
		lp_attrs_buf__add(&s->ab, "text", s->notes[i].text);
		put_split(s, "note", s->notes[i].kind, "-");
	}
}
