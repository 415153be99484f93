/* live-internal.h - what lib/analysis/live.c (a stream's records kept)
 * and live-snapshot.c (the views written from them) share: the rings and
 * the probes' state.  Not for use outside lib/analysis/live*.c, which
 * include it after analysis/live.h (struct lp_live_opts,
 * LP_LIVE_MAX_PROBES): including it here would be a cycle to lib/layers. */
#ifndef LP_LIVE_INTERNAL_H
#define LP_LIVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

struct lp_attrs;
struct lp_stack;
struct lp_where;

#define SPANS_KEPT 65536
/* The newest spans' attributes (what lp-join says happened inside them),
 * for the ranking of what separates slow from fast: fewer, they are text. */
#define ATTRS_KEPT 4096
#define SEPARATE_ROWS 10
#define HEAT_COLUMNS 60
#define HEAT_ROWS 50
/* A flame graph leaves out frames under this share of its total (their
 * weight stays in their parent's), and stops at this many nodes. */
#define FLAME_MIN_SHARE 0.0002
#define FLAME_MAX_NODES 20000
#define FUNC_ROWS 200
#define STACK_ROWS 50
/* Histogram buckets a factor of 2^(1/4) apart. */
#define HIST_PER_OCTAVE 4

struct kept {
	int input;		/* the reader it came from */
	/* Its span's branches reached and calls made (lp-join's span.at.P=
	 * and span.calls.P= keys: "\tat.P\tcalls.Q\t"), interned; NULL:
	 * none said. */
	const char *did;
	int64_t t;
	const struct lp_stack *stack;
	double weight;
	int probe;		/* the probe of the span it was joined to, or -1 */
	int64_t span_ns;	/* that span's duration */
	bool untimed;		/* t is when it arrived: its input has no times */
	/* Its span's captured values (lp-join's span.KEY=, but at. and
	 * calls.) as "KEY=VALUE" fields, malloc'd; NULL: none. */
	char *vals;
	size_t vals_len;
};

struct span_kept {
	int input;
	int64_t end, dur;
	int64_t lp_ns;		/* lp's own time in it (lp-trace's lp_ns=), 0 unsaid */
};

struct attrs_kept {
	int input;
	int64_t end, dur;
	char *text;		/* the span's attributes as written */
	size_t len;
};

struct probe {
	char *name;
	struct span_kept *ring;	/* SPANS_KEPT, from head - n on */
	size_t n, head;
	struct attrs_kept *attrs;	/* ATTRS_KEPT, from ahead - an on */
	size_t an, ahead;
	uint64_t total;
	bool by_threshold;
	char *took;		/* cut by whether a span reached or called this */
	struct lp_where *where;	/* or by whether its values meet this */
	char *where_text;
	double percentile;
	int64_t threshold;
};

/* One input: the host its header names, what it brought. */
struct input {
	char *host;		/* NULL: its header names none (or none yet) */
	uint64_t samples, spans;
	/* What its times are moved by to the view's clock: its header's
	 * realtime_offset_ns less the first input's that gave one. */
	int64_t shift;
};

struct lp_live {
	struct lp_live_opts o;
	struct input *inputs;
	size_t ninputs;
	char *host;		/* the view's host; NULL: every input's */
	struct kept *ring;
	size_t cap, n, head;
	uint64_t samples;
	int64_t latest;		/* the newest time seen */
	int64_t latest_arrival;	/* when the newest sample without one came */
	/* The first realtime_offset_ns an input's header gave: each host's
	 * CLOCK_MONOTONIC made this input's, so hosts' times line up. */
	int64_t ref_offset;
	bool have_ref;
	struct probe probes[LP_LIVE_MAX_PROBES];
	size_t nprobes;
	uint64_t spans, spans_unnamed;
	/* The probes attached now, as their attach records' spec= says:
	 * what a producer's remove takes. */
	char *attached[LP_LIVE_MAX_PROBES];
	size_t nattached;
	char *buf;		/* lp_attrs__get's */
	size_t buf_cap;
	struct lp_hashmap dids;	/* interned struct kept's did */
	char *didbuf;
	size_t didcap;
};

/* Whether input i is in the view (its host the one asked for, if any). */
bool lp_live_input_shown(const struct lp_live *l, int i);
/* Whether a joined sample's span (its did) reached or called probe. */
bool lp_live_did_take(const char *did, const char *probe);
/* Whether a span's attributes say it reached or called probe. */
bool lp_live_span_took(const struct lp_attrs *a, const char *probe);

#endif
