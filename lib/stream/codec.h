/* codec.h - the formats a reader reads, behind one table of operations,
 * and the options a caller gives the reading (explicitly: no codec keeps
 * state of its own between readers, none has process-wide defaults).
 *
 * A codec turns the lines of one input into records interned in the
 * reader's dictionary.  It depends on the model (and base) only: the input
 * layer (stream.c) opens files, sniffs, reports errors and dispatches. */
#ifndef LP_CODEC_H
#define LP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dict.h"

enum lp_input_format {
	LP_INPUT_AUTO,
	LP_INPUT_LP,
	LP_INPUT_PERF,		/* perf script text */
	LP_INPUT_FOLDED,	/* "frame;frame;frame COUNT" lines */
	LP_INPUT_AGGREGATION,	/* bpftrace's and DTrace's printed stack counts */
	LP_INPUT_AUSTIN,	/* Austin's samples of CPython */
	LP_INPUT_PPROF,		/* profile.proto, gzipped or not */
	LP_INPUT_CPUPROFILE,	/* Chrome's and Node's .cpuprofile JSON */
	LP_INPUT_SPEEDSCOPE,	/* speedscope's file format */
	LP_INPUT_CHROMETRACE,	/* Chrome's trace-event JSON, with samples */
	LP_INPUT_GECKO,		/* Firefox's profiler (Gecko, samply) */
	LP_INPUT_NFLX,		/* nflxprofile (FlameScope) */
	LP_INPUT_PERFDATA,	/* perf record's perf.data */
};

/* --- options ------------------------------------------------------------ */

/* What `addr2line -i -f -s -C -e MODULE ADDR` prints for an address, and
 * `nm`'s value of a symbol: perf script --inline's questions, answered by
 * whatever the program supplies (lp-collapse: an lp-symbolize coprocess),
 * so that reading never links a DWARF library. */
struct lp_inline_entry {
	const char *func;	/* "??" when unknown */
	const char *loc;	/* "file:line", "??:0" when unknown */
};
struct lp_inline_resolver {
	/* The entries for addr, innermost function first (valid until the
	 * next call); how many, or -1 when module cannot be read. */
	int (*lookup)(void *ctx, const char *module, uint64_t addr,
		      const struct lp_inline_entry **out);
	/* The value of module's symbol name: 0, or -1 when there is none. */
	int (*symbol)(void *ctx, const char *module, const char *name, uint64_t *value);
	void *ctx;
};

/* What stackcollapse-perf.pl decides while reading perf script, not while
 * printing.  All zero: every event, no source lines, no inlines. */
struct lp_perf_opts {
	bool srcline;		/* --srcline: the line after each frame line is
				 * its source line (perf script -F+srcline) */
	const struct lp_inline_resolver *inlines;	/* --inline: frames
				 * expanded as addr2line -i does; NULL: not */
	bool context;		/* --context: with inlines, func:file:line */
	const char *event_filter;	/* NULL: every event; "": only the
				 * first event seen (the script's default);
				 * else only that event (--event-filter) */
};

/* State one input leaves for the next when inputs are read as one stream
 * (stackcollapse-perf.pl reads its files so: a sample left open at the end
 * of one goes on in the next).  Owned by the caller: zero it, pass it in
 * the options of each reader, read the inputs one after the other, and
 * lp_carry__fini it at the end. */
struct lp_carry {
	void *state;			/* NULL: nothing carried */
	void (*free)(void *state);
};
static inline void lp_carry__fini(struct lp_carry *c)
{
	if (c->state && c->free)
		c->free(c->state);
	c->state = NULL;
}

struct lp_input_opts {
	struct lp_perf_opts perf;
	struct lp_carry *carry;		/* NULL: each input on its own */
};

/* --- the table ---------------------------------------------------------- */

/* A whole input, for the formats read whole (open_doc): its bytes,
 * decompressed, and, when they are JSON, the value they parse to. */
struct json_t;
struct lp_doc {
	const unsigned char *data;
	size_t len;
	struct json_t *json;	/* jansson's; NULL: not JSON */
	const char *compressed;	/* "gzipped", "zstd-compressed"; NULL: neither */
};

/* next's result besides 1 (a record) and 0 (a line that makes none). */
enum {
	LP_CODEC_BAD = -1,	/* bad input: *why says why; reading stops */
	LP_CODEC_SKIP = -2,	/* a line skipped: *why says why; reading goes on */
};

/* A codec reads lines (sniff, open, next) or a whole document (claims,
 * open_doc, next_doc); close ends both. */
struct lp_codec {
	const char *name;		/* as --input-format says it */
	enum lp_input_format format;
	/* Whether a first non-blank, non-comment line is in this format. */
	int (*sniff)(const char *line, size_t len);
	bool comments;	/* sniff sees '#' lines too: a header of its own */
	/* A decoder for one input, made at its first line: the options are
	 * read then (a caller may change them between inputs) and must live
	 * until close. */
	void *(*open)(struct lp_dict *dict, const struct lp_input_opts *opts);
	/* One line: no '\n', trailing CR removed, NUL at line[len], writable;
	 * terminated: whether a '\n' ended it.  A record's strings live until
	 * the next call. */
	int (*next)(void *dec, char *line, size_t len, bool terminated, struct lp_record *rec,
		    const char **why);
	void (*close)(void *dec);
	/* Whether a document is in this format: from its content alone
	 * (magic bytes, the keys of its JSON), never from a file name. */
	bool (*claims)(const struct lp_doc *doc);
	/* A decoder of doc, which lives until close (and doc with it): a
	 * document that is not well-formed is said by its first next_doc. */
	void *(*open_doc)(struct lp_dict *dict, const struct lp_doc *doc,
			  const struct lp_input_opts *opts);
	/* The next record: 1; 0 at the end; LP_CODEC_BAD with *why. */
	int (*next_doc)(void *dec, struct lp_record *rec, const char **why);
};

/* A reader's message for *why, printf-formatted into buf (its decoder's,
 * which lives as long as it), which it returns; an argument may be buf. */
const char *lp_codec__why(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same into decoder d's char why[]. */
#define LP_WHY(d, ...) lp_codec__why((d)->why, sizeof((d)->why), __VA_ARGS__)

extern const struct lp_codec lp_codec_lp, lp_codec_perf, lp_codec_folded;
/* Other profilers' formats (lib/stream/foreign/, formats/foreign.md). */
extern const struct lp_codec lp_codec_aggregation, lp_codec_austin, lp_codec_pprof, lp_codec_cpuprofile,
	lp_codec_speedscope, lp_codec_chrometrace, lp_codec_gecko, lp_codec_nflx, lp_codec_perfdata;

#endif
