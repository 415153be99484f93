/* speedscope.c - speedscope JSON from an aggregated profile (speedscope.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "output/speedscope.h"
#include "base/util.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

/* Frame names -> index in shared.frames: open addressing on the names as
 * they sit inside the profile's stack strings (no copies). */
struct frame_slot {
	const char *name;	/* NULL: empty slot */
	uint32_t len, index;
	uint64_t hash;
};

struct frame_table {
	struct frame_slot *slots;
	size_t mask, count;
};

static void table_grow(struct frame_table *t)
{
	size_t cap = t->slots ? (t->mask + 1) * 2 : 1024;
	struct frame_slot *slots = lp_calloc(cap, sizeof(*slots));

	for (size_t i = 0; t->slots && i <= t->mask; i++) {
		struct frame_slot *s = &t->slots[i];
		if (!s->name)
			continue;
		size_t j = s->hash & (cap - 1);
		while (slots[j].name)
			j = (j + 1) & (cap - 1);
		slots[j] = *s;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = cap - 1;
}

/* Index of name; *added tells whether it is new (and gets index count). */
static uint32_t table_intern(struct frame_table *t, const char *name, size_t len, int *added)
{
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, name, len);

	if (!t->slots || (t->count + 1) * 4 > (t->mask + 1) * 3)
		table_grow(t);
	size_t j = h & t->mask;
	for (;; j = (j + 1) & t->mask) {
		struct frame_slot *s = &t->slots[j];
		if (!s->name)
			break;
		if (s->hash == h && s->len == len && memcmp(s->name, name, len) == 0) {
			*added = 0;
			return s->index;
		}
	}
	t->slots[j] = (struct frame_slot){ name, (uint32_t)len, (uint32_t)t->count, h };
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
	free(t.slots);
	return ferror(out) ? -1 : 0;
}
