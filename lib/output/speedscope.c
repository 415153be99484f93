/* speedscope.c - speedscope JSON from an aggregated profile (speedscope.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "base/json.h"
#include "output/speedscope.h"
#include "base/util.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

/* Frame names -> index in shared.frames, the names as they sit inside the
 * profile's stack strings (no copies). */
struct frame_name {
	const char *name;
	size_t len;
};

struct frame_table {
	struct lp_hashmap map;		/* hash of the name -> index + 1 */
	struct frame_name *names;
	size_t count, cap;
};

/* Index of name; *added tells whether it is new (and gets index count). */
static uint32_t table_intern(struct frame_table *t, const char *name, size_t len, int *added)
{
	uint64_t h = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, name, len));
	void *v;
	for (size_t pos = 0; (v = lp_hashmap__next(&t->map, h, &pos));) {
		const struct frame_name *f = &t->names[(uintptr_t)v - 1];
		if (f->len == len && memcmp(f->name, name, len) == 0) {
			*added = 0;
			return (uint32_t)((uintptr_t)v - 1);
		}
	}
	if (t->count == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->names = lp_reallocarray(t->names, t->cap, sizeof(*t->names));
	}
	t->names[t->count] = (struct frame_name){ name, len };
	lp_hashmap__add(&t->map, h, (void *)(uintptr_t)(t->count + 1));
	*added = 1;
	return (uint32_t)t->count++;
}

/* fprintf is the bottleneck with millions of frame references. */
static void put_index(FILE *out, uint32_t v)
{
	char buf[12], *p = buf + sizeof(buf);

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	fwrite(p, 1, buf + sizeof(buf) - p, out);
}

int lp_speedscope__write(FILE *out, struct lp_profile *p,
			 const struct lp_speedscope_opts *opts)
{
	const char *name = opts && opts->name ? opts->name : "lp";
	const char *unit = opts && opts->unit ? opts->unit : "none";
	int side = opts ? opts->side : 0;
	struct frame_table t = { 0 };
	lp_hashmap__init(&t.map);
	size_t n, nsamples = 0;
	const struct lp_profile_entry *const *e = lp_profile__sorted(p, &n);
	double total = 0;
	int added;

	fputs("{\"$schema\":\"" SCHEMA_URL "\",\n\"name\":", out);
	lp_json__cstring(out, name);
	fputs(",\"exporter\":\"lp-collapse " LP_VERSION "\",\"activeProfileIndex\":0,\n"
	      "\"shared\":{\"frames\":[", out);
	/* Pass 1: the frame table, in order of first appearance. */
	for (size_t i = 0; i < n; i++) {
		const char *s = e[i]->stack, *end = s + e[i]->len;
		if (!(e[i]->weight[side] > 0))
			continue;
		total += e[i]->weight[side];
		for (;;) {
			const char *semi = memchr(s, ';', end - s);
			const char *fe = semi ? semi : end;
			table_intern(&t, s, fe - s, &added);
			if (added) {
				fputs(t.count > 1 ? ",\n{\"name\":" : "\n{\"name\":", out);
				lp_json__string(out, s, fe - s);
				putc_unlocked('}', out);
			}
			if (!semi)
				break;
			s = semi + 1;
		}
	}
	fputs("]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
	lp_json__cstring(out, name);
	fputs(",\"unit\":", out);
	lp_json__cstring(out, unit);
	fputs(",\"startValue\":0,\"endValue\":", out);
	lp_json__number(out, total);
	fputs(",\n\"samples\":[", out);
	/* Pass 2: each distinct stack is one sample, root first. */
	for (size_t i = 0; i < n; i++) {
		const char *s = e[i]->stack, *end = s + e[i]->len;
		if (!(e[i]->weight[side] > 0))
			continue;
		fputs(nsamples++ ? ",\n[" : "\n[", out);
		for (int first = 1;; first = 0) {
			const char *semi = memchr(s, ';', end - s);
			const char *fe = semi ? semi : end;
			if (!first)
				putc_unlocked(',', out);
			put_index(out, table_intern(&t, s, fe - s, &added));
			if (!semi)
				break;
			s = semi + 1;
		}
		putc_unlocked(']', out);
	}
	fputs("],\n\"weights\":[", out);
	nsamples = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(e[i]->weight[side] > 0))
			continue;
		if (nsamples++)
			putc_unlocked(',', out);
		lp_json__number(out, e[i]->weight[side]);
	}
	fputs("]}]}\n", out);
	lp_hashmap__fini(&t.map);
	free(t.names);
	return ferror(out) ? -1 : 0;
}
