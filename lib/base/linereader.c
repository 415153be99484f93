/* linereader.c - buffered lines from a file descriptor.  The buffer grows to
 * hold the longest line (no fixed limit) and lines are returned in place.
 *
 * An input that can block (a pipe, socket or terminal) is polled before
 * each read: when it has nothing to give, the program's outputs are flushed
 * first (a live pipeline never waits on a buffer), and the wait also ends
 * at a stop (the second SIGINT, see util.h).  A regular file never blocks:
 * it is read without a poll, and only checked for a stop once a chunk. */
#include "base/linereader.h"
#include "base/stop.h"
#include "base/util.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (256 * 1024)

struct lp_linereader {
	int fd;
	char *buf;
	size_t cap;
	size_t start, end;	/* unread bytes are buf[start..end) */
	int eof;
	int stopped;		/* ended by a stop: a last partial line is dropped */
	int can_block;		/* not a regular file */
	uint64_t ticket;	/* lp_stop__ticket() */
	uint64_t lineno;
};

struct lp_linereader *lp_linereader__new(int fd)
{
	struct lp_linereader *lr = lp_calloc(1, sizeof(*lr));
	struct stat st;

	lr->fd = fd;
	lr->can_block = fstat(fd, &st) < 0 || !S_ISREG(st.st_mode);
	/* After a stop nothing waits on a pipe, even one opened later (the
	 * ticket older than any stop); a file opened later, such as
	 * lp-split's spool of what it read, is read whole. */
	lr->ticket = lr->can_block ? 0 : lp_stop__ticket();
	lr->cap = 2 * READ_CHUNK;
	lr->buf = lp_malloc(lr->cap);
	return lr;
}

struct lp_linereader *lp_linereader__new_mem(char *data, size_t len)
{
	struct lp_linereader *lr = lp_calloc(1, sizeof(*lr));
	lr->fd = -1;
	lr->buf = data;
	lr->cap = len + 1;
	lr->end = len;
	lr->eof = 1;
	lr->ticket = lp_stop__ticket();
	return lr;
}

void lp_linereader__free(struct lp_linereader *lr)
{
	if (!lr)
		return;
	if (lr->fd > STDIN_FILENO)
		close(lr->fd);
	free(lr->buf);
	free(lr);
}

uint64_t lp_linereader__lineno(const struct lp_linereader *lr)
{
	return lr->lineno;
}

static int stop(struct lp_linereader *lr)
{
	lr->stopped = lr->eof = 1;
	return 0;
}

/* An input that can block: 1 when a read will not (data, end of input or
 * an error to read), 0 at a stop. */
static int wait_readable(struct lp_linereader *lr)
{
	struct pollfd p[2] = {
		{ .fd = lr->fd, .events = POLLIN },
		{ .fd = lp_stop__fd(), .events = POLLIN },
	};

	if (poll(p, 1, 0) == 0) {
		/* Idle: what was read is written before waiting for more. */
		lp_flush_outputs();
		while (poll(p, p[1].fd >= 0 ? 2 : 1, -1) < 0 && errno == EINTR)
			if (lp_stop__stopped(lr->ticket))
				return 0;
	}
	return !lp_stop__stopped(lr->ticket);
}

/* Makes room for READ_CHUNK more bytes and reads once. */
static int fill(struct lp_linereader *lr)
{
	if (lp_stop__stopped(lr->ticket) || (lr->can_block && !wait_readable(lr)))
		return stop(lr);
	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->cap - lr->end < READ_CHUNK) {
		lr->cap *= 2;
		lr->buf = lp_realloc(lr->buf, lr->cap);
	}
	for (;;) {
		/* One byte always stays free to NUL-terminate a last line. */
		ssize_t n = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end - 1);
		if (n > 0) {
			lr->end += n;
			return 1;
		}
		if (n == 0) {
			lr->eof = 1;
			return 0;
		}
		if (errno != EINTR)
			return -1;
		if (lp_stop__stopped(lr->ticket))
			return stop(lr);
	}
}

int lp_linereader__peek(struct lp_linereader *lr, size_t want, const unsigned char **p,
			size_t *avail)
{
	for (;;) {
		size_t n = lr->end - lr->start;
		if (n >= want || lr->eof) {
			*p = (const unsigned char *)lr->buf + lr->start;
			*avail = n;
			return lr->stopped ? 0 : 1;
		}
		int rc = fill(lr);
		if (rc < 0)
			return -1;
		if (lr->stopped)
			return 0;
	}
}

int lp_linereader__slurp(struct lp_linereader *lr, size_t max, char **data, size_t *len)
{
	while (!lr->eof) {
		if (lr->end - lr->start > max) {
			errno = EFBIG;
			return -1;
		}
		if (fill(lr) < 0)
			return -1;
	}
	if (lr->stopped)
		return 0;
	size_t n = lr->end - lr->start;
	if (n > max) {
		errno = EFBIG;
		return -1;
	}
	/* The buffer itself is handed over: no copy of what may be large. */
	memmove(lr->buf, lr->buf + lr->start, n);
	lr->buf[n] = '\0';	/* fill keeps a byte free */
	*data = lr->buf;
	*len = n;
	lr->cap = 64;
	lr->buf = lp_malloc(lr->cap);
	lr->start = lr->end = 0;
	return 1;
}

int lp_linereader__next(struct lp_linereader *lr, char **line, size_t *len,
			int *terminated)
{
	size_t scanned = 0;
	for (;;) {
		char *p = lr->buf + lr->start;
		size_t avail = lr->end - lr->start;
		char *nl = memchr(p + scanned, '\n', avail - scanned);
		if (nl) {
			*line = p;
			*len = nl - p;
			*terminated = 1;
			*nl = '\0';
			lr->start += *len + 1;
			lr->lineno++;
			return 1;
		}
		if (lr->eof) {
			/* A stop keeps complete lines only. */
			if (avail == 0 || lr->stopped)
				return 0;
			*line = p;
			*len = avail;
			*terminated = 0;
			p[avail] = '\0';
			lr->start = lr->end;
			lr->lineno++;
			return 1;
		}
		scanned = avail;
		if (fill(lr) < 0)
			return -1;
	}
}
