/* http.c - lp-serve's server on libmicrohttpd (http.h).
 *
 * One thread polls every connection (epoll): a connection that sends
 * nothing costs its socket and its memory pool, never a thread, so idle or
 * trickling clients cannot take what the page needs.  (With a thread per
 * connection, at most 64 of them and a minute's timeout, 64 local sockets
 * that never sent a byte kept the page out for that minute.)  Nothing on
 * that thread waits: an event stream with nothing new is suspended until a
 * snapshot comes or its keep-alive is due, and a hook (a discovery forks
 * lp-trace and may take 30 s; the others take the views' lock) runs on a
 * thread of its own while its connection is suspended.  A watcher thread
 * closes the connections that have not sent a whole request in REQUEST_S,
 * and wakes the streams whose keep-alive is due.  Every request is checked
 * for its Host and token before anything else is read of it. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "serve/conns.h"
#include "serve/http.h"

/* A request's body, at most: the page's forms are a few hundred bytes. */
#define BODY_MAX 8192
#define FORM_FIELDS 16
/* A comment on an idle event stream this often: a proxy or the browser
 * keeps it open, and a peer gone is found. */
#define KEEPALIVE_S 15
/* Connections at once, at most: each costs a descriptor and its memory
 * pool (POOL_BYTES), 16 MiB in all; fewer when lp-serve may open fewer
 * than twice as many descriptors (the other half is its inputs', pipes'
 * and producers').  Beyond it libmicrohttpd closes a new connection at
 * once. */
#define CONN_MAX 512
/* A connection's memory (libmicrohttpd's default, said here): its
 * request's line and headers, and the buffer its reply is written from.
 * Headers beyond it get 431, a longer URL 414; the page's are under 2 KiB. */
#define POOL_BYTES (32 * 1024)
/* A connection has this long to send a whole request, from its accept or
 * the end of its previous reply: one that trickles it (slowloris), or
 * sends nothing, is closed then, whatever libmicrohttpd's timeout (which
 * a byte a second would renew).  The page sends each request at once. */
#define REQUEST_S 10
/* A reply that does not move this long (its reader stopped reading) is
 * given up (libmicrohttpd's idle timeout): an event stream writes at least
 * every KEEPALIVE_S, and one suspended is not timed. */
#define STALL_S (2 * KEEPALIVE_S)
/* An event stream's socket's send buffer (the kernel doubles it): a slow
 * reader is that far behind at most, the newest snapshot next once it has
 * read it, and the kernel keeps no more for it (autotuned, up to 4 MiB). */
#define STREAM_SNDBUF (64 * 1024)
/* Hooks running at once, each on a thread of its own: the page asks one
 * or two things at a time; more is a runaway page, answered 503. */
#define JOBS_MAX 8

/* A snapshot as published, shared by every reply still sending it. */
struct snap {
	size_t refs;		/* under the server's lock */
	uint64_t gen;		/* its number, from 1 */
	size_t len;
	char data[];
};

struct lp_http {
	struct MHD_Daemon *d;
	struct lp_http_opts o;
	struct lp_http_hooks h;
	unsigned port;
	char url[160];
	char hosts[3][80];	/* Host headers that name this server */
	bool loopback;		/* it listens on 127.0.0.0/8 or ::1 */
	pthread_mutex_t lock;	/* guards what follows, to watcher */
	pthread_cond_t cond;	/* (CLOCK_MONOTONIC) a job ended, or stopping */
	struct snap *snap;	/* the newest snapshot, or NULL */
	struct stream *waiting;	/* streams suspended until there is news */
	int jobs;		/* hooks running */
	bool stopping;
	pthread_t watcher;
	struct lp_conns *conns;	/* each connection's socket context */
};

/* An event stream: its message in three parts, head, a snapshot's data
 * (referenced) and "\n\n". */
struct stream {
	struct lp_http *s;
	struct MHD_Connection *c;
	struct stream *next;	/* on s->waiting */
	bool waiting;
	uint64_t gen;		/* the last snapshot it sent; 0: none yet */
	uint64_t skipped;	/* snapshots that came and went while it was sending */
	int64_t idle_at;	/* when a keep-alive comment is due */
	struct snap *snap;
	char head[96];
	size_t head_len, len, off;
};

/* A request between libmicrohttpd's calls (its con_cls): a POST's body,
 * and a hook's call on a thread of its own. */
struct request {
	struct lp_http *s;
	struct MHD_Connection *c;
	char body[BODY_MAX + 1];
	size_t len;
	enum { JOB_NONE, JOB_RUNNING, JOB_DONE } job;
	void (*work)(struct request *rq);
	/* the hook's arguments */
	char *names[FORM_FIELDS], *values[FORM_FIELDS];
	int n;
	bool is_settings;
	int64_t from, to;
	char *what, *arg;
	/* and its answer */
	unsigned status;
	char *out;
	size_t out_len;
	bool json;		/* else text, one line */
};

static const char csp[] = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
			  "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
			  "frame-ancestors 'none'";

static void secure(struct MHD_Response *r, const char *type)
{
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* The token is in the page's URL: never sent on as a Referer. */
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	secure(r, type);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s\n", msg);

	return reply(c, status, "text/plain; charset=utf-8", line,
		     n < (int)sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Compares in time that does not depend on where they differ. */
static bool same_token(const char *given, const char *token)
{
	size_t n = strlen(token);
	unsigned char d = 0;

	if (!given || strlen(given) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)given[i] ^ (unsigned char)token[i];
	return d == 0;
}

/* Whether the Host header names this server.  On loopback it must (a page
 * of another site, its name rebound to 127.0.0.1, sends its own); on an
 * address the user opened to others, the names it is reached by are not
 * known here, and any Host is taken (the token still guards it). */
static bool host_ok(const struct lp_http *s, const char *host)
{
	if (!s->loopback)
		return host != NULL;
	for (size_t i = 0; host && i < sizeof(s->hosts) / sizeof(s->hosts[0]); i++)
		if (s->hosts[i][0] && !strcasecmp(host, s->hosts[i]))
			return true;
	return false;
}

/* A POST's Origin, when it has one, is the page's: http:// and its Host. */
static bool origin_ok(const char *origin, const char *host)
{
	return !origin || (!strncmp(origin, "http://", 7) && !strcasecmp(origin + 7, host));
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
					: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes an x-www-form-urlencoded part in place ('+' a space, %XX a
 * byte); false on a bad escape or a NUL byte. */
static bool form_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '+') {
			*o++ = ' ';
		} else if (*s == '%') {
			int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
			if (lo < 0 || (hi == 0 && lo == 0))
				return false;
			*o++ = (char)(hi << 4 | lo);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
	return true;
}

/* The body's fields into names[] and values[] (pointing into it): their
 * number, or -1 when it is not a form lp-serve reads. */
static int form_parse(char *body, char **names, char **values, int max)
{
	int n = 0;

	for (char *save = NULL, *f = strtok_r(body, "&", &save); f; f = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(f, '=');
		if (!eq || n == max)
			return -1;
		*eq = 0;
		if (!form_decode(f) || !form_decode(eq + 1))
			return -1;
		names[n] = f;
		values[n++] = eq + 1;
	}
	return n;
}

/* A request's value (a header, a query's argument), or NULL: absent, or
 * holding a NUL byte (a %00), where what C would read of it is not what
 * was sent. */
static const char *value(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *name)
{
	const char *v = NULL;
	size_t n = 0;

	if (MHD_lookup_connection_value_n(c, kind, name, strlen(name), &v, &n) != MHD_YES || !v ||
	    strlen(v) != n)
		return NULL;
	return v;
}

/* --- snapshots, shared ------------------------------------------------------ */

static struct snap *snap_ref(struct snap *p)
{
	if (p)
		p->refs++;
	return p;
}

/* Under s->lock. */
static void snap_unref(struct snap *p)
{
	if (p && --p->refs == 0)
		free(p);
}

struct snap_reply {
	struct lp_http *s;
	struct snap *p;
};

static void snap_reply_free(void *cls)
{
	struct snap_reply *r = cls;

	pthread_mutex_lock(&r->s->lock);
	snap_unref(r->p);
	pthread_mutex_unlock(&r->s->lock);
	free(r);
}

static enum MHD_Result snapshot(struct lp_http *s, struct MHD_Connection *c)
{
	struct snap_reply *sr = lp_malloc(sizeof(*sr));

	sr->s = s;
	pthread_mutex_lock(&s->lock);
	sr->p = snap_ref(s->snap);
	pthread_mutex_unlock(&s->lock);
	if (!sr->p) {
		free(sr);
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "lp-serve: no snapshot yet");
	}
	/* The snapshot itself, not a copy: a hundred clients asking cost one. */
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
		sr->p->len, sr->p->data, snap_reply_free, sr);
	if (!r) {
		snap_reply_free(sr);
		return MHD_NO;
	}
	secure(r, "application/json");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* --- the event stream ------------------------------------------------------ */

/* Resumes a waiting stream (under s->lock). */
static void wake_stream(struct stream *st)
{
	st->waiting = false;
	MHD_resume_connection(st->c);
}

/* The stream's next message, under s->lock: the newest snapshot if it has
 * not sent it (those published meanwhile skipped, and counted), a
 * keep-alive comment if one is due; else false, the stream suspended until
 * a snapshot is published or the watcher finds its keep-alive due. */
static bool next_message(struct stream *st)
{
	struct lp_http *s = st->s;
	int64_t now = lp_monotonic_ns();

	snap_unref(st->snap);
	st->snap = NULL;
	st->off = st->len = 0;
	if (s->snap && s->snap->gen != st->gen) {
		if (st->gen)
			st->skipped += s->snap->gen - st->gen - 1;
		st->snap = snap_ref(s->snap);
		st->gen = s->snap->gen;
		int n = st->skipped ? snprintf(st->head, sizeof(st->head), ": skipped %llu\n",
					       (unsigned long long)st->skipped)
				    : 0;
		n += snprintf(st->head + n, sizeof(st->head) - (size_t)n,
			      "event: snapshot\nid: %llu\ndata: ", (unsigned long long)st->gen);
		st->head_len = (size_t)n;
		st->len = st->head_len + st->snap->len + 2;
	} else if (now >= st->idle_at) {
		st->head_len = (size_t)snprintf(st->head, sizeof(st->head), ": idle\n\n");
		st->len = st->head_len;
	} else {
		st->next = s->waiting;
		s->waiting = st;
		st->waiting = true;
		MHD_suspend_connection(st->c);
		return false;
	}
	st->idle_at = now + KEEPALIVE_S * 1000000000LL;
	return true;
}

/* libmicrohttpd's content reader, on its polling thread: never waits. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	struct lp_http *s = st->s;

	(void)pos;
	if (st->off == st->len) {
		pthread_mutex_lock(&s->lock);
		bool stopping = s->stopping, news = !stopping && next_message(st);
		pthread_mutex_unlock(&s->lock);
		if (stopping)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!news)
			return 0;	/* suspended: called again once resumed */
	}
	size_t n = 0;
	while (n < max && st->off < st->len) {
		const char *part;
		size_t at, plen;
		if (st->off < st->head_len) {
			part = st->head, at = st->off, plen = st->head_len;
		} else if (st->off < st->head_len + (st->snap ? st->snap->len : 0)) {
			part = st->snap->data, at = st->off - st->head_len, plen = st->snap->len;
		} else {
			part = "\n\n", at = st->off - st->head_len - st->snap->len, plen = 2;
		}
		size_t k = plen - at < max - n ? plen - at : max - n;
		memcpy(buf + n, part + at, k);
		n += k;
		st->off += k;
	}
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;
	struct lp_http *s = st->s;

	pthread_mutex_lock(&s->lock);
	/* Never on the list here (a suspended connection is not closed, and
	 * stopping resumes them all), unless libmicrohttpd changes that. */
	for (struct stream **p = &s->waiting; st->waiting && *p; p = &(*p)->next)
		if (*p == st) {
			*p = st->next;
			break;
		}
	snap_unref(st->snap);
	pthread_mutex_unlock(&s->lock);
	free(st);
}

static enum MHD_Result events(struct lp_http *s, struct MHD_Connection *c)
{
	struct stream *st = lp_calloc(1, sizeof(*st));

	st->s = s;
	st->c = c;
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	int sndbuf = STREAM_SNDBUF;
	if (i)
		setsockopt(i->connect_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	/* The block size is the buffer of an HTTP/1.0 reply alone: a chunked
	 * one is written straight into the connection's pool. */
	struct MHD_Response *r =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, stream_free);
	if (!r) {
		free(st);
		return MHD_NO;
	}
	secure(r, "text/event-stream");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* --- hooks, on threads of their own -------------------------------------- */

static void *job_main(void *arg)
{
	struct request *rq = arg;
	struct lp_http *s = rq->s;

	rq->work(rq);
	pthread_mutex_lock(&s->lock);
	rq->job = JOB_DONE;
	s->jobs--;
	/* Called again now, rq->job says the answer is in. */
	MHD_resume_connection(rq->c);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Runs work(rq) on a thread of its own, the connection suspended. */
static enum MHD_Result start_job(struct lp_http *s, struct MHD_Connection *c, struct request *rq,
				 void (*work)(struct request *))
{
	pthread_attr_t a;
	pthread_t t;

	pthread_mutex_lock(&s->lock);
	if (s->jobs >= JOBS_MAX || s->stopping) {
		pthread_mutex_unlock(&s->lock);
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			    "lp-serve: busy: 8 requests are being answered already");
	}
	rq->s = s;
	rq->c = c;
	rq->work = work;
	rq->job = JOB_RUNNING;
	s->jobs++;
	MHD_suspend_connection(c);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, job_main, rq) != 0) {
		s->jobs--;
		rq->job = JOB_DONE;
		rq->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		rq->out = lp_strdup("lp-serve: cannot start a thread");
		MHD_resume_connection(c);
	}
	pthread_attr_destroy(&a);
	pthread_mutex_unlock(&s->lock);
	return MHD_YES;
}

static void do_form(struct request *rq)
{
	struct lp_http_hooks *h = &rq->s->h;
	char *out = NULL;
	int st = rq->is_settings ? h->settings(h->arg, (const char *const *)rq->names,
					       (const char *const *)rq->values, (size_t)rq->n, &out)
				 : h->control(h->arg, rq->values[0], &out);

	rq->status = (unsigned)st;
	rq->out = out;
}

static void do_range(struct request *rq)
{
	struct lp_http_hooks *h = &rq->s->h;

	rq->out = h->range ? h->range(h->arg, rq->from, rq->to) : NULL;
	if (rq->out) {
		rq->status = MHD_HTTP_OK;
		rq->json = true;
		rq->out_len = strlen(rq->out);
	} else {
		rq->status = MHD_HTTP_NOT_FOUND;
		rq->out = lp_strdup("lp-serve: range: nothing kept");
	}
}

static void do_discover(struct request *rq)
{
	struct lp_http_hooks *h = &rq->s->h;

	rq->status = (unsigned)h->discover(h->arg, rq->what, rq->arg, &rq->out, &rq->out_len);
	if (!rq->out)
		rq->out_len = 0;
}

/* The answer of a hook's call, resumed. */
static enum MHD_Result answer(struct MHD_Connection *c, struct request *rq)
{
	enum MHD_Result ret;

	if (rq->json)
		ret = reply(c, rq->status, "application/json", rq->out, rq->out_len);
	else if (rq->what)
		ret = reply(c, rq->status, "text/plain; charset=utf-8", rq->out ? rq->out : "",
			    rq->out ? rq->out_len : 0);
	else
		ret = text(c, rq->status, rq->out ? rq->out : "");
	free(rq->out);
	rq->out = NULL;
	rq->job = JOB_NONE;
	return ret;
}

/* --- requests ---------------------------------------------------------------- */

static bool arg_i64(struct MHD_Connection *c, const char *name, int64_t *v)
{
	const char *a = value(c, MHD_GET_ARGUMENT_KIND, name);
	char *end;

	if (!a || !*a)
		return false;
	errno = 0;
	long long x = strtoll(a, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static struct request *new_request(void **con_cls)
{
	struct request *rq = lp_calloc(1, sizeof(*rq));

	*con_cls = rq;
	return rq;
}

static enum MHD_Result get(struct lp_http *s, struct MHD_Connection *c, const char *url,
			   void **con_cls)
{
	if (!strcmp(url, "/")) {
		/* The page lives as long as the program: never copied. */
		struct MHD_Response *r = MHD_create_response_from_buffer(
			s->o.page_len, (void *)s->o.page, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		secure(r, "text/html; charset=utf-8");
		enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (!strcmp(url, "/snapshot"))
		return snapshot(s, c);
	if (!strcmp(url, "/events"))
		return events(s, c);
	if (!strcmp(url, "/range")) {
		int64_t from, to;
		if (!arg_i64(c, "from", &from) || !arg_i64(c, "to", &to) || from >= to)
			return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: range: from=NS&to=NS, from < to");
		struct request *rq = new_request(con_cls);
		rq->from = from;
		rq->to = to;
		return start_job(s, c, rq, do_range);
	}
	if (!strcmp(url, "/discover")) {
		const char *what = value(c, MHD_GET_ARGUMENT_KIND, "what");
		const char *arg = value(c, MHD_GET_ARGUMENT_KIND, "arg");
		if (!what || !arg)
			return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: discover: what= and arg=");
		struct request *rq = new_request(con_cls);
		rq->what = lp_strdup(what);
		rq->arg = lp_strdup(arg);
		return start_job(s, c, rq, do_discover);
	}
	return text(c, MHD_HTTP_NOT_FOUND, "lp-serve: not found");
}

static enum MHD_Result post(struct lp_http *s, struct MHD_Connection *c, const char *url,
			    struct request *rq)
{
	rq->body[rq->len] = 0;
	if (memchr(rq->body, 0, rq->len))
		return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: a NUL byte in the form");
	rq->n = form_parse(rq->body, rq->names, rq->values, FORM_FIELDS);
	if (rq->n < 0)
		return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: not a form (NAME=VALUE&..., URL-encoded)");
	rq->is_settings = !strcmp(url, "/settings");
	if (!rq->is_settings && (rq->n != 1 || strcmp(rq->names[0], "command")))
		return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: control: one field, command=");
	return start_job(s, c, rq, do_form);
}

/* The connection's lp_conn (its socket context). */
static struct lp_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* The connection's request is whole: the watcher leaves it be. */
static void heard(struct lp_http *s, struct MHD_Connection *c)
{
	lp_conns__reading(s->conns, conn_of(c), false);
}

/* The headers lp-serve reads, each at most once: with two, which one a
 * check read and which one something else would is a guess. */
static const char *const once[] = { "Host", "Origin", "Content-Length", "Transfer-Encoding" };

static enum MHD_Result count_once(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *val)
{
	int *n = cls;

	(void)kind, (void)val;
	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
		if (!strcasecmp(key, once[i]))
			n[i]++;
	return MHD_YES;
}

/* Why a request whose headers are in is refused, with its status; NULL:
 * taken. */
static const char *refused(struct lp_http *s, struct MHD_Connection *c, const char *url,
			   const char *method, unsigned *status)
{
	const char *host = value(c, MHD_HEADER_KIND, "Host");
	int n[sizeof(once) / sizeof(once[0])] = { 0 };

	MHD_get_connection_values(c, MHD_HEADER_KIND, count_once, n);
	*status = MHD_HTTP_BAD_REQUEST;
	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
		if (n[i] > 1)
			return "lp-serve: a header given twice (Host, Origin, Content-Length or Transfer-Encoding)";
	/* Both: the body's end is a guess (libmicrohttpd takes the chunks). */
	if (n[2] && n[3])
		return "lp-serve: Content-Length and Transfer-Encoding both";
	*status = MHD_HTTP_FORBIDDEN;
	if (!host_ok(s, host))
		return "lp-serve: the Host header does not name this server";
	if (!same_token(value(c, MHD_GET_ARGUMENT_KIND, "token"), s->o.token))
		return "lp-serve: the access token is needed (the URL lp-serve printed)";
	if (!strcmp(method, "POST")) {
		if (!origin_ok(value(c, MHD_HEADER_KIND, "Origin"), host))
			return "lp-serve: a request from another page";
		*status = MHD_HTTP_NOT_FOUND;
		if (strcmp(url, "/settings") && strcmp(url, "/control"))
			return "lp-serve: no such thing to post to";
		/* Refused before it is read, when it says its length. */
		const char *cl = value(c, MHD_HEADER_KIND, "Content-Length");
		char *end;
		*status = MHD_HTTP_CONTENT_TOO_LARGE;
		errno = 0;
		if (cl && (strtoull(cl, &end, 10) > BODY_MAX || errno))
			return "lp-serve: a request's body is at most 8 KiB";
		return NULL;
	}
	*status = MHD_HTTP_METHOD_NOT_ALLOWED;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return "lp-serve: GET or POST";
	return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct lp_http *s = cls;
	struct request *rq = *con_cls;
	unsigned status;

	(void)version;
	if (rq && rq->job == JOB_DONE)	/* resumed: its hook has answered */
		return answer(c, rq);
	if (rq && rq->job == JOB_RUNNING)	/* not resumed yet */
		return MHD_YES;
	if (!rq) {	/* the first call: the request's line and headers are in */
		const char *why = refused(s, c, url, method, &status);
		if (why) {
			heard(s, c);
			return text(c, status, why);
		}
		if (strcmp(method, "POST")) {
			heard(s, c);
			return get(s, c, url, con_cls);
		}
		new_request(con_cls);
		return MHD_YES;	/* its body next */
	}
	if (*upload_size) {
		/* A body sent chunked, no length said: closed once too long. */
		if (rq->len + *upload_size > BODY_MAX)
			return MHD_NO;
		memcpy(rq->body + rq->len, upload, *upload_size);
		rq->len += *upload_size;
		*upload_size = 0;
		return MHD_YES;
	}
	heard(s, c);
	return post(s, c, url, rq);
}

/* A request ended: the connection waits for the next one, from now. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode code)
{
	struct lp_http *s = cls;
	struct request *rq = *con_cls;

	(void)code;
	if (rq) {
		free(rq->out);
		free(rq->what);
		free(rq->arg);
		free(rq);
	}
	*con_cls = NULL;
	lp_conns__reading(s->conns, conn_of(c), true);
}

/* --- connections, watched -------------------------------------------------- */

static void notify(void *cls, struct MHD_Connection *c, void **socket_context,
		   enum MHD_ConnectionNotificationCode code)
{
	struct lp_http *s = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = lp_conns__add(s->conns, i ? i->connect_fd : -1);
	} else {
		/* libmicrohttpd says it before it closes the socket. */
		lp_conns__remove(s->conns, *socket_context);
		*socket_context = NULL;
	}
}

/* Every second: the keep-alives due, and the connections that have not
 * sent their request in REQUEST_S shut down (libmicrohttpd, reading the
 * end, closes them). */
static void *watch(void *arg)
{
	struct lp_http *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += 1;
		pthread_cond_timedwait(&s->cond, &s->lock, &t);
		if (s->stopping)
			break;
		int64_t now = lp_monotonic_ns();
		for (struct stream **p = &s->waiting; *p;) {
			struct stream *st = *p;
			if (now < st->idle_at) {
				p = &st->next;
				continue;
			}
			*p = st->next;
			wake_stream(st);
		}
		pthread_mutex_unlock(&s->lock);
		lp_conns__sweep(s->conns, REQUEST_S * 1000000000LL);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* A socket listening on addr:port (v6: an IPv6 address), its port in
 * *bound: listening before libmicrohttpd's threads start, so the Host
 * names and the URL are set before any request can come.  -1 with errno. */
static int listen_on(const char *addr, bool v6, unsigned port, unsigned *bound)
{
	struct sockaddr_storage ss;
	socklen_t len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	int one = 1;

	memset(&ss, 0, sizeof(ss));
	if (v6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1)
			return errno = EINVAL, -1;
	} else {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, addr, &in4->sin_addr) != 1)
			return errno = EINVAL, -1;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* A backlog of CONN_MAX: a burst of connections is queued whole (a
	 * connection the full queue dropped the handshake's end of stays
	 * half open, seconds, until the kernel sends its SYN-ACK again). */
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, CONN_MAX) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	*bound = ntohs(v6 ? in6->sin6_port : in4->sin_port);
	return fd;
}

struct lp_http *lp_http__start(const struct lp_http_opts *o, const struct lp_http_hooks *h)
{
	struct lp_http *s = lp_calloc(1, sizeof(*s));
	const char *addr = o->address ? o->address : "127.0.0.1";
	bool v6 = strchr(addr, ':') != NULL;
	struct rlimit rl;
	unsigned limit = CONN_MAX;

	int fd = listen_on(addr, v6, o->port, &s->port);
	if (fd < 0) {
		if (errno == EINVAL)
			lp_error("--listen '%s': not a numeric IPv4 or IPv6 address", addr);
		else
			lp_error_errno("cannot listen on %s port %u", addr, o->port);
		free(s);
		return NULL;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < limit)
		limit = rl.rlim_cur / 2 > 8 ? (unsigned)(rl.rlim_cur / 2) : 8;
	s->o = *o;
	s->h = *h;
	pthread_mutex_init(&s->lock, NULL);
	s->conns = lp_conns__new();
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	snprintf(s->hosts[0], sizeof(s->hosts[0]), "%s%s%s:%u", v6 ? "[" : "", addr, v6 ? "]" : "",
		 s->port);
	s->loopback = v6 ? !strcmp(addr, "::1") : !strncmp(addr, "127.", 4);
	if (s->loopback)
		snprintf(s->hosts[1], sizeof(s->hosts[1]), "localhost:%u", s->port);
	snprintf(s->url, sizeof(s->url), "http://%s/?token=%s", s->hosts[0], o->token);
	/* MHD_USE_AUTO: epoll on Linux.  Strict: a request libmicrohttpd
	 * would have to guess at (a space before a header's colon, a bare LF
	 * ...) is refused, never read two ways. */
	s->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
					(v6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				MHD_OPTION_NOTIFY_CONNECTION, notify, s,
				MHD_OPTION_CONNECTION_LIMIT, limit,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)POOL_BYTES,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)STALL_S,
				MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				MHD_OPTION_END);
	if (!s->d || pthread_create(&s->watcher, NULL, watch, s) != 0) {
		lp_error("cannot serve on %s port %u: libmicrohttpd refused", addr, s->port);
		if (s->d)
			MHD_stop_daemon(s->d);	/* which closes fd */
		else
			close(fd);
		pthread_mutex_destroy(&s->lock);
		lp_conns__free(s->conns);
		pthread_cond_destroy(&s->cond);
		free(s);
		return NULL;
	}
	return s;
}

const char *lp_http__url(const struct lp_http *s)
{
	return s->url;
}

void lp_http__publish(struct lp_http *s, const char *json, size_t len)
{
	while (len && json[len - 1] == '\n')	/* one line of an event's data */
		len--;
	struct snap *p = lp_malloc(sizeof(*p) + len + 1);
	p->refs = 1;
	p->len = len;
	memcpy(p->data, json, len);
	p->data[len] = 0;
	pthread_mutex_lock(&s->lock);
	p->gen = s->snap ? s->snap->gen + 1 : 1;
	snap_unref(s->snap);
	s->snap = p;
	for (struct stream *st = s->waiting; st; st = st->next)
		wake_stream(st);
	s->waiting = NULL;
	pthread_mutex_unlock(&s->lock);
}

void lp_http__stop(struct lp_http *s)
{
	if (!s)
		return;
	/* Every stream resumed (it ends), every hook's call answered, before
	 * libmicrohttpd stops: it must find no connection suspended. */
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	for (struct stream *st = s->waiting; st; st = st->next)
		wake_stream(st);
	s->waiting = NULL;
	pthread_cond_broadcast(&s->cond);
	while (s->jobs)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->watcher, NULL);
	MHD_stop_daemon(s->d);
	lp_conns__free(s->conns);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	snap_unref(s->snap);	/* the last reference: every reply is gone */
	free(s);
}
