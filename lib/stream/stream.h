/* stream.h - the lp stream (formats/lp-stream.md): the only reader and writer.
 *
 * A reader yields records from an lp stream, a `perf script` dump or folded
 * stacks (recognised from the first lines, or forced).  Frames and stacks are
 * interned in a dictionary owned by the reader: a record's pointers stay valid
 * until the reader is freed.  A writer turns records back into text, writing a
 * frame or stack definition the first time a record refers to it.
 */
#ifndef LP_STREAM_H
#define LP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define LP_STREAM_MAGIC "lp-stream"
#define LP_STREAM_VERSION 1
#define LP_TIME_NONE INT64_MIN	/* a timestamp that is not known */
#define LP_ID_NONE (-1)		/* a pid, tid or cpu that is not known */

enum lp_frame_kind {
	LP_FRAME_USER = 'u',
	LP_FRAME_KERNEL = 'k',
	LP_FRAME_JIT = 'j',
	LP_FRAME_INLINE = 'i',	/* inlined into the frame below it (its caller) */
};

struct lp_frame {
	uint64_t id;		/* content hash: kind, addr, module, symbol, srcline */
	char kind;		/* enum lp_frame_kind */
	uint64_t addr;		/* 0 when symbolized or not known */
	const char *module;	/* path or "[kernel.kallsyms]"; "" when not known */
	const char *symbol;	/* "" when not resolved */
	const char *srcline;	/* "file:line"; "" when not known */
	const char *build_id;	/* raw frames: the module's build-id in hex; "" when none */
	/* symbol is the frame's name even when "": a folded line's empty
	 * frame ("a;;b") is a name as written, not an unresolved frame. */
	bool named;
	/* lp's own code (lpframe.h): kernel code that ran only because lp
	 * sampled or probed, marked from its symbol or from the attribute
	 * lp=1 (formats/lp-stream.md, "What lp costs").  Not part of id: it is
	 * a judgement about the frame's content, not content, so a stream
	 * that says lp=1 and one that does not define one frame. */
	bool lp;
};

struct lp_stack {
	uint64_t id;		/* hash of the frame ids, in order */
	size_t nframes;
	const struct lp_frame *const *frames;	/* outermost caller first, leaf last */
};

/* Extra "key=value" fields after a record's fixed ones, kept as they were
 * written (escaped, tab-separated), so filters pass them on unchanged. */
struct lp_attrs {
	const char *text;	/* "" when none */
	size_t len;
};

struct lp_header {
	int version;
	struct lp_attrs attrs;	/* clock=, host=, period_ns=, realtime_offset_ns=, ... */
};

struct lp_sample {
	int64_t time_ns;	/* CLOCK_MONOTONIC, or LP_TIME_NONE */
	int32_t pid, tid, cpu;	/* or LP_ID_NONE */
	const char *comm;	/* "" when not known (folded input) */
	const char *event;	/* "cpu-clock", "cycles", ...; "" when not known */
	double weight;		/* period: ns for clock events, a count otherwise */
	const struct lp_stack *stack;
	struct lp_attrs attrs;	/* group=, span=, state=, ... */
};

struct lp_span {
	int64_t start_ns, end_ns;	/* end_ns is LP_TIME_NONE while unfinished */
	int32_t pid, tid;
	const char *probe;
	int32_t depth;		/* nesting depth on the thread, 0 outermost */
	struct lp_attrs attrs;	/* captured values: arg0=, ret=, ... */
};

struct lp_event {
	int64_t time_ns;
	int32_t pid, tid;
	const char *probe;
	struct lp_attrs attrs;
};

struct lp_lost {
	int64_t time_ns;
	const char *what;	/* "ring", "unwind", "truncated", ... */
	uint64_t count;
};

/* What lp itself adds to the thread it samples or probes, measured on the
 * machine where it ran (formats/lp-stream.md, "What lp costs"). */
struct lp_cost {
	int64_t time_ns;	/* when it was measured */
	const char *what;	/* "sample", "switch", "entry", "return", "line", ... */
	double ns;		/* mean ns a hit adds to the thread's clock */
	struct lp_attrs attrs;	/* sd_ns=, n=, unwind=, probe=, inside_ns=, ... */
};

enum lp_record_kind {
	LP_REC_HEADER,
	LP_REC_FRAME,
	LP_REC_STACK,
	LP_REC_SAMPLE,
	LP_REC_SPAN,
	LP_REC_EVENT,
	LP_REC_LOST,
	LP_REC_COST,
	LP_REC_OTHER,		/* a comment or a kind this version does not know */
};

/* A record's strings (comm, probe, attrs...) are valid until the next call
 * to lp_reader__next; its frames and stacks until the reader is freed. */
struct lp_record {
	enum lp_record_kind kind;
	const char *line;	/* LP_REC_OTHER: the line as read, without '\n' */
	size_t len;
	union {
		struct lp_header header;
		const struct lp_frame *frame;
		const struct lp_stack *stack;
		struct lp_sample sample;
		struct lp_span span;
		struct lp_event event;
		struct lp_lost lost;
		struct lp_cost cost;
	};
};

/* --- interning ------------------------------------------------------- */

struct lp_dict;

struct lp_dict *lp_dict__new(void);
void lp_dict__free(struct lp_dict *dict);
/* Strings are copied; the result lives as long as the dictionary. */
const struct lp_frame *lp_dict__frame(struct lp_dict *dict, char kind, uint64_t addr,
				      const char *module, const char *symbol,
				      const char *srcline);
/* A frame whose name is the text it was read from, "" included (folded
 * text's "a;;b", perf script's "a->->b"): named, never unresolved. */
const struct lp_frame *lp_dict__named_frame(struct lp_dict *dict, char kind, const char *module,
					    const char *name, const char *srcline);
/* A raw frame: an address in module's file, whose build it names. */
const struct lp_frame *lp_dict__raw_frame(struct lp_dict *dict, uint64_t addr,
					  const char *module, const char *build_id);
/* The same frame in another dictionary. */
const struct lp_frame *lp_dict__frame_copy(struct lp_dict *dict, const struct lp_frame *f);
const struct lp_stack *lp_dict__stack(struct lp_dict *dict,
				      const struct lp_frame *const *frames, size_t nframes);
const struct lp_frame *lp_dict__frame_by_id(const struct lp_dict *dict, uint64_t id);
const struct lp_stack *lp_dict__stack_by_id(const struct lp_dict *dict, uint64_t id);
/* A string that lives as long as the dictionary (comm, event, probe names). */
const char *lp_dict__string(struct lp_dict *dict, const char *s, size_t len);

/* --- reading --------------------------------------------------------- */

enum lp_input_format {
	LP_INPUT_AUTO,
	LP_INPUT_LP,
	LP_INPUT_PERF,		/* perf script text */
	LP_INPUT_FOLDED,	/* "frame;frame;frame COUNT" lines */
};

struct lp_reader;

/* path "-" is stdin.  NULL with errno set, and a message on stderr. */
struct lp_reader *lp_reader__open(const char *path, enum lp_input_format format);
/* 1: a record; 0: end of input; -1: bad input or a read error, already
 * reported on stderr as "PROG: FILE:LINE: what". */
int lp_reader__next(struct lp_reader *reader, struct lp_record *rec);
enum lp_input_format lp_reader__format(const struct lp_reader *reader);
struct lp_dict *lp_reader__dict(struct lp_reader *reader);
const char *lp_reader__name(const struct lp_reader *reader);
uint64_t lp_reader__lineno(const struct lp_reader *reader);
void lp_reader__free(struct lp_reader *reader);
/* "lp" "perf" "folded" "auto" -> format; -1 when unknown. */
int lp_input_format__parse(const char *name);

/* Reports "PROG: FILE:LINE: fmt..." on stderr for the reader's current line. */
void lp_reader__error(const struct lp_reader *reader, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Looks "key" up in attrs and puts its unescaped value, NUL-terminated, in
 * *buf, which grows to fit (lp_grow): a value may be any length.  *buf and
 * *cap start NULL and 0, are kept from call to call, and the caller frees
 * *buf.  Returns the value's length, or -1 when the key is absent. */
ssize_t lp_attrs__get(const struct lp_attrs *attrs, const char *key, char **buf, size_t *cap);
/* The value of key (klen bytes) as written, escaped, and its length in
 * *len; NULL when the key is absent.  No copy: for the hot paths. */
const char *lp_attrs__raw(const struct lp_attrs *attrs, const char *key, size_t klen,
			 size_t *len);
/* Whether attrs has "key" and its unescaped value is exactly value. */
bool lp_attrs__is(const struct lp_attrs *attrs, const char *key, const char *value);

/* --- writing --------------------------------------------------------- */

struct lp_writer;

struct lp_writer *lp_writer__new(FILE *out);
void lp_writer__free(struct lp_writer *writer);
/* Each returns 0, or -1 with errno set when the output failed. */
int lp_writer__header(struct lp_writer *w, const struct lp_header *header);
int lp_writer__frame(struct lp_writer *w, const struct lp_frame *frame);
int lp_writer__stack(struct lp_writer *w, const struct lp_stack *stack);
int lp_writer__sample(struct lp_writer *w, const struct lp_sample *sample);
int lp_writer__span(struct lp_writer *w, const struct lp_span *span);
int lp_writer__event(struct lp_writer *w, const struct lp_event *event);
int lp_writer__lost(struct lp_writer *w, const struct lp_lost *lost);
int lp_writer__cost(struct lp_writer *w, const struct lp_cost *cost);
/* Any record as read: known kinds are rewritten, others copied verbatim. */
int lp_writer__record(struct lp_writer *w, const struct lp_record *rec);

/* Appends " key=value" (escaped) to an attrs buffer built by a producer. */
struct lp_attrs_buf {
	char *text;
	size_t len, cap;
};
int lp_attrs_buf__add(struct lp_attrs_buf *buf, const char *key, const char *value);
/* The header keys every producer writes, read now: clock=monotonic, host=,
 * realtime_offset_ns=.  The producer adds its own keys after them. */
void lp_attrs_buf__producer_keys(struct lp_attrs_buf *buf);
void lp_attrs_buf__reset(struct lp_attrs_buf *buf);
void lp_attrs_buf__free(struct lp_attrs_buf *buf);
static inline struct lp_attrs lp_attrs_buf__attrs(const struct lp_attrs_buf *buf)
{
	struct lp_attrs a = { buf->len ? buf->text : "", buf->len };
	return a;
}

/* Escaping of one field: \\ \t \n \r and other control bytes as \xHH. */
size_t lp_escape(char *dst, const char *src, size_t len);	/* dst holds 4*len bytes */
size_t lp_unescape(char *dst, const char *src, size_t len);	/* in place is fine */

#endif
