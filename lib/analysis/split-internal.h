/* split-internal.h - private to lib/analysis/split*.c: the state of one
 * lp-split run (struct split: its groups, the probe's spans, the outputs)
 * and the functions its files share.  No other file includes it; the
 * public API is split.h.
 *
 * It does not include split.h (struct lp_split_opts is declared, not
 * defined): split.c includes it, and lib/layers takes a header's include
 * for its module's, so split.h -> split-internal.h -> split.c would be a
 * cycle.  Each split*.c includes split.h itself. */
#ifndef LP_SPLIT_INTERNAL_H
#define LP_SPLIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/hashmap.h"
#include "stream/stream.h"
#include "analysis/selfcost.h"

struct lp_split_opts;
struct lp_quantile;
struct lp_modes;
struct lp_separate;
struct lp_waits;

/* --- groups ------------------------------------------------------------ */

/* G_UNPROBED: samples outside every span of the probe taken while it was
 * not attached (probe records, lp-trace --control): nothing watched for
 * its calls then, so they are not "outside" its spans. */
enum { G_OUTSIDE, G_EXCLUDED, G_UNRANKED, G_UNCERTAIN, G_LP, G_UNPROBED, G_EXTRA };

struct group {
	char *name;
	int out;		/* index into outputs, -1: not written */
	uint64_t spans, samples;
	double span_ns, sample_weight;
	/* Sample weight by the thread state= of lp-record --mode wall. */
	double state_weight[3];
	/* Blocked weight by the function it blocked in (lp_stack__blocking_frame),
	 * keyed by the name's hash: struct blocker (lp_hashmap__add). */
	struct lp_hashmap blockers;
	int64_t max_ns;
	struct lp_quantile *lat;	/* live: this group's span durations */
	int64_t *durs;		/* file: its spans' corrected durations, sorted */
	size_t ndurs;
	double callback_ns;	/* keyed: its requests' time in their callbacks */
	double others_ns;	/* keyed: their waits while others' callbacks ran */
};

/* The first pass keeps each span of the probe, and each sample's time and
 * cost, to take lp's own cost out of the durations (selfcost.h). */
struct pspan {
	int64_t start, end;
	int32_t pid, tid;
	double lp_ns;		/* lp-trace's probes inside it */
	double cost, var;	/* its samples' cost: mean and variance */
	int64_t first;		/* its first sample's time */
	int64_t corrected;	/* end - start - lp_ns - cost; --child: its calls' time */
	int64_t child;		/* --child: calls_ns.PROBE= */
	uint32_t nsamples;
	int32_t group;		/* decided: a band, or the uncertain group */
	/* Whose samples cost it: its thread's (the tid), or, a keyed span
	 * (lp-trace's key: requests, key=), those of the callbacks that
	 * worked for its key (span.key.PROBE=): lp_split__keyed_who. */
	uint64_t who;
	double callback_ns;	/* keyed: its callbacks' time, second pass */
};

struct psample {
	int64_t t;
	int32_t pid, tid;
	enum lp_hit hit;
	uint64_t who;		/* as pspan's */
};

struct output {
	char *path;
	FILE *f;
	struct lp_writer *w;
	char *buf;		/* f's buffer: freed once f is closed */
};

struct split {
	const struct lp_split_opts *o;
	size_t nbands;
	struct group *g;	/* nbands bands, then the G_EXTRA groups */
	size_t ng;
	double *cuts;		/* nbands - 1 cut points, ns */
	struct output *outs;
	size_t nouts;
	int64_t t0;		/* first time read, for a relative --time */
	int64_t from, to;
	/* file mode: corrected durations of the spans that count, sorted */
	int64_t *durs;
	size_t ndurs;
	struct lp_costs *costs;
	struct pspan *spans;		/* the probe's spans, by (tid, start) */
	size_t spans_cap;		/* first pass: room in spans */
	size_t nspans;
	struct lp_hashmap span_index;	/* (tid, start, end) -> index + 1 */
	uint64_t sampled_spans, uncertain_spans;
	/* A sample's cost as the spans show it (dist.empirical when they
	 * could), and whether it replaced the calibrated one. */
	struct lp_costdist dist;
	bool used_seen;
	double sample_cost_ns, probe_cost_ns;	/* taken out, in all */
	double period_ns;		/* the header's period_ns=, 0 when none */
	struct lp_modes *modes;		/* of durs, once they are all known */
	struct lp_quantile *sketch;	/* live */
	bool dirty;			/* spans added since the cuts were read */
	uint64_t joined_samples;	/* samples with any span= at all */
	uint64_t probe_spans;		/* spans of the probe read */
	FILE *report_f;			/* --report FILE */
	bool have_states;		/* samples with state= (lp-record --mode wall) */
	uint64_t live_spans;
	struct lp_attrs_buf ab;
	char *buf;
	size_t bufcap;
	char *kbuf;
	size_t kbufcap;
	char *value;		/* an attribute's value (lp_attrs__get) */
	size_t value_cap;
	char *name;		/* a frame's name (lp_frame__name) */
	size_t name_cap;
	/* When the split's probe (any, without --probe) was attached, from
	 * its probe records: [from, to), to INT64_MAX while attached.  None:
	 * attached throughout (a stream without probe records). */
	struct window { char *probe; int64_t from, ready, to; } *wins;
	size_t nwins;
	struct lp_separate *sep;	/* what separates the top band from the others */
	/* Warnings said on stderr, kept for the split records (--label). */
	struct note { char *kind, *text; } *notes;
	size_t nnotes;
	/* Keyed spans (lp-trace's key: requests): the probe's spans carry
	 * key=, and a sample works for the request whose key its callback
	 * span carries (span.key.PROBE=, the attribute's name in key_attr). */
	bool keyed;
	char *key_attr;
	struct lp_waits *waits;		/* keyed: the callbacks, for where requests waited */
	/* --took's keys (at.PROBE, calls.PROBE), --child's (calls_ns.PROBE) */
	char *took_at, *took_calls, *child_key;
	size_t took_at_cap, took_calls_cap, child_key_cap;
};

/* Thread states of lp-record --mode wall (state=): ST_BLOCKED's samples
 * are kept by the function they blocked in. */
enum { ST_BLOCKED = 2 };

struct blocker {
	char *name;
	double weight;
};

/* split-route.c: a record to its group; the predicates, probe windows,
 * time range and keyed spans the first pass asks about too. */
bool lp_split__attr_raw(const struct lp_attrs *a, const char *key, size_t klen,
			const char **val, size_t *vlen);
size_t lp_split__band_of(const struct split *s, int64_t d);
bool lp_split__preds_ok(struct split *s, const struct lp_attrs *a, const char *prefix);
bool lp_split__is_probe(const struct split *s, const char *probe);
void lp_split__note_mark(struct split *s, const struct lp_probe_mark *m);
bool lp_split__watched(const struct split *s, const char *probe, size_t len, int64_t start,
		       int64_t end);
void lp_split__set_time_bounds(struct split *s);
uint64_t lp_split__span_key(int32_t tid, int64_t start, int64_t end);
uint64_t lp_split__keyed_who(int32_t pid, const char *v, size_t n);
uint64_t lp_split__sample_who(const struct split *s, const struct lp_sample *x);
bool lp_split__child_ns(struct split *s, const struct lp_attrs *a, const char *prefix,
			int64_t *ns);
int lp_split__route(struct split *s, struct lp_reader *r, const struct lp_record *rec);

/* split-output.c: the groups' outputs, and what each group tallies. */
void lp_split__out_failed(const struct output *out);
void lp_split__to_all(struct split *s, const struct lp_record *rec);
struct blocker **lp_split__sorted_blockers(const struct group *g, size_t *n);
void lp_split__free_blockers(struct group *g);
void lp_split__emit_sample(struct split *s, const struct lp_sample *smp, struct group *g);
void lp_split__emit_span(struct split *s, const struct lp_span *sp, struct group *g,
			 bool counted, int64_t d);
int lp_split__open_outputs(struct split *s);
int lp_split__close_outputs(struct split *s);

/* split-exact.c: the first pass, and the exact cuts after it. */
double lp_split__sampling_period(const struct split *s);
int lp_split__first_pass(struct split *s, const char *input, char **spool_path);
void lp_split__exact_cuts(struct split *s);

/* split-cut.c: the distribution of the durations: modes, --auto, the
 * histogram, cuts in a mode. */
void lp_split__fmt_human(char *b, size_t size, double ns);
void lp_split__report_distribution(struct split *s, FILE *f);
int lp_split__decide_distribution(struct split *s);
void lp_split__warn_cuts(struct split *s);

/* split-report.c: the report, the warnings, the self-check. */
bool lp_split__percentile_of(const struct group *g, double p, int64_t *v);
void lp_split__say(struct split *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void lp_split__report_costs(const struct split *s, FILE *f);
void lp_split__sum_callbacks(struct split *s);
int lp_split__report(struct split *s);
void lp_split__self_check(struct split *s);

/* split-label.c: the split records of the labelled stream. */
void lp_split__put_decisions(struct split *s);

#endif
