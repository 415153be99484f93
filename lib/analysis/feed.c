/* feed.c - reader threads feeding one sink under a lock (feed.h). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/feed.h"
#include "base/util.h"

struct lp_feed {
	pthread_mutex_t lock;
	struct lp_feed_state st;
	lp_feed_fn *fn;
	void *sink;
	int wake_fd;
	int n;
	pthread_t *threads;
};

struct feed_input {
	struct lp_feed *f;
	struct lp_reader *reader;
	int index;
};

static void *feed_read(void *arg)
{
	struct feed_input *in = arg;
	struct lp_feed *f = in->f;
	struct lp_reader *reader = in->reader;
	int index = in->index;
	struct lp_record rec;
	int rc;

	free(in);
	while ((rc = lp_reader__next(reader, &rec)) > 0) {
		int64_t now = lp_monotonic_ns();
		pthread_mutex_lock(&f->lock);
		if (rec.kind == LP_REC_LOST)
			f->st.lost += rec.lost.count;
		else
			f->fn(f->sink, index, &rec, now);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_lock(&f->lock);
	f->st.readers_left--;
	if (rc < 0)
		f->st.failed = true;
	pthread_mutex_unlock(&f->lock);
	char c = 'e';
	ssize_t w = write(f->wake_fd, &c, 1);
	(void)w;		/* a full pipe already holds a wake-up */
	return NULL;
}

struct lp_feed *lp_feed__start(struct lp_reader **readers, int n, int wake_fd, lp_feed_fn *fn,
			       void *sink)
{
	struct lp_feed *f = lp_calloc(1, sizeof(*f));

	pthread_mutex_init(&f->lock, NULL);
	f->fn = fn;
	f->sink = sink;
	f->st.readers_left = n;
	f->wake_fd = wake_fd;
	f->n = n;
	f->threads = lp_calloc(n ? n : 1, sizeof(*f->threads));
	/* Signals go to the calling thread alone (the readers inherit this
	 * mask): its handler then never runs beside its own exit path (lp-top
	 * restoring the terminal: ThreadSanitizer saw that race).  The readers
	 * still end on a second SIGINT: lp_stop__reading wakes them through a
	 * pipe. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < n; i++) {
		struct feed_input *in = lp_calloc(1, sizeof(*in));
		in->f = f;
		in->reader = readers[i];
		in->index = i;
		int err = pthread_create(&f->threads[i], NULL, feed_read, in);
		if (err)
			lp_die(1, "cannot start a reader thread: %s", strerror(err));
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return f;
}

void lp_feed__lock(struct lp_feed *f, struct lp_feed_state *st)
{
	pthread_mutex_lock(&f->lock);
	if (st)
		*st = f->st;
}

void lp_feed__unlock(struct lp_feed *f)
{
	pthread_mutex_unlock(&f->lock);
}

void lp_feed__join(struct lp_feed *f)
{
	for (int i = 0; i < f->n; i++)
		pthread_join(f->threads[i], NULL);
}

void lp_feed__abandon(struct lp_feed *f)
{
	for (int i = 0; i < f->n; i++)
		pthread_detach(f->threads[i]);
}

void lp_feed__free(struct lp_feed *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f->threads);
	free(f);
}
