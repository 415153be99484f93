/* otlp.c - a profile's tables (proftab.h) as an OTLP
 * ExportProfilesServiceRequest (otlp.h): field numbers are those of
 * opentelemetry-proto v1.11.0's profiles.proto, profiles_service.proto,
 * common.proto and resource.proto, written with lib/base/protobuf.h's
 * encoder. */
#include "output/otlp.h"
#include "base/hashmap.h"
#include "base/protobuf.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* ProfilesDictionary.attribute_table's entries, KeyValueAndUnit: a key
 * (a string id) and an int or a string (id) value; entry 0 is the zero
 * one.  Each sample's and mapping's index into it. */
struct attrs {
	struct attr {
		uint64_t key, v;
		bool is_int;
	} *a;
	size_t n;
	struct lp_hashmap ids;
	uint64_t *pid, *comm;	/* a sample's; 0: none */
	uint64_t *build_id;	/* a mapping's */
};

static uint64_t attr(struct attrs *as, uint64_t key, uint64_t v, bool is_int)
{
	uint64_t h = lp_hash_bytes(lp_hash_bytes(LP_HASH_INIT, &key, 8), &v, 8);
	for (h = lp_hashmap__key(h);; h = lp_hashmap__key(h + 1)) {
		uintptr_t id = (uintptr_t)lp_hashmap__get(&as->ids, h);
		if (!id)
			break;
		const struct attr *x = &as->a[id - 1];
		if (x->key == key && x->v == v && x->is_int == is_int)
			return id;
	}
	as->a = lp_reallocarray(as->a, as->n + 1, sizeof(*as->a));
	as->a[as->n] = (struct attr){ key, v, is_int };
	lp_hashmap__put(&as->ids, h, (void *)(uintptr_t)++as->n);
	return as->n;
}

/* Semantic conventions' names: process.pid, thread.name (a Linux comm
 * is its thread's name), process.executable.build_id.gnu. */
static void attrs_init(struct attrs *as, struct lp_proftab *t)
{
	*as = (struct attrs){ 0 };
	lp_hashmap__init(&as->ids);
	uint64_t pid = lp_proftab__string(t, "process.pid");
	uint64_t comm = lp_proftab__string(t, "thread.name");
	uint64_t build_id = lp_proftab__string(t, "process.executable.build_id.gnu");
	as->pid = lp_calloc(t->nsamples + 1, sizeof(*as->pid));
	as->comm = lp_calloc(t->nsamples + 1, sizeof(*as->comm));
	as->build_id = lp_calloc(t->nmappings + 1, sizeof(*as->build_id));
	for (size_t i = 0; i < t->nsamples; i++) {
		const struct lp_proftab_sample *s = &t->samples[i];
		if (s->pid != LP_ID_NONE)
			as->pid[i] = attr(as, pid, (uint64_t)s->pid, true);
		if (s->comm)
			as->comm[i] = attr(as, comm, s->comm, false);
	}
	for (size_t i = 0; i < t->nmappings; i++)
		if (t->mappings[i][1])
			as->build_id[i] = attr(as, build_id, t->mappings[i][1], false);
}

static void attrs_fini(struct attrs *as)
{
	free(as->a);
	free(as->pid);
	free(as->comm);
	free(as->build_id);
	lp_hashmap__fini(&as->ids);
}

/* AnyValue: string_value (1) or int_value (3), a oneof: present even
 * when 0 or "". */
static void any_value(struct lp_pbw *b, uint32_t field, const char *s, int64_t i)
{
	size_t m = lp_pbw__open(b, field);
	if (s)
		lp_pbw__string(b, 1, s);
	else
		lp_pbw__uint_present(b, 3, (uint64_t)i);
	lp_pbw__close(b, m);
}

/* ProfilesDictionary.attribute_table (6), KeyValueAndUnit: key_strindex
 * (1), value (2). */
static void attribute_table(const struct lp_proftab *t, const struct attrs *as, struct lp_pbw *b)
{
	lp_pbw__bytes(b, 6, NULL, 0);
	for (size_t i = 0; i < as->n; i++) {
		const struct attr *x = &as->a[i];
		size_t m = lp_pbw__open(b, 6);
		lp_pbw__uint(b, 1, x->key);
		any_value(b, 2, x->is_int ? NULL : t->strings[x->v], (int64_t)x->v);
		lp_pbw__close(b, m);
	}
}

/* Mapping (1): filename_strindex (4), attribute_indices (5); Location
 * (2): mapping_index (1), address (2), lines (3: function_index (1),
 * line (2)); Function (3): name (1), system_name (2), filename (3)
 * string indexes.  Each table's entry 0 the zero message. */
static void frame_tables(const struct lp_proftab *t, const struct attrs *as, struct lp_pbw *b)
{
	lp_pbw__bytes(b, 1, NULL, 0);
	for (size_t i = 0; i < t->nmappings; i++) {
		size_t m = lp_pbw__open(b, 1);
		lp_pbw__uint(b, 4, t->mappings[i][0]);
		lp_pbw__packed(b, 5, &as->build_id[i], as->build_id[i] ? 1 : 0);
		lp_pbw__close(b, m);
	}
	lp_pbw__bytes(b, 2, NULL, 0);
	for (size_t i = 0; i < t->nlocations; i++) {
		const struct lp_proftab_location *l = &t->locations[i];
		size_t m = lp_pbw__open(b, 2);
		lp_pbw__uint(b, 1, l->mapping);
		lp_pbw__uint(b, 2, l->address);
		for (size_t k = 0; k < l->nlines; k++)
			lp_pbw__pair(b, 3, l->functions[k], (uint64_t)l->lines[k]);
		lp_pbw__close(b, m);
	}
	lp_pbw__bytes(b, 3, NULL, 0);
	for (size_t i = 0; i < t->nfunctions; i++) {
		size_t m = lp_pbw__open(b, 3);
		lp_pbw__uint(b, 1, t->functions[i][0]);
		lp_pbw__uint(b, 2, t->functions[i][0]);
		lp_pbw__uint(b, 3, t->functions[i][1]);
		lp_pbw__close(b, m);
	}
}

/* ExportProfilesServiceRequest.dictionary (2), ProfilesDictionary: the
 * frames' tables, link_table (4: its zero entry alone, trace_id (1) and
 * span_id (2) of zero bytes as the spec asks), string_table (5),
 * attribute_table (6), stack_table (7: location_indices (1)). */
static void dictionary(const struct lp_proftab *t, const struct attrs *as, struct lp_pbw *b)
{
	static const unsigned char zeros[16];
	size_t d = lp_pbw__open(b, 2);
	frame_tables(t, as, b);
	size_t m = lp_pbw__open(b, 4);
	lp_pbw__bytes(b, 1, zeros, 16);
	lp_pbw__bytes(b, 2, zeros, 8);
	lp_pbw__close(b, m);
	for (size_t i = 0; i < t->nstrings; i++)
		lp_pbw__string(b, 5, t->strings[i]);
	attribute_table(t, as, b);
	lp_pbw__bytes(b, 7, NULL, 0);
	for (size_t i = 0; i < t->nstacks; i++) {
		m = lp_pbw__open(b, 7);
		lp_pbw__packed(b, 1, t->stacks[i].locs, t->stacks[i].nlocs);
		lp_pbw__close(b, m);
	}
	lp_pbw__close(b, d);
}

enum shape {
	SHAPE_COUNTS,	/* timestamps alone, each a sample of the period */
	SHAPE_TIMED,	/* a value and a timestamp per sample */
	SHAPE_SUMS,	/* one value, the sum */
};

static enum shape shape_of(const struct lp_proftab *t)
{
	if (!t->times || !t->keep_times)
		return SHAPE_SUMS;
	if (t->period_ns <= 0)
		return SHAPE_TIMED;
	for (size_t i = 0; i < t->nsamples; i++)
		for (size_t k = 0; k < t->samples[i].nobs; k++)
			if (t->samples[i].weights[k] != t->period_ns)
				return SHAPE_TIMED;
	return SHAPE_COUNTS;
}

/* Profile.samples (2), Sample: stack_index (1), attribute_indices (2),
 * values (4), timestamps_unix_nano (5). */
static void samples(const struct lp_proftab *t, const struct attrs *as, enum shape shape,
		    struct lp_pbw *b)
{
	for (size_t i = 0; i < t->nsamples; i++) {
		const struct lp_proftab_sample *s = &t->samples[i];
		uint64_t attrs[2];
		size_t na = 0;
		if (as->pid[i])
			attrs[na++] = as->pid[i];
		if (as->comm[i])
			attrs[na++] = as->comm[i];
		size_t m = lp_pbw__open(b, 2);
		lp_pbw__uint(b, 1, s->stack);
		lp_pbw__packed(b, 2, attrs, na);
		if (shape == SHAPE_SUMS) {
			uint64_t v = (uint64_t)lp_proftab__round(s->weight);
			lp_pbw__packed(b, 4, &v, 1);
		} else if (shape == SHAPE_TIMED) {
			lp_pbw__packed(b, 4, (const uint64_t *)s->weights, s->nobs);
		}
		if (shape != SHAPE_SUMS)
			lp_pbw__packed_fixed64(b, 5, s->unix_ns, s->nobs);
		lp_pbw__close(b, m);
	}
}

/* ScopeProfiles.profiles (2), Profile: sample_type (1), samples (2),
 * time_unix_nano (3), duration_nano (4), period_type (5), period (6);
 * ValueType: type_strindex (1), unit_strindex (2). */
static void profile(struct lp_proftab *t, const struct lp_otlp_opts *o, const struct attrs *as,
		    struct lp_pbw *b)
{
	enum shape shape = shape_of(t);
	uint64_t ev = lp_proftab__string(t, t->event ? t->event : "weight");
	uint64_t unit = lp_proftab__string(t, t->timed ? "nanoseconds" : "count");
	uint64_t from = o->from_unix_ns, until = o->until_unix_ns;
	if (t->times && t->first_unix_ns) {
		from = t->first_unix_ns;
		until = t->last_unix_ns + 1;
	}
	size_t m = lp_pbw__open(b, 2);
	if (shape == SHAPE_COUNTS)
		lp_pbw__pair(b, 1, lp_proftab__string(t, "samples"), lp_proftab__string(t, "count"));
	else
		lp_pbw__pair(b, 1, ev, unit);
	samples(t, as, shape, b);
	lp_pbw__fixed64(b, 3, from);
	lp_pbw__uint(b, 4, until > from ? until - from : 0);
	lp_pbw__pair(b, 5, ev, unit);
	lp_pbw__uint(b, 6, (uint64_t)t->period_ns);
	lp_pbw__close(b, m);
}

/* KeyValue: key (1), value (2). */
static void key_value(struct lp_pbw *b, uint32_t field, const char *key, const char *value)
{
	size_t m = lp_pbw__open(b, field);
	lp_pbw__string(b, 1, key);
	any_value(b, 2, value, 0);
	lp_pbw__close(b, m);
}

/* ExportProfilesServiceRequest.resource_profiles (1), ResourceProfiles:
 * resource (1: attributes (1)), scope_profiles (2), ScopeProfiles: scope
 * (1: name (1), version (2)), profiles (2). */
static void resource_profiles(struct lp_proftab *t, const struct lp_otlp_opts *o,
			      const struct attrs *as, struct lp_pbw *b)
{
	size_t r = lp_pbw__open(b, 1);
	if (o->service || t->host) {
		size_t m = lp_pbw__open(b, 1);
		if (o->service)
			key_value(b, 1, "service.name", o->service);
		if (t->host)
			key_value(b, 1, "host.name", t->host);
		lp_pbw__close(b, m);
	}
	size_t s = lp_pbw__open(b, 2);
	size_t m = lp_pbw__open(b, 1);
	lp_pbw__string(b, 1, "lp");
	lp_pbw__string(b, 2, LP_VERSION);
	lp_pbw__close(b, m);
	profile(t, o, as, b);
	lp_pbw__close(b, s);
	lp_pbw__close(b, r);
}

int lp_otlp__write(struct lp_proftab *t, const struct lp_otlp_opts *o, FILE *out)
{
	struct lp_pbw b = { 0 };
	struct attrs as;
	attrs_init(&as, t);
	/* the profile first: it adds the strings the dictionary then holds */
	resource_profiles(t, o, &as, &b);
	dictionary(t, &as, &b);
	attrs_fini(&as);
	int ret = fwrite(b.p, 1, b.len, out) == b.len ? 0 : -1;
	lp_pbw__fini(&b);
	return ret;
}
