/* pprof.c - a profile's tables (proftab.h) as a gzipped pprof profile
 * (profile.proto): field numbers are those of google/pprof's
 * proto/profile.proto, written with lib/base/protobuf.h's encoder. */
#include "output/pprof.h"
#include "base/gzip.h"
#include "base/protobuf.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Sample.label (3): key (1), str (2) or num (3). */
static void label(struct lp_pbw *b, uint64_t key, uint32_t field, uint64_t v)
{
	size_t m = lp_pbw__open(b, 3);
	lp_pbw__uint(b, 1, key);
	lp_pbw__uint(b, field, v);
	lp_pbw__close(b, m);
}

/* Profile.sample (2): location_id (1), value (2), label (3): the sample
 * count, then the weight; pid and comm as labels. */
static void samples(struct lp_proftab *t, struct lp_pbw *b)
{
	uint64_t pid_key = lp_proftab__string(t, "pid"), comm_key = lp_proftab__string(t, "comm");
	for (size_t i = 0; i < t->nsamples; i++) {
		const struct lp_proftab_sample *s = &t->samples[i];
		const struct lp_proftab_stack *st = s->stack ? &t->stacks[s->stack - 1] : NULL;
		uint64_t values[2] = { (uint64_t)s->count, (uint64_t)lp_proftab__round(s->weight) };
		size_t m = lp_pbw__open(b, 2);
		if (st)
			lp_pbw__packed(b, 1, st->locs, st->nlocs);
		lp_pbw__packed(b, 2, values, 2);
		if (s->pid != LP_ID_NONE)
			label(b, pid_key, 3, (uint64_t)s->pid);
		if (s->comm)
			label(b, comm_key, 2, s->comm);
		lp_pbw__close(b, m);
	}
}

/* Profile.mapping (3): id (1), filename (5), build_id (6),
 * has_functions (7); Profile.location (4): id (1), mapping_id (2),
 * address (3), line (4: function_id (1), line (2)); Profile.function (5):
 * id (1), name (2), system_name (3), filename (4). */
static void tables(const struct lp_proftab *t, struct lp_pbw *b)
{
	for (size_t i = 0; i < t->nmappings; i++) {
		size_t m = lp_pbw__open(b, 3);
		lp_pbw__uint(b, 1, i + 1);
		lp_pbw__uint(b, 5, t->mappings[i][0]);
		lp_pbw__uint(b, 6, t->mappings[i][1]);
		lp_pbw__uint(b, 7, 1);
		lp_pbw__close(b, m);
	}
	for (size_t i = 0; i < t->nlocations; i++) {
		const struct lp_proftab_location *l = &t->locations[i];
		size_t m = lp_pbw__open(b, 4);
		lp_pbw__uint(b, 1, i + 1);
		lp_pbw__uint(b, 2, l->mapping);
		lp_pbw__uint(b, 3, l->address);
		for (size_t k = 0; k < l->nlines; k++)
			lp_pbw__pair(b, 4, l->functions[k], (uint64_t)l->lines[k]);
		lp_pbw__close(b, m);
	}
	for (size_t i = 0; i < t->nfunctions; i++) {
		size_t m = lp_pbw__open(b, 5);
		lp_pbw__uint(b, 1, i + 1);
		lp_pbw__uint(b, 2, t->functions[i][0]);
		lp_pbw__uint(b, 3, t->functions[i][0]);
		lp_pbw__uint(b, 4, t->functions[i][1]);
		lp_pbw__close(b, m);
	}
}

static void encode(struct lp_proftab *t, struct lp_pbw *b)
{
	const char *event = t->event ? t->event : "weight";
	uint64_t unit = lp_proftab__string(t, t->timed ? "nanoseconds" : "count");
	uint64_t nsamples = lp_proftab__string(t, "samples"), count = lp_proftab__string(t, "count");
	uint64_t ev = lp_proftab__string(t, event);

	/* Profile.sample_type (1), ValueType: type (1), unit (2): the sample
	 * count, then the weight. */
	lp_pbw__pair(b, 1, nsamples, count);
	lp_pbw__pair(b, 1, ev, unit);
	samples(t, b);
	tables(t, b);
	/* Profile.string_table (6), every string, "" first. */
	for (size_t i = 0; i < t->nstrings; i++)
		lp_pbw__string(b, 6, t->strings[i]);
	/* period_type (11), period (12). */
	lp_pbw__pair(b, 11, ev, unit);
	lp_pbw__uint(b, 12, (uint64_t)t->period_ns);
}

int lp_pprof__write(struct lp_proftab *t, FILE *out)
{
	struct lp_pbw b = { 0 };
	encode(t, &b);
	int ret = lp_gzip__write(b.p, b.len, out);
	lp_pbw__fini(&b);
	return ret;
}
