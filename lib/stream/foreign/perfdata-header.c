/* perfdata-header.c - perf.data's header (a file's or a pipe's), its
 * events' attributes and names, the features lp reads (build-ids, event
 * descriptions, the architecture, perf record -z's compression) and the
 * pipe's header records met among the data's (perfdata-internal.h). */
#include "stream/foreign/perfdata-internal.h"

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
		return lp_perfdata__fail(d, why, "an event's attributes are %llu bytes, fewer than the %d of "
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
		return lp_perfdata__fail(d, why, "event %s: its sample_type 0x%llx has fields lp does not know",
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
		return lp_perfdata__fail(d, why, "events %s and %s: their records do not say which event they "
			    "are of in the same place", first->name, a->name);
	return 0;
}

static struct attr *attr_of_id(struct perfdata_dec *d, uint64_t id)
{
	uintptr_t i = (uintptr_t)lp_hashmap__get(&d->ids, lp_hashmap__key(id));
	return i ? &d->attrs[i - 1] : NULL;
}

/* The event a record is of: the only one, or the one its id names. */
const struct attr *lp_perfdata__record_attr(struct perfdata_dec *d, const unsigned char *r,
				      uint16_t size, bool is_sample, const char **why)
{
	if (!d->nattrs) {
		lp_perfdata__fail(d, why, "a record at %s comes before any event's attributes",
				  lp_perfdata__at(d, r));
		return NULL;
	}
	const struct attr *first = &d->attrs[0];
	if (d->nattrs == 1 || (!is_sample && !first->id_all))
		return first;
	uint64_t pos = is_sample ? 8 + 8 * (uint64_t)id_pos(first->sample_type)
				 : size - 8 * (uint64_t)is_pos(first->sample_type);
	if (pos < 8 || !fits(pos, 8, size)) {
		lp_perfdata__fail(d, why, "the record at %s is too short for its event id",
				  lp_perfdata__at(d, r));
		return NULL;
	}
	uint64_t id = get64(r + pos);
	const struct attr *a = id ? attr_of_id(d, id) : first;	/* 0: perf's own records */
	if (!a)
		lp_perfdata__fail(d, why, "the record at %s is of event id %llu, which no event has",
		     lp_perfdata__at(d, r), (unsigned long long)id);
	return a;
}

/* A record other than a sample: the sample id fields at its end (its time),
 * and where its own fields, at least need bytes after its header, end. */
int lp_perfdata__trailer(struct perfdata_dec *d, const unsigned char *r, uint16_t size, uint64_t need,
		   struct idinfo *out, uint64_t *body, const char **why)
{
	const struct attr *a = lp_perfdata__record_attr(d, r, size, false, why);
	if (!a)
		return LP_CODEC_BAD;
	uint64_t t = a->id_all ? a->sample_type & ID_FIELDS : 0;
	uint64_t n = 8 * (uint64_t)__builtin_popcountll(t);
	if (n + need > size - 8u)
		return lp_perfdata__fail(d, why, "the record at %s (type %u) is too short: %u bytes",
			    lp_perfdata__at(d, r), get32(r), size);
	*body = size - n;
	out->has_time = t & PERF_SAMPLE_TIME;
	out->time = out->has_time ? get64(r + *body + 8 * !!(t & PERF_SAMPLE_TID)) : 0;
	return 0;
}

/* --- header and features --------------------------------------------------- */

/* The build-id perf kept for path, or NULL; *key its key. */
static struct build_id *find_build_id(struct perfdata_dec *d, const char *path, uint64_t *key)
{
	size_t pos = 0;
	*key = lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, path, strlen(path)));
	for (struct build_id *b; (b = lp_hashmap__next(&d->build_ids, *key, &pos));)
		if (!strcmp(b->path, path))
			return b;
	return NULL;
}

const char *lp_perfdata__build_id_of(struct perfdata_dec *d, const char *path)
{
	uint64_t key;
	struct build_id *b = find_build_id(d, path, &key);
	return b ? b->hex : "";
}

/* build_id_event records: header, pid, build_id[24], file name. */
static int read_build_ids(struct perfdata_dec *d, const unsigned char *p, uint64_t len,
			  const char **why)
{
	for (uint64_t off = 0; off < len;) {
		const unsigned char *e = p + off;
		uint16_t size = len - off >= 8 ? get16(e + 6) : 0;
		if (size < 37 || size > len - off)
			return lp_perfdata__fail(d, why, "a build-id record %s", size > len - off ? "is cut short"
							: "is too short for a file name");
		size_t n = get16(e + 4) & MISC_BUILD_ID_SIZE ? e[12 + BUILD_ID_MAX] : BUILD_ID_MAX;
		const char *path = string_in(d, e + 36, size - 36u);
		if (!path)
			return lp_perfdata__fail(d, why, "a build-id record's file name is not terminated");
		uint64_t key;
		if (!find_build_id(d, path, &key)) {	/* the first one kept */
			struct build_id *b = lp_malloc(sizeof(*b));
			*b = (struct build_id){ path, hex_string(d, e + 12, n) };
			lp_hashmap__add(&d->build_ids, key, b);
		}
		off += size;
	}
	return 0;
}

/* EVENT_DESC: nr, attr_size, then each event's attr, nr_ids, name, ids. */
static int read_event_desc(struct perfdata_dec *d, const unsigned char *p, uint64_t len,
			   const char **why)
{
	if (len < 8)
		return lp_perfdata__fail(d, why, "its event descriptions are cut short");
	uint32_t nr = get32(p), asize = get32(p + 4);
	uint64_t off = 8;
	for (uint32_t i = 0; i < nr; i++) {
		if (!fits(off, (uint64_t)asize + 8, len))
			return lp_perfdata__fail(d, why, "event description %u is cut short", i);
		uint32_t nids = get32(p + off + asize), slen = get32(p + off + asize + 4);
		uint64_t at = off + asize + 8;
		if (!fits(at, slen, len) || !fits(at + slen, 8 * (uint64_t)nids, len))
			return lp_perfdata__fail(d, why, "event description %u is cut short", i);
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
	/* perf_header_string: its length (padded), its NUL-terminated text */
	if (feat == FEAT_ARCH && len >= 4 && get32(p) <= len - 4)
		d->arch = string_in(d, p + 4, get32(p));
	/* perf record -z's: version, type, level, ratio, mmap_len (u32s) */
	if (feat == FEAT_COMPRESSED) {
		if (len < 20)
			return lp_perfdata__fail(d, why, "its COMPRESSED feature is cut short");
		d->z.feature = true;
		d->z.type = get32(p + 4);
		d->z.mmap_len = get32(p + 16);
	}
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
			return lp_perfdata__fail(d, why, "truncated: its feature sections' table runs past its "
				    "end (%llu bytes)", (unsigned long long)d->len);
		uint64_t off = get64(d->base + table), size = get64(d->base + table + 8);
		table += 16;
		if (!fits(off, size, d->len))
			return lp_perfdata__fail(d, why, "truncated: feature section %u (%llu bytes at byte %llu) "
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
		return lp_perfdata__fail(d, why, "its attributes' size %llu is not an event's",
			    (unsigned long long)asize);
	if (!fits(off, size, d->len))
		return lp_perfdata__fail(d, why, "truncated: its attrs section (%llu bytes at byte %llu) runs "
			    "past its end (%llu bytes)", (unsigned long long)size,
			    (unsigned long long)off, (unsigned long long)d->len);
	if (size % asize || !size)
		return lp_perfdata__fail(d, why, "its attrs section is %llu bytes, not a whole number of "
			    "%llu-byte events", (unsigned long long)size, (unsigned long long)asize);
	for (uint64_t at = off; at < off + size; at += asize) {
		struct attr a;
		const unsigned char *ids = d->base + at + asize - 16;
		uint64_t ioff = get64(ids), isize = get64(ids + 8);
		if (read_attr(d, d->base + at, asize - 16, &a, why) < 0)
			return LP_CODEC_BAD;
		if (!fits(ioff, isize, d->len) || isize % 8)
			return lp_perfdata__fail(d, why, "event %s: its ids (%llu bytes at byte %llu) are not "
				    "within the file", a.name, (unsigned long long)isize,
				    (unsigned long long)ioff);
		if (add_attr(d, &a, d->base + ioff, isize / 8, why) < 0)
			return LP_CODEC_BAD;
	}
	return 0;
}

int lp_perfdata__read_header(struct perfdata_dec *d, const char **why)
{
	const unsigned char *h = d->base;
	if (d->len >= 8 && !memcmp(h, "2ELIFREP", 8))
		return lp_perfdata__fail(d, why, "a big-endian perf.data: lp reads little-endian ones only");
	if (d->len >= 8 && !memcmp(h, "PERFFILE", 8))
		return lp_perfdata__fail(d, why, "perf.data version 1 (PERFFILE): lp reads version 2 only");
	if (d->len < 8 || memcmp(h, "PERFILE2", 8))
		return lp_perfdata__fail(d, why, "not perf.data (it does not begin with PERFILE2)");
	if (d->len < PIPE_HEADER_SIZE ||
	    (get64(h + 8) != PIPE_HEADER_SIZE && d->len < FILE_HEADER_SIZE))
		return lp_perfdata__fail(d, why, "truncated: %llu bytes, less than its header",
			    (unsigned long long)d->len);
	uint64_t hsize = get64(h + 8);
	if (hsize == PIPE_HEADER_SIZE) {	/* a pipe's: everything in records */
		d->pos = PIPE_HEADER_SIZE;
		d->end = d->len;
		return 0;
	}
	if (hsize < FILE_HEADER_SIZE)
		return lp_perfdata__fail(d, why, "its header size %llu is neither a file's nor a pipe's",
			    (unsigned long long)hsize);
	if (read_attrs(d, why) < 0)
		return LP_CODEC_BAD;
	uint64_t off = get64(h + 40), size = get64(h + 48);
	if (!size) {	/* perf record did not finish: the data runs to the end */
		d->pos = off <= d->len ? off : d->len;
		d->end = d->len;
		return 0;
	}
	if (!fits(off, size, d->len))
		return lp_perfdata__fail(d, why, "truncated: its data section (bytes %llu to %llu) runs past its "
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
		return lp_perfdata__fail(d, why, "an attr record is too short");
	uint64_t asize = get32(r + 12) ? get32(r + 12) : ATTR_SIZE_VER0;
	if (asize > size - 8u)
		return lp_perfdata__fail(d, why, "an attr record's attributes (%llu bytes) run past its end",
			    (unsigned long long)asize);
	struct attr a;
	if (read_attr(d, r + 8, asize, &a, why) < 0)
		return LP_CODEC_BAD;
	return add_attr(d, &a, r + 8 + asize, (size - 8 - asize) / 8, why);
}

int lp_perfdata__read_meta(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
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
	}
	return 0;
}
