/* perfdata-internal.h - what perfdata.c (the data's records, the
 * processes, the samples), perfdata-header.c (the header, the events, the
 * features, the pipe's header records) and perfdata-zstd.c (perf record
 * -z's compressed records) share: perf.data's constants, the decoder,
 * bounds-checked reads of its little-endian bytes. */
#ifndef LP_PERFDATA_INTERNAL_H
#define LP_PERFDATA_INTERNAL_H

#include "base/hashmap.h"
#include "base/util.h"
#include "model/addrspace.h"
#include "model/dict.h"
#include "model/record.h"
#include "stream/codec.h"
#include "stream/stackcopy.h"

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
	REC_COMPRESSED2 = 83,	/* newer perfs': its data's size said, then padding */
};
/* the header's feature bits (tools/perf/util/header.h) */
enum { FEAT_BUILD_ID = 2, FEAT_ARCH = 6, FEAT_EVENT_DESC = 12, FEAT_COMPRESSED = 27 };
#define COMP_ZSTD 1	/* the COMPRESSED feature's type: perf's PERF_COMP_ZSTD */
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

/* A process's maps (their strings interned; placed: a file's or the
 * vDSO's, its frames raw ones); shared by the processes a fork made until
 * one of them maps something. */
struct maps {
	size_t refs;
	struct lp_addrspace as;
	uint64_t gen;	/* changed by every map made: what map records were written of */
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

/* A record that says something at a time, waiting for its round's sort:
 * where it is (lp_perfdata__record), and its place in the order read, which
 * breaks ties as perf's ordered events do. */
struct pending {
	uint64_t time, seq, off;
};

/* Where a compressed record's bytes begin among those decompressed, and
 * the record's offset in the document. */
struct inflated_part {
	uint64_t at, from;
};

/* perf record -z's records (perfdata-zstd.c): the compressed records'
 * data are one zstd stream, which decompresses to records as the file's,
 * one of them sometimes split between two compressed records.  What was
 * decompressed and not yet done with is held here: at most a round's
 * records and those of the round before still queued. */
struct inflated {
	struct ZSTD_DCtx_s *stream;	/* one for all of the data, as perf's */
	unsigned char *buf;
	uint64_t len, cap;		/* bytes held */
	uint64_t head;			/* where the next record not yet read is */
	uint64_t dropped;		/* the bytes decompressed before buf's first */
	struct inflated_part *parts;
	size_t nparts, parts_cap;
	/* the header's COMPRESSED feature: its type, and the size of perf's
	 * rings (mmap_len), more than which no record decompresses to */
	bool feature;
	uint32_t type, mmap_len;
};

/* The fields of a sample lp keeps. */
struct sample {
	uint64_t ip, time, period, nchain;
	uint32_t pid, tid, cpu;
	const unsigned char *chain;
	bool has_time;
	/* --call-graph dwarf: the user registers (the attr's regs_user mask's,
	 * in bit order), the ABI they were taken in, and the stack's copy */
	uint64_t regs_abi, ustack_len;
	const unsigned char *regs, *ustack;
};

/* When a record other than a sample happened: its sample id fields' time. */
struct idinfo {
	uint64_t time;
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
	uint64_t seq;			/* the records queued so far */
	struct inflated z;
	uint64_t max_time, limit;	/* the newest time read; flushed up to */
	uint64_t ring_lost;		/* LOST records' counts, not yet in a tally */
	const struct lp_frame **frames;
	size_t frames_cap;
	struct frame_slot cache[1 << FRAME_CACHE_BITS];
	struct lp_hashmap jitmaps;	/* pid -> its perf map (stream/perfmap.h), once asked */
	char why[256];
	char at[96];			/* lp_perfdata__at's */
	const char *open_why;		/* not NULL: the document is not well-formed */
	const char *arch;		/* the recording machine's (uname -m), NULL: not said */
	/* Copied user stacks (--call-graph dwarf): a sample's attributes, and
	 * the map records written before it for its process (stackcopy.h). */
	struct lp_attrs_buf attrs_buf;
	uint64_t maps_gen;		/* the last struct maps.gen given */
	struct lp_hashmap maps_written;	/* pid + 1 -> the gen of its maps last written */
	struct {
		const struct maps *maps;	/* not NULL: writing these before a sample */
		size_t i;
		uint32_t pid;
		int64_t time;
		uint64_t held;			/* the sample's offset, handled after them */
	} writing;
	char *line;			/* a map record's text */
	size_t line_cap;
};

/* *why from printf's arguments, into d->why: LP_CODEC_BAD. */
#define lp_perfdata__fail(d, why, ...) ({ *(why) = LP_WHY(d, __VA_ARGS__); LP_CODEC_BAD; })

/* How many elements an array of cap holds once it must hold need: doubled. */
static inline size_t grown(size_t cap, size_t need)
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

/* Where a record at r is, as errors say it: "byte N" of the document, or
 * of the decompressed records (perfdata-zstd.c). */
const char *lp_perfdata__at(struct perfdata_dec *d, const unsigned char *r);

/* A record read (at r) as an offset for the queue, and back: the
 * document's, then past its end the decompressed records'. */
static inline uint64_t lp_perfdata__offset(const struct perfdata_dec *d, const unsigned char *r)
{
	uintptr_t off = (uintptr_t)r - (uintptr_t)d->base;
	return off < d->len ? off : d->len + (uint64_t)(r - d->z.buf);
}

static inline const unsigned char *lp_perfdata__record(const struct perfdata_dec *d, uint64_t off)
{
	return off < d->len ? d->base + off : d->z.buf + (off - d->len);
}

/* --- bytes ----------------------------------------------------------------- */

static inline uint16_t get16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* Whether [off, off + size) lies within len bytes. */
static inline bool fits(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

/* Fields read one after the other, never past end: bad says one would be. */
struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

static inline void skip(struct cursor *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

/* n items of size bytes each: checked before multiplying. */
static inline void skip_items(struct cursor *c, uint64_t n, uint64_t size)
{
	skip(c, n > (uint64_t)(c->end - c->p) / size ? UINT64_MAX : n * size);
}

static inline uint64_t take(struct cursor *c)
{
	const unsigned char *p = c->p;
	skip(c, 8);
	return c->bad ? 0 : get64(p);
}

/* A NUL-terminated string in [p, p + max): interned, or NULL if unended. */
static inline const char *string_in(struct perfdata_dec *d, const unsigned char *p, uint64_t max)
{
	const unsigned char *nul = memchr(p, '\0', max);
	return nul ? lp_dict__string(d->dict, (const char *)p, (size_t)(nul - p)) : NULL;
}

static inline const char *hex_string(struct perfdata_dec *d, const unsigned char *p, size_t n)
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

static inline uint64_t key32(uint32_t v)
{
	return (uint64_t)v + 1;	/* never 0 */
}

/* A pid, tid or cpu as lp says it: perf's -1 (and what no id can be) as none. */
static inline int32_t id32(uint32_t v)
{
	return v > INT32_MAX ? LP_ID_NONE : (int32_t)v;
}

/* perfdata-header.c */
const char *lp_perfdata__build_id_of(struct perfdata_dec *d, const char *path);
int lp_perfdata__read_header(struct perfdata_dec *d, const char **why);
int lp_perfdata__read_meta(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
		     uint16_t size, const char **why);
const struct attr *lp_perfdata__record_attr(struct perfdata_dec *d, const unsigned char *r,
				      uint16_t size, bool is_sample, const char **why);
int lp_perfdata__trailer(struct perfdata_dec *d, const unsigned char *r, uint16_t size, uint64_t need,
		   struct idinfo *out, uint64_t *body, const char **why);

/* perfdata-zstd.c */
int lp_perfdata__inflate(struct perfdata_dec *d, const unsigned char *r, uint32_t type,
			 uint16_t size, const char **why);
void lp_perfdata__inflated_trim(struct perfdata_dec *d);
void lp_perfdata__inflated_free(struct inflated *z);

#endif
