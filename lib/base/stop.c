/* stop.c - the producers' SIGINT and SIGTERM handling (stop.h). */
#include <signal.h>
#include <unistd.h>

#include "base/stop.h"

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	if (!stop_signal) {
		stop_signal = sig;
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

volatile sig_atomic_t *lp_stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	/* Each blocks the other while it runs: a second signal is seen as
	 * such once the first has set the flag. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return &stop_signal;
}
