/* lp-top - a live top-like view of an lp stream (or perf script / folded
 * input): the hottest functions (self and total share) and stacks over a
 * sliding window of the samples' own time, or with exponentially decaying
 * weights.  Redrawn in place on a terminal (q quits), plain text blocks
 * otherwise, or one report at the end of the input (--once).
 *
 * Each input is read by its own thread, which aggregates under a lock; the
 * main thread only waits (poll with a timeout) for the next refresh, a key or
 * a signal, so a silent producer never holds the display back. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stream/inputs.h"
#include "stream/stream.h"
#include "analysis/top.h"
#include "base/tty.h"
#include "base/stop.h"
#include "base/util.h"

struct options {
	struct lp_top_opts top;
	int64_t interval_ns;
	bool once;
	int nfuncs, nstacks;	/* -1: fit the terminal (plain: 20 and 10) */
	enum lp_input_format format;
	const char *output;
	const char *window_arg;
};

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-top [-W DURATION | -H DURATION | -a] [-i DURATION] [--once]\n"
		"              [--functions ROWS] [--stacks ROWS] [--sort self|total] [-f FORMAT]\n"
		"              [-o FILE] [FILE...]\n"
		"\n"
		"Shows the hottest functions and stacks of an lp stream, perf script output\n"
		"or folded stacks (FILE, or - for stdin, the default) as they arrive.\n"
		"\n"
		"  -W, --window DURATION     the last DURATION of samples, by their own\n"
		"                            timestamps (by arrival when they have none;\n"
		"                            default 10s, and with --once the whole input)\n"
		"  -H, --half-life DURATION  every sample, weights halved every DURATION\n"
		"  -a, --all                 every sample since the start, unweighted by age\n"
		"  -i, --interval DURATION   refresh every DURATION (default 1s)\n"
		"      --once                one report at the end of the input\n"
		"      --functions ROWS      function rows (default: fit the terminal, or 20)\n"
		"      --stacks ROWS         stack rows (default: fit the terminal, or 10)\n"
		"      --sort self|total     order functions by self (default) or total share\n"
		"  -f, --input-format F      a format (lp-stream(5)); default auto: by content\n"
		"  -o, --output FILE         write to FILE instead of stdout\n"
		"  -h, --help                show this help\n"
		"      --version             show the version\n"
		"\n"
		"On a terminal, q quits.\n"
		"Durations: a number and a unit, ns, us, ms, s, m or h (250us, 1.5s, 2m);\n"
		"a bare number is seconds.\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "window", required_argument, NULL, 'W' },
		{ "half-life", required_argument, NULL, 'H' },
		{ "all", no_argument, NULL, 'a' },
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, '1' },
		{ "functions", required_argument, NULL, 'n' },
		{ "stacks", required_argument, NULL, 's' },
		{ "sort", required_argument, NULL, 'S' },
		{ "input-format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, modes = 0;

	while ((c = getopt_long(argc, argv, "W:H:ai:f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'W':
			o->top.mode = LP_TOP_WINDOW;
			o->top.window_ns = lp_option_duration("window", optarg, true);
			o->window_arg = optarg;
			modes++;
			break;
		case 'H':
			o->top.mode = LP_TOP_DECAY;
			o->top.half_life_ns = lp_option_duration("half-life", optarg, true);
			o->window_arg = optarg;
			modes++;
			break;
		case 'a':
			o->top.mode = LP_TOP_ALL;
			modes++;
			break;
		case 'i':
			o->interval_ns = lp_option_duration("interval", optarg, true);
			break;
		case '1':
			o->once = true;
			break;
		case 'n':
			o->nfuncs = (int)lp_option_i64("functions", optarg, 0, 100000);
			break;
		case 's':
			o->nstacks = (int)lp_option_i64("stacks", optarg, 0, 100000);
			break;
		case 'S':
			if (!strcmp(optarg, "self")) {
				o->top.sort = LP_TOP_SORT_SELF;
			} else if (!strcmp(optarg, "total")) {
				o->top.sort = LP_TOP_SORT_TOTAL;
			} else {
				lp_option_fail("sort", optarg, "expected self or total");
			}
			break;
		case 'f':
			o->format = lp_option_input_format(optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'V':
			lp_print_version();
		default:
			usage(stderr, 2);
		}
	}
	if (modes > 1) {
		lp_error("--window, --half-life and --all exclude each other");
		exit(2);
	}
	/* A window follows live input; one report of a whole file that left
	 * out all but its last 10 s would look like a report of the file. */
	if (o->once && !modes)
		o->top.mode = LP_TOP_ALL;
}

/* --- shared between the reader threads and the display ---------------- */

static struct lp_top *top;
static struct lp_top_feed *feed;
static int wake_fd[2];		/* readers' EOF and signals wake the poll */

static void wake(char c)
{
	ssize_t n = write(wake_fd[1], &c, 1);
	(void)n;		/* a full pipe already holds a wake-up */
}

/* --- the terminal ------------------------------------------------------ */

static volatile sig_atomic_t got_signal, got_winch;
static int tty_fd = -1;		/* keys, or -1 */

static atomic_int signals_seen;	/* SIGINT and SIGTERM, on any thread */

static void on_signal(int sig)
{
	if (sig == SIGWINCH) {
		got_winch = 1;
		wake('s');
		return;
	}
	/* "Is this the first?" in one atomic step: with a plain flag, two
	 * handlers on two threads were both the first, and a second signal did
	 * not end lp-top (the readers now block signals; this stays safe). */
	if (atomic_fetch_add(&signals_seen, 1)) {
		/* A second one: the terminal as it was found, then the
		 * report of what was read, then die of the signal. */
		lp_tty__restore();
		lp_stop__reading(sig);
		return;
	}
	got_signal = sig;
	wake('s');
}

/* --- drawing ----------------------------------------------------------- */

static void format_seconds(char *buf, size_t size, int64_t ns)
{
	snprintf(buf, size, "%.1fs", ns / 1e9);
}

static void draw(FILE *out, const struct options *o, bool terminal, bool at_end,
		 const char *outname)
{
	char title[192], mode[64], at[32];
	struct lp_top_report_opts ro = {
		.nfuncs = o->nfuncs < 0 ? 20 : o->nfuncs,
		.nstacks = o->nstacks < 0 ? 10 : o->nstacks,
		.eol = "",
	};

	struct lp_top_feed_state st;
	lp_top_feed__lock(feed, &st);
	/* While input is still coming, the view's end moves with the clock
	 * from the newest sample, so a producer gone quiet drains from view. */
	if (!at_end && lp_top__latest(top) != LP_TIME_NONE)
		lp_top__advance(top, lp_add_sat(lp_top__latest(top),
						lp_monotonic_ns() - st.latest_arrival));
	switch (o->top.mode) {
	case LP_TOP_WINDOW:
		snprintf(mode, sizeof(mode), "window %s", o->window_arg ? o->window_arg : "10s");
		break;
	case LP_TOP_DECAY:
		snprintf(mode, sizeof(mode), "half-life %s", o->window_arg);
		break;
	default:
		snprintf(mode, sizeof(mode), "all samples");
		break;
	}
	at[0] = 0;
	if (st.first_time != LP_TIME_NONE)
		format_seconds(at, sizeof(at), lp_top__latest(top) - st.first_time);
	char lost_text[48] = "";
	if (st.lost)
		snprintf(lost_text, sizeof(lost_text), "  lost %llu", (unsigned long long)st.lost);
	snprintf(title, sizeof(title), "lp-top  %s  at +%s%s%s", mode, at[0] ? at : "0.0s",
		 lost_text, at_end ? "  (end of input)" : "");
	ro.title = title;
	if (terminal) {
		int rows, cols;
		lp_tty__size(STDOUT_FILENO, &rows, &cols);
		/* One column spare: a full line leaves the cursor in the
		 * pending-wrap state, where erasing to the end of the line
		 * would eat its last character. */
		ro.width = cols - 1;
		int room = rows - 6;	/* title, blank, 2 headers, blank, spare */
		if (room < 2)
			room = 2;
		if (o->nstacks < 0)
			ro.nstacks = room / 3;
		if (o->nfuncs < 0)
			ro.nfuncs = room - ro.nstacks;
		ro.eol = "\033[K";
		fputs("\033[H", out);
	}
	lp_top__report(top, out, &ro);
	lp_top_feed__unlock(feed);
	if (terminal)
		fputs("\033[J", out);
	else if (!o->once && !at_end)
		fputc('\n', out);
	if (fflush(out) == EOF)
		lp_write_failed(outname);
}

/* --- the loop ------------------------------------------------------------ */

/* Where the view goes. */
struct view {
	FILE *out;
	const char *outname;
	bool terminal;
	const struct options *o;
};

/* The wake pipe's and the terminal's input: true when q was pressed. */
static bool take_input(const struct pollfd *p)
{
	bool quit = false;
	char buf[64];
	if (p[0].revents & POLLIN)
		while (read(wake_fd[0], buf, sizeof(buf)) > 0)
			;
	if (tty_fd >= 0 && (p[1].revents & POLLIN)) {
		char c;
		while (read(tty_fd, &c, 1) == 1)
			if (c == 'q' || c == 'Q')
				quit = true;
	}
	return quit;
}

static void redraw_if_resized(const struct view *v, bool at_end)
{
	if (!got_winch)
		return;
	got_winch = 0;
	fputs("\033[2J", v->out);
	draw(v->out, v->o, v->terminal, at_end, v->outname);
}

/* Draws every interval until the input ends, a read fails, q, or ^C on a
 * terminal.  *eof: every reader reached its end; *read_failed: one failed.
 * Returns true when the user asked to leave. */
static bool run_view(const struct view *v, bool *eof, bool *read_failed)
{
	const struct options *o = v->o;
	int64_t next = lp_monotonic_ns() + o->interval_ns;
	bool quit = false;
	while (!quit) {
		struct pollfd p[2] = {
			{ .fd = wake_fd[0], .events = POLLIN },
			{ .fd = tty_fd, .events = POLLIN },
		};
		int timeout = -1;

		if (!o->once) {
			int64_t left = (next - lp_monotonic_ns() + 999999) / 1000000;
			timeout = left < 0 ? 0 : left > 1000000 ? 1000000 : (int)left;
		}
		if (poll(p, tty_fd >= 0 ? 2 : 1, timeout) < 0 && errno != EINTR)
			lp_die(1, "poll: %s", strerror(errno));
		quit = take_input(p);
		/* On a terminal ^C leaves the view.  Feeding a pipe or a file,
		 * the producer upstream is draining: keep reading to its end
		 * (a second signal exits at once). */
		if (got_signal && v->terminal)
			quit = true;
		struct lp_top_feed_state st;
		lp_top_feed__lock(feed, &st);
		lp_top_feed__unlock(feed);
		*eof = st.readers_left == 0;
		*read_failed = st.failed;
		if ((*read_failed && v->terminal) || *eof)
			break;	/* a reader's message stays below the view */
		redraw_if_resized(v, false);
		if (!o->once && lp_monotonic_ns() >= next) {
			draw(v->out, o, v->terminal, false, v->outname);
			next += o->interval_ns;
			if (next < lp_monotonic_ns())
				next = lp_monotonic_ns() + o->interval_ns;
		}
	}
	return quit;
}

/* On a terminal, the last view stays until q or ^C. */
static void hold_last_view(const struct view *v)
{
	while (!got_signal) {
		struct pollfd p[2] = {
			{ .fd = wake_fd[0], .events = POLLIN },
			{ .fd = tty_fd, .events = POLLIN },
		};
		char c = 0;
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		redraw_if_resized(v, true);
		while (read(wake_fd[0], &c, 1) > 0)
			;
		if (read(tty_fd, &c, 1) == 1 && (c == 'q' || c == 'Q'))
			break;
	}
}

/* SIGINT, SIGTERM (and SIGWINCH on a terminal) to on_signal, which wakes
 * the loop through the pipe; the terminal's keys. */
static void setup_signals(const struct view *v)
{
	if (pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) < 0)
		lp_die(1, "cannot create a pipe: %s", strerror(errno));
	/* After lp_open_output: the view is flushed whole by draw(), never
	 * half-drawn by an idle reader.  on_signal takes SIGINT over below. */
	lp_stop__read_through_first_sigint();
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (v->terminal) {
		sigaction(SIGWINCH, &sa, NULL);
		tty_fd = lp_tty__open_keys();
		fputs("\033[H\033[2J", v->out);
	}
}

int main(int argc, char **argv)
{
	struct options o = {
		.top = { .mode = LP_TOP_WINDOW, .window_ns = 10 * 1000000000LL },
		.interval_ns = 1000000000LL,
		.nfuncs = -1,
		.nstacks = -1,
		.format = LP_INPUT_AUTO,
	};
	lp_init(argc, argv);
	parse_options(argc, argv, &o);

	int npaths;
	char **paths = lp_input_paths(argc, argv, optind, &npaths);
	/* Static: readers blocked on a pipe are left to exit(), still in use */
	static struct lp_reader **readers;
	readers = lp_open_inputs(paths, npaths, o.format, NULL);
	if (!readers)
		return 1;

	struct view v = { .o = &o };
	v.out = lp_open_output(o.output);
	v.outname = o.output ? o.output : "stdout";
	v.terminal = !o.once && isatty(fileno(v.out));
	setup_signals(&v);
	top = lp_top__new(&o.top);
	feed = lp_top_feed__start(top, readers, npaths, wake_fd[1]);

	bool eof = false, read_failed = false;
	bool quit = run_view(&v, &eof, &read_failed);
	int status = read_failed ? 1 : 0;
	if (eof) {
		lp_top_feed__join(feed);
		/* A stream cut short by bad input gets no final report: it
		 * would look like a whole one. */
		if (!read_failed)
			draw(v.out, &o, v.terminal, true, v.outname);
		if (v.terminal && !read_failed && tty_fd >= 0 && !quit)
			hold_last_view(&v);
		lp_top_feed__free(feed);
		lp_free_inputs(readers, npaths);
		lp_top__free(top);
	} else {
		/* Readers still blocked on a pipe are left to exit(): joining
		 * them would wait for their producers. */
		lp_top_feed__abandon(feed);
		struct lp_top_feed_state st;
		lp_top_feed__lock(feed, &st);
		lp_top_feed__unlock(feed);
		status = st.failed ? 1 : 0;
	}
	lp_tty__restore();
	if (lp_close_output(v.out, v.outname) < 0)
		status = 1;
	return status;
}
