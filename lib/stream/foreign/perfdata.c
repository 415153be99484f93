/* perfdata.c - reads perf record's perf.data as lp samples (formats/foreign.md):
 * the layout of tools/perf/Documentation/perf.data-file-format.txt (Linux),
 * its records those of include/uapi/linux/perf_event.h, little-endian, a
 * file's or a pipe's (perf record -o -).  It owns, read in place:
 *   - the header, the events' attributes and names (the attrs section or the
 *     pipe's attr records; EVENT_DESC or the pipe's event updates, else the
 *     type and config), and the build-ids perf kept (HEADER_BUILD_ID);
 *   - the order of the data's records: perf writes each CPU's ring in turn,
 *     so they are sorted by time as perf script sorts them, a round
 *     (FINISHED_ROUND) at a time, up to the newest time of the round before;
 *   - the processes' maps (MMAP, MMAP2: copied by a FORK, emptied at exec)
 *     and the threads' names (COMM), as the records come;
 *   - each sample as an lp sample: time, pid, tid, cpu, the period as its
 *     weight, its callchain outermost first as raw frames (a user address an
 *     offset in its file, with the file's build-id, which lp-symbolize
 *     names; a kernel one as it is); LOST and LOST_SAMPLES as lost records.
 * Every length and offset is checked against the document. */
#include "base/hashmap.h"
#include "base/util.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/codec.h"

#include <endian.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf's own records (tools/perf/util/event.h), after the kernel's */
enum {
	REC_HEADER_ATTR = 64,
	REC_HEADER_TRACING_DATA = 66,
	REC_HEADER_BUILD_ID = 67,
	REC_FINISHED_ROUND = 68,
	REC_AUXTRACE = 71,
	REC_EVENT_UPDATE = 78,
	REC_HEADER_FEATURE = 80,
	REC_COMPRESSED = 81,
};
enum { FEAT_BUILD_ID = 2, FEAT_EVENT_DESC = 12 };	/* the header's feature bits */
#define EVENT_UPDATE_NAME 2	/* after the unit and the scale */
#define MISC_BUILD_ID_SIZE (1 << 15)	/* a build-id record says its id's size */
#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1U << 19)	/* Linux 6.8 */
#endif
#define SAMPLE_KNOWN ((uint64_t)PERF_SAMPLE_WEIGHT_STRUCT * 2 - 1)
#define ID_FIELDS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
		   PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16
#define ATTR_SIZE_VER0 64
#define BUILD_ID_MAX 20
#define KERNEL_MODULE "[kernel.kallsyms]"
/* A file mapped at an address less its offset below this is an executable
 * linked at a fixed address (0x400000 on x86-64, 0x8048000 on i386), not
 * PIE nor a library, which are mapped far above (0x55..., 0x7f...). */
#define FIXED_BELOW 0x10000000ULL

struct attr {
	uint64_t sample_type, read_format, branch_type, regs_user, regs_intr, period;
	bool freq, id_all;
	const char *name;
};

struct map {
	uint64_t start, end;
	uint64_t bias;	/* an address less it is the ELF address in the file */
	const char *path, *build_id;	/* interned; build_id "" when none */
	bool placed;	/* a file's (or the vDSO's): its addresses are offsets in it */
};

/* A process's maps, by start, none overlapping; shared by the processes a
 * fork made until one of them maps something. */
struct maps {
	size_t refs, n, cap;
	struct map *v;
};

struct build_id {
	const char *path, *hex;
};

/* A frame made from an address before. */
struct frame_slot {
	uint64_t addr;
	const char *module, *build_id;
	const struct lp_frame *frame;
};
#define FRAME_CACHE_BITS 12

/* A record that says something at a time, waiting for its round's sort. */
struct pending {
	uint64_t time, off;
};

/* The fields of a sample lp keeps. */
struct sample {
	uint64_t ip, time, period, nchain;
	uint32_t pid, tid, cpu;
	const unsigned char *chain;
	bool has_time;
};

/* The sample id fields that end the other records (sample_id_all). */
struct idinfo {
	uint64_t time;
	uint32_t pid, tid;
	bool has_time;
};

struct perfdata_dec {
	struct lp_dict *dict;
	const unsigned char *base;	/* the document */
	uint64_t len;
	uint64_t pos, end;		/* the data's records still to read */
	struct attr *attrs;
	size_t nattrs, attrs_cap;
	struct lp_hashmap ids;		/* event id -> attrs index + 1 */
	struct lp_hashmap maps;		/* pid + 1 -> struct maps */
	struct lp_hashmap comms;	/* tid + 1 -> interned name */
	struct lp_hashmap build_ids;	/* path's hash -> struct build_id (__add) */
	/* the records read and not yet handled, sorted up to ready */
	struct pending *queue;
	size_t n, cap, ready, next;
	uint64_t max_time, limit;	/* the newest time read; flushed up to */
	uint64_t ring_lost;		/* LOST records' counts, not yet in a tally */
	const struct lp_frame **frames;
	size_t frames_cap;
	struct frame_slot cache[1 << FRAME_CACHE_BITS];
	char why[256];
	const char *open_why;		/* not NULL: the document is not well-formed */
};

static int fail(struct perfdata_dec *d, const char **why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct perfdata_dec *d, const char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
	*why = d->why;
	return LP_CODEC_BAD;
}

/* How many elements an array of cap holds once it must hold need: doubled. */
static size_t grown(size_t cap, size_t need)
{
	size_t n = cap ? cap : 16;
	while (n < need)
		n *= 2;
	return n;
}

/* Makes array v (of cap elements) hold need. */
#define GROW(v, cap, need)                                                           \
	do {                                                                         \
		if ((need) > (cap)) {                                                \
			(cap) = grown((cap), (need));                                \
			(v) = lp_reallocarray((v), (cap), sizeof(*(v)));             \
		}                                                                    \
	} while (0)

/* --- bytes ----------------------------------------------------------------- */

static uint16_t get16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* Whether [off, off + size) lies within len bytes. */
static bool fits(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

/* Fields read one after the other, never past end: bad says one would be. */
struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static void skip(struct cursor *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

/* n items of size bytes each: checked before multiplying. */
static void skip_items(struct cursor *c, uint64_t n, uint64_t size)
{
	skip(c, n > (uint64_t)(c->end - c->p) / size ? UINT64_MAX : n * size);
}

static uint64_t take(struct cursor *c)
{
	const unsigned char *p = c->p;
	skip(c, 8);
	return c->bad ? 0 : get64(p);
}

/* A NUL-terminated string in [p, p + max): interned, or NULL if unended. */
static const char *string_in(struct perfdata_dec *d, const unsigned char *p, uint64_t max)
{
	const unsigned char *nul = memchr(p, '\0', max);
	return nul ? lp_dict__string(d->dict, (const char *)p, (size_t)(nul - p)) : NULL;
}

static const char *hex_string(struct perfdata_dec *d, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char hex[2 * BUILD_ID_MAX];
	n = n < BUILD_ID_MAX ? n : BUILD_ID_MAX;
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[p[i] >> 4];
		hex[2 * i + 1] = digits[p[i] & 15];
	}
	return lp_dict__string(d->dict, hex, 2 * n);
}

static uint64_t key32(uint32_t v)
{
	return (uint64_t)v + 1;	/* never 0 */
}

/* A pid, tid or cpu as lp says it: perf's -1 (and what no id can be) as none. */
static int32_t id32(uint32_t v)
{
	return v > INT32_MAX ? LP_ID_NONE : (int32_t)v;
}

/* --- events ---------------------------------------------------------------- */

/* An event's name from its type and config, as perf names the common ones. */
static const char *event_name(struct perfdata_dec *d, uint32_t type, uint64_t config)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses", "branches",
		"branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
		"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
		"bpf-output", "cgroup-switches",
	};
	static const char *const kinds[] = {
		"hardware", "software", "tracepoint", "hw-cache", "raw", "breakpoint",
	};
	char buf[64];
	if (type == PERF_TYPE_HARDWARE && config < sizeof(hw) / sizeof(hw[0]))
		return hw[config];
	if (type == PERF_TYPE_SOFTWARE && config < sizeof(sw) / sizeof(sw[0]))
		return sw[config];
	if (type < sizeof(kinds) / sizeof(kinds[0]))
		snprintf(buf, sizeof(buf), "%s:0x%llx", kinds[type], (unsigned long long)config);
	else
		snprintf(buf, sizeof(buf), "type%u:0x%llx", type, (unsigned long long)config);
	return lp_dict__string(d->dict, buf, strlen(buf));
}

/* A perf_event_attr of size bytes (its versions grow at the end). */
static int read_attr(struct perfdata_dec *d, const unsigned char *p, uint64_t size,
		     struct attr *a, const char **why)
{
	if (size < ATTR_SIZE_VER0)
		return fail(d, why, "an event's attributes are %llu bytes, fewer than the %d of "
			    "their first version", (unsigned long long)size, ATTR_SIZE_VER0);
	uint64_t flags = get64(p + 40);
	*a = (struct attr){
		.sample_type = get64(p + 24),
		.read_format = get64(p + 32),
		.period = get64(p + 16),
		.freq = flags >> 10 & 1,
		.id_all = flags >> 18 & 1,
		.branch_type = size >= 80 ? get64(p + 72) : 0,
		.regs_user = size >= 88 ? get64(p + 80) : 0,
		.regs_intr = size >= 104 ? get64(p + 96) : 0,
		.name = event_name(d, get32(p), get64(p + 8)),
	};
	if (a->sample_type & ~SAMPLE_KNOWN)
		return fail(d, why, "event %s: its sample_type 0x%llx has fields lp does not know",
			    a->name, (unsigned long long)a->sample_type);
	return 0;
}

/* Where a sample's event id is, in u64s after its header, and where the
 * other records' is, in u64s back from their end (perf's id_pos and
 * is_pos): -1, nowhere. */
static int id_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return __builtin_popcountll(t & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					 PERF_SAMPLE_ADDR));
}

static int is_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return 1 + __builtin_popcountll(t & (PERF_SAMPLE_CPU | PERF_SAMPLE_STREAM_ID));
}

/* An event and its ids.  Several events' records are told apart by the id
 * they carry, which must be where it is for all (as perf requires). */
static int add_attr(struct perfdata_dec *d, const struct attr *a, const unsigned char *ids,
		    uint64_t nids, const char **why)
{
	GROW(d->attrs, d->attrs_cap, d->nattrs + 1);
	d->attrs[d->nattrs++] = *a;
	for (uint64_t i = 0; i < nids; i++)
		lp_hashmap__put(&d->ids, lp_hashmap__key(get64(ids + 8 * i)),
				(void *)(uintptr_t)d->nattrs);
	const struct attr *first = &d->attrs[0];
	if (d->nattrs > 1 &&
	    (id_pos(first->sample_type) < 0 || id_pos(a->sample_type) != id_pos(first->sample_type) ||
	     a->id_all != first->id_all ||
	     (a->id_all && (is_pos(first->sample_type) < 0 ||
			    is_pos(a->sample_type) != is_pos(first->sample_type)))))
		return fail(d, why, "events %s and %s: their records do not say which event they "
			    "are of in the same place", first->name, a->name);
	return 0;
}

static struct attr *attr_of_id(struct perfdata_dec *d, uint64_t id)
{
	uintptr_t i = (uintptr_t)lp_hashmap__get(&d->ids, lp_hashmap__key(id));
	return i ? &d->attrs[i - 1] : NULL;
}

/* The event a record is of: the only one, or the one its id names. */
static const struct attr *record_attr(struct perfdata_dec *d, const unsigned char *r,
				      uint16_t size, bool is_sample, const char **why)
{
	if (!d->nattrs) {
		fail(d, why, "a record at byte %td comes before any event's attributes", r - d->base);
		return NULL;
	}
	const struct attr *first = &d->attrs[0];
	if (d->nattrs == 1 || (!is_sample && !first->id_all))
		return first;
	uint64_t pos = is_sample ? 8 + 8 * (uint64_t)id_pos(first->sample_type)
				 : size - 8 * (uint64_t)is_pos(first->sample_type);
	if (pos < 8 || !fits(pos, 8, size)) {
		fail(d, why, "the record at byte %td is too short for its event id", r - d->base);
		return NULL;
	}
	uint64_t id = get64(r + pos);
	const struct attr *a = id ? attr_of_id(d, id) : first;	/* 0: perf's own records */
	if (!a)
		fail(d, why, "the record at byte %td is of event id %llu, which no event has",
		     r - d->base, (unsigned long long)id);
	return a;
}

/* The sample id fields at the end of a record other than a sample, and
 * where its own fields end (*body). */
static int trailer(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
		   struct idinfo *out, uint64_t *body, const char **why)
{
	const struct attr *a = record_attr(d, r, size, false, why);
	if (!a)
		return LP_CODEC_BAD;
	uint64_t t = a->id_all ? a->sample_type & ID_FIELDS : 0;
	uint64_t n = 8 * (uint64_t)__builtin_popcountll(t);
	*out = (struct idinfo){ .pid = UINT32_MAX, .tid = UINT32_MAX };
	if (n > size - 8u)
		return fail(d, why, "the record at byte %td is too short for its sample id fields",
			    r - d->base);
	*body = size - n;
	const unsigned char *q = r + *body;
	if (t & PERF_SAMPLE_TID) {
		out->pid = get32(q);
		out->tid = get32(q + 4);
		q += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		out->time = get64(q);
		out->has_time = true;
	}
	return 0;
}

/* The record's own fields: at least need bytes after its header. */
static int body_at_least(struct perfdata_dec *d, const unsigned char *r, uint64_t body,
			 uint64_t need, const char *what, const char **why)
{
	if (body < need)
		return fail(d, why, "the %s record at byte %td is too short (%llu bytes)", what,
			    r - d->base, (unsigned long long)body);
	return 0;
}

/* --- header and features --------------------------------------------------- */

static void add_build_id(struct perfdata_dec *d, const char *path, const char *hex)
{
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, path, strlen(path)));
	size_t pos = 0;
	for (struct build_id *b; (b = lp_hashmap__next(&d->build_ids, key, &pos));)
		if (!strcmp(b->path, path))
			return;	/* the first one kept */
	struct build_id *b = lp_malloc(sizeof(*b));
	*b = (struct build_id){ path, hex };
	lp_hashmap__add(&d->build_ids, key, b);
}

static const char *build_id_of(struct perfdata_dec *d, const char *path)
{
	uint64_t key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, path, strlen(path)));
	size_t pos = 0;
	for (struct build_id *b; (b = lp_hashmap__next(&d->build_ids, key, &pos));)
		if (!strcmp(b->path, path))
			return b->hex;
	return "";
}

/* build_id_event records: header, pid, build_id[24], file name. */
static int read_build_ids(struct perfdata_dec *d, const unsigned char *p, uint64_t len,
			  const char **why)
{
	for (uint64_t off = 0; off < len;) {
		const unsigned char *e = p + off;
		uint16_t size = len - off >= 8 ? get16(e + 6) : 0;
		if (size < 37 || size > len - off)
			return fail(d, why, "a build-id record %s", size > len - off ? "is cut short"
							: "is too short for a file name");
		size_t n = get16(e + 4) & MISC_BUILD_ID_SIZE ? e[12 + BUILD_ID_MAX] : BUILD_ID_MAX;
		const char *path = string_in(d, e + 36, size - 36u);
		if (!path)
			return fail(d, why, "a build-id record's file name is not terminated");
		add_build_id(d, path, hex_string(d, e + 12, n));
		off += size;
	}
	return 0;
}

/* EVENT_DESC: nr, attr_size, then each event's attr, nr_ids, name, ids. */
static int read_event_desc(struct perfdata_dec *d, const unsigned char *p, uint64_t len,
			   const char **why)
{
	if (len < 8)
		return fail(d, why, "its event descriptions are cut short");
	uint32_t nr = get32(p), asize = get32(p + 4);
	uint64_t off = 8;
	for (uint32_t i = 0; i < nr; i++) {
		if (!fits(off, (uint64_t)asize + 8, len))
			return fail(d, why, "event description %u is cut short", i);
		uint32_t nids = get32(p + off + asize), slen = get32(p + off + asize + 4);
		uint64_t at = off + asize + 8;
		if (!fits(at, slen, len) || !fits(at + slen, 8 * (uint64_t)nids, len))
			return fail(d, why, "event description %u is cut short", i);
		const char *name = string_in(d, p + at, slen);
		struct attr *a = nids ? attr_of_id(d, get64(p + at + slen))
				      : i < d->nattrs ? &d->attrs[i] : NULL;
		if (a && name && *name)
			a->name = name;
		off = at + slen + 8 * (uint64_t)nids;
	}
	return 0;
}

static int read_feature(struct perfdata_dec *d, uint64_t feat, const unsigned char *p,
			uint64_t len, const char **why)
{
	if (feat == FEAT_BUILD_ID)
		return read_build_ids(d, p, len, why);
	if (feat == FEAT_EVENT_DESC)
		return read_event_desc(d, p, len, why);
	return 0;
}

/* The feature sections' table after the data, one per bit set in the
 * header's bitmap; each section checked, the ones lp uses read. */
static int read_features(struct perfdata_dec *d, uint64_t table, const char **why)
{
	for (unsigned bit = 0; bit < 256; bit++) {
		if (!(get64(d->base + 72 + 8 * (bit / 64)) >> (bit % 64) & 1))
			continue;
		if (!fits(table, 16, d->len))
			return fail(d, why, "truncated: its feature sections' table runs past its "
				    "end (%llu bytes)", (unsigned long long)d->len);
		uint64_t off = get64(d->base + table), size = get64(d->base + table + 8);
		table += 16;
		if (!fits(off, size, d->len))
			return fail(d, why, "truncated: feature section %u (%llu bytes at byte %llu) "
				    "runs past its end (%llu bytes)", bit, (unsigned long long)size,
				    (unsigned long long)off, (unsigned long long)d->len);
		if (read_feature(d, bit, d->base + off, size, why) < 0)
			return LP_CODEC_BAD;
	}
	return 0;
}

/* The attrs section: each perf_event_attr followed by its ids' section. */
static int read_attrs(struct perfdata_dec *d, const char **why)
{
	const unsigned char *h = d->base;
	uint64_t asize = get64(h + 16), off = get64(h + 24), size = get64(h + 32);
	if (asize < ATTR_SIZE_VER0 + 16 || asize > 65536)
		return fail(d, why, "its attributes' size %llu is not an event's",
			    (unsigned long long)asize);
	if (!fits(off, size, d->len))
		return fail(d, why, "truncated: its attrs section (%llu bytes at byte %llu) runs "
			    "past its end (%llu bytes)", (unsigned long long)size,
			    (unsigned long long)off, (unsigned long long)d->len);
	if (size % asize || !size)
		return fail(d, why, "its attrs section is %llu bytes, not a whole number of "
			    "%llu-byte events", (unsigned long long)size, (unsigned long long)asize);
	for (uint64_t at = off; at < off + size; at += asize) {
		struct attr a;
		const unsigned char *ids = d->base + at + asize - 16;
		uint64_t ioff = get64(ids), isize = get64(ids + 8);
		if (read_attr(d, d->base + at, asize - 16, &a, why) < 0)
			return LP_CODEC_BAD;
		if (!fits(ioff, isize, d->len) || isize % 8)
			return fail(d, why, "event %s: its ids (%llu bytes at byte %llu) are not "
				    "within the file", a.name, (unsigned long long)isize,
				    (unsigned long long)ioff);
		if (add_attr(d, &a, d->base + ioff, isize / 8, why) < 0)
			return LP_CODEC_BAD;
	}
	return 0;
}

static int read_header(struct perfdata_dec *d, const char **why)
{
	const unsigned char *h = d->base;
	if (d->len >= 8 && !memcmp(h, "2ELIFREP", 8))
		return fail(d, why, "a big-endian perf.data: lp reads little-endian ones only");
	if (d->len >= 8 && !memcmp(h, "PERFFILE", 8))
		return fail(d, why, "perf.data version 1 (PERFFILE): lp reads version 2 only");
	if (d->len < 8 || memcmp(h, "PERFILE2", 8))
		return fail(d, why, "not perf.data (it does not begin with PERFILE2)");
	if (d->len < PIPE_HEADER_SIZE)
		return fail(d, why, "truncated: %llu bytes, less than its header",
			    (unsigned long long)d->len);
	uint64_t hsize = get64(h + 8);
	if (hsize == PIPE_HEADER_SIZE) {	/* a pipe's: everything in records */
		d->pos = PIPE_HEADER_SIZE;
		d->end = d->len;
		return 0;
	}
	if (hsize < FILE_HEADER_SIZE)
		return fail(d, why, "its header size %llu is neither a file's nor a pipe's",
			    (unsigned long long)hsize);
	if (d->len < FILE_HEADER_SIZE)
		return fail(d, why, "truncated: %llu bytes, less than its header",
			    (unsigned long long)d->len);
	if (read_attrs(d, why) < 0)
		return LP_CODEC_BAD;
	uint64_t off = get64(h + 40), size = get64(h + 48);
	if (!size) {	/* perf record did not finish: the data runs to the end */
		d->pos = off <= d->len ? off : d->len;
		d->end = d->len;
		return 0;
	}
	if (!fits(off, size, d->len))
		return fail(d, why, "truncated: its data section (bytes %llu to %llu) runs past its "
			    "end (%llu bytes)", (unsigned long long)off,
			    (unsigned long long)(off + size), (unsigned long long)d->len);
	d->pos = off;
	d->end = off + size;
	return read_features(d, d->end, why);
}

/* --- records read when met: the pipe's header records ---------------------- */

/* PERF_RECORD_HEADER_ATTR: a perf_event_attr, then its ids. */
static int read_attr_record(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
			    const char **why)
{
	if (size < 8 + 8)
		return fail(d, why, "an attr record is too short");
	uint64_t asize = get32(r + 12) ? get32(r + 12) : ATTR_SIZE_VER0;
	if (asize > size - 8u)
		return fail(d, why, "an attr record's attributes (%llu bytes) run past its end",
			    (unsigned long long)asize);
	struct attr a;
	if (read_attr(d, r + 8, asize, &a, why) < 0)
		return LP_CODEC_BAD;
	return add_attr(d, &a, r + 8 + asize, (size - 8 - asize) / 8, why);
}

static int read_meta(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
		     uint16_t size, const char **why)
{
	switch (type) {
	case REC_HEADER_ATTR:
		return read_attr_record(d, r, size, why);
	case REC_EVENT_UPDATE:
		if (size > 24 && get64(r + 8) == EVENT_UPDATE_NAME) {
			struct attr *a = attr_of_id(d, get64(r + 16));
			const char *name = string_in(d, r + 24, size - 24u);
			if (a && name && *name)
				a->name = name;
		}
		return 0;
	case REC_HEADER_BUILD_ID:
		return read_build_ids(d, r, size, why);
	case REC_HEADER_FEATURE:
		return size < 16 ? 0 : read_feature(d, get64(r + 8), r + 16, size - 16u, why);
	case REC_COMPRESSED:
		return fail(d, why, "compressed records (perf record -z): lp does not read them; "
			    "record without -z");
	}
	return 0;
}

/* --- the order of the records ---------------------------------------------- */

/* When a record queued happened; one that does not say, the newest time
 * read so far. */
static int record_time(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
		       uint16_t size, uint64_t *time, const char **why)
{
	struct idinfo id = { 0 };
	uint64_t body;
	if (type == PERF_RECORD_SAMPLE) {
		const struct attr *a = record_attr(d, r, size, true, why);
		if (!a)
			return LP_CODEC_BAD;
		uint64_t t = a->sample_type, at = 8 + 8 * (uint64_t)__builtin_popcountll(
			t & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID));
		id.has_time = t & PERF_SAMPLE_TIME && fits(at, 8, size);
		id.time = id.has_time ? get64(r + at) : 0;
	} else if (trailer(d, r, size, &id, &body, why) < 0) {
		return LP_CODEC_BAD;
	}
	if (type == PERF_RECORD_LOST_SAMPLES && !id.time)
		id.has_time = false;	/* perf record's tally at its end */
	if (id.has_time && id.time > d->max_time)
		d->max_time = id.time;
	*time = id.has_time ? id.time : d->max_time;
	return 0;
}

static int queue_record(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
			uint16_t size, const char **why)
{
	uint64_t time;
	if (record_time(d, r, type, size, &time, why) < 0)
		return LP_CODEC_BAD;
	GROW(d->queue, d->cap, d->n + 1);
	d->queue[d->n++] = (struct pending){ time, (uint64_t)(r - d->base) };
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The bytes after a record's own that belong to it (AUXTRACE's trace,
 * a pipe's tracing data), or -1 when they run past the end. */
static int64_t payload(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
		       uint16_t size)
{
	uint64_t n = 0, left = d->end - (uint64_t)(r - d->base) - size;
	if (type == REC_AUXTRACE && size >= 16)
		n = get64(r + 8);
	else if (type == REC_HEADER_TRACING_DATA && size >= 12)
		n = ((uint64_t)get32(r + 8) + 7) & ~(uint64_t)7;
	return n <= left ? (int64_t)n : -1;
}

/* Reads the data's records to the end of a round (FINISHED_ROUND) or of
 * the data: those that say something at a time queued, the pipe's header
 * records read now.  Then the queue is sorted, and what it holds up to the
 * newest time of the round before (all of it at the end) made ready. */
static int read_round(struct perfdata_dec *d, const char **why)
{
	bool round = false;
	while (!round && d->pos < d->end) {
		const unsigned char *r = d->base + d->pos;
		uint16_t size = d->end - d->pos >= 8 ? get16(r + 6) : 0;
		uint32_t type = size ? get32(r) : 0;
		if (size < 8 || size > d->end - d->pos)
			return fail(d, why, "the record at byte %llu %s", (unsigned long long)d->pos,
				    d->end - d->pos < 8 ? "is cut short"
				    : size < 8 ? "has a size less than its header"
					       : "runs past the end of the data section");
		int64_t more = payload(d, r, type, size);
		if (more < 0)
			return fail(d, why, "the data of the record at byte %llu runs past the end "
				    "of the data section", (unsigned long long)d->pos);
		switch (type) {
		case PERF_RECORD_SAMPLE:
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			if (queue_record(d, r, type, size, why) < 0)
				return LP_CODEC_BAD;
			break;
		case REC_FINISHED_ROUND:
			round = true;
			break;
		default:
			if (read_meta(d, r, type, size, why) < 0)
				return LP_CODEC_BAD;
		}
		d->pos += size + (uint64_t)more;
	}
	if (d->n)
		qsort(d->queue, d->n, sizeof(*d->queue), cmp_pending);
	d->ready = d->n;
	if (d->pos < d->end) {
		while (d->ready && d->queue[d->ready - 1].time > d->limit)
			d->ready--;
		d->limit = d->max_time;
	}
	return 0;
}

/* --- processes and threads ------------------------------------------------- */

static struct maps *maps_of(struct perfdata_dec *d, uint32_t pid)
{
	return lp_hashmap__get(&d->maps, key32(pid));
}

static void maps_release(struct maps *m)
{
	if (m && !--m->refs) {
		free(m->v);
		free(m);
	}
}

/* pid's maps from now on: m (shared), or none. */
static void maps_set(struct perfdata_dec *d, uint32_t pid, struct maps *m)
{
	if (m)
		m->refs++;
	maps_release(m ? lp_hashmap__put(&d->maps, key32(pid), m)
		       : lp_hashmap__del(&d->maps, key32(pid)));
}

/* pid's maps, its own to change. */
static struct maps *maps_own(struct perfdata_dec *d, uint32_t pid)
{
	struct maps *m = maps_of(d, pid), *own;
	if (m && m->refs == 1)
		return m;
	own = lp_calloc(1, sizeof(*own));
	if (m) {
		own->v = lp_reallocarray(NULL, m->n + 1, sizeof(*own->v));
		memcpy(own->v, m->v, m->n * sizeof(*m->v));
		own->n = m->n;
		own->cap = m->n + 1;
	}
	maps_set(d, pid, own);
	return own;
}

/* The first map that ends after addr. */
static size_t maps_after(const struct maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct map *maps_find(const struct maps *m, uint64_t addr)
{
	size_t i = m ? maps_after(m, addr) : 0;
	return m && i < m->n && m->v[i].start <= addr ? &m->v[i] : NULL;
}

/* Maps x over whatever it covers: the parts of older maps outside it stay. */
static void maps_insert(struct maps *m, const struct map *x)
{
	size_t i = maps_after(m, x->start), j = i;
	while (j < m->n && m->v[j].start < x->end)
		j++;
	struct map head = i < j ? m->v[i] : (struct map){ 0 }, tail = j > i ? m->v[j - 1] : head;
	bool keep_head = i < j && head.start < x->start, keep_tail = j > i && tail.end > x->end;
	size_t n = keep_head + 1 + keep_tail;
	GROW(m->v, m->cap, m->n - (j - i) + n);
	memmove(m->v + i + n, m->v + j, (m->n - j) * sizeof(*m->v));
	m->n = m->n - (j - i) + n;
	if (keep_head) {
		head.end = x->start;
		m->v[i++] = head;
	}
	m->v[i++] = *x;
	if (keep_tail) {
		tail.start = x->end;
		m->v[i] = tail;
	}
}

static const char *comm_of(struct perfdata_dec *d, uint32_t pid, uint32_t tid)
{
	const char *c = lp_hashmap__get(&d->comms, key32(tid));
	if (!c)
		c = lp_hashmap__get(&d->comms, key32(pid));
	return c ? c : "";
}

/* MMAP: pid, tid, addr, len, pgoff, file name; MMAP2: ..., a build-id or
 * the file's device and inode, prot, flags, file name. */
static int read_mmap(struct perfdata_dec *d, const unsigned char *r, uint32_t type, uint16_t size,
		     uint16_t misc, const char **why)
{
	struct idinfo id;
	uint64_t body, name_at = type == PERF_RECORD_MMAP ? 40 : 72;
	if (trailer(d, r, size, &id, &body, why) < 0 ||
	    body_at_least(d, r, body, name_at + 1, "mmap", why) < 0)
		return LP_CODEC_BAD;
	const char *path = string_in(d, r + name_at, body - name_at);
	uint64_t start = get64(r + 16), len = get64(r + 24);
	if (!path)
		return fail(d, why, "the mmap record at byte %td: its file name is not terminated",
			    r - d->base);
	if (start + len < start)
		return fail(d, why, "the mmap record at byte %td maps past the end of memory",
			    r - d->base);
	unsigned mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (!len || misc & PERF_RECORD_MISC_MMAP_DATA || mode == PERF_RECORD_MISC_KERNEL ||
	    mode == PERF_RECORD_MISC_GUEST_KERNEL)
		return 0;	/* no code, or the kernel's, whose frames stay addresses */
	struct map m = {
		.start = start, .end = start + len, .bias = start - get64(r + 32), .path = path,
		.placed = (path[0] == '/' && path[1] != '/') || !strcmp(path, "[vdso]"),
	};
	if (m.bias < FIXED_BELOW)	/* not PIE: its ELF addresses are its run-time ones */
		m.bias = 0;
	if (type == PERF_RECORD_MMAP2 && misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		m.build_id = hex_string(d, r + 44, r[40]);
	else
		m.build_id = build_id_of(d, path);
	maps_insert(maps_own(d, get32(r + 8)), &m);
	return 0;
}

/* COMM: pid, tid, name; at an exec the process's maps are gone. */
static int read_comm(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
		     uint16_t misc, const char **why)
{
	struct idinfo id;
	uint64_t body;
	if (trailer(d, r, size, &id, &body, why) < 0 ||
	    body_at_least(d, r, body, 17, "comm", why) < 0)
		return LP_CODEC_BAD;
	const char *comm = string_in(d, r + 16, body - 16);
	if (!comm)
		return fail(d, why, "the comm record at byte %td: its name is not terminated",
			    r - d->base);
	lp_hashmap__put(&d->comms, key32(get32(r + 12)), (void *)comm);
	if (misc & PERF_RECORD_MISC_COMM_EXEC)
		maps_set(d, get32(r + 8), NULL);
	return 0;
}

/* FORK: pid, ppid, tid, ptid (the thread that forked): the new thread is
 * named as its maker, and a new process has its maps. */
static int read_fork(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
		     const char **why)
{
	struct idinfo id;
	uint64_t body;
	if (trailer(d, r, size, &id, &body, why) < 0 ||
	    body_at_least(d, r, body, 32, "fork", why) < 0)
		return LP_CODEC_BAD;
	uint32_t pid = get32(r + 8), ppid = get32(r + 12), tid = get32(r + 16), ptid = get32(r + 20);
	const char *comm = comm_of(d, ppid, ptid);
	if (*comm)
		lp_hashmap__put(&d->comms, key32(tid), (void *)comm);
	if (pid != ppid)
		maps_set(d, pid, maps_of(d, ppid));
	return 0;
}

/* --- samples --------------------------------------------------------------- */

static void skip_read(struct cursor *c, uint64_t format)
{
	uint64_t times = !!(format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(format & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t value = 1 + !!(format & PERF_FORMAT_ID) + !!(format & PERF_FORMAT_LOST);
	if (format & PERF_FORMAT_GROUP) {
		uint64_t nr = take(c);
		skip_items(c, times, 8);
		skip_items(c, nr, 8 * value);
	} else {
		skip_items(c, times + value, 8);
	}
}

static void skip_regs(struct cursor *c, uint64_t mask)
{
	if (take(c))	/* the ABI: none, no registers */
		skip_items(c, (uint64_t)__builtin_popcountll(mask), 8);
}

/* The fields of a sample in perf_event.h's order, those after the
 * callchain only skipped. */
static int parse_sample(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
			const struct attr *a, struct sample *s, const char **why)
{
	struct cursor c = { r + 8, r + size, false };
	uint64_t t = a->sample_type;
	*s = (struct sample){ .pid = UINT32_MAX, .tid = UINT32_MAX, .cpu = UINT32_MAX,
			      .period = a->freq ? 1 : a->period };
	if (t & PERF_SAMPLE_IDENTIFIER)
		take(&c);
	if (t & PERF_SAMPLE_IP)
		s->ip = take(&c);
	if (t & PERF_SAMPLE_TID) {
		uint64_t v = take(&c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME) {
		s->time = take(&c);
		s->has_time = true;
	}
	skip_items(&c, (uint64_t)__builtin_popcountll(
			   t & (PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID)), 8);
	if (t & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)take(&c);
	if (t & PERF_SAMPLE_PERIOD)
		s->period = take(&c);
	if (t & PERF_SAMPLE_READ)
		skip_read(&c, a->read_format);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->nchain = take(&c);
		s->chain = c.p;
		skip_items(&c, s->nchain, 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		uint64_t n = c.end - c.p >= 4 ? get32(c.p) : 0;
		skip(&c, 4);
		skip(&c, n);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = take(&c);
		if (a->branch_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take(&c);
		skip_items(&c, nr, 24);
		if (a->branch_type & PERF_SAMPLE_BRANCH_COUNTERS)
			skip_items(&c, nr, 8);
	}
	if (t & PERF_SAMPLE_REGS_USER)
		skip_regs(&c, a->regs_user);
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t n = take(&c);
		if (n) {
			skip(&c, n);
			take(&c);	/* its dynamic size */
		}
	}
	skip_items(&c, (uint64_t)__builtin_popcountll(t & (PERF_SAMPLE_WEIGHT_TYPE |
			   PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION)), 8);
	if (t & PERF_SAMPLE_REGS_INTR)
		skip_regs(&c, a->regs_intr);
	skip_items(&c, (uint64_t)__builtin_popcountll(t & (PERF_SAMPLE_PHYS_ADDR |
			   PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |
			   PERF_SAMPLE_CODE_PAGE_SIZE)), 8);
	if (t & PERF_SAMPLE_AUX)
		skip(&c, take(&c));
	if (c.bad)
		return fail(d, why, "the sample at byte %td: its fields run past its end (%u bytes)",
			    r - d->base, size);
	if (s->has_time && s->time > INT64_MAX)
		return fail(d, why, "the sample at byte %td: its time %llu is past 2^63 - 1",
			    r - d->base, (unsigned long long)s->time);
	return 0;
}

/* A frame made before, by its kind, address, module and build-id (the
 * strings compared by pointer: interned, or literals), else made now. */
static const struct lp_frame *cached_frame(struct perfdata_dec *d, char kind, uint64_t addr,
					   const char *module, const char *build_id)
{
	struct frame_slot *s = &d->cache[((addr ^ (uintptr_t)module) * 0x9e3779b97f4a7c15ULL) >>
					 (64 - FRAME_CACHE_BITS)];
	if (s->frame && s->frame->kind == kind && s->addr == addr && s->module == module &&
	    s->build_id == build_id)
		return s->frame;
	*s = (struct frame_slot){ addr, module, build_id, kind == LP_FRAME_KERNEL
		? lp_dict__frame(d->dict, kind, addr, module, "", "")
		: lp_dict__raw_frame(d->dict, addr, module, build_id) };
	return s->frame;
}

/* One address: a kernel one as it is; a user one in a file as the offset
 * in the file (a return address less one, in its call, as lp-record's raw
 * frames), else as it is (outside every file: [unknown] when 0). */
static const struct lp_frame *frame(struct perfdata_dec *d, const struct maps *maps,
				    uint64_t addr, bool kernel, bool ret)
{
	if (kernel)
		return cached_frame(d, LP_FRAME_KERNEL, addr, KERNEL_MODULE, "");
	uint64_t look = ret && addr ? addr - 1 : addr;
	const struct map *m = maps_find(maps, look);
	if (!m || !m->placed)
		return cached_frame(d, LP_FRAME_USER, addr, addr ? "" : "[unknown]", "");
	return cached_frame(d, LP_FRAME_USER, look - m->bias, m->path, m->build_id);
}

static bool kernel_mode(unsigned mode)
{
	return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL ||
	       mode == PERF_RECORD_MISC_HYPERVISOR;
}

/* The sample's stack, outermost first: its callchain reversed, the
 * context markers saying whose the addresses after them are; or its ip. */
static const struct lp_stack *sample_stack(struct perfdata_dec *d, const struct sample *s,
					   uint16_t misc)
{
	const struct maps *maps = maps_of(d, s->pid);
	bool kernel = kernel_mode(misc & PERF_RECORD_MISC_CPUMODE_MASK), first = true;
	size_t n = 0;
	GROW(d->frames, d->frames_cap, s->nchain + 1);
	for (uint64_t i = 0; i < s->nchain; i++) {
		uint64_t v = get64(s->chain + 8 * i);
		if (v >= PERF_CONTEXT_MAX) {
			if (v != PERF_CONTEXT_GUEST)
				kernel = v == PERF_CONTEXT_KERNEL || v == PERF_CONTEXT_GUEST_KERNEL ||
					 v == PERF_CONTEXT_HV;
			first = true;
			continue;
		}
		d->frames[n++] = frame(d, maps, v, kernel, !first);
		first = false;
	}
	if (!n)
		d->frames[n++] = frame(d, maps, s->ip, kernel, false);
	for (size_t i = 0; i < n / 2; i++) {
		const struct lp_frame *f = d->frames[i];
		d->frames[i] = d->frames[n - 1 - i];
		d->frames[n - 1 - i] = f;
	}
	return lp_dict__stack(d->dict, d->frames, n);
}

static int emit_sample(struct perfdata_dec *d, const unsigned char *r, uint16_t size,
		       uint16_t misc, struct lp_record *rec, const char **why)
{
	const struct attr *a = record_attr(d, r, size, true, why);
	struct sample s;
	if (!a || parse_sample(d, r, size, a, &s, why) < 0)
		return LP_CODEC_BAD;
	rec->kind = LP_REC_SAMPLE;
	rec->sample = (struct lp_sample){
		.time_ns = s.has_time ? (int64_t)s.time : LP_TIME_NONE,
		.pid = id32(s.pid),
		.tid = id32(s.tid),
		.cpu = id32(s.cpu),
		.comm = s.tid != UINT32_MAX ? comm_of(d, s.pid, s.tid) : "",
		.event = a->name,
		.weight = (double)s.period,
		.stack = sample_stack(d, &s, misc),
	};
	return 1;
}

/* LOST: id, lost; LOST_SAMPLES: lost. */
static int emit_lost(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
		     uint16_t size, struct lp_record *rec, const char **why)
{
	struct idinfo id;
	uint64_t body, at = type == PERF_RECORD_LOST ? 16 : 8;
	if (trailer(d, r, size, &id, &body, why) < 0 ||
	    body_at_least(d, r, body, at + 8, "lost", why) < 0)
		return LP_CODEC_BAD;
	uint64_t count = get64(r + at), counted;
	if (type == PERF_RECORD_LOST) {
		d->ring_lost += count;
	} else if (!id.time) {	/* perf record's tally of what LOST records said */
		counted = count < d->ring_lost ? count : d->ring_lost;
		d->ring_lost -= counted;
		if (!(count -= counted))
			return 0;
		id.has_time = false;
	}
	if (id.has_time && id.time > INT64_MAX)
		return fail(d, why, "the lost record at byte %td: its time %llu is past 2^63 - 1",
			    r - d->base, (unsigned long long)id.time);
	rec->kind = LP_REC_LOST;
	rec->lost = (struct lp_lost){
		.time_ns = id.has_time ? (int64_t)id.time : LP_TIME_NONE,
		.what = "ring",
		.count = count > INT64_MAX ? INT64_MAX : count,
	};
	return 1;
}

/* A queued record: 1 and *rec when it makes one, 0 when it makes none. */
static int handle(struct perfdata_dec *d, uint64_t off, struct lp_record *rec, const char **why)
{
	const unsigned char *r = d->base + off;
	uint32_t type = get32(r);
	uint16_t misc = get16(r + 4), size = get16(r + 6);
	switch (type) {
	case PERF_RECORD_SAMPLE:
		return emit_sample(d, r, size, misc, rec, why);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return read_mmap(d, r, type, size, misc, why);
	case PERF_RECORD_COMM:
		return read_comm(d, r, size, misc, why);
	case PERF_RECORD_FORK:
		return read_fork(d, r, size, why);
	default:
		return emit_lost(d, r, type, size, rec, why);
	}
}

/* --- the codec ------------------------------------------------------------- */

static void *perfdata_open(struct lp_dict *dict, const struct lp_doc *doc,
			   const struct lp_input_opts *opts)
{
	(void)opts;
	struct perfdata_dec *d = lp_calloc(1, sizeof(*d));
	d->dict = dict;
	d->base = doc->data;
	d->len = doc->len;
	lp_hashmap__init(&d->ids);
	lp_hashmap__init(&d->maps);
	lp_hashmap__init(&d->comms);
	lp_hashmap__init(&d->build_ids);
	read_header(d, &d->open_why);
	return d;
}

static int perfdata_next(void *dec, struct lp_record *rec, const char **why)
{
	struct perfdata_dec *d = dec;
	if (d->open_why) {
		*why = d->open_why;
		return LP_CODEC_BAD;
	}
	for (;;) {
		while (d->next < d->ready) {
			int rc = handle(d, d->queue[d->next++].off, rec, why);
			if (rc)
				return rc;
		}
		if (d->pos >= d->end && d->ready == d->n)
			return 0;
		if (d->ready) {
			memmove(d->queue, d->queue + d->ready, (d->n - d->ready) * sizeof(*d->queue));
			d->n -= d->ready;
			d->ready = d->next = 0;
		}
		if (read_round(d, why) < 0)
			return LP_CODEC_BAD;
	}
}

static void perfdata_close(void *dec)
{
	struct perfdata_dec *d = dec;
	for (size_t i = 0; i < d->maps.cap; i++)
		if (d->maps.keys[i])
			maps_release(d->maps.values[i]);
	for (size_t i = 0; i < d->build_ids.cap; i++)
		if (d->build_ids.keys[i])
			free(d->build_ids.values[i]);
	lp_hashmap__fini(&d->ids);
	lp_hashmap__fini(&d->maps);
	lp_hashmap__fini(&d->comms);
	lp_hashmap__fini(&d->build_ids);
	free(d->attrs);
	free(d->queue);
	free(d->frames);
	free(d);
}

/* perf.data's magic, and its byte-swapped form, refused when read. */
static bool perfdata_claims(const struct lp_doc *doc)
{
	return !doc->json && doc->len >= 8 &&
	       (!memcmp(doc->data, "PERFILE2", 8) || !memcmp(doc->data, "2ELIFREP", 8));
}

const struct lp_codec lp_codec_perfdata = {
	.name = "perfdata", .format = LP_INPUT_PERFDATA, .claims = perfdata_claims,
	.open_doc = perfdata_open, .next_doc = perfdata_next, .close = perfdata_close,
};
