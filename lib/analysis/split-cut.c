/* split-cut.c - the distribution of the span durations, once all are
 * known: its modes, --auto's cut at a valley, the histogram with the cuts
 * marked, and the warning when a percentile or threshold cuts a mode. */
#include "analysis/split.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "analysis/modes.h"
#include "analysis/split-internal.h"

/* --- the distribution: modes, --auto, the histogram, cuts in a mode ------ */

/* A duration for people: 3 significant digits and a unit, "30.5 us". */
void lp_split__fmt_human(char *b, size_t size, double ns)
{
	static const struct { const char *unit; double div; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	size_t u = 0;
	while (u + 1 < 4 && ns >= units[u + 1].div * 0.9995)
		u++;
	double v = ns / units[u].div;
	if (v >= 999.5)
		snprintf(b, size, "%.0f %s", v, units[u].unit);
	else
		snprintf(b, size, "%.3g %s", v, units[u].unit);
}

/* The same as an option's value: "117us" (lp_parse_duration reads it). */
static void fmt_option(char *b, size_t size, double ns)
{
	lp_split__fmt_human(b, size, ns);
	char *sp = strchr(b, ' ');
	memmove(sp, sp + 1, strlen(sp));
}

/* "1.2-3 ms", or "800 us-1.2 ms" across units. */
static void fmt_range(char *b, size_t size, double lo, double hi)
{
	char x[32], y[32];
	lp_split__fmt_human(x, sizeof(x), lo);
	lp_split__fmt_human(y, sizeof(y), hi);
	const char *ux = strchr(x, ' '), *uy = strchr(y, ' ');
	if (!strcmp(ux, uy))
		snprintf(b, size, "%.*s-%s", (int)(ux - x), x, y);
	else
		snprintf(b, size, "%s-%s", x, y);
}

/* A histogram row's edge: exact, and readable ("1.25us", "640ms"). */
static void fmt_edge(char *b, size_t size, int64_t ns)
{
	if (ns == INT64_MAX) {
		snprintf(b, size, "inf");
		return;
	}
	static const struct { const char *unit; int64_t div; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	size_t u = 0;
	while (u + 1 < 4 && ns >= units[u + 1].div)
		u++;
	snprintf(b, size, "%.15g%s", (double)ns / (double)units[u].div, ns ? units[u].unit : "");
}

#define HIST_ROWS 30
#define HIST_WIDTH 40

/* A histogram of ln(duration) with the modes and cut points marked. */
void lp_split__report_distribution(struct split *s, FILE *f)
{
	const struct lp_modes *m = s->modes;
	const struct lp_split_opts *o = s->o;
	char a[32], b[32];
	if (!m || !s->ndurs)
		return;
	fprintf(f, "# distribution of the %zu span durations: %zu mode%s", s->ndurs, m->nmodes,
		m->nmodes == 1 ? "" : "s");
	for (size_t i = 0; i < m->nmodes; i++) {
		lp_split__fmt_human(a, sizeof(a), (double)m->modes[i].at_ns);
		fprintf(f, "%s %s (%.1f%%)", i ? "," : ", at", a, 100 * m->modes[i].mass);
	}
	for (size_t i = 0; i + 1 < m->nmodes; i++) {
		lp_split__fmt_human(a, sizeof(a), (double)m->valleys[i].at_ns);
		fprintf(f, "%s %s (density %.0f%% of the smaller peak)", i ? "," : "; valley at", a,
			100 * m->valleys[i].depth);
	}
	struct lp_histogram h;
	lp_histogram__init(&h, s->durs, s->ndurs, HIST_ROWS);
	size_t most = 0;
	for (size_t r = 0; r < h.nrows; r++)
		if (h.counts[r] > most)
			most = h.counts[r];
	/* the fullest row HIST_WIDTH long, but never a # for less than a span */
	double per = most > HIST_WIDTH ? (double)most / HIST_WIDTH : 1;
	fprintf(f, "\nfrom\tto\tspans\tlog scale, %u rows a decade; # = %.3g span%s\n", h.per_decade,
		per, per == 1 ? "" : "s");
	for (size_t r = 0; r < h.nrows; r++) {
		int64_t lo = h.edges[r], hi = h.edges[r + 1];
		bool last = r + 1 == h.nrows;
		fmt_edge(a, sizeof(a), lo);
		fmt_edge(b, sizeof(b), hi);
		fprintf(f, "%s\t%s\t%zu\t", a, b, h.counts[r]);
		size_t bar = (size_t)llround((double)h.counts[r] / per);
		for (size_t k = 0; k < bar; k++)
			putc('#', f);
		if (!bar && h.counts[r])
			putc('.', f);
		/* Marks: what falls in [lo, hi) (the last row: up to its end). */
		const char *sep = "  <- ";
		for (size_t i = 0; i < m->nmodes; i++) {
			int64_t at = m->modes[i].at_ns;
			if (at >= lo && (at < hi || last)) {
				lp_split__fmt_human(a, sizeof(a), (double)at);
				fprintf(f, "%smode %s (%.1f%%)", sep, a, 100 * m->modes[i].mass);
				sep = "; ";
			}
		}
		for (size_t i = 0; i + 1 < s->nbands; i++) {
			double c = s->cuts[i];
			if (!(c >= (double)lo && (c < (double)hi || last)))
				continue;
			lp_split__fmt_human(a, sizeof(a), c);
			if (o->auto_cut)
				fprintf(f, "%sauto cut %s", sep, a);
			else if (o->npercentiles)
				fprintf(f, "%sp%g cut %s", sep, o->percentiles[i], a);
			else
				fprintf(f, "%sthreshold %s", sep, a);
			sep = "; ";
		}
		putc('\n', f);
	}
	lp_histogram__free(&h);
}

/* The modes of the durations, once all are known (file mode), and for
 * --auto the cut at the valley below the slowest one.  -1 when --auto
 * finds no valley or no span: said, and the histogram shown. */
int lp_split__decide_distribution(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	s->modes = lp_modes__new(s->durs, s->ndurs);
	if (!o->auto_cut)
		return 0;
	int v = lp_modes__auto_cut(s->modes);
	if (v >= 0) {
		s->cuts[0] = (double)s->modes->valleys[v].at_ns;
		return 0;
	}
	if (!s->ndurs) {
		if (o->probe)
			lp_error("--auto: no span of probe '%s' in the input", o->probe);
		else
			lp_error("--auto: no span in the input");
		return -1;
	}
	char at[32];
	lp_split__fmt_human(at, sizeof(at), (double)s->modes->modes[0].at_ns);
	if (!o->quiet) {
		FILE *f = o->report ? lp_open_output(o->report) : stderr;
		fprintf(f, "# probe %s: %zu spans, no valley\n", o->probe ? o->probe : "(any)",
			s->ndurs);
		lp_split__report_distribution(s, f);
		if (o->report)
			lp_close_output(f, o->report);
		else
			fflush(f);
	}
	lp_error("no valley: the span durations have one mode, at %s; use --percentile or --threshold",
		 at);
	return -1;
}

/* A percentile whose nearest-rank cut is the last duration at or below
 * valley v, so that it splits exactly as the valley does: the shortest
 * decimal p with ceil(p / 100 * n) = k, k the durations at or below the
 * valley, computed as lp_split__exact_cuts computes it from the option's text. */
static void suggest_percentile(const struct split *s, int v, char *b, size_t size)
{
	double n = (double)s->ndurs, k = (double)s->modes->valleys[v].below;
	for (int dec = 0; dec <= 9; dec++) {
		double scale = pow(10, dec);
		/* the smallest multiple of 10^-dec above 100 (k - 1) / n */
		for (double t = floor(100 * (k - 1) / n * scale); t <= ceil(100 * k / n * scale); t++) {
			snprintf(b, size, "%.*f", dec, t / scale);
			double p = strtod(b, NULL);
			if (p > 0 && p < 100 && ceil(p / 100 * n) == k)
				return;
		}
	}
	snprintf(b, size, "%.9g", 100 * k / n);	/* n beyond 10^11 */
}

/* A percentile or threshold cut inside a mode splits one population in
 * two: the groups differ by degree, not by kind, and their profiles
 * differ mostly by noise.  Said only when there is a valley to suggest
 * instead (with one mode, every cut is inside it). */
void lp_split__warn_cuts(struct split *s)
{
	const struct lp_modes *m = s->modes;
	const struct lp_split_opts *o = s->o;
	if (!m || m->nmodes < 2 || o->auto_cut)
		return;
	for (size_t i = 0; i + 1 < s->nbands; i++) {
		int v, in = lp_modes__inside(m, s->cuts[i], &v);
		if (in < 0 || v < 0)
			continue;
		char what[64], at[32], range[64], valley[32], try[64];
		lp_split__fmt_human(at, sizeof(at), s->cuts[i]);
		if (o->npercentiles)
			snprintf(what, sizeof(what), "the p%g cut (%s)", o->percentiles[i], at);
		else
			snprintf(what, sizeof(what), "the threshold %s", at);
		fmt_range(range, sizeof(range), (double)m->modes[in].lo_ns, (double)m->modes[in].hi_ns);
		lp_split__fmt_human(valley, sizeof(valley), (double)m->valleys[v].at_ns);
		if (o->npercentiles) {
			suggest_percentile(s, v, try, sizeof(try));
		} else {
			fmt_option(try, sizeof(try), (double)m->valleys[v].at_ns);
		}
		lp_split__say(s, "%s falls inside a mode (%s, %.1f%% of spans); the valley is at %s: "
			 "try %s--%s %s", what, range, 100 * m->modes[in].mass, valley,
			 v == lp_modes__auto_cut(m) ? "--auto or " : "",
			 o->npercentiles ? "percentile" : "threshold", try);
	}
}
