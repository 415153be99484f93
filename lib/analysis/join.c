/* join.c - samples meet the spans that enclose them.
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
 * a single-producer single-consumer ring, so two live pipes never deadlock
 * however their producers interleave.  Frames and stacks are interned in the
 * reader's dictionary, whose entries never move or change once made, so the
 * joining thread may follow those pointers.
 *
 * Unfinished spans (end "-": still open when tracing stopped) pass through
 * and enclose nothing: their duration is unknown, and whether a sample after
 * their start was inside them is not known either.
 */
#include "analysis/join.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analysis/contents.h"
#include "base/hashmap.h"
#include "base/util.h"

/* --- records copied out of a reader ------------------------------------ */

struct input;

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

static char *put_str(char **p, const char *s)
{
	char *d = *p;
	size_t n = strlen(s) + 1;
	memcpy(d, s, n);
	*p += n;
	return d;
}

static void put_attrs(char **p, struct lp_attrs *a)
{
	char *d = *p;
	memcpy(d, a->text, a->len);
	d[a->len] = '\0';
	a->text = d;
	*p += a->len + 1;
}

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 1;
}

static struct item *item_alloc(struct input *in, size_t need);

static struct item *item_copy(struct input *in, const struct lp_record *rec, uint64_t host)
{
	size_t need = 0;
	switch (rec->kind) {
	case LP_REC_SAMPLE:
		need = slen(rec->sample.comm) + slen(rec->sample.event) + rec->sample.attrs.len + 1;
		break;
	case LP_REC_SPAN:
		need = slen(rec->span.probe) + rec->span.attrs.len + 1;
		break;
	case LP_REC_EVENT:
		need = slen(rec->event.probe) + rec->event.attrs.len + 1;
		break;
	case LP_REC_LOST:
		need = slen(rec->lost.what);
		break;
	case LP_REC_COST:
		need = slen(rec->cost.what) + rec->cost.attrs.len + 1;
		break;
	case LP_REC_PROBE:
		need = slen(rec->mark.action) + slen(rec->mark.probe) + rec->mark.attrs.len + 1;
		break;
	case LP_REC_HEADER:
		need = rec->header.attrs.len + 1;
		break;
	case LP_REC_OTHER:
		need = rec->len + 1;
		break;
	default:
		break;
	}
	struct item *it = item_alloc(in, need);
	it->rec = *rec;
	it->host = host;
	char *p = it->data;
	switch (rec->kind) {
	case LP_REC_SAMPLE:
		it->rec.sample.comm = put_str(&p, rec->sample.comm ? rec->sample.comm : "");
		it->rec.sample.event = put_str(&p, rec->sample.event ? rec->sample.event : "");
		put_attrs(&p, &it->rec.sample.attrs);
		break;
	case LP_REC_SPAN:
		it->rec.span.probe = put_str(&p, rec->span.probe ? rec->span.probe : "");
		put_attrs(&p, &it->rec.span.attrs);
		break;
	case LP_REC_EVENT:
		it->rec.event.probe = put_str(&p, rec->event.probe ? rec->event.probe : "");
		put_attrs(&p, &it->rec.event.attrs);
		break;
	case LP_REC_LOST:
		it->rec.lost.what = put_str(&p, rec->lost.what ? rec->lost.what : "");
		break;
	case LP_REC_COST:
		it->rec.cost.what = put_str(&p, rec->cost.what ? rec->cost.what : "");
		put_attrs(&p, &it->rec.cost.attrs);
		break;
	case LP_REC_PROBE:
		it->rec.mark.action = put_str(&p, rec->mark.action ? rec->mark.action : "");
		it->rec.mark.probe = put_str(&p, rec->mark.probe ? rec->mark.probe : "");
		put_attrs(&p, &it->rec.mark.attrs);
		break;
	case LP_REC_HEADER:
		put_attrs(&p, &it->rec.header.attrs);
		break;
	case LP_REC_OTHER:
		memcpy(p, rec->line, rec->len);
		p[rec->len] = '\0';
		it->rec.line = p;
		break;
	default:
		break;
	}
	if (rec->kind != LP_REC_OTHER) {
		it->rec.line = NULL;
		it->rec.len = 0;
	}
	return it;
}

/* --- one input: a reader thread and a ring ------------------------------ */

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

/* The conditions wait on CLOCK_MONOTONIC (cond_init): a wall clock set
 * back would otherwise stretch a 50 ms wait into as long as it moved. */
static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ms * 1000000L;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

static void wake_consumer(struct join *j)
{
	if (atomic_load(&j->consumer_waiting)) {
		pthread_mutex_lock(&j->lock);
		pthread_cond_signal(&j->wake);
		pthread_mutex_unlock(&j->lock);
	}
}

static void push(struct input *in, struct item *it)
{
	struct join *j = in->j;
	size_t tail = atomic_load_explicit(&in->tail, memory_order_relaxed);
	while (tail - atomic_load(&in->head) >= RING_CAP) {
		if (atomic_load(&j->quit)) {	/* nobody will take it */
			free(it);
			return;
		}
		pthread_mutex_lock(&j->lock);
		atomic_store(&in->producer_waiting, 1);
		if (tail - atomic_load(&in->head) >= RING_CAP) {
			struct timespec ts;
			deadline_in(&ts, 50);
			pthread_cond_timedwait(&in->space, &j->lock, &ts);
		}
		atomic_store(&in->producer_waiting, 0);
		pthread_mutex_unlock(&j->lock);
	}
	in->ring[tail & (RING_CAP - 1)] = it;
	atomic_store(&in->tail, tail + 1);
	/* A sleeping consumer is woken for a batch, not for every record: it
	 * also wakes on its own every few milliseconds for a trickle. */
	if (tail + 1 - atomic_load(&in->head) >= WAKE_BATCH)
		wake_consumer(j);
}

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

static struct item *pop(struct input *in)
{
	size_t head = atomic_load_explicit(&in->head, memory_order_relaxed);
	size_t tail = atomic_load(&in->tail);
	if (head == tail)
		return NULL;
	struct item *it = in->ring[head & (RING_CAP - 1)];
	if (tail - head > PREFETCH_AHEAD)
		PREFETCH_ITEM(in->ring[(head + PREFETCH_AHEAD) & (RING_CAP - 1)], 0);
	atomic_store(&in->head, head + 1);
	/* The producer resumes when half the ring is free, not per record. */
	if (atomic_load(&in->producer_waiting) &&
	    atomic_load(&in->tail) - (head + 1) <= RING_CAP / 2) {
		pthread_mutex_lock(&in->j->lock);
		pthread_cond_signal(&in->space);
		pthread_mutex_unlock(&in->j->lock);
	}
	return it;
}

static struct item *peek(struct input *in)
{
	size_t head = atomic_load_explicit(&in->head, memory_order_relaxed);
	return head == atomic_load(&in->tail) ? NULL : in->ring[head & (RING_CAP - 1)];
}

#define ITEM_MIN_CAP 112	/* most samples' and spans' strings fit */

/* The reader thread's allocation: a spent item when one fits. */
static struct item *item_alloc(struct input *in, size_t need)
{
	struct item *it = NULL;
	size_t h = atomic_load_explicit(&in->spent_head, memory_order_relaxed);
	size_t t = atomic_load_explicit(&in->spent_tail, memory_order_acquire);
	if (h != t) {
		it = in->spent[h & (RING_CAP - 1)];
		if (t - h > PREFETCH_AHEAD)
			PREFETCH_ITEM(in->spent[(h + PREFETCH_AHEAD) & (RING_CAP - 1)], 1);
		atomic_store_explicit(&in->spent_head, h + 1, memory_order_release);
		if (it->cap < need) {
			free(it);
			it = NULL;
		}
	}
	if (!it) {
		size_t cap = need < ITEM_MIN_CAP ? ITEM_MIN_CAP : need;
		it = lp_malloc(sizeof(*it) + cap);
		it->cap = cap;
	}
	size_t cap = it->cap;
	memset(it, 0, sizeof(*it));
	it->src = in;
	it->cap = cap;
	return it;
}

/* The joining thread's free: back to the reader that made the item. */
static void item_free(struct item *it)
{
	struct input *in = it->src;
	free(it->joined);
	free(it->attrs);
	size_t t = atomic_load_explicit(&in->spent_tail, memory_order_relaxed);
	if (t - atomic_load_explicit(&in->spent_head, memory_order_acquire) < RING_CAP) {
		in->spent[t & (RING_CAP - 1)] = it;
		atomic_store_explicit(&in->spent_tail, t + 1, memory_order_release);
	} else {
		free(it);
	}
}

/* Where a record stands in stream time: a sample's time, a span's end;
 * everything else goes first. */
static int64_t item_time(const struct item *it)
{
	if (it->rec.kind == LP_REC_SAMPLE)
		return it->rec.sample.time_ns;
	if (it->rec.kind == LP_REC_SPAN && it->rec.span.end_ns != LP_TIME_NONE)
		return it->rec.span.end_ns;
	return INT64_MIN;
}

static bool ring_empty(struct input *in)
{
	return atomic_load(&in->head) == atomic_load(&in->tail);
}

static void *reader_main(void *arg)
{
	struct input *in = arg;
	struct lp_record rec;
	uint64_t host = 0;
	char *buf = NULL;
	size_t cap = 0;
	int r = 0;	/* quit before the first record: nothing read, no error */
	while (!atomic_load(&in->j->quit) && (r = lp_reader__next(in->reader, &rec)) > 0) {
		if (rec.kind == LP_REC_HEADER) {
			ssize_t n = lp_attrs__get(&rec.header.attrs, "host", &buf, &cap);
			host = n > 0 && strcmp(buf, "-") ? lp_hash_bytes(LP_HASH_INIT, buf, n) : 0;
		}
		push(in, item_copy(in, &rec, host));
	}
	free(buf);
	atomic_store(&in->done, r < 0 ? -1 : 1);
	pthread_mutex_lock(&in->j->lock);
	pthread_cond_signal(&in->j->wake);
	pthread_mutex_unlock(&in->j->lock);
	return NULL;
}

/* --- per-thread state: held samples by time, kept spans by end ---------- */

/* Each entry keeps its key (a sample's time, a span's end) beside the
 * pointer: searches and sweeps read the deque's own array, not items that
 * have long left the cache. */
struct dq_ent {
	int64_t key;
	struct item *it;
};

struct deque {
	struct dq_ent *v;
	size_t head, len, cap;	/* cap a power of two */
};

static inline struct item *dq_at(const struct deque *d, size_t i)
{
	return d->v[(d->head + i) & (d->cap - 1)].it;
}

static inline int64_t dq_key(const struct deque *d, size_t i)
{
	return d->v[(d->head + i) & (d->cap - 1)].key;
}

static void dq_grow(struct deque *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 8;
	struct dq_ent *nv = lp_reallocarray(NULL, ncap, sizeof(*nv));
	for (size_t i = 0; i < d->len; i++)
		nv[i] = d->v[(d->head + i) & (d->cap - 1)];
	free(d->v);
	d->v = nv;
	d->head = 0;
	d->cap = ncap;
}

/* Inserts keeping key order; arrival is nearly in order, so the search
 * from the back is short.  Equal keys keep arrival order. */
static void dq_insert(struct deque *d, struct item *it, int64_t (*key)(const struct item *))
{
	if (d->len == d->cap)
		dq_grow(d);
	int64_t k = key(it);
	size_t pos = d->len;
	while (pos > 0 && dq_key(d, pos - 1) > k)
		pos--;
	for (size_t i = d->len; i > pos; i--)
		d->v[(d->head + i) & (d->cap - 1)] = d->v[(d->head + i - 1) & (d->cap - 1)];
	d->v[(d->head + pos) & (d->cap - 1)] = (struct dq_ent){ k, it };
	d->len++;
}

static struct item *dq_shift(struct deque *d)
{
	struct item *it = dq_at(d, 0);
	d->head = (d->head + 1) & (d->cap - 1);
	d->len--;
	return it;
}

/* First index whose key is >= k (or > k when strict). */
static size_t dq_lower(const struct deque *d, int64_t k, bool strict)
{
	size_t lo = 0, hi = d->len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t m = dq_key(d, mid);
		if (strict ? m <= k : m < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int64_t sample_time(const struct item *it)
{
	return it->rec.sample.time_ns;
}

static int64_t span_end(const struct item *it)
{
	return it->rec.span.end_ns;
}

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
	struct thr **sweep;		/* sweep_all's list of them */
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

/* Threads are keyed by tid alone: a tid is unique on a host, and `perf
 * script` prints only the tid by default.  encloses() checks the pid (when
 * both sides know it) and the host.  The key is the tid itself, never 0. */
static uint64_t thr_key(int32_t tid)
{
	return (uint64_t)(uint32_t)tid | 1ULL << 32;
}

static struct thr *thr_get(struct state *s, int32_t pid, int32_t tid, bool create)
{
	struct thr *t = lp_hashmap__get(&s->threads, thr_key(tid));
	if (t || !create)
		return t;
	t = lp_calloc(1, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	lp_hashmap__put(&s->threads, thr_key(tid), t);
	return t;
}

static void thr_remove(struct state *s, struct thr *t)
{
	lp_hashmap__del(&s->threads, thr_key(t->tid));
	free(t->samples.v);
	free(t->spans.v);
	free(t);
}

/* --- joining -------------------------------------------------------------- */

static void unref(struct item *span)
{
	if (span && --span->refs == 0)
		item_free(span);
}

static bool probe_wanted(const struct state *s, const char *probe)
{
	if (!s->o->nprobes)
		return true;
	for (size_t i = 0; i < s->o->nprobes; i++)
		if (!strcmp(s->o->probes[i], probe))
			return true;
	return false;
}

/* Innermost first: the latest start, then the deepest, then the earliest
 * end; a tie keeps the span that arrived first. */
static bool inner(const struct item *a, const struct item *b)
{
	const struct lp_span *x = &a->rec.span, *y = &b->rec.span;
	if (x->start_ns != y->start_ns)
		return x->start_ns > y->start_ns;
	if (x->depth != y->depth)
		return x->depth > y->depth;
	return x->end_ns < y->end_ns;
}

static bool encloses(const struct item *span, const struct item *sample)
{
	const struct lp_span *sp = &span->rec.span;
	const struct lp_sample *smp = &sample->rec.sample;
	int64_t t = smp->time_ns;
	if (!(sp->start_ns <= t && t < sp->end_ns))
		return false;
	if (sp->pid != smp->pid && sp->pid != LP_ID_NONE && smp->pid != LP_ID_NONE)
		return false;
	return !span->host || !sample->host || span->host == sample->host;
}

static void attach(struct state *s, struct item *sample, struct item *span)
{
	if (!s->o->all_spans) {
		if (sample->best && !inner(span, sample->best))
			return;
		unref(sample->best);
		sample->best = span;
		span->refs++;
		return;
	}
	if (sample->nall == sample->capall) {
		sample->capall = sample->capall ? sample->capall * 2 : 4;
		sample->all = lp_reallocarray(sample->all, sample->capall, sizeof(*sample->all));
	}
	/* Kept innermost first; insertion sort, the lists are short. */
	size_t i = sample->nall;
	while (i > 0 && inner(span, sample->all[i - 1])) {
		sample->all[i] = sample->all[i - 1];
		i--;
	}
	sample->all[i] = span;
	sample->nall++;
	span->refs++;
}

static void out_failed(struct state *s)
{
	lp_write_failed(s->o->output && strcmp(s->o->output, "-") ? s->o->output : "stdout");
}

/* span=PROBE span_start=NS span_end=NS span_depth=N and the span's own
 * captured values as span.KEY=VALUE; the i-th enclosing span outwards (from
 * 1, --all-spans) as spanI=, spanI_start=, ..., spanI.KEY=. */
static void add_span(struct state *s, const struct item *span, size_t i)
{
	const struct lp_span *sp = &span->rec.span;
	char pfx[32];
	if (i) {
		char key[64];
		snprintf(pfx, sizeof(pfx), "span%zu", i);
		lp_attrs_buf__add(&s->ab, pfx, sp->probe);
		lp_attrs_buf__add_i64(&s->ab, key, snprintf(key, sizeof(key), "%s_start", pfx),
				      sp->start_ns);
		lp_attrs_buf__add_i64(&s->ab, key, snprintf(key, sizeof(key), "%s_end", pfx),
				      sp->end_ns);
		lp_attrs_buf__add_i64(&s->ab, key, snprintf(key, sizeof(key), "%s_depth", pfx),
				      sp->depth);
	} else {
		/* The common case, without formatting keys. */
		strcpy(pfx, "span");
		lp_attrs_buf__add(&s->ab, "span", sp->probe);
		lp_attrs_buf__add_i64(&s->ab, "span_start", strlen("span_start"), sp->start_ns);
		lp_attrs_buf__add_i64(&s->ab, "span_end", strlen("span_end"), sp->end_ns);
		lp_attrs_buf__add_i64(&s->ab, "span_depth", strlen("span_depth"), sp->depth);
	}
	/* a field without a key is no value to carry */
	struct lp_attrs_iter at = LP_ATTRS_ITER(&sp->attrs);
	struct lp_attr a;
	while (lp_attrs__next(&at, &a))
		if (a.value && a.key_len)
			lp_attrs_buf__add_attr(&s->ab, pfx, &a);
}

static void release(struct state *s, struct item *it)
{
	struct lp_sample smp = it->rec.sample;
	size_t n = s->o->all_spans ? it->nall : (it->best != NULL);
	if (n) {
		lp_attrs_buf__set(&s->ab, &smp.attrs);
		if (s->o->all_spans) {
			for (size_t i = 0; i < it->nall; i++)
				add_span(s, it->all[i], i);
		} else if (!it->best->joined) {
			/* add_span appends a tab first when the buffer holds
			 * something, then the same text whatever it holds. */
			size_t from = s->ab.len + (s->ab.len > 0);
			add_span(s, it->best, 0);
			it->best->joined_len = s->ab.len - from;
			it->best->joined = lp_malloc(it->best->joined_len);
			memcpy(it->best->joined, s->ab.text + from, it->best->joined_len);
		} else {
			lp_attrs_buf__raw(&s->ab, it->best->joined, it->best->joined_len);
		}
		smp.attrs = lp_attrs_buf__attrs(&s->ab);
		s->st->joined++;
	}
	if (lp_writer__sample(s->w, &smp) < 0)
		out_failed(s);
	unref(it->best);
	for (size_t i = 0; i < it->nall; i++)
		unref(it->all[i]);
	free(it->all);
	item_free(it);
}

/* How far one side has come, less the out-of-order bound: the other side's
 * records before it are settled.  Everything once the side has ended,
 * nothing before its first record. */
static int64_t settled_mark(bool done, int64_t mark, int64_t max_delay_ns)
{
	if (done)
		return INT64_MAX;
	if (mark == INT64_MIN)
		return INT64_MIN;
	return mark - max_delay_ns;
}

/* Samples before it have seen every span that could enclose them. */
static int64_t release_mark(const struct state *s)
{
	return settled_mark(s->spans_done, s->span_mark, s->o->max_delay_ns);
}

/* Spans ending before it can enclose no sample still to come. */
static int64_t prune_mark(const struct state *s)
{
	return settled_mark(s->samples_done, s->sample_mark, s->o->max_delay_ns);
}

/* Releases the thread's samples older than the release mark and drops the
 * spans no later sample can fall in; frees the thread when it is empty. */
static void thr_sweep(struct state *s, struct thr *t, int64_t rel, int64_t prune)
{
	/* INT64_MAX is "after every time": it lets go of records at that very
	 * time too, which a stream may hold (formats/lp-stream.md). */
	while (t->samples.len && (dq_key(&t->samples, 0) < rel || rel == INT64_MAX)) {
		/* Held samples have left the cache by now: fetch ahead. */
		if (t->samples.len > PREFETCH_AHEAD)
			PREFETCH_ITEM(dq_at(&t->samples, PREFETCH_AHEAD), 0);
		release(s, dq_shift(&t->samples));
		s->held--;
	}
	while (t->spans.len && (dq_key(&t->spans, 0) < prune || prune == INT64_MAX)) {
		unref(dq_shift(&t->spans));
		s->kept--;
	}
	if (!t->samples.len && !t->spans.len)
		thr_remove(s, t);
}

static void sweep_all(struct state *s, int64_t rel, int64_t prune)
{
	/* a list first: a sweep may remove its thread from the table */
	size_t n = 0;
	if (s->threads.count > s->sweep_cap) {
		s->sweep_cap = s->threads.count * 2;
		s->sweep = lp_reallocarray(s->sweep, s->sweep_cap, sizeof(*s->sweep));
	}
	for (size_t i = 0; i < s->threads.cap; i++)
		if (s->threads.keys[i])
			s->sweep[n++] = s->threads.values[i];
	for (size_t i = 0; i < n; i++)
		thr_sweep(s, s->sweep[i], rel, prune);
	/* Events and spans no span still to come can hold (contents.h): the
	 * same rule as for the samples, less the longest span so far. */
	lp_contents__prune(s->contents, release_mark(s));
}

static void on_sample(struct state *s, struct item *it)
{
	const struct lp_sample *smp = &it->rec.sample;
	s->st->samples++;
	if (smp->time_ns == LP_TIME_NONE || smp->tid == LP_ID_NONE) {
		s->st->untimed += smp->time_ns == LP_TIME_NONE;
		release(s, it);
		return;
	}
	if (smp->time_ns < s->st->sample_min)
		s->st->sample_min = smp->time_ns;
	if (smp->time_ns > s->st->sample_max)
		s->st->sample_max = smp->time_ns;
	if (smp->time_ns > s->sample_mark)
		s->sample_mark = smp->time_ns;
	struct thr *t = thr_get(s, smp->pid, smp->tid, true);
	/* Kept spans enclosing t end after it, and no later than t plus the
	 * longest span kept on the thread. */
	size_t i = dq_lower(&t->spans, smp->time_ns, true);
	for (; i < t->spans.len; i++) {
		if (dq_key(&t->spans, i) - t->max_span_ns > smp->time_ns)
			break;
		struct item *sp = dq_at(&t->spans, i);
		if (encloses(sp, it))
			attach(s, it, sp);
	}
	if (smp->time_ns < release_mark(s)) {
		release(s, it);
		thr_sweep(s, t, release_mark(s), prune_mark(s));
		return;
	}
	dq_insert(&t->samples, it, sample_time);
	s->held++;
}

static void on_span(struct state *s, struct item *it)
{
	struct lp_span *sp = &it->rec.span;
	s->st->spans++;
	/* A request of lp-trace's key: probes (key=) is no call of its
	 * thread: the work it holds there is other requests' too.  Its
	 * samples are its callbacks' (key.NAME=, lp-split -e NAME). */
	size_t klen;
	if (lp_attrs__raw(&sp->attrs, "key", 3, &klen)) {
		if (lp_writer__span(s->w, sp) < 0)
			out_failed(s);
		item_free(it);
		return;
	}
	/* Everything it holds came before it on its thread: what happened
	 * inside it is known now, and becomes part of it for the samples. */
	if (it->src == s->spans_in && !s->o->no_contents) {
		lp_contents__span(s->contents, it->host, sp, &s->ab);
		it->attrs = lp_strndup(s->ab.text ? s->ab.text : "", s->ab.len);
		sp->attrs = (struct lp_attrs){ it->attrs, s->ab.len };
	}
	if (lp_writer__span(s->w, sp) < 0)
		out_failed(s);
	if (sp->end_ns == LP_TIME_NONE || sp->start_ns == LP_TIME_NONE) {
		s->st->unfinished++;
		item_free(it);
		return;
	}
	if (sp->end_ns > s->span_mark && !s->spans_done)
		s->span_mark = sp->end_ns;
	if (sp->start_ns < s->st->span_min)
		s->st->span_min = sp->start_ns;
	if (sp->end_ns > s->st->span_max)
		s->st->span_max = sp->end_ns;
	if (!probe_wanted(s, sp->probe)) {
		item_free(it);
		return;
	}
	/* After the samples' end a span still matters to the held ones. */
	struct thr *t = thr_get(s, sp->pid, sp->tid, !s->samples_done);
	if (!t) {
		item_free(it);
		return;
	}
	it->refs = 1;
	size_t i = dq_lower(&t->samples, sp->start_ns, false);
	for (; i < t->samples.len; i++) {
		if (dq_key(&t->samples, i) >= sp->end_ns)
			break;
		struct item *smp = dq_at(&t->samples, i);
		if (encloses(it, smp))
			attach(s, smp, it);
	}
	if (sp->end_ns >= prune_mark(s)) {
		if (sp->end_ns - sp->start_ns > t->max_span_ns)
			t->max_span_ns = sp->end_ns - sp->start_ns;
		dq_insert(&t->spans, it, span_end);
		s->kept++;
	} else
		unref(it);
	thr_sweep(s, t, release_mark(s), prune_mark(s));
}

static void on_header(struct state *s, struct item *it)
{
	/* Both inputs open with a header; an identical one is written once. */
	for (size_t i = 0; i < s->nheaders; i++)
		if (!strcmp(s->headers[i], it->rec.header.attrs.text)) {
			item_free(it);
			return;
		}
	if (s->nheaders < sizeof(s->headers) / sizeof(s->headers[0]))
		s->headers[s->nheaders++] = lp_strdup(it->rec.header.attrs.text);
	if (lp_writer__header(s->w, &it->rec.header) < 0)
		out_failed(s);
	item_free(it);
}

static void on_item(struct state *s, struct item *it)
{
	int r = 0;
	switch (it->rec.kind) {
	case LP_REC_SAMPLE:
		on_sample(s, it);
		return;
	case LP_REC_SPAN:
		on_span(s, it);
		return;
	case LP_REC_HEADER:
		on_header(s, it);
		return;
	case LP_REC_FRAME:
		r = lp_writer__frame(s->w, it->rec.frame);
		break;
	case LP_REC_STACK:
		r = lp_writer__stack(s->w, it->rec.stack);
		break;
	case LP_REC_EVENT:
		if (it->src == s->spans_in && !s->o->no_contents)
			lp_contents__event(s->contents, it->host, &it->rec.event);
		if (it->src == s->spans_in) {
			/* the tracer writes in time order: spans ending before
			 * it less D have come, as after a span's end */
			if (it->rec.event.time_ns > s->span_mark && !s->spans_done)
				s->span_mark = it->rec.event.time_ns;
		}
		r = lp_writer__event(s->w, &it->rec.event);
		break;
	case LP_REC_LOST:
		r = lp_writer__lost(s->w, &it->rec.lost);
		break;
	default:
		s->st->other++;
		r = lp_writer__record(s->w, &it->rec);
		break;
	}
	if (r < 0)
		out_failed(s);
	item_free(it);
}

/* Samples let go before every span that could enclose them was read, and
 * spans dropped before every sample they could enclose: their joins may be
 * missing, which is lost data, so it goes into the stream where it
 * happened (formats/lp-stream.md, kinds join-samples and join-spans). */
static void write_early(struct state *s, size_t samples, size_t spans)
{
	/* At the newest time read on each side (LP_TIME_NONE is INT64_MIN). */
	struct lp_lost l = { .time_ns = s->st->sample_max, .what = "join-samples",
			     .count = samples };
	if (samples && lp_writer__lost(s->w, &l) < 0)
		out_failed(s);
	l = (struct lp_lost){ .time_ns = s->st->span_max, .what = "join-spans", .count = spans };
	if (spans && lp_writer__lost(s->w, &l) < 0)
		out_failed(s);
}

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
		int err = pthread_create(&j->in[i].thread, NULL, reader_main, &j->in[i]);
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
		struct item *a = l->spans_full ? NULL : peek(l->spn);
		struct item *b = l->samples_full ? NULL : peek(l->smp);
		if (!a && !b)
			break;
		/* Two files: wait for the reader that is behind rather than
		 * read ahead on the other (it is only a few records away). */
		if (l->files && ((a && !b && !l->samples_full && !atomic_load(&l->smp->done)) ||
				 (b && !a && !l->spans_full && !atomic_load(&l->spn->done)))) {
			l->behind = true;
			break;
		}
		struct input *from = !b || (a && item_time(a) <= item_time(b)) ? l->spn : l->smp;
		struct item *it = pop(from);
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
		on_item(s, it);
		update_full(l, s);
	}
}

/* An input read to its end and drained: what waited for it goes.  False
 * when its reader failed. */
static bool finish_inputs(struct loop *l, struct state *s)
{
	if (!l->spn->finished && atomic_load(&l->spn->done) && ring_empty(l->spn)) {
		l->spn->finished = true;
		if (atomic_load(&l->spn->done) < 0)
			return false;
		s->spans_done = true;
		sweep_all(s, INT64_MAX, prune_mark(s));
		l->got_spans = true;
	}
	if (!l->smp->finished && atomic_load(&l->smp->done) && ring_empty(l->smp)) {
		l->smp->finished = true;
		if (atomic_load(&l->smp->done) < 0)
			return false;
		s->samples_done = true;
		sweep_all(s, release_mark(s), INT64_MAX);
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
	int64_t rel = release_mark(s);
	bool moved = rel != INT64_MIN &&
		     (l->last_rel == INT64_MIN ? true
		      : rel == INT64_MAX ? l->last_rel != INT64_MAX
		      : rel - l->last_rel >= s->o->max_delay_ns / 4 + 1);
	if (l->since_sweep >= 65536 || moved) {
		sweep_all(s, rel, prune_mark(s));
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
	int64_t rel = release_mark(s);
	size_t before = s->held + s->kept, held = s->held, kept = s->kept;
	int64_t sm = s->sample_mark == INT64_MIN ? INT64_MAX : s->sample_mark - opts->max_delay_ns;
	int64_t pm = s->span_mark == INT64_MIN ? INT64_MAX : s->span_mark - opts->max_delay_ns;
	sweep_all(s, l->samples_full ? sm : rel, l->spans_full ? pm : prune_mark(s));
	if (s->held + s->kept >= before)
		sweep_all(s, l->samples_full ? INT64_MAX : rel,
			  l->spans_full ? INT64_MAX : prune_mark(s));
	s->st->early += before - (s->held + s->kept);
	write_early(s, held - s->held, kept - s->kept);
	l->stalled_since = 0;
}

/* Nothing came: the output flushed for a live reader downstream, then a
 * wait until a reader wakes us or a trickle's interval has passed. */
static void wait_for_input(struct loop *l, struct state *s)
{
	struct join *j = l->j;
	if (fflush(s->out) == EOF)
		out_failed(s);
	pthread_mutex_lock(&j->lock);
	atomic_store(&j->consumer_waiting, 1);
	/* A reader that ended with its ring drained was finished above, so
	 * waiting here always has something to wait for. */
	if (l->behind || ((l->spans_full || ring_empty(l->spn)) &&
			  (l->samples_full || ring_empty(l->smp)))) {
		struct timespec ts;
		deadline_in(&ts, IDLE_WAIT_MS);
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
	sweep_all(s, INT64_MAX, INT64_MAX);
	for (int i = 0; i < 2; i++) {
		struct input *in = &j->in[i];
		pthread_join(in->thread, NULL);
		for (struct item *it; (it = pop(in));)
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
