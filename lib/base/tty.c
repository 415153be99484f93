/* tty.c - see tty.h.  One controlling terminal per process: its state is
 * static, so that atexit() can restore it. */
#include "base/tty.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static int tty_fd = -1;
static struct termios tty_saved;

/* Async-signal-safe (tcsetattr and close are), and a no-op the second time:
 * it runs from atexit, from lp-top's second-signal path and from
 * restore_and_die. */
void lp_tty__restore(void)
{
	int fd = tty_fd;

	if (fd >= 0) {
		tty_fd = -1;
		tcsetattr(fd, TCSANOW, &tty_saved);
		close(fd);
	}
}

/* A signal that kills (HUP, QUIT, PIPE) runs no atexit handler: put the
 * terminal back first, then die of it as before. */
static void restore_and_die(int sig)
{
	lp_tty__restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

int lp_tty__open_keys(void)
{
	struct termios raw;

	if (isatty(STDIN_FILENO))
		return -1;
	tty_fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (tty_fd < 0)
		return -1;
	if (tcgetattr(tty_fd, &tty_saved) < 0) {
		close(tty_fd);
		tty_fd = -1;
		return -1;
	}
	raw = tty_saved;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(tty_fd, TCSANOW, &raw);
	atexit(lp_tty__restore);
	static const int fatal[] = { SIGHUP, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old, sa = { .sa_handler = restore_and_die };
		sigemptyset(&sa.sa_mask);
		if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(fatal[i], &sa, NULL);
	}
	return tty_fd;
}

void lp_tty__size(int fd, int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}
