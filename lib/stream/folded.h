/* folded.h - folded stacks ("root;caller;leaf COUNT"), as flamegraph.pl,
 * difffolded.pl and stackcollapse-*.pl exchange them: reading a line into a
 * sample, and formatting a sample's stack as stackcollapse-perf.pl does. */
#ifndef LP_FOLDED_H
#define LP_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "model/record.h"
#include "stream/codec.h"

/* Reading folded text is the codec lp_codec_folded (codec.h). */

/* --- formatting, as stackcollapse-perf.pl prints a stack ---------------- */

/* The options of stackcollapse-perf.pl that change how a stack is printed
 * (its --all is kernel and jit together).  All false: its default. */
struct lp_folded_opts {
	bool pid;	/* first frame "comm-PID" ("comm-?" when PID unknown) */
	bool tid;	/* first frame "comm-PID/TID" (wins over pid) */
	bool kernel;	/* "_[k]" after kernel frames */
	bool jit;	/* "_[j]" after JIT frames (/tmp/perf-PID.map) */
	bool addrs;	/* unresolved frames as "[module <addr>]" */
	bool srcline;	/* "func:file.c:123" when the frame has a srcline */
};

/* Those options on a command line, for the programs that take them
 * (lp-collapse, lp-diff): LP_FOLDED_LONGOPTS goes into a getopt_long table
 * (<getopt.h>), and every value getopt_long returns that is not the
 * program's own goes to lp_folded_opts__option: true when it was one of
 * them, now set in o. */
enum {
	LP_FOLDED_OPT_PID = 0x1000, LP_FOLDED_OPT_TID, LP_FOLDED_OPT_KERNEL, LP_FOLDED_OPT_JIT,
	LP_FOLDED_OPT_ALL, LP_FOLDED_OPT_ADDRS, LP_FOLDED_OPT_SRCLINE,
};
#define LP_FOLDED_LONGOPTS						\
	{ "pid", no_argument, NULL, LP_FOLDED_OPT_PID },		\
	{ "tid", no_argument, NULL, LP_FOLDED_OPT_TID },		\
	{ "kernel", no_argument, NULL, LP_FOLDED_OPT_KERNEL },		\
	{ "jit", no_argument, NULL, LP_FOLDED_OPT_JIT },		\
	{ "all", no_argument, NULL, LP_FOLDED_OPT_ALL },		\
	{ "addrs", no_argument, NULL, LP_FOLDED_OPT_ADDRS },		\
	{ "srcline", no_argument, NULL, LP_FOLDED_OPT_SRCLINE }
bool lp_folded_opts__option(struct lp_folded_opts *o, int c);

/* A growing byte string, always NUL-terminated once used. */
struct lp_folded_buf {
	char *s;
	size_t len, cap;
};

void lp_folded_buf__reset(struct lp_folded_buf *b);
void lp_folded_buf__free(struct lp_folded_buf *b);

/* Appends the comm frame of a sample: comm with ' ' as '_', then "-PID" or
 * "-PID/TID" as the options say.  Nothing when comm is "" (folded input has
 * no comm: its first frame is part of its stack).  Returns the number of
 * frames appended (0 or 1); kinds (may be NULL) gets 'u' for it. */
size_t lp_folded__comm(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
		       const struct lp_sample *s, const struct lp_folded_opts *o);

/* Appends the stack's frames, root first, joined by ';' (and a ';' before
 * the first when out is not empty).  Per frame: the symbol; an unresolved one
 * (symbol "") as "[basename-of-module]" or "[unknown]", with " <addr>" under
 * addrs, cleaned up as the script does; "_[i]" on inlined frames always;
 * "_[k]"/"_[j]" as the options say; ":srcline" under srcline.  kinds (may be
 * NULL) gets one enum lp_frame_kind char per frame.  Returns the number of
 * frames appended. */
size_t lp_folded__frames(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
			 const struct lp_stack *st, const struct lp_folded_opts *o);

/* Both of the above: a sample's whole folded stack, without " COUNT". */
size_t lp_folded__format(struct lp_folded_buf *out, struct lp_folded_buf *kinds,
			 const struct lp_sample *s, const struct lp_folded_opts *o);

/* --- what the counts are ---------------------------------------------- */

/* What folded counts (and flame-graph widths) are for the samples of an lp
 * stream, from its header's mode.  cpu and snapshot: samples, one a sample
 * whatever its period, the "samples" flamegraph.pl says (a 997 Hz
 * recording's periods are 1003009.03 ns: their sums are no counts);
 * off and wall: the weights, nanoseconds, since samples weigh what they
 * waited; anything else (no mode, perf script, folded): the weights as
 * read, as stackcollapse-perf.pl sums perf's periods. */
enum lp_folded_unit {
	LP_FOLDED_WEIGHTS,
	LP_FOLDED_SAMPLES,
	LP_FOLDED_NS,
};

/* The units of the samples read so far: zero it, then give it each input
 * as it opens, every header, and every sample through __count. */
struct lp_folded_units {
	enum lp_folded_unit cur;	/* the current stream's */
	bool samples, ns, weights;	/* counted in some stream */
	const char *ns_mode;		/* "off" or "wall": the first met */
};
static inline void lp_folded_units__input(struct lp_folded_units *u)
{
	u->cur = LP_FOLDED_WEIGHTS;
}
void lp_folded_units__header(struct lp_folded_units *u, const struct lp_header *h);
/* A sample's count in the current stream: 1 for samples, else its weight. */
static inline double lp_folded_units__count(struct lp_folded_units *u,
					    const struct lp_sample *s)
{
	u->samples |= u->cur == LP_FOLDED_SAMPLES;
	u->ns |= u->cur == LP_FOLDED_NS;
	u->weights |= u->cur == LP_FOLDED_WEIGHTS;
	return u->cur == LP_FOLDED_SAMPLES ? 1 : s->weight;
}
/* The mode ("off", "wall") when every count is nanoseconds, else NULL.
 * lp_folded_units__mixed: counts of samples and nanoseconds were added. */
const char *lp_folded_units__ns(const struct lp_folded_units *u);
static inline bool lp_folded_units__mixed(const struct lp_folded_units *u)
{
	return u->ns && (u->samples || u->weights);
}
/* Folded output's first line when its counts are nanoseconds, a comment as
 * austin writes its own ("# mode: wall"): flamegraph.pl skips it, lp reads
 * it as one.  Returns 0, or -1 when the write failed. */
int lp_folded__ns_comment(FILE *out, const char *prog, const char *mode);

/* --- aggregation ---------------------------------------------------- */

/* Sums samples by what their folded line depends on (stack, comm, and PID
 * or TID when printed), so each distinct key is formatted once, at flush.
 * Memory grows with distinct keys, never with the number of samples.  The
 * stacks added must live until the flush (a reader's dictionary: flush
 * before freeing the reader); comms are copied. */
struct lp_folded_agg;
struct lp_profile;

struct lp_folded_agg *lp_folded_agg__new(const struct lp_folded_opts *o);
void lp_folded_agg__free(struct lp_folded_agg *a);
void lp_folded_agg__add(struct lp_folded_agg *a, const struct lp_sample *s);
/* Formats every key into profile side `side` (lp_profile__add, with the
 * kinds), then forgets them. */
void lp_folded_agg__flush(struct lp_folded_agg *a, struct lp_profile *p, int side);

#endif
