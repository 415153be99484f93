/* record.h - the data of a profile: frames, stacks and the records of a
 * stream (formats/lp-stream.md), whatever text they were read from.  The
 * model depends on nothing but base: codecs turn text into these and back. */
#ifndef LP_MODEL_RECORD_H
#define LP_MODEL_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* When a probe began or stopped being attached (lp-trace --control): a
 * span or event of it can only have been seen between the two, and a
 * sample outside every such window was taken while nothing watched for
 * the probe's calls (formats/lp-stream.md, "Probes that come and go"). */
struct lp_probe_mark {
	int64_t time_ns;
	const char *action;	/* "attach" or "detach"; readers ignore others */
	const char *probe;	/* the PROBE its spans and events carry */
	struct lp_attrs attrs;	/* spec=, open= */
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
	LP_REC_PROBE,
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
		struct lp_probe_mark mark;
	};
};

#endif
