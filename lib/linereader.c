/* linereader.c - buffered lines from a file descriptor.  The buffer grows to
 * hold the longest line (no fixed limit) and lines are returned in place. */
#include "linereader.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK (256 * 1024)

struct lp_linereader {
	int fd;
	char *buf;
	size_t cap;
	size_t start, end;	/* unread bytes are buf[start..end) */
	int eof;
	uint64_t lineno;
};

struct lp_linereader *lp_linereader__new(int fd)
{
	struct lp_linereader *lr = lp_calloc(1, sizeof(*lr));
	lr->fd = fd;
	lr->cap = 2 * READ_CHUNK;
	lr->buf = lp_malloc(lr->cap);
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

/* Makes room for READ_CHUNK more bytes and reads once. */
static int fill(struct lp_linereader *lr)
{
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
	}
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
			if (avail == 0)
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
