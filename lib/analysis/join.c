/* join.c - samples meet the spans that enclose them: the joining loop
 * (join.h).
 *
 * Spans arrive when they end, so a sample at time t can only be known to be
 * complete once no span still unread could enclose it.  The rule: a sample is
 * held until the newest span end read (the span watermark W) passes t by the
 * out-of-order bound D (--max-delay), or the span input ends.  Spans are kept
 * while a sample that arrives late could still fall inside them: until the
 * newest sample time passes their end by D.  Memory is therefore bounded by
 * what the two streams hold in a window of D, not by their length.
 *
 * Each input is read by a thread of its own (the reader API blocks in
 * read(2)), handing deep copies of its records to the joining thread through
 * a single-producer single-consumer ring (join-input.c), so two live pipes
 * never deadlock however their producers interleave.  Frames and stacks are
 * interned in the reader's dictionary, whose entries never move or change
 * once made, so the joining thread may follow those pointers.  What is held
 * and kept, per thread, and how a sample is matched and released is
 * join-hold.c's.
 *
 * Unfinished spans (end "-": still open when tracing stopped) pass through
 * and enclose nothing: their duration is unknown, and whether a sample after
 * their start was inside them is not known either.
 */
#include "analysis/join.h"
#include "analysis/join-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "analysis/contents.h"
#include "base/util.h"

static bool is_live(const char *path)
{
	struct stat st;
	if (!strcmp(path, "-")) {
		if (fstat(0, &st) < 0)
			return false;
	} else if (stat(path, &st) < 0) {
		return false;
	}
	return !S_ISREG(st.st_mode);
}

/* Both inputs opened, each with its reader thread; NULL after a message. */
static struct join *join_open(const char *samples_path, const char *spans_path,
			      const struct lp_join_opts *opts)
{
	struct join *j = lp_calloc(1, sizeof(*j));
	const char *paths[2] = { samples_path, spans_path };
	enum lp_input_format fmts[2] = { opts->samples_format, opts->spans_format };
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_t mono;
	pthread_condattr_init(&mono);
	pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
	pthread_cond_init(&j->wake, &mono);
	for (int i = 0; i < 2; i++) {
		struct input *in = &j->in[i];
		in->j = j;
		pthread_cond_init(&in->space, &mono);
		in->reader = lp_reader__open(paths[i], fmts[i]);
		if (!in->reader) {
			lp_reader__free(j->in[0].reader);	/* i == 1: the first */
			pthread_condattr_destroy(&mono);
			free(j);
			return NULL;
		}
		in->live = is_live(paths[i]);
	}
	pthread_condattr_destroy(&mono);
	for (int i = 0; i < 2; i++) {
		int err = pthread_create(&j->in[i].thread, NULL, lp_join_reader_main, &j->in[i]);
		if (err) {
			errno = err;
			lp_error_errno("cannot start a reader thread");
			return NULL;
		}
	}
	return j;
}

/* The joining loop's own state, beside what the join keeps (struct state). */
struct loop {
	struct join *j;
	struct input *smp, *spn;
	bool live_clock;	/* the spans carry this host's current time */
	bool files;		/* both inputs are files */
	bool spans_full, samples_full;
	bool got_spans, got_samples;
	bool behind;		/* two files: waiting for the reader behind */
	int64_t stalled_since;	/* when a full side last made no progress */
	uint64_t since_sweep;
	int64_t last_rel;
};

static void update_full(struct loop *l, const struct state *s)
{
	l->spans_full = s->kept >= s->o->max_held && !l->smp->finished;
	l->samples_full = s->held >= s->o->max_held && !l->spn->finished;
}

/* A live tracer's records whose time is this host's now (within D): the
 * clock rule then moves time on when it goes quiet. */
static void check_live_clock(struct loop *l, const struct state *s, int64_t t)
{
	if (l->live_clock || !l->spn->live || t == LP_TIME_NONE)
		return;
	int64_t d = lp_monotonic_ns() - t;
	l->live_clock = d >= -s->o->max_delay_ns && d <= s->o->max_delay_ns;
}

/* Up to a batch of records, each time the earlier in stream time of the
 * two inputs, so that on files neither runs ahead of the other and little
 * is held.  Either side may fill up while the other lags behind; it then
 * waits for the other (exact on files, bounded memory). */
static void take_batch(struct loop *l, struct state *s)
{
	for (int n = 0; n < 2048; n++) {
		struct item *a = l->spans_full ? NULL : lp_join_peek(l->spn);
		struct item *b = l->samples_full ? NULL : lp_join_peek(l->smp);
		if (!a && !b)
			break;
		/* Two files: wait for the reader that is behind rather than
		 * read ahead on the other (it is only a few records away). */
		if (l->files && ((a && !b && !l->samples_full && !atomic_load(&l->smp->done)) ||
				 (b && !a && !l->spans_full && !atomic_load(&l->spn->done)))) {
			l->behind = true;
			break;
		}
		struct input *from = !b || (a && lp_join_item_time(a) <= lp_join_item_time(b)) ? l->spn : l->smp;
		struct item *it = lp_join_pop(from);
		l->since_sweep++;
		if (from == l->spn) {
			l->got_spans = true;
			if (it->rec.kind == LP_REC_SPAN)
				check_live_clock(l, s, it->rec.span.end_ns);
		} else {
			l->got_samples = true;
			/* Fresh samples from a live recorder, and a live tracer:
			 * the clock rule holds even before the first span. */
			if (it->rec.kind == LP_REC_SAMPLE)
				check_live_clock(l, s, it->rec.sample.time_ns);
		}
		lp_join_on_item(s, it);
		update_full(l, s);
	}
}

/* An input read to its end and drained: what waited for it goes.  False
 * when its reader failed. */
static bool finish_inputs(struct loop *l, struct state *s)
{
	if (!l->spn->finished && atomic_load(&l->spn->done) && lp_join_ring_empty(l->spn)) {
		l->spn->finished = true;
		if (atomic_load(&l->spn->done) < 0)
			return false;
		s->spans_done = true;
		lp_join_sweep_all(s, INT64_MAX, lp_join_prune_mark(s));
		l->got_spans = true;
	}
	if (!l->smp->finished && atomic_load(&l->smp->done) && lp_join_ring_empty(l->smp)) {
		l->smp->finished = true;
		if (atomic_load(&l->smp->done) < 0)
			return false;
		s->samples_done = true;
		lp_join_sweep_all(s, lp_join_release_mark(s), INT64_MAX);
		l->got_samples = true;
	}
	return true;
}

/* Samples and spans let go when time has moved on enough, or a batch of
 * records has come in since the last sweep. */
static void sweep_when_due(struct loop *l, struct state *s)
{
	/* A live tracer that goes quiet still moves time forward: a span
	 * ending before now - D has been written by now. */
	if (l->live_clock && !l->spn->finished) {
		int64_t m = lp_monotonic_ns() - s->o->max_delay_ns;
		if (m > s->span_mark)
			s->span_mark = m;
	}
	int64_t rel = lp_join_release_mark(s);
	bool moved = rel != INT64_MIN &&
		     (l->last_rel == INT64_MIN ? true
		      : rel == INT64_MAX ? l->last_rel != INT64_MAX
		      : rel - l->last_rel >= s->o->max_delay_ns / 4 + 1);
	if (l->since_sweep >= 65536 || moved) {
		lp_join_sweep_all(s, rel, lp_join_prune_mark(s));
		l->since_sweep = 0;
		l->last_rel = rel;
	}
}

/* A full side whose other side does not come (a quiet live producer):
 * after D of waiting, the oldest are let go, counted as early. */
static void release_stalled(struct loop *l, struct state *s)
{
	const struct lp_join_opts *opts = s->o;
	update_full(l, s);
	if (!((l->samples_full && !l->got_spans) || (l->spans_full && !l->got_samples))) {
		l->stalled_since = 0;
		return;
	}
	if (!l->stalled_since) {
		l->stalled_since = lp_monotonic_ns();
		return;
	}
	if (lp_monotonic_ns() - l->stalled_since <= opts->max_delay_ns)
		return;
	int64_t rel = lp_join_release_mark(s);
	size_t before = s->held + s->kept, held = s->held, kept = s->kept;
	int64_t sm = s->sample_mark == INT64_MIN ? INT64_MAX : s->sample_mark - opts->max_delay_ns;
	int64_t pm = s->span_mark == INT64_MIN ? INT64_MAX : s->span_mark - opts->max_delay_ns;
	lp_join_sweep_all(s, l->samples_full ? sm : rel, l->spans_full ? pm : lp_join_prune_mark(s));
	if (s->held + s->kept >= before)
		lp_join_sweep_all(s, l->samples_full ? INT64_MAX : rel,
			  l->spans_full ? INT64_MAX : lp_join_prune_mark(s));
	s->st->early += before - (s->held + s->kept);
	lp_join_write_early(s, held - s->held, kept - s->kept);
	l->stalled_since = 0;
}

/* Nothing came: the output flushed for a live reader downstream, then a
 * wait until a reader wakes us or a trickle's interval has passed. */
static void wait_for_input(struct loop *l, struct state *s)
{
	struct join *j = l->j;
	if (fflush(s->out) == EOF)
		lp_join_out_failed(s);
	pthread_mutex_lock(&j->lock);
	atomic_store(&j->consumer_waiting, 1);
	/* A reader that ended with its ring drained was finished above, so
	 * waiting here always has something to wait for. */
	if (l->behind || ((l->spans_full || lp_join_ring_empty(l->spn)) &&
			  (l->samples_full || lp_join_ring_empty(l->smp)))) {
		struct timespec ts;
		lp_join_deadline_in(&ts, IDLE_WAIT_MS);
		pthread_cond_timedwait(&j->wake, &j->lock, &ts);
	}
	atomic_store(&j->consumer_waiting, 0);
	pthread_mutex_unlock(&j->lock);
}

/* The readers joined (told to stop first when an input failed: what is
 * held then goes into nothing, the output left as it was), everything
 * freed. */
static void join_close(struct join *j, struct state *s, bool failed)
{
	FILE *discard = NULL;
	if (failed) {
		atomic_store(&j->quit, 1);
		pthread_mutex_lock(&j->lock);
		for (int i = 0; i < 2; i++)
			pthread_cond_broadcast(&j->in[i].space);
		pthread_mutex_unlock(&j->lock);
		discard = fopen("/dev/null", "w");
		if (discard) {
			lp_writer__free(s->w);
			s->w = lp_writer__new(discard);
		}
	}
	lp_join_sweep_all(s, INT64_MAX, INT64_MAX);
	for (int i = 0; i < 2; i++) {
		struct input *in = &j->in[i];
		pthread_join(in->thread, NULL);
		for (struct item *it; (it = lp_join_pop(in));)
			free(it);
		lp_reader__free(in->reader);
		for (size_t h = in->spent_head; h != in->spent_tail; h++)
			free(in->spent[h & (RING_CAP - 1)]);
		pthread_cond_destroy(&in->space);
	}
	lp_writer__free(s->w);
	lp_attrs_buf__free(&s->ab);
	lp_contents__free(s->contents);
	lp_hashmap__fini(&s->threads);
	free(s->sweep);
	for (size_t i = 0; i < s->nheaders; i++)
		free(s->headers[i]);
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->wake);
	free(j);
	if (discard)
		fclose(discard);
}

int lp_join__run(const char *samples_path, const char *spans_path,
		 const struct lp_join_opts *opts, struct lp_join_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	stats->sample_min = stats->span_min = INT64_MAX;
	stats->sample_max = stats->span_max = INT64_MIN;
	struct join *j = join_open(samples_path, spans_path, opts);
	if (!j)
		return -1;

	FILE *out = lp_open_output(opts->output);
	/* Large writes; a live reader still sees each batch: lp-join flushes
	 * whenever it waits for input. */
	static char outbuf[1 << 16];	/* outlives out: stdout is flushed at exit */
	setvbuf(out, outbuf, _IOFBF, sizeof(outbuf));
	struct state s = {
		.o = opts, .st = stats, .out = out,
		.span_mark = INT64_MIN, .sample_mark = INT64_MIN,
	};
	s.w = lp_writer__new(out);
	lp_hashmap__init(&s.threads);
	s.contents = lp_contents__new();
	s.spans_in = &j->in[1];
	struct loop l = { .j = j, .smp = &j->in[0], .spn = &j->in[1], .last_rel = INT64_MIN };
	l.files = !l.smp->live && !l.spn->live;
	bool failed = false;	/* an input could not be read to its end */

	while (!l.smp->finished || !l.spn->finished) {
		l.got_spans = l.got_samples = l.behind = false;
		update_full(&l, &s);
		take_batch(&l, &s);
		if (!finish_inputs(&l, &s)) {
			failed = true;
			break;
		}
		sweep_when_due(&l, &s);
		release_stalled(&l, &s);
		if (!l.got_spans && !l.got_samples)
			wait_for_input(&l, &s);
	}
	/* A reader of a live input may sit in read() for good: not waited for
	 * (lp-join exits now); files are cleaned up as on success. */
	if (failed && (l.smp->live || l.spn->live))
		return -1;
	join_close(j, &s, failed);
	if (failed) {
		lp_close_output(out, opts->output ? opts->output : "stdout");
		return -1;
	}
	return lp_close_output(out, opts->output && strcmp(opts->output, "-") ? opts->output
									  : "stdout");
}
