/* pprof.c - reads pprof's profile.proto (github.com/google/pprof,
 * proto/profile.proto), gzipped or not, as lp samples (formats/foreign.md):
 *   - the weight is the value of the default sample type (the last type
 *     when none is named), the event its name; a sample whose profile also
 *     counts samples (a type "samples" or "count" besides) is written as
 *     that many lp samples sharing its weight, so both totals are kept;
 *   - the other values and the labels are attributes, but for the labels
 *     pid, tid (or thread_id) and comm (or thread_name), which are fields;
 *   - a location's lines are frames, the innermost ones inlined ('i') into
 *     the last; a location without lines is a raw frame (its mapping's file
 *     and build-id, the address made an offset into the file);
 *   - pprof has no time per sample: the samples' times are '-'. */
#include "base/protobuf.h"
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/attrs.h"
#include "stream/codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mapping {
	uint64_t id, start, limit, offset, filename, build_id;
};
struct line {
	uint64_t function;
	int64_t line;
};
struct location {
	uint64_t id, mapping, address;
	size_t nlines;
	struct line *lines;	/* innermost first */
};
struct function {
	uint64_t id, name, system_name, filename;
};
struct vtype {
	uint64_t type, unit;	/* string indexes */
};
struct blob {
	const unsigned char *data;
	size_t len;
};


struct pprof_dec {
	struct lp_dict *dict;
	VEC(struct blob) strings;
	VEC(struct vtype) types;
	VEC(struct mapping) mappings;
	VEC(struct location) locations;
	VEC(struct function) functions;
	VEC(struct blob) samples;
	uint64_t default_type;	/* string index, 0: none */
	size_t weight_index;	/* which value is the weight */
	ptrdiff_t count_index;	/* a "samples" or "count" value, or -1 */
	const char *event;
	/* lookups by id: ids are usually 1..n in order */
	/* the sample being written, and how many more times */
	size_t next;
	int64_t repeat_left;
	double repeat_weight, repeat_last;
	struct lp_sample out;
	struct lp_attrs_buf attrs;
	/* scratch */
	VEC(uint64_t) locs;
	VEC(int64_t) values;
	VEC(const struct lp_frame *) frames;
	char *text;
	size_t text_cap;
	char why[200];
	const char *open_why;	/* not NULL: the document is not well-formed */
};

/* *why for what is wrong, and LP_CODEC_BAD. */
#define fail(d, why, ...) ({ *(why) = LP_WHY(d, __VA_ARGS__); LP_CODEC_BAD; })

/* The varint fields 1..n of a small message. */
static int varint_fields(const struct lp_pb_field *f, uint64_t *out, size_t n)
{
	struct lp_pb m = lp_pb__of(f->data, f->len);
	struct lp_pb_field g;
	int rc;
	memset(out, 0, n * sizeof(*out));
	while ((rc = lp_pb__next(&m, &g)) > 0)
		if (g.number >= 1 && g.number <= n && g.wire == LP_PB_VARINT)
			out[g.number - 1] = g.value;
	return rc;
}

static int read_location(struct pprof_dec *d, const struct lp_pb_field *f)
{
	struct lp_pb m = lp_pb__of(f->data, f->len);
	struct lp_pb_field g;
	struct location l = { 0 };
	VEC(struct line) lines = { 0 };
	int rc;
	while ((rc = lp_pb__next(&m, &g)) > 0) {
		if (g.wire == LP_PB_VARINT && g.number == 1)
			l.id = g.value;
		else if (g.wire == LP_PB_VARINT && g.number == 2)
			l.mapping = g.value;
		else if (g.wire == LP_PB_VARINT && g.number == 3)
			l.address = g.value;
		else if (g.wire == LP_PB_LEN && g.number == 4) {
			uint64_t v[2];
			if ((rc = varint_fields(&g, v, 2)) < 0)
				break;
			LP_PUSH(lines, ((struct line){ v[0], (int64_t)v[1] }));
		}
	}
	l.lines = lines.v;
	l.nlines = lines.n;
	LP_PUSH(d->locations, l);
	return rc;
}

/* The profile's tables; the samples kept as where they are. */
static int read_profile(struct pprof_dec *d, const struct lp_doc *doc, const char **why)
{
	struct lp_pb m = lp_pb__of(doc->data, doc->len);
	struct lp_pb_field f;
	int rc;
	while ((rc = lp_pb__next(&m, &f)) > 0) {
		uint64_t v[6];
		if (f.wire == LP_PB_LEN) {
			switch (f.number) {
			case 1:	/* sample_type */
				if (varint_fields(&f, v, 2) < 0)
					return fail(d, why, "a sample type is not well-formed");
				LP_PUSH(d->types, ((struct vtype){ v[0], v[1] }));
				break;
			case 2:
				LP_PUSH(d->samples, ((struct blob){ f.data, f.len }));
				break;
			case 3:
				if (varint_fields(&f, v, 6) < 0)
					return fail(d, why, "a mapping is not well-formed");
				LP_PUSH(d->mappings, ((struct mapping){ v[0], v[1], v[2], v[3], v[4], v[5] }));
				break;
			case 4:
				if (read_location(d, &f) < 0)
					return fail(d, why, "location %zu is not well-formed",
						    d->locations.n);
				break;
			case 5:
				if (varint_fields(&f, v, 4) < 0)
					return fail(d, why, "a function is not well-formed");
				LP_PUSH(d->functions, ((struct function){ v[0], v[1], v[2], v[3] }));
				break;
			case 6:
				LP_PUSH(d->strings, ((struct blob){ f.data, f.len }));
				break;
			}
		} else if (f.wire == LP_PB_VARINT && f.number == 14) {
			d->default_type = f.value;
		}
	}
	if (rc < 0)
		return fail(d, why, "not a well-formed protocol buffer");
	if (!d->strings.n || d->strings.v[0].len)
		return fail(d, why, "its string table does not begin with \"\"");
	if (!d->types.n)
		return fail(d, why, "no sample type");
	return 0;
}

/* String i, or NULL when there is none. */
static const struct blob *string(const struct pprof_dec *d, uint64_t i)
{
	return i < d->strings.n ? &d->strings.v[i] : NULL;
}

static bool string_is(const struct pprof_dec *d, uint64_t i, const char *s)
{
	const struct blob *b = string(d, i);
	return b && b->len == strlen(s) && !memcmp(b->data, s, b->len);
}

/* String i interned, NUL-terminated. */
static const char *str(struct pprof_dec *d, uint64_t i)
{
	const struct blob *b = string(d, i);
	return b ? lp_dict__string(d->dict, (const char *)b->data, b->len) : "";
}

/* The tables are sorted by id at open (by_id_cmp: each struct's first
 * member is its id): element id is at index id - 1 when the ids are the
 * usual 1..n, else found by a binary search. */
#define BY_ID(vec, wanted)                                                        \
	({                                                                        \
		__typeof__((vec).v) hit_ = NULL;                                  \
		uint64_t w_ = (wanted);                                           \
		if (w_ && w_ <= (vec).n && (vec).v[w_ - 1].id == w_) {            \
			hit_ = &(vec).v[w_ - 1];                                  \
		} else if (w_) {                                                  \
			size_t lo_ = 0, hi_ = (vec).n;                            \
			while (lo_ < hi_) {                                       \
				size_t mid_ = lo_ + (hi_ - lo_) / 2;              \
				if ((vec).v[mid_].id < w_)                        \
					lo_ = mid_ + 1;                           \
				else                                              \
					hi_ = mid_;                               \
			}                                                         \
			if (lo_ < (vec).n && (vec).v[lo_].id == w_)               \
				hit_ = &(vec).v[lo_];                             \
		}                                                                 \
		hit_;                                                             \
	})

static int by_id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int check_tables(struct pprof_dec *d, const char **why)
{
	for (size_t i = 0; i < d->types.n; i++)
		if (!string(d, d->types.v[i].type) || !string(d, d->types.v[i].unit))
			return fail(d, why, "sample type %zu names string %llu of %zu", i,
				    (unsigned long long)d->types.v[i].type, d->strings.n);
	for (size_t i = 0; i < d->functions.n; i++)
		if (!string(d, d->functions.v[i].name) || !string(d, d->functions.v[i].filename) ||
		    !string(d, d->functions.v[i].system_name))
			return fail(d, why, "function %llu names a string not in the table",
				    (unsigned long long)d->functions.v[i].id);
	for (size_t i = 0; i < d->mappings.n; i++)
		if (!string(d, d->mappings.v[i].filename) || !string(d, d->mappings.v[i].build_id))
			return fail(d, why, "mapping %llu names a string not in the table",
				    (unsigned long long)d->mappings.v[i].id);
	for (size_t i = 0; i < d->locations.n; i++) {
		const struct location *l = &d->locations.v[i];
		if (l->mapping && !BY_ID(d->mappings, l->mapping))
			return fail(d, why, "location %llu: no mapping %llu",
				    (unsigned long long)l->id, (unsigned long long)l->mapping);
		for (size_t k = 0; k < l->nlines; k++)
			if (!BY_ID(d->functions, l->lines[k].function))
				return fail(d, why, "location %llu: no function %llu",
					    (unsigned long long)l->id,
					    (unsigned long long)l->lines[k].function);
	}
	return 0;
}

/* Which value is the weight, which one counts samples. */
static void choose_values(struct pprof_dec *d)
{
	d->weight_index = d->types.n - 1;
	for (size_t i = 0; d->default_type && i < d->types.n; i++)
		if (d->types.v[i].type == d->default_type)
			d->weight_index = i;
	d->count_index = -1;
	for (size_t i = 0; i < d->types.n; i++)
		if (i != d->weight_index && string_is(d, d->types.v[i].type, "samples") &&
		    string_is(d, d->types.v[i].unit, "count")) {
			d->count_index = (ptrdiff_t)i;
			break;
		}
	d->event = str(d, d->types.v[d->weight_index].type);
}

static void *pprof_open(struct lp_dict *dict, const struct lp_doc *doc,
			const struct lp_input_opts *opts)
{
	(void)opts;
	struct pprof_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	if (read_profile(d, doc, &d->open_why) < 0)
		return d;
	/* (an empty table's array is NULL, which qsort may not be given) */
	if (d->mappings.n)
		qsort(d->mappings.v, d->mappings.n, sizeof(*d->mappings.v), by_id_cmp);
	if (d->locations.n)
		qsort(d->locations.v, d->locations.n, sizeof(*d->locations.v), by_id_cmp);
	if (d->functions.n)
		qsort(d->functions.v, d->functions.n, sizeof(*d->functions.v), by_id_cmp);
	if (check_tables(d, &d->open_why) < 0)
		return d;
	choose_values(d);
	return d;
}

/* A location's frames, outermost first, onto d->frames. */
static void location_frames(struct pprof_dec *d, const struct location *l)
{
	const struct mapping *mp = BY_ID(d->mappings, l->mapping);
	const char *module = mp ? str(d, mp->filename) : "";
	if (!l->nlines) {
		uint64_t addr = l->address;
		if (mp && addr >= mp->start && (!mp->limit || addr < mp->limit))
			addr = addr - mp->start + mp->offset;
		LP_PUSH(d->frames, lp_dict__raw_frame(d->dict, addr, module,
						   mp ? str(d, mp->build_id) : ""));
		return;
	}
	char kind = !strcmp(module, "[kernel.kallsyms]") ? LP_FRAME_KERNEL : LP_FRAME_USER;
	for (size_t k = l->nlines; k-- > 0;) {
		const struct function *fn = BY_ID(d->functions, l->lines[k].function);
		const char *name = str(d, fn->name);
		if (!*name)
			name = str(d, fn->system_name);
		const char *file = str(d, fn->filename);
		char srcline[4096] = "";
		if (*file && l->lines[k].line > 0)
			snprintf(srcline, sizeof(srcline), "%s:%lld", file,
				 (long long)l->lines[k].line);
		else if (*file)
			snprintf(srcline, sizeof(srcline), "%s", file);
		/* the first line is the outermost: the location's own frame */
		char fk = k + 1 == l->nlines ? kind : LP_FRAME_INLINE;
		LP_PUSH(d->frames, lp_dict__frame(d->dict, fk, 0, module, name, srcline));
	}
}

static bool push_loc(void *ctx, uint64_t v)
{
	struct pprof_dec *d = ctx;
	LP_PUSH(d->locs, v);
	return true;
}

static bool push_value(void *ctx, uint64_t v)
{
	struct pprof_dec *d = ctx;
	LP_PUSH(d->values, (int64_t)v);
	return true;
}

/* An attribute key from a pprof name: letters, digits, '_', '.', '-'. */
static void add_attr(struct pprof_dec *d, const struct blob *key, const char *value, size_t vlen)
{
	char k[128];
	size_t n = 0;
	for (size_t i = 0; i < key->len && n + 1 < sizeof(k); i++) {
		char c = (char)key->data[i];
		k[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				 c == '_' || c == '.' || c == '-' ? c : '_';
	}
	if (!n)
		k[n++] = '_';
	lp_attrs_buf__addn(&d->attrs, k, n, value, vlen);
}

/* Sample i into d->out and the count of lp samples it makes. */
static int decode_sample(struct pprof_dec *d, size_t i, const char **why)
{
	struct lp_pb m = lp_pb__of(d->samples.v[i].data, d->samples.v[i].len);
	struct lp_pb_field f;
	int rc;
	d->locs.n = d->values.n = d->frames.n = 0;
	lp_attrs_buf__reset(&d->attrs);
	d->out = (struct lp_sample){ .time_ns = LP_TIME_NONE, .pid = LP_ID_NONE,
				     .tid = LP_ID_NONE, .cpu = LP_ID_NONE, .comm = "",
				     .event = d->event };
	while ((rc = lp_pb__next(&m, &f)) > 0) {
		if (f.number == 1 && !lp_pb__varints(&f, push_loc, d))
			return fail(d, why, "sample %zu: its locations are not well-formed", i);
		if (f.number == 2 && !lp_pb__varints(&f, push_value, d))
			return fail(d, why, "sample %zu: its values are not well-formed", i);
		if (f.number == 3 && f.wire == LP_PB_LEN) {
			struct lp_pb lm = lp_pb__of(f.data, f.len);
			struct lp_pb_field g;
			uint64_t key = 0, sval = 0;
			int64_t num = 0;
			bool has_num = false;
			while ((rc = lp_pb__next(&lm, &g)) > 0) {
				if (g.wire != LP_PB_VARINT)
					continue;
				if (g.number == 1)
					key = g.value;
				else if (g.number == 2)
					sval = g.value;
				else if (g.number == 3)
					num = (int64_t)g.value, has_num = true;
			}
			if (rc < 0 || !string(d, key) || !string(d, sval))
				return fail(d, why, "sample %zu: a label is not well-formed", i);
			if (has_num && (string_is(d, key, "pid") || string_is(d, key, "tid") ||
					string_is(d, key, "thread_id")) && num >= 0 && num <= INT32_MAX) {
				if (string_is(d, key, "pid"))
					d->out.pid = (int32_t)num;
				else
					d->out.tid = (int32_t)num;
			} else if (!has_num && (string_is(d, key, "comm") ||
						string_is(d, key, "thread_name"))) {
				d->out.comm = str(d, sval);
			} else if (has_num) {
				char t[24];
				int n = snprintf(t, sizeof(t), "%lld", (long long)num);
				add_attr(d, string(d, key), t, (size_t)n);
			} else {
				const struct blob *b = string(d, sval);
				add_attr(d, string(d, key), (const char *)b->data, b->len);
			}
		}
	}
	if (rc < 0)
		return fail(d, why, "sample %zu is not well-formed", i);
	if (d->values.n != d->types.n)
		return fail(d, why, "sample %zu has %zu values for %zu sample types", i,
			    d->values.n, d->types.n);
	for (size_t k = d->locs.n; k-- > 0;) {
		const struct location *l = BY_ID(d->locations, d->locs.v[k]);
		if (!l)
			return fail(d, why, "sample %zu: no location %llu", i,
				    (unsigned long long)d->locs.v[k]);
		location_frames(d, l);
	}
	d->out.stack = lp_dict__stack(d->dict, d->frames.v, d->frames.n);
	for (size_t k = 0; k < d->values.n; k++) {
		if (k == d->weight_index || (ptrdiff_t)k == d->count_index)
			continue;
		char t[24];
		int n = snprintf(t, sizeof(t), "%lld", (long long)d->values.v[k]);
		add_attr(d, string(d, d->types.v[k].type), t, (size_t)n);
	}
	d->out.attrs = lp_attrs_buf__attrs(&d->attrs);
	int64_t w = d->values.v[d->weight_index];
	if (w < 0)
		return fail(d, why, "sample %zu: negative %s %lld", i, d->event, (long long)w);
	int64_t count = d->count_index >= 0 ? d->values.v[d->count_index] : 1;
	if (count < 0)
		return fail(d, why, "sample %zu: negative count %lld", i, (long long)count);
	/* count samples of w / count each, the rest on the last: the sums stay */
	d->repeat_left = count;
	d->repeat_weight = count ? (double)(w / (count ? count : 1)) : 0;
	d->repeat_last = count ? (double)(w - (w / count) * (count - 1)) : 0;
	if (count == 0 && w > 0) {	/* a weight without a count: one sample */
		d->repeat_left = 1;
		d->repeat_last = (double)w;
	}
	return 0;
}

static int pprof_next(void *dec, struct lp_record *rec, const char **why)
{
	struct pprof_dec *d = dec;
	if (d->open_why) {
		*why = d->open_why;
		return LP_CODEC_BAD;
	}
	while (d->repeat_left == 0) {
		if (d->next == d->samples.n)
			return 0;
		if (decode_sample(d, d->next++, why) < 0)
			return LP_CODEC_BAD;
	}
	rec->kind = LP_REC_SAMPLE;
	rec->sample = d->out;
	rec->sample.weight = --d->repeat_left ? d->repeat_weight : d->repeat_last;
	return 1;
}

static void pprof_close(void *dec)
{
	struct pprof_dec *d = dec;
	for (size_t i = 0; i < d->locations.n; i++)
		free(d->locations.v[i].lines);
	free(d->strings.v);
	free(d->types.v);
	free(d->mappings.v);
	free(d->locations.v);
	free(d->functions.v);
	free(d->samples.v);
	free(d->locs.v);
	free(d->values.v);
	free(d->frames.v);
	lp_attrs_buf__free(&d->attrs);
	free(d);
}

/* The whole of it a protocol buffer of a profile's fields (1 to 6 are
 * messages or strings), a sample type among them, its string table
 * beginning with "". */
static bool pprof_claims(const struct lp_doc *doc)
{
	if (doc->json || doc->len < 2)
		return false;
	struct lp_pb m = lp_pb__of(doc->data, doc->len);
	struct lp_pb_field f;
	int rc;
	bool strings = false, empty_first = false, types = false;
	while ((rc = lp_pb__next(&m, &f)) > 0) {
		types |= f.number == 1;
		if (f.number == 6 && f.wire == LP_PB_LEN && !strings) {
			strings = true;
			empty_first = f.len == 0;
		}
		if (f.number > 20 || (f.number <= 6 && f.wire != LP_PB_LEN))
			return false;
	}
	return rc == 0 && types && strings && empty_first;
}

const struct lp_codec lp_codec_pprof = {
	.name = "pprof", .format = LP_INPUT_PPROF, .claims = pprof_claims,
	.open_doc = pprof_open, .next_doc = pprof_next, .close = pprof_close,
};
