/* lp-push - push profiles to a fleet's profiler over HTTP: to a Pyroscope
 * server's ingest API (POST /ingest?name=APP&from=&until=&format=pprof, a
 * gzipped pprof profile as the body) or to an OTLP/HTTP receiver (POST
 * /v1development/profiles, an OTLP ExportProfilesServiceRequest as
 * application/x-protobuf: an OpenTelemetry Collector, Pyroscope's own).
 *
 * Reads what the filters read (lp streams, perf script, folded stacks,
 * other profilers' files), summing the samples as lp-collapse --format
 * pprof or otlp does (lib/output/proftab.h), one reader thread an input
 * (lib/analysis/feed.h), and pushes what has come every --interval and at
 * the end: a stream still being written goes in batches.  What is held is
 * bounded (--max-size): a batch is pushed as soon as it reaches it, the
 * next one fills meanwhile, and when that one is full too before the push
 * is done (a receiver slow or retried) the input waits: a producer
 * upstream counts what it could not write.  A request is retried on what may
 * pass (no connection, a timeout, HTTP 429, 502, 503, 504: OTLP/HTTP's
 * retryable statuses), a bounded number of times with exponential backoff
 * and jitter (or the server's Retry-After); a batch that still fails
 * stops the program (exit 1), naming the URL and the status.  With
 * --as-is each FILE is a body made already and is sent unchanged.
 *
 * The POST and its retries are lib/push/post.c's, with libcurl (Debian's
 * libcurl4-openssl-dev): this program alone links it. */
#include "analysis/feed.h"
#include "base/gzip.h"
#include "base/protobuf.h"
#include "base/stop.h"
#include "base/util.h"
#include "output/otlp.h"
#include "output/pprof.h"
#include "output/proftab.h"
#include "push/post.h"
#include "stream/inputs.h"
#include "stream/stream.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

enum kind { KIND_NONE, KIND_PYROSCOPE, KIND_OTLP };

/* Each kind's path, the default when the URL has none. */
static const char *const kind_paths[] = {
	[KIND_PYROSCOPE] = "/ingest",
	[KIND_OTLP] = "/v1development/profiles",
};

struct options {
	const char *url;
	enum kind to;
	const char *name;		/* Pyroscope's name=, OTLP's service.name */
	struct curl_slist *headers;	/* --header's */
	int64_t interval_ns;
	int64_t max_size;		/* bytes held, and the largest body */
	int retries;
	int64_t timeout_ns;
	bool as_is;
	bool gzip;			/* OTLP bodies sent Content-Encoding: gzip */
	enum lp_input_format input;
	int verbose;
};

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: lp-push [options] URL [FILE...]\n"
		"\n"
		"Reads lp streams, `perf script` output, folded stacks and other profilers'\n"
		"files (FILE, or - for stdin, the default) and POSTs the profile to URL: a\n"
		"Pyroscope server's ingest API (pprof) or an OTLP/HTTP receiver (OTLP\n"
		"profiles).  A stream still being written is pushed in batches.\n"
		"\n"
		"      --to KIND           pyroscope or otlp; default: by URL's path\n"
		"                          (/ingest, /v1development/profiles), which a URL\n"
		"                          with no path is given\n"
		"      --name APP          the application: Pyroscope's name=, OTLP's\n"
		"                          service.name (default lp)\n"
		"      --header 'NAME: VALUE'  an HTTP header of every request, e.g.\n"
		"                          'Authorization: Bearer TOKEN' (repeatable)\n"
		"  -i, --interval DUR      push what has come every DUR (default 10s)\n"
		"      --max-size BYTES    push a batch when it holds BYTES (the input waits\n"
		"                          while two are held), send no body larger\n"
		"                          (default 67108864, 64 MiB)\n"
		"      --retries N         retry a request that may succeed later (no\n"
		"                          connection, a timeout, HTTP 429, 502, 503, 504)\n"
		"                          N times, backing off from 0.5 s (default 4)\n"
		"      --timeout DUR       a request's time limit (default 30s)\n"
		"      --as-is             each FILE is a body made already (lp-collapse\n"
		"                          --format pprof or otlp): send it unchanged\n"
		"      --compression C     gzip or none: how an OTLP body is sent\n"
		"                          (default gzip, Content-Encoding: gzip)\n"
		"  -f, --input-format F    a format (lp-stream(5)); default auto: by content\n"
		"  -v, --verbose           each request's URL, status and size on stderr\n"
		"  -h, --help              show this help\n"
		"      --version           show the version\n"
		"\n"
		"Exit status: 0 when everything read was pushed, 1 when a push or an\n"
		"input failed, 2 on bad usage.\n");
	if (f == stdout)
		lp_exit_stdout();
	exit(status);
}

enum {
	OPT_TO = 256, OPT_NAME, OPT_HEADER, OPT_MAX_SIZE, OPT_RETRIES, OPT_TIMEOUT, OPT_AS_IS,
	OPT_COMPRESSION, OPT_VERSION,
};

static const struct option longopts[] = {
	{ "to", required_argument, NULL, OPT_TO },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "header", required_argument, NULL, OPT_HEADER },
	{ "interval", required_argument, NULL, 'i' },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "retries", required_argument, NULL, OPT_RETRIES },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "as-is", no_argument, NULL, OPT_AS_IS },
	{ "compression", required_argument, NULL, OPT_COMPRESSION },
	{ "input-format", required_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void add_header(struct options *o, const char *h)
{
	const char *colon = strchr(h, ':');
	if (!colon || colon == h || strcspn(h, " \t\r\n") < (size_t)(colon - h) ||
	    strpbrk(h, "\r\n"))
		lp_option_fail("header", h, "expected NAME: VALUE");
	struct curl_slist *l = curl_slist_append(o->headers, h);
	if (!l)
		lp_die(1, "out of memory");
	o->headers = l;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	int c;
	while ((c = getopt_long(argc, argv, "i:f:vh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TO:
			if (!strcmp(optarg, "pyroscope"))
				o->to = KIND_PYROSCOPE;
			else if (!strcmp(optarg, "otlp"))
				o->to = KIND_OTLP;
			else
				lp_option_fail("to", optarg, "expected pyroscope or otlp");
			break;
		case OPT_NAME:
			if (!optarg[0])
				lp_option_fail("name", optarg, "must not be empty");
			o->name = optarg;
			break;
		case OPT_HEADER: add_header(o, optarg); break;
		case 'i': o->interval_ns = lp_option_duration("interval", optarg, true); break;
		case OPT_MAX_SIZE:
			o->max_size = lp_option_i64("max-size", optarg, 4096, INT64_MAX / 4);
			break;
		case OPT_RETRIES: o->retries = (int)lp_option_i64("retries", optarg, 0, 100); break;
		case OPT_TIMEOUT: o->timeout_ns = lp_option_duration("timeout", optarg, true); break;
		case OPT_AS_IS: o->as_is = true; break;
		case OPT_COMPRESSION:
			if (strcmp(optarg, "gzip") && strcmp(optarg, "none"))
				lp_option_fail("compression", optarg, "expected gzip or none");
			o->gzip = !strcmp(optarg, "gzip");
			break;
		case 'f': o->input = lp_option_input_format(optarg); break;
		case 'v': o->verbose++; break;
		case 'h': usage(stdout, 0); break;
		case OPT_VERSION: lp_print_version(); break;
		default: usage(stderr, 2);
		}
	}
	if (optind == argc) {
		lp_error("expected a URL");
		usage(stderr, 2);
	}
	o->url = argv[optind++];
}

/* --- where to ------------------------------------------------------- */

struct target {
	enum kind kind;
	CURLU *url;		/* with the kind's path when it had none */
	char *full;		/* it as text */
	char *shown;		/* the URL as messages name it, no password */
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* The URL, checked (http or https), and the receiver it names: exit 2
 * when it is no URL or says no kind that --to does not give. */
static void target_of(const struct options *o, struct target *t)
{
	char *scheme = NULL, *path = NULL;
	t->url = curl_url();
	CURLUcode rc = t->url ? curl_url_set(t->url, CURLUPART_URL, o->url, 0) : CURLUE_OUT_OF_MEMORY;
	if (rc != CURLUE_OK) {
		lp_error("URL '%s': not an http or https URL (%s)", o->url, curl_url_strerror(rc));
		exit(2);
	}
	curl_url_get(t->url, CURLUPART_SCHEME, &scheme, 0);
	if (!scheme || (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		lp_error("URL '%s': not an http or https URL", o->url);
		exit(2);
	}
	curl_url_get(t->url, CURLUPART_PATH, &path, 0);
	t->kind = o->to;
	for (int k = KIND_PYROSCOPE; k <= KIND_OTLP && !t->kind; k++)
		if (path && has_suffix(path, kind_paths[k]))
			t->kind = k;
	if (!t->kind) {
		lp_error("URL '%s': give --to pyroscope or --to otlp (its path is neither "
			 "/ingest nor /v1development/profiles)", o->url);
		exit(2);
	}
	if (!path || !strcmp(path, "/"))
		curl_url_set(t->url, CURLUPART_PATH, kind_paths[t->kind], 0);
	if (curl_url_get(t->url, CURLUPART_URL, &t->full, 0))
		lp_die(1, "out of memory");
	/* shown without its user and password */
	CURLU *shown = curl_url_dup(t->url);
	if (!shown || curl_url_set(shown, CURLUPART_USER, NULL, 0) ||
	    curl_url_set(shown, CURLUPART_PASSWORD, NULL, 0) ||
	    curl_url_get(shown, CURLUPART_URL, &t->shown, 0))
		lp_die(1, "out of memory");
	curl_url_cleanup(shown);
	curl_free(scheme);
	curl_free(path);
}

/* --- what a batch sends ----------------------------------------------- */

struct pusher {
	const struct options *o;
	struct target to;
	CURL *curl;
	struct curl_slist *headers;	/* --header's and the body's type */
};

static void pusher_init(struct pusher *p, const struct options *o)
{
	p->o = o;
	target_of(o, &p->to);
	p->curl = curl_easy_init();
	if (!p->curl)
		lp_die(1, "cannot start libcurl");
	p->headers = o->headers;
	const char *type = p->to.kind == KIND_OTLP ? "Content-Type: application/x-protobuf" :
			   "Content-Type: application/octet-stream";
	/* Expect: (none) sends the body at once, with no 100-continue round.
	 * A pprof body is gzipped already, as a pprof file is. */
	const char *own[] = { type, "Expect:", "Content-Encoding: gzip" };
	for (size_t i = 0; i < (p->to.kind == KIND_OTLP && o->gzip ? 3 : 2); i++) {
		struct curl_slist *l = curl_slist_append(p->headers, own[i]);
		if (!l)
			lp_die(1, "out of memory");
		p->headers = l;
	}
}

static void pusher_fini(struct pusher *p)
{
	curl_slist_free_all(p->headers);
	curl_easy_cleanup(p->curl);
	curl_url_cleanup(p->to.url);
	curl_free(p->to.full);
	curl_free(p->to.shown);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Pyroscope's query: name, from and until (Unix seconds, the samples'
 * own times when they have them), format, spyName. */
static char *pyroscope_url(const struct pusher *p, uint64_t from_ns, uint64_t until_ns)
{
	CURLU *u = curl_url_dup(p->to.url);
	char q[128], *url = NULL;
	const char *name = p->o->name ? p->o->name : "lp";
	size_t len = strlen(name) + sizeof("name=");
	char *nq = lp_malloc(len);
	snprintf(nq, len, "name=%s", name);
	uint64_t until_s = (until_ns + 999999999) / 1000000000;
	snprintf(q, sizeof(q), "from=%llu&until=%llu&format=pprof&spyName=lp",
		 (unsigned long long)(from_ns / 1000000000),
		 (unsigned long long)(until_s > from_ns / 1000000000 ? until_s : from_ns / 1000000000 + 1));
	if (!u || curl_url_set(u, CURLUPART_QUERY, nq, CURLU_APPENDQUERY | CURLU_URLENCODE) ||
	    curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY) ||
	    curl_url_get(u, CURLUPART_URL, &url, 0))
		lp_die(1, "out of memory");
	curl_url_cleanup(u);
	free(nq);
	return url;
}

/* Sends body as the target takes it: 0, or -1 after a message. */
static int send_body(struct pusher *p, const void *body, size_t len, uint64_t from_ns,
		     uint64_t until_ns)
{
	if (len > (uint64_t)p->o->max_size) {
		lp_error("POST %s: a body of %zu bytes is over --max-size %lld: not sent", p->to.shown,
			 len, (long long)p->o->max_size);
		return -1;
	}
	/* OTLP/HTTP's receivers take gzip (a profile shrinks 5-10 times);
	 * --max-size bounds what they inflate it to. */
	char *gz = NULL;
	size_t gzlen = 0;
	if (p->to.kind == KIND_OTLP && p->o->gzip) {
		FILE *f = open_memstream(&gz, &gzlen);
		if (!f || lp_gzip__write(body, len, f) < 0 || fclose(f) != 0)
			lp_die(1, "cannot compress a body: %s", strerror(errno));
		body = gz;
		len = gzlen;
	}
	char *url = p->to.kind == KIND_PYROSCOPE ? pyroscope_url(p, from_ns, until_ns) : NULL;
	struct lp_request q = { url ? url : p->to.full, p->to.shown, p->headers, body, len,
			     p->to.kind == KIND_OTLP };
	struct lp_post_opts po = { p->o->timeout_ns, p->o->retries, p->o->verbose };
	int rc = lp_post(p->curl, &po, &q);
	curl_free(url);
	free(gz);
	return rc;
}

/* A batch's profile, encoded as the target takes it, and sent. */
static int push_batch(struct pusher *p, struct lp_proftab *t, uint64_t from_ns, uint64_t until_ns)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (!f)
		lp_die(1, "cannot encode a batch: %s", strerror(errno));
	struct lp_otlp_opts oo = { p->o->name ? p->o->name : "lp", from_ns, until_ns };
	int wr = p->to.kind == KIND_OTLP ? lp_otlp__write(t, &oo, f) : lp_pprof__write(t, f);
	if (fclose(f) != 0 || wr < 0)
		lp_die(1, "cannot encode a batch: %s", strerror(errno));
	if (t->times && t->first_unix_ns) {
		from_ns = t->first_unix_ns;
		until_ns = t->last_unix_ns + 1;
	}
	int rc = send_body(p, body, len, from_ns, until_ns);
	free(body);
	return rc;
}

/* --- --as-is ------------------------------------------------------------ */

/* A well-formed protobuf message; for OTLP, whose fields are those of an
 * ExportProfilesServiceRequest (1, 2: messages). */
static bool well_formed(const unsigned char *p, size_t len, enum kind kind)
{
	struct lp_pb m = lp_pb__of(p, len);
	struct lp_pb_field f;
	int rc;
	while ((rc = lp_pb__next(&m, &f)) > 0)
		if (kind == KIND_OTLP && ((f.number != 1 && f.number != 2) || f.wire != LP_PB_LEN))
			return false;
	return rc == 0 && len > 0;
}

/* A ready body from path, whole: what the target takes (Pyroscope: a
 * pprof profile, gzipped or not; OTLP: a request), within --max-size. */
static unsigned char *read_body(const struct pusher *p, const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		lp_die(1, "cannot open '%s': %s", path, strerror(errno));
	size_t cap = 65536, n = 0, max = (size_t)p->o->max_size;
	unsigned char *b = lp_malloc(cap);
	for (size_t got; (got = fread(b + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n > max)
			lp_die(1, "%s: over --max-size %zu bytes: not sent", path, max);
		if (n == cap)
			b = lp_realloc(b, cap *= 2);
	}
	if (ferror(f))
		lp_die(1, "cannot read '%s': %s", path, strerror(errno));
	if (f != stdin)
		fclose(f);
	bool gz = n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
	if (!(p->to.kind == KIND_PYROSCOPE && gz) && !well_formed(b, n, p->to.kind))
		lp_die(1, "%s: not %s", path, p->to.kind == KIND_OTLP ?
		       "an OTLP ExportProfilesServiceRequest (lp-collapse --format otlp)" :
		       "a pprof profile (lp-collapse --format pprof)");
	*len = n;
	return b;
}

static int push_as_is(struct pusher *p, char **paths, int n)
{
	for (int i = 0; i < n; i++) {
		size_t len;
		unsigned char *body = read_body(p, paths[i], &len);
		uint64_t now = realtime_ns();
		int rc = send_body(p, body, len, now, now);
		free(body);
		if (rc < 0)
			return 1;
	}
	return 0;
}

/* --- batches of a live input ---------------------------------------- */

/* What the reader threads build, under its own lock, not the feed's: a
 * reader that waits for room (in take, which runs under the feed's lock)
 * must never hold up the main thread, which takes batches out. */
struct batch {
	pthread_mutex_t lock;
	pthread_cond_t taken;		/* ready was taken */
	struct lp_proftab *tab;		/* filling */
	struct lp_proftab *ready;	/* full: the next to push */
	uint64_t start_ns, ready_start_ns;	/* when their first sample came */
	uint64_t nsamples;		/* in tab */
	size_t max_held;
	struct { bool known; int64_t ns; } *offset;	/* each input's realtime offset */
	char *event;			/* the first seen: the others are left out */
	uint64_t other_events;
	bool gone;			/* the main thread takes no more */
	int wake_fd;
};

static bool same_event(struct batch *b, const struct lp_sample *s)
{
	if (!s->event || !s->event[0])
		return true;
	if (!b->event)
		b->event = lp_strdup(s->event);
	return !strcmp(b->event, s->event);
}

/* A full batch becomes the ready one, when the one before has been taken:
 * until then the reader waits, and its input with it. */
static void hand_off(struct batch *b)
{
	while (b->ready && !b->gone)
		pthread_cond_wait(&b->taken, &b->lock);
	if (b->gone)
		return;
	b->ready = b->tab;
	b->ready_start_ns = b->start_ns;
	b->tab = lp_proftab__next(b->ready);
	b->nsamples = 0;
	char c = 'f';
	ssize_t w = write(b->wake_fd, &c, 1);
	(void)w;	/* a full pipe already holds a wake-up */
}

static void add_sample(struct batch *b, int input, const struct lp_sample *s)
{
	if (!same_event(b, s)) {
		b->other_events++;
		return;
	}
	b->tab->offset_known = b->offset[input].known;
	b->tab->offset_ns = b->offset[input].ns;
	lp_proftab__add(b->tab, s);
	if (!b->nsamples++)
		b->start_ns = realtime_ns();
	if (b->tab->held >= b->max_held)
		hand_off(b);
}

static void take(void *sink, int input, const struct lp_record *rec, int64_t arrival_ns)
{
	struct batch *b = sink;
	pthread_mutex_lock(&b->lock);
	if (rec->kind == LP_REC_HEADER) {
		lp_proftab__header(b->tab, &rec->header);
		b->offset[input].known = b->tab->offset_known;
		b->offset[input].ns = b->tab->offset_ns;
	} else if (rec->kind == LP_REC_SAMPLE) {
		add_sample(b, input, &rec->sample);
	}
	pthread_mutex_unlock(&b->lock);
}

/* The batch to push now: the ready one, else with `all` the one filling
 * (when it holds anything); NULL when none. */
static struct lp_proftab *take_batch(struct batch *b, bool all, uint64_t *from_ns)
{
	struct lp_proftab *t = NULL;
	pthread_mutex_lock(&b->lock);
	if (b->ready) {
		t = b->ready;
		*from_ns = b->ready_start_ns;
		b->ready = NULL;
		pthread_cond_broadcast(&b->taken);
	} else if (all && b->nsamples) {
		t = b->tab;
		*from_ns = b->start_ns;
		b->tab = lp_proftab__next(t);
		b->nsamples = 0;
	}
	pthread_mutex_unlock(&b->lock);
	return t;
}

/* Milliseconds until deadline, for poll. */
static int until_ms(int64_t deadline)
{
	int64_t left = (deadline - lp_monotonic_ns() + 999999) / 1000000;
	return left < 0 ? 0 : left > 1000000 ? 1000000 : (int)left;
}

/* Waits for a wake-up or the deadline; the inputs that ended meanwhile
 * (a reader writes 'e' to the pipe at its input's end) added to *ended. */
static void wait_wake(int wake, int64_t deadline, int *ended)
{
	struct pollfd pfd = { .fd = wake, .events = POLLIN };
	char c[64];
	ssize_t n;
	if (poll(&pfd, 1, until_ms(deadline)) < 0 && errno != EINTR)
		lp_die(1, "poll: %s", strerror(errno));
	while ((n = read(wake, c, sizeof(c))) > 0)
		for (ssize_t i = 0; i < n; i++)
			*ended += c[i] == 'e';
}

/* Pushes the ready batch at once, the one filling every interval, and
 * what is left at the end, until the inputs end (*eof) or a push fails. */
static int run_batches(struct pusher *p, struct lp_feed *feed, struct batch *b, int wake,
		       int ninputs, bool *eof)
{
	int64_t next = lp_monotonic_ns() + p->o->interval_ns;
	int ended = 0;
	for (;;) {
		wait_wake(wake, next, &ended);
		*eof = ended == ninputs;
		bool due = *eof || lp_monotonic_ns() >= next;
		if (*eof) {
			/* the readers are done: the feed's lock is free */
			struct lp_feed_state st;
			lp_feed__lock(feed, &st);
			lp_feed__unlock(feed);
			if (st.failed)
				return 1;	/* a stream cut short: its reader said where */
		}
		uint64_t from = 0;
		struct lp_proftab *t;
		while ((t = take_batch(b, due, &from))) {
			int rc = push_batch(p, t, from, realtime_ns());
			lp_proftab__free(t);
			if (rc < 0)
				return 1;
		}
		if (due)
			next = lp_monotonic_ns() + p->o->interval_ns;
		if (*eof)
			return 0;
	}
}

static int push_inputs(struct pusher *p, char **paths, int n)
{
	int wake[2];
	/* Static: readers blocked on a pipe are left to exit(), still in use */
	static struct lp_reader **readers;
	readers = lp_open_inputs(paths, n, p->o->input, NULL);
	if (!readers)
		return 1;
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
		lp_die(1, "cannot create a pipe: %s", strerror(errno));
	static struct batch b;
	b = (struct batch){
		.tab = lp_proftab__new(p->to.kind == KIND_OTLP),
		.max_held = (size_t)p->o->max_size,
		.offset = lp_calloc((size_t)n, sizeof(*b.offset)),
		.wake_fd = wake[1],
	};
	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.taken, NULL);
	struct lp_feed *feed = lp_feed__start(readers, n, wake[1], take, &b);
	bool eof = false;
	int status = run_batches(p, feed, &b, wake[0], n, &eof);
	if (!eof) {
		/* Readers still reading, or waiting for room, are left to exit(). */
		pthread_mutex_lock(&b.lock);
		b.gone = true;
		pthread_cond_broadcast(&b.taken);
		pthread_mutex_unlock(&b.lock);
		lp_feed__abandon(feed);
		return status;
	}
	lp_feed__join(feed);
	lp_feed__free(feed);
	lp_free_inputs(readers, n);
	if (b.other_events)
		lp_error("%llu samples of events other than %s left out (one event a profile)",
			 (unsigned long long)b.other_events, b.event);
	lp_proftab__free(b.tab);
	pthread_cond_destroy(&b.taken);
	pthread_mutex_destroy(&b.lock);
	free(b.offset);
	free(b.event);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {
		.interval_ns = 10 * 1000000000LL,
		.max_size = 64 << 20,
		.retries = 4,
		.gzip = true,
		.timeout_ns = 30 * 1000000000LL,
		.input = LP_INPUT_AUTO,
	};
	lp_init(argc, argv);
	/* before any thread: libcurl's global start is not thread-safe */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		lp_die(1, "cannot start libcurl");
	parse_options(argc, argv, &o);
	lp_stop__read_through_first_sigint();
	/* a receiver that closes the connection is a failed request, not a
	 * signal (lp-push writes no pipe of its own) */
	signal(SIGPIPE, SIG_IGN);
	srand((unsigned)(realtime_ns() ^ (uint64_t)getpid()));

	struct pusher p = { 0 };
	pusher_init(&p, &o);
	int npaths;
	char **paths = lp_input_paths(argc, argv, optind, &npaths);
	int status = o.as_is ? push_as_is(&p, paths, npaths) : push_inputs(&p, paths, npaths);
	pusher_fini(&p);
	curl_global_cleanup();
	return status;
}
