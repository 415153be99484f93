/* proftab.h - a profile as pprof and OTLP profiles both model it, built
 * from the stream's frames as samples arrive: tables of strings, mappings
 * (a frame's module and build-id), functions (name, file), locations (a
 * frame with the frames inlined into it, innermost first: pprof's and
 * OTLP's order), stacks (locations, leaf first), and the samples summed by
 * (stack, pid, comm).  lib/output/pprof.c and lib/output/otlp.c encode the
 * same tables, each in its own wire layout.
 *
 * Every table's ids are indexes + 1, 0 meaning none: pprof's ids, and
 * OTLP's dictionary indexes, whose entry 0 is the zero value.  Strings
 * start at 0 with "" (both formats want that).  Memory grows with the
 * distinct stacks, and with times kept (lp_proftab__new) with the samples
 * too, 16 bytes each: `held` says how much is held. */
#ifndef LP_PROFTAB_H
#define LP_PROFTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "stream/stream.h"

struct lp_proftab_location {
	uint64_t mapping, address;
	size_t nlines;
	uint64_t *functions;	/* innermost first */
	int64_t *lines;
};

struct lp_proftab_stack {
	size_t nlocs;
	uint64_t *locs;		/* leaf first */
};

struct lp_proftab_sample {
	uint64_t stack;		/* 0: no frames */
	int64_t pid;		/* LP_ID_NONE: not known */
	uint64_t comm;		/* string id; 0: not known */
	int64_t count;
	double weight;
	/* With times kept, each sample summed here: its Unix time and its
	 * weight (rounded), in the order they came. */
	size_t nobs, capobs;
	uint64_t *unix_ns;
	int64_t *weights;
};

struct lp_proftab {
	char **strings;
	size_t nstrings;
	uint64_t (*mappings)[2];	/* filename, build_id string ids */
	size_t nmappings;
	uint64_t (*functions)[2];	/* name, filename string ids */
	size_t nfunctions;
	struct lp_proftab_location *locations;
	size_t nlocations;
	struct lp_proftab_stack *stacks;
	size_t nstacks;
	struct lp_proftab_sample *samples;
	size_t nsamples;
	char *event;		/* the first event seen; NULL: none */
	int64_t period_ns;	/* the first header's period_ns=; 0: not known */
	bool timed;		/* the event's weights are nanoseconds */
	char *host;		/* the first header's host=; NULL: none */
	/* Times: whether every sample so far has one and its input's header
	 * says how to make it Unix time (realtime_offset_ns=), and the first
	 * and last; kept per sample too with keep_times, until the first
	 * sample that cannot be placed drops them all. */
	bool keep_times, times;
	bool offset_known;
	int64_t offset_ns;
	uint64_t first_unix_ns, last_unix_ns;	/* 0: none */
	size_t held;		/* bytes, roughly */
	/* private: content to id */
	struct lp_hashmap string_ids, mapping_ids, function_ids, location_ids, stack_ids,
		sample_ids;
};

/* keep_times: keep each sample's time (OTLP's timestamps); pprof has none. */
struct lp_proftab *lp_proftab__new(bool keep_times);
void lp_proftab__free(struct lp_proftab *t);
/* A new table for the samples that come after t's (a batch after
 * another): what t's headers said (event, period, host, the realtime
 * offset) is known to it. */
struct lp_proftab *lp_proftab__next(const struct lp_proftab *t);
/* Another input starts: its realtime offset is not known until its header. */
void lp_proftab__input(struct lp_proftab *t);
/* A header: its event and period name the weights; its host= and
 * realtime_offset_ns= are kept. */
void lp_proftab__header(struct lp_proftab *t, const struct lp_header *h);
/* Adds one sample; what it needs of its frames is copied. */
void lp_proftab__add(struct lp_proftab *t, const struct lp_sample *s);
/* The id of string s, interned: what an encoder adds of its own. */
uint64_t lp_proftab__string(struct lp_proftab *t, const char *s);
/* A sample's weight as the formats carry it, a whole number. */
static inline int64_t lp_proftab__round(double w)
{
	return (int64_t)(w + 0.5);
}

#endif
