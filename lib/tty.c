/* tty.c - see tty.h.  One controlling terminal per process: its state is
 * static, so that atexit() can restore it. */
#include "tty.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static int tty_fd = -1;
static struct termios tty_saved;

void lp_tty__restore(void)
{
	if (tty_fd >= 0) {
		tcsetattr(tty_fd, TCSANOW, &tty_saved);
		close(tty_fd);
		tty_fd = -1;
	}
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
