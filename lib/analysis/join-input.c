/* join-input.c - one input of lp-join: a thread reading it, deep copies of
 * its records handed to the joining thread through a single-producer
 * single-consumer ring, and the consumer woken in batches. */
#include "analysis/join.h"
#include "analysis/join-internal.h"

#include <stdlib.h>

#include "base/util.h"

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

/* The conditions wait on CLOCK_MONOTONIC (cond_init): a wall clock set
 * back would otherwise stretch a 50 ms wait into as long as it moved. */
void lp_join_deadline_in(struct timespec *ts, long ms)
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
			lp_join_deadline_in(&ts, 50);
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

struct item *lp_join_pop(struct input *in)
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

struct item *lp_join_peek(struct input *in)
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
void lp_join_item_free(struct item *it)
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
int64_t lp_join_item_time(const struct item *it)
{
	if (it->rec.kind == LP_REC_SAMPLE)
		return it->rec.sample.time_ns;
	if (it->rec.kind == LP_REC_SPAN && it->rec.span.end_ns != LP_TIME_NONE)
		return it->rec.span.end_ns;
	return INT64_MIN;
}

bool lp_join_ring_empty(struct input *in)
{
	return atomic_load(&in->head) == atomic_load(&in->tail);
}

void *lp_join_reader_main(void *arg)
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
