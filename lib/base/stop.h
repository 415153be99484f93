/* stop.h - how lp's programs are stopped by signals, producers and filters.
 *
 * A producer (lp-record, lp-trace): the first SIGINT or SIGTERM asks it to
 * stop: it stops sampling or tracing, drains, writes what it has, detaches
 * and exits 0.  A second one ends it at once, killed by that signal (a
 * shell's status 128 + signal), as Ctrl-C pressed twice is expected to;
 * the kernel drops every program, link and perf event with its file
 * descriptors, so nothing stays.
 *
 *	volatile sig_atomic_t *stop = lp_stop__on_signals();
 *	while (!*stop) poll ...;	(*stop: the first signal's number)
 *
 * A filter reads on through the first SIGINT (below).
 */
#ifndef LP_STOP_H
#define LP_STOP_H

#include <signal.h>
#include <stdint.h>

/* Installs the handlers and returns the flag the first signal sets.  With
 * SA_RESTART: a write to a slow reader goes on after the first signal
 * (it is not a write error), while poll and epoll_wait, which are never
 * restarted, return EINTR, so the main loop sees the flag at once. */
volatile sig_atomic_t *lp_stop__on_signals(void);

/* Filters: the first SIGINT is ignored, because a ^C reaches the producers
 * upstream too, which drain and close: reading on to their end loses
 * nothing.  A second SIGINT stops reading (lp_stop__reading): the filter
 * writes what it read, as at the end of its input, says so on stderr, and
 * then dies of SIGINT (status 130).  A third SIGINT kills it at once. */
void lp_stop__read_through_first_sigint(void);
/* The second SIGINT's work, for a program with a signal handler of its own
 * (after lp_stop__read_through_first_sigint): async-signal-safe.  Every input
 * open now ends at its last complete line already read (a read blocked on
 * a pipe returns); at exit the program dies of sig, its outputs written;
 * sig itself is given back its default action. */
void lp_stop__reading(int sig);
/* For the line reader.  A ticket for an input being opened; whether the
 * input holding it is to stop (a ticket taken after the stop is not); and
 * a descriptor that becomes readable at the stop, to poll beside an input
 * (-1 when nothing can stop the reading). */
uint64_t lp_stop__ticket(void);
int lp_stop__stopped(uint64_t ticket);
int lp_stop__fd(void);

#endif
