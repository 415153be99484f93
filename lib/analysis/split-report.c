/* split-report.c - the report on stderr or --report: the cuts, each
 * group's figures, what separates the bands, lp's cost taken out, the
 * keyed requests and thread states; and the warnings the split says of
 * itself (lp_split__self_check). */
#include "analysis/split.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quantile.h"
#include "base/util.h"
#include "analysis/modes.h"
#include "analysis/selfcost.h"
#include "analysis/separate.h"
#include "analysis/waits.h"
#include "analysis/split-internal.h"

#define TOP_BLOCKERS 3		/* functions listed per group */

/* --- the report ----------------------------------------------------------- */

static int64_t sorted_rank(const int64_t *v, size_t n, double p)
{
	double rank = ceil(p * (double)n);
	size_t k = rank < 1 ? 1 : (size_t)rank;
	return v[(k > n ? n : k) - 1];
}

/* A group's percentile in ns, printed exactly: the sorted durations' own
 * value, or the sketch's estimate, which never is above the largest
 * duration seen (its bucket's midpoint may be; near INT64_MAX a double
 * would not even convert back). */
/* The group's p-quantile of durations: false when it has none. */
bool lp_split__percentile_of(const struct group *g, double p, int64_t *v)
{
	if (!g->spans)
		return false;
	if (g->lat) {
		double e = lp_quantile__get(g->lat, p);
		if (isnan(e))
			return false;
		*v = e >= (double)g->max_ns ? g->max_ns : (int64_t)llround(e);
	} else {
		*v = sorted_rank(g->durs, g->ndurs, p);
	}
	return true;
}

static void print_percentile(FILE *f, const struct group *g, double p)
{
	int64_t v;
	if (lp_split__percentile_of(g, p, &v))
		fprintf(f, "%" PRId64 "\t", v);
	else
		fputs("-\t", f);
}

/* A warning: said on stderr now, and kept for the split records. */

void lp_split__say(struct split *s, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	lp_error("warning: %s", text);
	s->notes = lp_reallocarray(s->notes, s->nnotes + 1, sizeof(*s->notes));
	s->notes[s->nnotes++] = (struct note){ lp_strdup("warning"), text };
}

/* The report's first line: the probe, its spans and the cuts. */
static void report_cuts(const struct split *s, FILE *f)
{
	const struct lp_split_opts *o = s->o;
	uint64_t nspans = 0;
	for (size_t i = 0; i < s->nbands; i++)
		nspans += s->g[i].spans;
	fprintf(f, "# probe %s: %" PRIu64 " spans", o->probe ? o->probe : "(any)", nspans);
	if (o->took)
		fprintf(f, ", by whether they reached or called %s", o->took);
	if (o->child)
		fprintf(f, ", cut on their time in calls of %s", o->child);
	/* --live with no span yet has no estimate: its cuts are not 0 ns */
	bool no_cuts = o->live && !s->live_spans;
	for (size_t i = 0; o->npercentiles && i + 1 < s->nbands; i++) {
		if (no_cuts || isnan(s->cuts[i]) || isinf(s->cuts[i]))
			fprintf(f, ", p%g = -", o->percentiles[i]);
		else
			fprintf(f, ", p%g = %.0f ns", o->percentiles[i], s->cuts[i]);
	}
	for (size_t i = 0; i < o->nthresholds; i++)
		fprintf(f, ", threshold %" PRId64 " ns", o->thresholds[i]);
	if (o->auto_cut) {
		const struct lp_modes *m = s->modes;
		int v = lp_modes__auto_cut(m);
		char lo[32], hi[32];
		lp_split__fmt_human(lo, sizeof(lo), (double)m->modes[v].at_ns);
		lp_split__fmt_human(hi, sizeof(hi), (double)m->modes[v + 1].at_ns);
		fprintf(f, ", auto cut %.0f ns at the valley between modes at %s (%.1f%%) and %s (%.1f%%)",
			s->cuts[0], lo, 100 * m->modes[v].mass, hi, 100 * m->modes[v + 1].mass);
	}
	if (o->live && o->npercentiles)
		fprintf(f, " (live: last %.3gs, relative error <= %g%%)",
			(double)o->window_ns / 1e9, o->accuracy * 100);
	else if (o->npercentiles)
		fprintf(f, " (exact)");
	fputc('\n', f);
}

/* The table: each group's spans, samples, percentiles and coverage. */
static void report_groups(const struct split *s, FILE *f)
{
	char num[64];
	fprintf(f, "group\tspans\tsamples\tp50_ns\tp90_ns\tp99_ns\tmax_ns\tspan_ns\tsample_ns\tcoverage\n");
	for (size_t i = 0; i < s->ng; i++) {
		struct group *g = &s->g[i];
		/* The uncertain group's spans are a band's, undecided. */
		bool band = i < s->nbands || i == s->nbands + G_UNCERTAIN;
		if (!band && !g->samples && !g->spans)
			continue;
		if (i == s->nbands + G_UNCERTAIN && !g->samples && !g->spans)
			continue;
		fprintf(f, "%s\t", g->name);
		if (!band) {
			fprintf(f, "-\t%" PRIu64 "\t-\t-\t-\t-\t-\t", g->samples);
		} else {
			fprintf(f, "%" PRIu64 "\t%" PRIu64 "\t", g->spans, g->samples);
			static const double ps[3] = { 0.5, 0.9, 0.99 };
			for (int k = 0; k < 3; k++)
				print_percentile(f, g, ps[k]);
			if (g->spans)
				fprintf(f, "%" PRId64 "\t", g->max_ns);
			else
				fprintf(f, "-\t");
			lp_format_number(num, sizeof(num), g->span_ns);
			fprintf(f, "%s\t", num);
		}
		lp_format_number(num, sizeof(num), g->sample_weight);
		fprintf(f, "%s\t", num);
		/* The uncertain spans are there because they hold samples:
		 * their coverage says nothing. */
		if (i < s->nbands && g->span_ns > 0)
			fprintf(f, "%.1f%%\n", 100 * g->sample_weight / g->span_ns);
		else
			fprintf(f, "-\n");
	}
}

/* What lp's own cost did to the durations, and how it was taken out. */
void lp_split__report_costs(const struct split *s, FILE *f)
{
	const struct lp_split_opts *o = s->o;
	double mean, var;
	bool have = lp_costs__of(s->costs, LP_HIT_SAMPLE, &mean, &var);
	fprintf(f, "# lp's own cost taken out: %" PRIu64 " of %zu spans held samples",
		s->sampled_spans, s->ndurs);
	if (have)
		fprintf(f, " (%.1f us a sample, sd %.1f us)", mean / 1e3, sqrt(var) / 1e3);
	if (s->dist.empirical)
		fprintf(f, "; the spans show %.1f us a sample (sd %.1f us)%s",
			s->dist.mean / 1e3, s->dist.sd / 1e3,
			s->used_seen ? ": used" : ": too far from the calibration, not used");
	fprintf(f, ", %.3f ms of samples and %.3f ms of probes in all",
		s->sample_cost_ns / 1e6, s->probe_cost_ns / 1e6);
	if (s->uncertain_spans)
		fprintf(f, "; %" PRIu64 " sampled spans are uncertain (below %g%% sure of "
			   "their band): group uncertain", s->uncertain_spans, o->confidence * 100);
	if (!lp_costs__known(s->costs))
		fprintf(f, "; no cost records: durations are as measured");
	fputc('\n', f);
}

/* Keyed spans (requests of callbacks): each band's request time, the
 * part of it in the request's own callbacks, and the part it waited while
 * its threads ran other requests' callbacks (waits.h); the rest it waited
 * while they ran none (the loop, idle, blocked). */
void lp_split__sum_callbacks(struct split *s)
{
	if (s->waits)
		lp_waits__finish(s->waits);
	for (size_t i = 0; i < s->nspans; i++) {
		const struct pspan *sp = &s->spans[i];
		if (sp->group < 0)
			continue;
		struct group *g = &s->g[sp->group];
		g->callback_ns += sp->callback_ns;
		double waited = (double)(sp->end - sp->start) - sp->callback_ns;
		double others = s->waits ? lp_waits__others(s->waits, i, sp->start, sp->end) : 0;
		g->others_ns += fmin(others, fmax(waited, 0));
	}
}

static void report_keyed(const struct split *s, FILE *f)
{
	char num[64];
	fprintf(f, "# where the requests' time went: in their callbacks (%s), waiting while "
		   "their threads ran others' callbacks, or while they ran none\ngroup\trequests\t"
		   "time_ns\tin_callbacks\tothers\tnone\n", s->key_attr + 5);
	for (size_t i = 0; i < s->nbands; i++) {
		const struct group *g = &s->g[i];
		if (!(g->span_ns > 0))
			continue;
		lp_format_number(num, sizeof(num), g->span_ns);
		double none = 1 - (g->callback_ns + g->others_ns) / g->span_ns;
		fprintf(f, "%s\t%" PRIu64 "\t%s\t%.1f%%\t%.1f%%\t%.1f%%\n", g->name, g->spans, num,
			100 * g->callback_ns / g->span_ns, 100 * g->others_ns / g->span_ns,
			100 * (none > 0 ? none : 0));
	}
}

/* A wall-clock profile: how each group's time divides between running,
 * waiting for a CPU and blocked, and the functions the blocked time was
 * spent in, as shares of the group's blocked time. */
static void report_states(const struct split *s, FILE *f)
{
	char num[64];
	fprintf(f, "# sample weight by thread state\ngroup\trunning\trunnable\tblocked\n");
	for (size_t i = 0; i < s->ng; i++) {
		struct group *g = &s->g[i];
		double *w = g->state_weight, t = w[0] + w[1] + w[2];

		if (t > 0)
			fprintf(f, "%s\t%.1f%%\t%.1f%%\t%.1f%%\n", g->name, 100 * w[0] / t,
				100 * w[1] / t, 100 * w[2] / t);
	}
	bool header = false;
	for (size_t i = 0; i < s->ng; i++) {
		struct group *g = &s->g[i];
		size_t n;
		struct blocker **v = lp_split__sorted_blockers(g, &n);

		for (size_t k = 0; k < n && k < TOP_BLOCKERS; k++) {
			if (!header) {
				fprintf(f, "# where each group blocked (top %d functions by blocked weight)\n"
					   "group\tfunction\tblocked_ns\tshare\n", TOP_BLOCKERS);
				header = true;
			}
			lp_format_number(num, sizeof(num), v[k]->weight);
			fprintf(f, "%s\t%s\t%s\t%.1f%%\n", g->name, v[k]->name, num,
				100 * v[k]->weight / g->state_weight[ST_BLOCKED]);
		}
		free(v);
	}
}

int lp_split__report(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	if (o->quiet)
		return 0;
	FILE *f = o->report ? s->report_f : stderr;
	report_cuts(s, f);
	report_groups(s, f);
	if (s->nbands >= 2) {
		const char **names = lp_calloc(s->nbands, sizeof(*names));
		for (size_t i = 0; i < s->nbands; i++)
			names[i] = s->g[i].name;
		lp_separate__report(s->sep, f, s->nbands - 1, names, 10);
		free(names);
	}
	if (s->spans && !o->raw)
		lp_split__report_costs(s, f);
	lp_split__report_distribution(s, f);
	if (s->keyed)
		report_keyed(s, f);
	if (s->have_states)
		report_states(s, f);
	if (o->report)
		return lp_close_output(f, o->report);
	fflush(f);
	return 0;
}

/* The split checks itself (file mode: it knows every span): a result that
 * cannot be trusted is said, with the reason and what to do, whatever the
 * exit status. */
void lp_split__self_check(struct split *s)
{
	const struct lp_split_opts *o = s->o;
	if (!s->spans || s->nbands < 2 || !s->ndurs)
		return;
	/* Samples are taken every period of CPU time: a group's samples
	 * cannot explain much more than all of its span time. */
	for (size_t i = 0; i < s->nbands; i++) {
		const struct group *g = &s->g[i];
		if (g->samples < 30 || !(g->span_ns > 0))
			continue;
		double cov = g->sample_weight / g->span_ns;
		if (cov > 1.1 + 3 / sqrt((double)g->samples) && !s->have_states)
			lp_split__say(s, "group %s: its samples explain %.0f%% of its span time: more "
				"samples landed in its spans than their length allows (are the "
				"samples and spans from the same threads and clock?)",
			     g->name, 100 * cov);
	}
	/* Too few to show anything. */
	for (size_t i = 0; i < s->nbands; i++) {
		const struct group *g = &s->g[i];
		if (g->spans < 10 || g->samples < 20)
			lp_split__say(s, "group %s has %" PRIu64 " spans and %" PRIu64 " samples: too few "
				"to compare; record longer or move the cut", g->name, g->spans,
			     g->samples);
	}
	/* A keyed span holds a sample as its callbacks' time, not its
	 * length, allows: the check below does not apply. */
	if (s->keyed)
		return;
	/* A span holds a sample with the chance 1 - exp(-d c / T) (T the
	 * period, c the share of time on a CPU): with lp's cost taken out,
	 * the sampled spans must be no longer than that length bias makes
	 * them.  Longer means lp measured itself. */
	double period = lp_split__sampling_period(s);
	if (!period || s->sampled_spans < 30)
		return;
	double span_ns = 0, sample_ns = 0;
	for (size_t i = 0; i < s->nbands; i++) {
		span_ns += s->g[i].span_ns;
		sample_ns += s->g[i].sample_weight;
	}
	double c = span_ns > 0 ? sample_ns / span_ns : 1;
	c = c > 1 ? 1 : c < 0.01 ? 0.01 : c;
	double pw = 0, ptw = 0, obs = 0, obs2 = 0;
	size_t n = 0;
	for (size_t i = 0; i < s->nspans; i++) {
		const struct pspan *sp = &s->spans[i];
		if (sp->group < 0)
			continue;
		double t = (double)sp->corrected, p = -expm1(-t * c / period);
		pw += p;
		ptw += p * t;
		if (sp->nsamples) {
			obs += t;
			obs2 += t * t;
			n++;
		}
	}
	if (!n || !(pw > 0))
		return;
	double want = ptw / pw, mean = obs / (double)n;
	double sd = sqrt(fmax(obs2 / (double)n - mean * mean, 0));
	if (mean > want * 1.25 && mean - want > 4 * sd / sqrt((double)n))
		lp_split__say(s, "the %" PRIu64 " spans that hold samples average %.1f us, %.1f us more "
			"than their length explains (%.1f us): lp's own cost is in the durations%s",
		     s->sampled_spans, mean / 1e3, (mean - want) / 1e3, want / 1e3,
		     o->raw ? " (--raw)"
		     : lp_costs__known(s->costs) ? "; it was under-corrected: try --raw to compare, "
						   "and a lower sampling rate"
						 : "; the input has no cost records: record with "
						   "lp-record and lp-trace of this version");
}
