/* stop.h - how a producer (lp-record, lp-trace) is stopped by signals.
 *
 * The first SIGINT or SIGTERM asks it to stop: it stops sampling or
 * tracing, drains, writes what it has, detaches and exits 0.  A second one
 * ends it at once, killed by that signal (a shell's status 128 + signal),
 * as Ctrl-C pressed twice is expected to; the kernel drops every program,
 * link and perf event with its file descriptors, so nothing stays.
 *
 *	volatile sig_atomic_t *stop = lp_stop_on_signals();
 *	while (!*stop) poll ...;	(*stop: the first signal's number)
 */
#ifndef LP_STOP_H
#define LP_STOP_H

#include <signal.h>

/* Installs the handlers and returns the flag the first signal sets.  With
 * SA_RESTART: a write to a slow reader goes on after the first signal
 * (it is not a write error), while poll and epoll_wait, which are never
 * restarted, return EINTR, so the main loop sees the flag at once. */
volatile sig_atomic_t *lp_stop_on_signals(void);

#endif
