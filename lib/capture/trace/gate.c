/* gate.c - lp-record --inside: lp-trace's function probes as the
 * sampler's gate. */
#include "capture/trace/gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/trace/family.h"
#include "capture/trace/tracer.h"
#include "stream/attrs.h"
#include "stream/lptext.h"
#include "base/util.h"

struct lp_gate {
	struct lp_tracer *tracer;
	struct lp_family *family;
	/* FUNC resolved in each target's executable. */
	struct lp_probe_point **points;
	size_t *npoints;
	size_t npids;
	struct lp_attrs_buf attrs;	/* lp_gate__write_marks' */
	/* The functions, as given (the specs, which the caller owns). */
	char **names;
	size_t nnames;
};

struct lp_probe_spec *lp_gate__parse(const char *text)
{
	struct lp_probe_spec *spec = lp_probe_spec__parse(text, false);

	if (!spec)
		return NULL;
	if (spec->type != LP_PROBE_FUNC || spec->nvars || spec->all_args) {
		lp_error("--inside '%s': a function, FUNC or LIB:FUNC, without values to capture",
			 text);
		lp_probe_spec__free(spec);
		return NULL;
	}
	return spec;
}

/* FUNC in each target's executable (the command's before it runs); Go
 * functions refused: their open calls are kept per goroutine, which moves
 * between threads, and the sampler knows threads. */
static int resolve(struct lp_gate *g, const struct lp_gate_opts *o)
{
	g->npids = o->npids;
	g->points = lp_calloc(o->npids, sizeof(*g->points));
	g->npoints = lp_calloc(o->npids, sizeof(*g->npoints));
	for (size_t p = 0; p < o->npids; p++) {
		char *exe = o->cmd_exe ? lp_strdup(o->cmd_exe) : lp_family__exe(o->pids[p]);

		if (!exe)
			return -1;
		int r = lp_probe__resolve_specs(o->specs, (int)o->nspecs, exe,
						o->cmd_exe ? 0 : o->pids[p], true, o->verbose,
						&g->points[p], &g->npoints[p]);
		free(exe);
		if (r < 0)
			return -1;
		for (size_t i = 0; i < g->npoints[p]; i++)
			if (g->points[p][i].cfg.flags & LP_PROBE_F_GO) {
				lp_error("--inside '%s': a Go function: its calls are kept per "
					 "goroutine, which moves between threads, and the sampler "
					 "knows threads (not supported)",
					 g->points[p][i].spec->text);
				return -1;
			}
	}
	return 0;
}

struct lp_gate *lp_gate__open(const struct lp_gate_opts *o)
{
	struct lp_gate *g = lp_calloc(1, sizeof(*g));
	struct lp_tracer_opts to = { .max_pids = o->max_pids, .verbose = o->verbose,
				     .gate = true, .ring_bytes = 1u << 20,
				     .share_stacks = o->share_stacks, .stacks_fd = o->stacks_fd };

	g->names = lp_calloc(o->nspecs ? o->nspecs : 1, sizeof(*g->names));
	for (; g->nnames < o->nspecs; g->nnames++)
		g->names[g->nnames] = lp_strdup(o->specs[g->nnames]->text);

	if (resolve(g, o) < 0 || !(g->tracer = lp_tracer__new(&to)))
		goto fail;
	if (o->calibrate_ns > 0) {
		struct lp_cal_needs need = { 0 };

		for (size_t p = 0; p < g->npids; p++)
			lp_tracer__classes(g->points[p], g->npoints[p], &need);
		lp_tracer__calibrate(g->tracer, &need, o->calibrate_ns);
	}
	if (lp_family__attach(&g->family, g->tracer, o->pids, o->npids, g->points, g->npoints,
			      o->follow) < 0)
		goto fail;
	return g;
fail:
	lp_gate__free(g);
	return NULL;
}

int lp_gate__stacks_fd(const struct lp_gate *g)
{
	return lp_tracer__stacks_fd(g->tracer);
}

int lp_gate__write_costs(struct lp_gate *g, struct lp_writer *w)
{
	return lp_tracer__write_costs(g->tracer, w);
}

int lp_gate__write_marks(struct lp_gate *g, struct lp_writer *w, const char *action,
			 int64_t time_ns)
{
	for (size_t i = 0; i < g->nnames; i++) {
		size_t len = strlen(g->names[i]) + sizeof("inside:");
		char *probe = lp_calloc(len, 1);

		snprintf(probe, len, "inside:%s", g->names[i]);
		lp_attrs_buf__reset(&g->attrs);
		lp_attrs_buf__add(&g->attrs, "spec", g->names[i]);
		struct lp_probe_mark mark = { .time_ns = time_ns, .action = action, .probe = probe,
					      .attrs = lp_attrs_buf__attrs(&g->attrs) };
		int r = lp_writer__probe(w, &mark);

		free(probe);
		if (r < 0)
			return -1;
	}
	return 0;
}

int lp_gate__poll(struct lp_gate *g, struct lp_writer *w)
{
	int r = lp_tracer__poll(g->tracer, w, 0);

	return r < 0 ? r : 0;
}

int lp_gate__finish(struct lp_gate *g, struct lp_writer *w)
{
	return lp_tracer__finish(g->tracer, w);
}

void lp_gate__free(struct lp_gate *g)
{
	if (!g)
		return;
	lp_tracer__free(g->tracer);
	lp_family__free(g->family);
	lp_probe__free_resolved(g->points, g->npoints, g->npids);
	for (size_t i = 0; i < g->nnames; i++)
		free(g->names[i]);
	free(g->names);
	lp_attrs_buf__free(&g->attrs);
	free(g);
}
