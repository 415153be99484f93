/* lp-serve - a live page of streams still being written: flame graph,
 * hottest functions and stacks, heatmap, each probe's latencies and the
 * flame graphs of its slow and fast calls, updated as data comes; and
 * with -p PID, the producers it starts on that process, steered from the
 * page (trace a function, untrace it, gate sampling inside a call).
 *
 *   lp-join <(lp-record -p 1234) <(lp-trace -p 1234 handle_request) | lp-serve
 *   lp-serve -p $(pidof redis-server)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "analysis/feed.h"
#include "analysis/live.h"
#include "base/stop.h"
#include "base/util.h"
#include "serve/http.h"
#include "serve/page.h"
#include "serve/steer.h"
#include "stream/inputs.h"

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-serve [(-p PID | -- CMD [ARG...]) [-F HZ] [--mode MODE]] [--listen ADDR] [--port N] [-W DURATION | -H DURATION]\n"
		"                [-i DURATION] [--keep N] [-f FORMAT] [FILE...]\n"
		"Serves a live page of lp streams (files, FIFOs, stdin) on loopback: flame\n"
		"graph, hottest functions, heatmap, each probe's latencies and its slow and\n"
		"fast calls' flame graphs.  Its address, with the access token, is the\n"
		"first line on stderr.\n"
		"\n"
		"  -p, --pid PID             start lp-record and lp-trace on PID, joined,\n"
		"                            and steer them from the page (no FILE then)\n"
		"  -- CMD [ARG...]           the same on a command lp-serve starts once they\n"
		"                            are on it, and ends with itself\n"
		"  -F, --freq HZ             lp-record's sampling rate (with -p)\n"
		"      --mode MODE           lp-record's: cpu (default), off or wall (with -p)\n"
		"      --listen ADDR         the numeric address to listen on (default\n"
		"                            127.0.0.1)\n"
		"      --port N              the port (default 0: one the kernel picks)\n"
		"  -W, --window DURATION     the view: the last DURATION (default 10s)\n"
		"  -H, --half-life DURATION  the view: weights halved every DURATION\n"
		"  -i, --interval DURATION   a new snapshot every DURATION (default 1s)\n"
		"      --keep N              samples kept for the views (default 262144)\n"
		"  -f, --input-format F      a format (lp-stream(5)); default auto: by content\n"
		"  -v, --verbose             the producers' notes too (with -p)\n"
		"  -h, --help                show this help\n"
		"      --version             show the version\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

struct options {
	struct lp_live_opts live;
	struct lp_steer_opts steer;
	struct lp_http_opts http;
	int64_t interval_ns;
	enum lp_input_format format;
};

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_LISTEN = 256, OPT_PORT, OPT_KEEP, OPT_MODE, OPT_VERSION };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "window", required_argument, NULL, 'W' },
		{ "half-life", required_argument, NULL, 'H' },
		{ "interval", required_argument, NULL, 'i' },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "input-format", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, modes = 0;

	while ((c = getopt_long(argc, argv, "p:F:W:H:i:f:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->steer.pid = (pid_t)lp_option_i64("pid", optarg, 1, INT32_MAX);
			break;
		case 'F':
			lp_option_i64("freq", optarg, 1, 100000);
			o->steer.freq = optarg;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "cpu") && strcmp(optarg, "off") && strcmp(optarg, "wall"))
				lp_option_fail("mode", optarg, "expected cpu, off or wall");
			o->steer.mode = optarg;
			break;
		case OPT_LISTEN:
			o->http.address = optarg;
			break;
		case OPT_PORT:
			o->http.port = (unsigned)lp_option_i64("port", optarg, 0, 65535);
			break;
		case 'W':
			o->live.mode = LP_LIVE_WINDOW;
			o->live.window_ns = lp_option_duration("window", optarg, true);
			modes++;
			break;
		case 'H':
			o->live.mode = LP_LIVE_HALF_LIFE;
			o->live.half_life_ns = lp_option_duration("half-life", optarg, true);
			modes++;
			break;
		case 'i':
			o->interval_ns = lp_option_duration("interval", optarg, true);
			break;
		case OPT_KEEP:
			o->live.keep_samples = (size_t)lp_option_i64("keep", optarg, 1, 1 << 26);
			break;
		case 'f':
			o->format = lp_option_input_format(optarg);
			break;
		case 'v':
			o->steer.verbose++;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case OPT_VERSION:
			lp_print_version();
		default:
			usage(stderr, 2);
		}
	}
	if (modes > 1) {
		lp_error("--window and --half-life exclude each other");
		exit(2);
	}
	/* -- CMD: the rest is the command. */
	if (optind > 0 && optind <= argc && !strcmp(argv[optind - 1], "--")) {
		if (optind == argc) {
			lp_error("no command after --");
			usage(stderr, 2);
		}
		o->steer.cmd = argv + optind;
	}
	if (o->steer.pid && o->steer.cmd) {
		lp_error("-p and a command exclude each other");
		exit(2);
	}
	if (o->steer.pid && optind < argc) {
		lp_error("-p starts the producers: no FILE with it");
		exit(2);
	}
	if ((o->steer.freq || o->steer.mode) && !o->steer.pid && !o->steer.cmd) {
		lp_error("--freq and --mode are lp-record's, started with -p or -- CMD");
		exit(2);
	}
}

/* --- shared by the main loop, the readers and the requests ------------- */

/* views guards live: the readers' records (under the feed's lock too),
 * the requests' settings and ranges, the snapshots. */
static pthread_mutex_t views = PTHREAD_MUTEX_INITIALIZER;
static struct lp_live *live;
static struct lp_feed *feed;	/* the main thread's alone */
static struct lp_steer *steer;
static struct lp_http *http;
static int ninputs;
static int wake_fd[2] = { -1, -1 };
static volatile sig_atomic_t got_signal;

static void wake(void)
{
	char c = 'w';
	ssize_t w = write(wake_fd[1], &c, 1);
	(void)w;		/* a full pipe already holds a wake-up */
}

static void on_signal(int sig)
{
	got_signal = sig;
	wake();
}

/* A snapshot for the page; before the inputs are open (no feed yet), of
 * nothing read. */
static void publish(void)
{
	struct lp_feed_state st = { .readers_left = ninputs };
	char *json = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&json, &len);

	if (!m)
		lp_die(1, "out of memory");
	if (feed) {
		lp_feed__lock(feed, &st);
		lp_feed__unlock(feed);
	}
	struct lp_live_extra x = { .lost = st.lost, .inputs = ninputs,
				   .inputs_left = st.readers_left, .failed = st.failed,
				   .control = steer != NULL };
	pthread_mutex_lock(&views);
	lp_live__snapshot(live, m, &x);
	pthread_mutex_unlock(&views);
	if (fclose(m) != 0)
		lp_die(1, "out of memory");
	lp_http__publish(http, json, len);
	free(json);
}

static void on_record(void *sink, int input, const struct lp_record *rec, int64_t arrival_ns)
{
	pthread_mutex_lock(&views);
	lp_live__record(sink, input, rec, arrival_ns);
	pthread_mutex_unlock(&views);
}

static int on_settings(void *arg, const char *const *names, const char *const *values, size_t n,
		       char **reply)
{
	const char *probe = NULL, *why = NULL;
	int status = 200;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], "probe"))
			probe = values[i];
	/* Every field checked before any is made: a form refused changes
	 * nothing. */
	pthread_mutex_lock(&views);
	for (size_t i = 0; i < n && status == 200; i++) {
		if (strcmp(names[i], "probe") && lp_live__check(live, names[i], values[i], probe, &why) < 0)
			status = 400;
	}
	for (size_t i = 0; i < n && status == 200; i++) {
		if (strcmp(names[i], "probe") && lp_live__set(live, names[i], values[i], probe, &why) < 0)
			status = 400;
	}
	pthread_mutex_unlock(&views);
	if (status != 200) {
		if (asprintf(reply, "lp-serve: settings: %s", why) < 0)
			*reply = NULL;
		return status;
	}
	wake();		/* the next snapshot now, in the new view */
	*reply = lp_strdup("set");
	return status;
}

static int on_control(void *arg, const char *command, char **reply)
{
	if (!steer) {
		*reply = lp_strdup("lp-serve: control: no producers of lp-serve's own (-p PID)");
		return 409;
	}
	return lp_steer__command(steer, command, reply);
}

static char *on_range(void *arg, int64_t from, int64_t to)
{
	char *json = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&json, &len);

	if (!m)
		return NULL;
	pthread_mutex_lock(&views);
	lp_live__range(live, m, from, to);
	pthread_mutex_unlock(&views);
	if (fclose(m) != 0) {
		free(json);
		return NULL;
	}
	return json;
}

static int on_discover(void *arg, const char *what, const char *operand, char **out, size_t *len)
{
	if (!steer) {
		*out = lp_strdup("lp-serve: discover: no process of its own (-p PID)");
		*len = strlen(*out);
		return 409;
	}
	return lp_steer__discover(steer, what, operand, out, len);
}

/* The access token: 128 random bits in hex. */
static void make_token(char out[33])
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		lp_die(1, "cannot draw a random token: %s", strerror(errno));
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* Snapshots every interval (and at once on a setting) until a signal. */
static void serve(int64_t interval_ns)
{
	int64_t next = lp_monotonic_ns();

	while (!got_signal) {
		int64_t now = lp_monotonic_ns();
		if (now >= next) {
			publish();
			next = now + interval_ns;
		}
		struct pollfd p = { .fd = wake_fd[0], .events = POLLIN };
		int ms = (int)((next - now) / 1000000) + 1;
		if (poll(&p, 1, ms) > 0) {
			char buf[64];
			while (read(wake_fd[0], buf, sizeof(buf)) > 0)
				;
			next = now;	/* an input ended, or a setting: show it */
		}
	}
}

int main(int argc, char **argv)
{
	struct options o = {
		.live = { .mode = LP_LIVE_WINDOW, .window_ns = 10000000000LL,
			  .half_life_ns = 5000000000LL },
		.interval_ns = 1000000000LL,
		.format = LP_INPUT_AUTO,
	};
	char token[33], title[64];

	lp_init(argc, argv);
	parse_options(argc, argv, &o);
	if (pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) < 0)
		lp_die(1, "cannot create a pipe: %s", strerror(errno));
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a page gone is libmicrohttpd's to see */

	char **paths, joined[32];
	static struct lp_reader **readers;	/* static: readers may be left to exit() */
	if (o.steer.pid || o.steer.cmd) {
		int fd;
		steer = lp_steer__start(&o.steer, &fd);
		if (!steer)
			return 1;
		snprintf(joined, sizeof(joined), "/dev/fd/%d", fd);
		static char *one[1];
		one[0] = joined;
		paths = one;
		ninputs = 1;
		if (o.steer.cmd)
			snprintf(title, sizeof(title), "lp-serve: %s", o.steer.cmd[0]);
		else
			snprintf(title, sizeof(title), "lp-serve: pid %d", (int)o.steer.pid);
		o.live.title = title;
	} else {
		paths = lp_input_paths(argc, argv, optind, &ninputs);
	}
	live = lp_live__new(&o.live);
	make_token(token);
	o.http.token = token;
	o.http.page = lp_serve_page(&o.http.page_len);
	struct lp_http_hooks hooks = { .settings = on_settings, .control = on_control,
				       .range = on_range, .discover = on_discover };
	http = lp_http__start(&o.http, &hooks);
	if (!http) {
		lp_steer__stop(steer);
		return 1;
	}
	/* The page first: a FIFO's open waits for its writer, which may be
	 * started once the address is known. */
	publish();
	fprintf(stderr, "%s\n", lp_http__url(http));
	fflush(stderr);
	readers = lp_open_inputs(paths, ninputs, o.format, NULL);
	if (!readers) {
		lp_steer__stop(steer);
		lp_http__stop(http);
		return got_signal ? 0 : 1;	/* a FIFO's open interrupted: asked to stop */
	}
	feed = lp_feed__start(readers, ninputs, wake_fd[1], on_record, live);

	serve(o.interval_ns);

	/* The server first: its requests' threads end with it, and none may
	 * still be steering the producers as they go (and are freed).  Then
	 * the producers drain: what they wrote is read. */
	lp_http__stop(http);
	int status = 0;
	if (steer && !lp_steer__stop(steer))
		status = 1;
	struct lp_feed_state st;
	/* lp-join gone, its pipe's reader is at the end at once. */
	for (int i = 0; i < (steer ? 200 : 1); i++) {
		lp_feed__lock(feed, &st);
		lp_feed__unlock(feed);
		if (!st.readers_left)
			break;
		usleep(10000);
	}
	if (st.failed)
		status = 1;
	if (st.readers_left) {
		/* Readers still blocked on a pipe are left to exit(). */
		lp_feed__abandon(feed);
		return status;
	}
	lp_feed__join(feed);
	lp_feed__free(feed);
	lp_free_inputs(readers, ninputs);
	lp_live__free(live);
	return status;
}
