/* stop.c - how lp's programs are stopped by signals (stop.h). */
#include "base/stop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/util.h"

/* --- producers ------------------------------------------------------- */

static volatile sig_atomic_t producer_signal;	/* the first SIGINT or SIGTERM */

static void on_producer_signal(int sig)
{
	if (!producer_signal) {
		producer_signal = sig;
		return;
	}
	/* A second one: die of it.  A signal is blocked while its handler
	 * runs, so raising it again with its default action would only leave
	 * it pending until the handler returned: unblock it first.  _exit
	 * only if the kernel did not end us. */
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

volatile sig_atomic_t *lp_stop__on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_producer_signal, .sa_flags = SA_RESTART };

	/* Each blocks the other while it runs: a second signal is seen as
	 * such once the first has set the flag. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return &producer_signal;
}

/* --- the second SIGINT --------------------------------------------------
 *
 * Only async-signal-safe work in the handler: two atomic stores, a write to
 * a pipe and sigaction.  The pipe wakes every reader thread blocked in
 * poll (whichever thread the signal went to); the readers then end their
 * inputs and the program finishes on its normal path, writing what it
 * has.  SA_RESTART stays: without it the first SIGINT would fail a write
 * blocked on a slow output (EINTR), losing what was in its buffer. */

static _Atomic uint64_t tickets;	/* tickets given so far: 1, 2, ... */
static _Atomic uint64_t stop_below;	/* 0, or tickets below it stop (and 0) */
static _Atomic int sigints;		/* lock-free: two threads may take one each */
static volatile sig_atomic_t reading_signal;	/* the second SIGINT */
static int stop_pipe[2] = { -1, -1 };

uint64_t lp_stop__ticket(void)
{
	return atomic_fetch_add(&tickets, 1) + 1;
}

int lp_stop__stopped(uint64_t ticket)
{
	return ticket < atomic_load(&stop_below);
}

int lp_stop__fd(void)
{
	return stop_pipe[0];
}

void lp_stop__reading(int sig)
{
	int saved = errno;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	reading_signal = sig;
	atomic_store(&stop_below, atomic_load(&tickets) + 1);
	if (stop_pipe[1] >= 0) {
		/* Never read: it stays readable for every poller. */
		ssize_t n = write(stop_pipe[1], "", 1);
		(void)n;
	}
	errno = saved;
}

static void on_sigint(int sig)
{
	if (atomic_fetch_add(&sigints, 1))
		lp_stop__reading(sig);
}

/* At exit, after the program wrote what it read: die of the signal that
 * stopped it, so that a shell running it knows it was interrupted. */
static void die_of_reading_signal(void)
{
	int sig = reading_signal;

	if (!sig)
		return;
	lp_error("stopped by a second %s: the output holds the complete records read before it",
		 sig == SIGTERM ? "SIGTERM" : "SIGINT");
	fflush(NULL);
	signal(sig, SIG_DFL);
	raise(sig);
}

void lp_stop__read_through_first_sigint(void)
{
	struct sigaction sa = { .sa_handler = on_sigint, .sa_flags = SA_RESTART };

	lp_flush_outputs_when_idle();
	if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		stop_pipe[0] = stop_pipe[1] = -1;	/* EINTR still wakes the signalled thread */
	atexit(die_of_reading_signal);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}
