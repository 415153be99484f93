/* control.h - the command FIFO of lp-trace and lp-record (--control FIFO):
 * line commands read while they run, between two polls of their engine,
 * never waiting for a writer (the ring is drained meanwhile).
 *
 * The FIFO is created (mode 0600) unless it exists, and removed at the end
 * when it was created here.  It is held open for writing too, so that a
 * writer closing it (`echo status > FIFO`) is no end of input: any number
 * of writers, one after the other, over the whole run. */
#ifndef LP_CONTROL_H
#define LP_CONTROL_H

#include <stddef.h>

struct lp_control;

/* NULL after saying why (a path that exists and is not a FIFO...). */
struct lp_control *lp_control__open(const char *path);

/* The commands written so far, without waiting: cmd(arg, line) for each
 * complete line, its white space trimmed (blank lines and #comments
 * skipped).  A line longer than LP_CONTROL_LINE_MAX is refused, said, and
 * skipped to its end.  Stops at the first cmd that returns non-zero and
 * returns that (what is left is read at the next call); else 0. */
#define LP_CONTROL_LINE_MAX 4096
int lp_control__read(struct lp_control *c, int (*cmd)(void *arg, char *line), void *arg);

/* Closes it (and removes a FIFO it made); accepts NULL. */
void lp_control__free(struct lp_control *c);

#endif
