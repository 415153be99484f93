/* top.h - lp-top's engine: samples aggregated over a sliding window of
 * time buckets or with exponentially decaying weights, and a text report of
 * the hottest functions (self and total share) and stacks.
 *
 * Memory is bounded by the number of distinct stacks per bucket times the
 * number of buckets (window mode) or by the distinct stacks whose weight is
 * still above a negligible fraction (half-life mode), never by the input's
 * length.  Not thread-safe: the caller locks. */
#ifndef LP_TOP_H
#define LP_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "stream/stream.h"

enum lp_top_mode {
	LP_TOP_WINDOW,		/* the last window_ns of samples */
	LP_TOP_DECAY,		/* weights halved every half_life_ns */
	LP_TOP_ALL,		/* everything since the start */
};

enum lp_top_sort {
	LP_TOP_SORT_SELF,
	LP_TOP_SORT_TOTAL,
};

struct lp_top_opts {
	enum lp_top_mode mode;
	int64_t window_ns;	/* LP_TOP_WINDOW */
	int64_t half_life_ns;	/* LP_TOP_DECAY */
	enum lp_top_sort sort;
};

struct lp_top;

struct lp_top *lp_top__new(const struct lp_top_opts *opts);
void lp_top__free(struct lp_top *t);

/* Adds a sample at time_ns (the sample's own, or its arrival time).  The
 * stack must stay valid as long as the lp_top (its reader's dictionary).
 * Samples older than the window's start are dropped and counted. */
void lp_top__add(struct lp_top *t, int64_t time_ns, const struct lp_stack *stack,
		 double weight);

/* The newest time seen (LP_TIME_NONE before the first sample). */
int64_t lp_top__latest(const struct lp_top *t);

/* Moves the view's end to now_ns (never backwards): window buckets that fall
 * out are freed, decayed weights are aged. */
void lp_top__advance(struct lp_top *t, int64_t now_ns);

struct lp_top_report_opts {
	int width;		/* characters per line; 0: no limit */
	int nfuncs;		/* function rows; -1: all */
	int nstacks;		/* stack rows; -1: all */
	const char *title;	/* the first line's left part */
	const char *eol;	/* appended to every line before '\n' ("" or an ANSI clear) */
};

/* Writes the report (a title line, a function table, a stack table) for the
 * view ending at the latest advance.  Returns the number of lines written. */
int lp_top__report(struct lp_top *t, FILE *out, const struct lp_top_report_opts *ro);

/* The view ending at the latest advance, for writers other than the text
 * report (lp-serve's JSON): its stacks, most weight first, and its
 * functions, ordered as the report orders them. */
struct lp_top_stack_row {
	const struct lp_stack *stack;
	double weight;
};
struct lp_top_func_row {
	char *name;
	const char *module;	/* basename; "" when unknown */
	double self, total;	/* total counts a function once per stack */
};
struct lp_top_view {
	struct lp_top_stack_row *stacks;
	size_t nstacks;
	struct lp_top_func_row *funcs;
	size_t nfuncs;
	double total;
	uint64_t count;		/* samples in the view */
};
void lp_top__view(struct lp_top *t, struct lp_top_view *v);
void lp_top_view__free(struct lp_top_view *v);

struct lp_top_stats {
	uint64_t samples;	/* added */
	uint64_t dropped;	/* older than the window when they came */
	double weight;		/* in the current view (decayed in LP_TOP_DECAY) */
	size_t stacks;		/* distinct stacks in the view */
};
void lp_top__stats(struct lp_top *t, struct lp_top_stats *st);

/* An lp_top fed by its inputs, each read by a thread of its own that adds
 * under a lock, so a silent producer never holds the display back. */
struct lp_top_feed;

struct lp_top_feed_state {
	int64_t first_time;	/* the earliest sample time; LP_TIME_NONE before one */
	int64_t latest_arrival;	/* lp_monotonic_ns() when the newest sample time came */
	uint64_t lost;		/* summed counts of the inputs' lost records */
	int readers_left;	/* inputs not yet at their end */
	bool failed;		/* an input was malformed (its reader said why) */
};

/* Starts a thread per reader adding its samples to t (samples without a
 * time are placed by arrival); each writes a byte to wake_fd at its input's
 * end.  Exits 1 when a thread cannot start. */
struct lp_top_feed *lp_top_feed__start(struct lp_top *t, struct lp_reader **readers, int n,
				       int wake_fd);
/* Takes the lock: t is the caller's until the unlock.  *st: the state now. */
void lp_top_feed__lock(struct lp_top_feed *f, struct lp_top_feed_state *st);
void lp_top_feed__unlock(struct lp_top_feed *f);
/* Once every input has ended: joins the threads. */
void lp_top_feed__join(struct lp_top_feed *f);
/* Leaving before every input has ended: the threads, some perhaps blocked
 * on a pipe, are left to exit() and never joined (detached: no thread a
 * leak checker could call lost). */
void lp_top_feed__abandon(struct lp_top_feed *f);
/* After the join (not the top, not the readers).  A feed whose readers may
 * still be blocked on a pipe is left to exit(): joining would wait for
 * their producers. */
void lp_top_feed__free(struct lp_top_feed *f);

#endif
