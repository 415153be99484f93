/* control.c - the command FIFO of lp-trace and lp-record (control.h). */
#include "capture/control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

struct lp_control {
	char *path;
	int rfd, wfd;		/* wfd: ours, so that no writer's close is an EOF */
	bool made;		/* created here: removed at the end */
	bool skipping;		/* the rest of a line too long */
	char buf[LP_CONTROL_LINE_MAX + 1];
	size_t len;
};

struct lp_control *lp_control__open(const char *path)
{
	struct lp_control *c = lp_calloc(1, sizeof(*c));
	c->rfd = c->wfd = -1;
	c->path = lp_strdup(path);
	if (mkfifo(path, 0600) == 0)
		c->made = true;
	else if (errno != EEXIST) {
		lp_error_errno("--control: cannot make the FIFO %s", path);
		goto fail;
	}
	struct stat st;
	/* Not blocking: an open for reading would wait for a writer. */
	c->rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->rfd < 0) {
		lp_error_errno("--control: cannot open %s", path);
		goto fail;
	}
	if (fstat(c->rfd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		lp_error("--control: %s is not a FIFO", path);
		goto fail;
	}
	c->wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->wfd < 0) {
		lp_error_errno("--control: cannot open %s", path);
		goto fail;
	}
	return c;
fail:
	lp_control__free(c);
	return NULL;
}

/* One line: trimmed, and given to cmd unless blank or a comment. */
static int one_line(char *line, int (*cmd)(void *arg, char *line), void *arg)
{
	while (*line == ' ' || *line == '\t')
		line++;
	size_t n = strlen(line);
	while (n && strchr(" \t\r", line[n - 1]))
		line[--n] = '\0';
	if (!n || line[0] == '#')
		return 0;
	return cmd(arg, line);
}

int lp_control__read(struct lp_control *c, int (*cmd)(void *arg, char *line), void *arg)
{
	for (;;) {
		/* The complete lines read so far. */
		char *nl;
		while ((nl = memchr(c->buf, '\n', c->len))) {
			*nl = '\0';
			size_t used = (size_t)(nl - c->buf) + 1;
			int r = 0;
			if (c->skipping)
				c->skipping = false;
			else if (memchr(c->buf, '\0', used - 1))
				lp_error("--control: a command with a NUL byte: ignored");
			else
				r = one_line(c->buf, cmd, arg);
			memmove(c->buf, c->buf + used, c->len - used);
			c->len -= used;
			if (r)
				return r;
		}
		if (c->len == LP_CONTROL_LINE_MAX) {
			if (!c->skipping)
				lp_error("--control: a command longer than %d bytes: ignored",
					 LP_CONTROL_LINE_MAX);
			c->skipping = true;
			c->len = 0;
		}
		ssize_t n = read(c->rfd, c->buf + c->len, LP_CONTROL_LINE_MAX - c->len);
		if (n > 0) {
			c->len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return 0;	/* EAGAIN: nothing more now */
	}
}

void lp_control__free(struct lp_control *c)
{
	if (!c)
		return;
	if (c->rfd >= 0)
		close(c->rfd);
	if (c->wfd >= 0)
		close(c->wfd);
	if (c->made)
		unlink(c->path);
	free(c->path);
	free(c);
}
