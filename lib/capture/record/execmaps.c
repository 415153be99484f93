/* execmaps.c - targets' maps read the moment they exec, by a thread of their
 * own, for the reader that gets to a short-lived child's samples late. */
#include "capture/record/execmaps.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

/* The processes whose maps are kept: the most recent execs, and at most
 * this many bytes of maps in all (a program of tens of thousands of
 * mappings has a megabyte).  A reader behind by more gets the oldest from
 * /proc or not at all. */
#define LP_EXECMAPS_KEEP 256
#define LP_EXECMAPS_MAX_BYTES (32u << 20)
/* Execs waiting for a read again: LP_EXEC_SETTLE_NS after the exec, then
 * four and sixteen times as long (ld.so may take that long to map the
 * libraries on a busy machine whose page faults are dear). */
#define LP_EXECMAPS_PENDING 64
#define LP_EXECMAPS_REREADS 3
/* A maps text is cut here (a process of tens of thousands of mappings):
 * its code is mapped first, by ld.so, so the cut loses the least. */
#define LP_EXECMAPS_MAX_TEXT (4u << 20)
/* How long the thread waits on the ring at most: how soon it sees a stop. */
#define LP_EXECMAPS_POLL_MS 50

struct kept {
	pid_t pid;
	uint64_t seq;		/* 0: free */
	char *text;
	size_t len;
};

struct lp_execmaps {
	struct ring_buffer *rb;
	pthread_t thread;
	pthread_mutex_t lock;	/* guards kept[] */
	struct kept kept[LP_EXECMAPS_KEEP];
	size_t bytes;		/* of the texts kept */
	uint64_t seq;
	struct { pid_t pid; int rereads; int64_t due_ns, wait_ns; } pending[LP_EXECMAPS_PENDING];
	size_t npending;
	int stop;		/* __atomic */
};

/* pid's maps as text, NUL-terminated; NULL when they cannot be read or are
 * empty (the process is gone, or a zombie). */
static char *read_maps(pid_t pid)
{
	char path[64], *text = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= LP_EXECMAPS_MAX_TEXT)
				break;
			cap = cap ? 2 * cap : 16384;
			text = lp_realloc(text, cap + 1);
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (!len) {
		free(text);
		return NULL;
	}
	/* A cut text ends at its last whole line. */
	while (len && text[len - 1] != '\n')
		len--;
	text[len] = '\0';
	return text;
}

static struct kept *oldest(struct lp_execmaps *x)
{
	struct kept *o = NULL;

	for (size_t i = 0; i < LP_EXECMAPS_KEEP; i++)
		if (x->kept[i].seq && (!o || x->kept[i].seq < o->seq))
			o = &x->kept[i];
	return o;
}

static void drop(struct lp_execmaps *x, struct kept *k)
{
	x->bytes -= k->len;
	free(k->text);
	*k = (struct kept){ 0 };
}

static void keep(struct lp_execmaps *x, pid_t pid)
{
	char *text = read_maps(pid);
	struct kept *slot = NULL, *o;

	if (!text)
		return;
	pthread_mutex_lock(&x->lock);
	/* pid's own slot, else a free one, else the oldest's. */
	for (size_t i = 0; i < LP_EXECMAPS_KEEP && !slot; i++)
		if (x->kept[i].seq && x->kept[i].pid == pid)
			slot = &x->kept[i];
	for (size_t i = 0; i < LP_EXECMAPS_KEEP && !slot; i++)
		if (!x->kept[i].seq)
			slot = &x->kept[i];
	if (!slot)
		slot = oldest(x);
	if (slot->seq)
		drop(x, slot);
	slot->pid = pid;
	slot->seq = ++x->seq;
	slot->text = text;
	slot->len = strlen(text);
	x->bytes += slot->len;
	/* Within the bytes: the oldest go (never the one just read). */
	while (x->bytes > LP_EXECMAPS_MAX_BYTES && (o = oldest(x)) != slot)
		drop(x, o);
	pthread_mutex_unlock(&x->lock);
}

static void run_pending(struct lp_execmaps *x, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < x->npending; i++) {
		if (x->pending[i].due_ns <= now) {
			keep(x, x->pending[i].pid);
			if (++x->pending[i].rereads == LP_EXECMAPS_REREADS)
				continue;
			x->pending[i].wait_ns *= 4;
			x->pending[i].due_ns = now + x->pending[i].wait_ns;
		}
		x->pending[k++] = x->pending[i];
	}
	x->npending = k;
}

static int on_exec(void *ctx, void *data, size_t size)
{
	struct lp_execmaps *x = ctx;
	pid_t pid;

	if (size < sizeof(uint32_t))
		return 0;
	pid = (pid_t)*(const uint32_t *)data;
	keep(x, pid);
	/* Full: the oldest is read once more now and left. */
	if (x->npending == LP_EXECMAPS_PENDING) {
		keep(x, x->pending[0].pid);
		memmove(x->pending, x->pending + 1, --x->npending * sizeof(x->pending[0]));
	}
	x->pending[x->npending].pid = pid;
	x->pending[x->npending].rereads = 0;
	x->pending[x->npending].wait_ns = LP_EXEC_SETTLE_NS;
	x->pending[x->npending].due_ns = lp_monotonic_ns() + LP_EXEC_SETTLE_NS;
	x->npending++;
	return 0;
}

static void *watch(void *arg)
{
	struct lp_execmaps *x = arg;

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		int timeout = LP_EXECMAPS_POLL_MS;
		int64_t now = lp_monotonic_ns();

		for (size_t i = 0; i < x->npending; i++) {
			int64_t ms = (x->pending[i].due_ns - now + 999999) / 1000000;

			if (ms < timeout)
				timeout = ms < 0 ? 0 : (int)ms;
		}
		if (ring_buffer__poll(x->rb, timeout) < 0 && errno != EINTR)
			break;
		run_pending(x, lp_monotonic_ns());
	}
	return NULL;
}

struct lp_execmaps *lp_execmaps__new(int ring_fd)
{
	struct lp_execmaps *x = lp_calloc(1, sizeof(*x));
	int err;

	pthread_mutex_init(&x->lock, NULL);
	if (!(x->rb = ring_buffer__new(ring_fd, on_exec, x, NULL))) {
		err = errno;
		goto fail;
	}
	if ((err = lp_thread_start(&x->thread, watch, x)) != 0)
		goto fail;
	return x;
fail:
	ring_buffer__free(x->rb);
	pthread_mutex_destroy(&x->lock);
	free(x);
	errno = err;
	return NULL;
}

char *lp_execmaps__get(struct lp_execmaps *x, pid_t pid)
{
	char *text = NULL;

	pthread_mutex_lock(&x->lock);
	for (size_t i = 0; i < LP_EXECMAPS_KEEP; i++)
		if (x->kept[i].seq && x->kept[i].pid == pid) {
			text = lp_strdup(x->kept[i].text);
			break;
		}
	pthread_mutex_unlock(&x->lock);
	return text;
}

void lp_execmaps__free(struct lp_execmaps *x)
{
	if (!x)
		return;
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
	pthread_join(x->thread, NULL);
	ring_buffer__free(x->rb);
	for (size_t i = 0; i < LP_EXECMAPS_KEEP; i++)
		free(x->kept[i].text);
	pthread_mutex_destroy(&x->lock);
	free(x);
}
