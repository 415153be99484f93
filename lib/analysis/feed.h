/* feed.h - inputs read each by a thread of its own, every record handed to
 * one sink under one lock, so a silent producer never holds the others (or
 * the caller's display) back: what lp-top and lp-serve read their streams
 * with.  The caller takes the lock to look at what the sink built. */
#ifndef LP_FEED_H
#define LP_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "stream/stream.h"

/* Called with the lock held, for every record of input (its index among
 * the readers) but lost records (counted in the state); arrival_ns:
 * lp_monotonic_ns() when it was read. */
typedef void lp_feed_fn(void *sink, int input, const struct lp_record *rec, int64_t arrival_ns);

struct lp_feed_state {
	uint64_t lost;		/* summed counts of the inputs' lost records */
	int readers_left;	/* inputs not yet at their end */
	bool failed;		/* an input was malformed (its reader said why) */
};

struct lp_feed;

/* Starts a thread per reader; each writes a byte to wake_fd at its input's
 * end.  Signals stay with the calling thread.  Exits 1 when a thread
 * cannot start. */
struct lp_feed *lp_feed__start(struct lp_reader **readers, int n, int wake_fd, lp_feed_fn *fn,
			       void *sink);
/* Takes the lock: the sink is the caller's until the unlock.  *st (when
 * not NULL): the state now. */
void lp_feed__lock(struct lp_feed *f, struct lp_feed_state *st);
void lp_feed__unlock(struct lp_feed *f);
/* Once every input has ended: joins the threads. */
void lp_feed__join(struct lp_feed *f);
/* Leaving before every input has ended: the threads, some perhaps blocked
 * on a pipe, are left to exit() and never joined (detached: no thread a
 * leak checker could call lost). */
void lp_feed__abandon(struct lp_feed *f);
/* After the join or the abandon (not the readers, not the sink). */
void lp_feed__free(struct lp_feed *f);

#endif
