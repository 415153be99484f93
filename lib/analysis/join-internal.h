/* join-internal.h - what the pieces of lp-join share (join.c: the joining
 * loop; join-input.c: each input's reader thread and ring; join-hold.c:
 * held samples, kept spans and what is released): the records copied out
 * of a reader, the inputs, the per-thread state, and the functions one
 * piece calls in another.  After analysis/join.h. */
#ifndef LP_JOIN_INTERNAL_H
#define LP_JOIN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "base/hashmap.h"
#include "model/record.h"
#include "stream/attrs.h"

struct input;

/* A record copied out of a reader, with its strings. */
struct item {
	struct lp_record rec;	/* its strings point into data[] */
	struct input *src;	/* the input whose reader made it, to recycle it */
	size_t cap;		/* bytes in data[] */
	uint64_t host;		/* hash of the input's host=, 0 when unknown */
	int refs;		/* spans: held samples that point at it, +1 while kept */
	/* spans: what an enclosed sample gains ("span=...", see add_span),
	 * formatted for the first sample and copied for the others */
	char *joined;
	size_t joined_len;
	char *attrs;		/* spans: their attributes with what happened inside */
	/* samples: the enclosing spans found so far */
	struct item *best;	/* innermost */
	struct item **all;	/* --all-spans */
	size_t nall, capall;
	char data[];
};

/* One input: a reader thread and a ring. */
#define RING_CAP 8192	/* a power of two */
#define WAKE_BATCH 256
#define IDLE_WAIT_MS 10	/* how late a trickle of live records may be seen */

struct input {
	struct lp_reader *reader;
	pthread_t thread;
	struct item *ring[RING_CAP];
	_Atomic size_t head, tail;	/* consumer, producer */
	/* Spent items on their way back to the reader for reuse: a record
	 * costs no malloc, and glibc's arena lock is not fought over by a
	 * thread freeing what another allocated. */
	struct item *spent[RING_CAP];
	_Atomic size_t spent_head, spent_tail;	/* reader, joining thread */
	_Atomic int done;		/* 1: end of input, -1: error */
	_Atomic int producer_waiting;
	pthread_cond_t space;
	struct join *j;
	bool finished;			/* joining thread: done and drained */
	bool live;			/* a pipe, socket or terminal */
};

struct join {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	_Atomic int consumer_waiting;
	_Atomic int quit;		/* an input failed: the readers stop */
	struct input in[2];		/* 0: samples, 1: spans */
};

/* Items cross from one core to the other: touching one that the other
 * thread wrote last waits for its cache lines, so those a few places ahead
 * are fetched early.  Most of lp-join's time went there otherwise. */
#define PREFETCH_AHEAD 8

/* A macro: GCC deems a function that only prefetches free of effects and
 * drops calls to it before inlining. */
#define PREFETCH_ITEM(it, rw) do {						\
		const char *p_ = (const char *)(it);				\
		__builtin_prefetch(p_, rw);					\
		__builtin_prefetch(p_ + 64, rw);				\
		__builtin_prefetch(p_ + 128, rw);				\
		__builtin_prefetch(p_ + 192, rw);				\
	} while (0)

/* Per-thread state: held samples by time, kept spans by end.  Each entry
 * keeps its key (a sample's time, a span's end) beside the pointer:
 * searches and sweeps read the deque's own array, not items that have
 * long left the cache. */
struct dq_ent {
	int64_t key;
	struct item *it;
};

struct deque {
	struct dq_ent *v;
	size_t head, len, cap;	/* cap a power of two */
};

struct thr {
	int32_t pid, tid;
	struct deque samples, spans;
	int64_t max_span_ns;	/* the longest span kept (since the thread was seen) */
};

struct state {
	const struct lp_join_opts *o;
	struct lp_join_stats *st;
	struct lp_writer *w;
	FILE *out;
	struct lp_hashmap threads;	/* thr_key -> struct thr */
	struct thr **sweep;		/* lp_join_sweep_all's list of them */
	size_t sweep_cap;
	int64_t span_mark;	/* newest span end read */
	int64_t sample_mark;	/* newest sample time read */
	size_t held, kept;	/* samples held, spans kept */
	/* Flags, not INT64_MAX marks: a span may end at INT64_MAX itself. */
	bool samples_done, spans_done;
	struct lp_attrs_buf ab;
	/* what happened inside each span (contents.h), from the spans' input */
	struct lp_contents *contents;
	const struct input *spans_in;
	char *headers[16];
	size_t nheaders;
};

/* join-input.c: a deadline ms from now on the conditions' clock; the
 * ring's next item (taken, or only looked at), empty or not; an item
 * recycled; the time it sorts by; a reader thread's body. */
void lp_join_deadline_in(struct timespec *ts, long ms);
struct item *lp_join_pop(struct input *in);
struct item *lp_join_peek(struct input *in);
bool lp_join_ring_empty(struct input *in);
void lp_join_item_free(struct item *it);
int64_t lp_join_item_time(const struct item *it);
void *lp_join_reader_main(void *arg);

/* join-hold.c: a failed write noted; the watermarks samples are released
 * and spans let go at; every thread swept to them; a record taken in;
 * samples and spans let go early (--max-held) written as lost records. */
void lp_join_out_failed(struct state *s);
int64_t lp_join_release_mark(const struct state *s);
int64_t lp_join_prune_mark(const struct state *s);
void lp_join_sweep_all(struct state *s, int64_t rel, int64_t prune);
void lp_join_on_item(struct state *s, struct item *it);
void lp_join_write_early(struct state *s, size_t samples, size_t spans);

#endif
