/* tty.h - the terminal of a full-screen view (lp-top): keys read from the
 * controlling terminal, since stdin is usually the data, without echo or
 * line buffering and restored at exit; and the window's size. */
#ifndef LP_TTY_H
#define LP_TTY_H

/* Opens /dev/tty non-blocking for keys: no echo, no line buffering,
 * signals still on so ^C works; the old settings come back at exit, at
 * lp_tty__restore (async-signal-safe: call it before dying of a signal) and
 * when SIGHUP, SIGQUIT or SIGPIPE, left at their default, kill the process.  Returns the descriptor, or -1 when stdin is itself a
 * terminal or there is no controlling terminal. */
int lp_tty__open_keys(void);
void lp_tty__restore(void);

/* The size of the terminal on fd; 24 x 80 when it cannot be told. */
void lp_tty__size(int fd, int *rows, int *cols);

#endif
