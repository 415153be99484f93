/* http.c - lp-serve's server on libmicrohttpd (http.h): a thread per
 * connection, so an event stream's reader may wait for the next snapshot;
 * every request checked for its token and Host before anything else. */
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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "serve/http.h"

#define BODY_MAX 8192
#define FORM_FIELDS 16
/* A comment on an idle event stream this often: a proxy or the browser
 * keeps it open, and a peer gone is found. */
#define KEEPALIVE_S 15

struct lp_http {
	struct MHD_Daemon *d;
	struct lp_http_opts o;
	struct lp_http_hooks h;
	unsigned port;
	char url[160];
	char hosts[3][80];	/* Host headers that name this server */
	bool loopback;		/* it listens on 127.0.0.0/8 or ::1 */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *snap;		/* the newest snapshot */
	size_t snap_len;
	uint64_t gen;		/* snapshots published */
	bool stopping;
};

/* What a request carries between libmicrohttpd's calls: a POST's body. */
struct request {
	char body[BODY_MAX + 1];
	size_t len;
	bool too_long;
};

struct stream {
	struct lp_http *s;
	uint64_t gen;
	char *msg;
	size_t len, off;
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

/* --- the event stream ------------------------------------------------------ */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	struct lp_http *s = st->s;

	if (st->off == st->len) {
		pthread_mutex_lock(&s->lock);
		while (!s->stopping && s->gen == st->gen) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += KEEPALIVE_S;
			if (pthread_cond_timedwait(&s->cond, &s->lock, &until) == ETIMEDOUT)
				break;
		}
		if (s->stopping) {
			pthread_mutex_unlock(&s->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		free(st->msg);
		st->msg = NULL;
		st->off = st->len = 0;
		if (s->gen == st->gen) {
			st->msg = lp_strdup(": idle\n\n");
		} else {
			static const char head[] = "event: snapshot\ndata: ";
			st->msg = lp_malloc(sizeof(head) + s->snap_len + 2);
			memcpy(st->msg, head, sizeof(head) - 1);
			memcpy(st->msg + sizeof(head) - 1, s->snap, s->snap_len);
			memcpy(st->msg + sizeof(head) - 1 + s->snap_len, "\n\n", 3);
			st->gen = s->gen;
		}
		st->len = strlen(st->msg);
		pthread_mutex_unlock(&s->lock);
	}
	size_t n = st->len - st->off < max ? st->len - st->off : max;
	memcpy(buf, st->msg + st->off, n);
	st->off += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;

	free(st->msg);
	free(st);
}

static enum MHD_Result events(struct lp_http *s, struct MHD_Connection *c)
{
	struct stream *st = lp_calloc(1, sizeof(*st));

	st->s = s;
	struct MHD_Response *r =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536, stream_read, st, stream_free);
	if (!r) {
		stream_free(st);
		return MHD_NO;
	}
	secure(r, "text/event-stream");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* --- requests ---------------------------------------------------------------- */

static enum MHD_Result snapshot(struct lp_http *s, struct MHD_Connection *c)
{
	pthread_mutex_lock(&s->lock);
	size_t len = s->snap_len;
	char *copy = len ? lp_malloc(len) : NULL;
	if (len)
		memcpy(copy, s->snap, len);
	pthread_mutex_unlock(&s->lock);
	if (!copy)
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "lp-serve: no snapshot yet");
	enum MHD_Result ret = reply(c, MHD_HTTP_OK, "application/json", copy, len);
	free(copy);
	return ret;
}

static bool arg_i64(struct MHD_Connection *c, const char *name, int64_t *v)
{
	const char *a = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
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

static enum MHD_Result range(struct lp_http *s, struct MHD_Connection *c)
{
	int64_t from, to;

	if (!arg_i64(c, "from", &from) || !arg_i64(c, "to", &to) || from >= to)
		return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: range: from=NS&to=NS, from < to");
	char *json = s->h.range ? s->h.range(s->h.arg, from, to) : NULL;
	if (!json)
		return text(c, MHD_HTTP_NOT_FOUND, "lp-serve: range: nothing kept");
	enum MHD_Result ret = reply(c, MHD_HTTP_OK, "application/json", json, strlen(json));
	free(json);
	return ret;
}

static enum MHD_Result discover(struct lp_http *s, struct MHD_Connection *c)
{
	const char *what = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "what");
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "arg");
	char *out = NULL;
	size_t len = 0;

	if (!what || !arg)
		return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: discover: what= and arg=");
	int status = s->h.discover(s->h.arg, what, arg, &out, &len);
	enum MHD_Result ret = reply(c, (unsigned)status, "text/plain; charset=utf-8",
				    out ? out : "", out ? len : 0);
	free(out);
	return ret;
}

static enum MHD_Result post(struct lp_http *s, struct MHD_Connection *c, const char *url,
			    struct request *rq)
{
	char *names[FORM_FIELDS], *values[FORM_FIELDS], *out = NULL;
	int status;

	if (rq->too_long)
		return text(c, MHD_HTTP_CONTENT_TOO_LARGE, "lp-serve: a request's body is at most 8 KiB");
	rq->body[rq->len] = 0;
	if (memchr(rq->body, 0, rq->len))
		return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: a NUL byte in the form");
	int n = form_parse(rq->body, names, values, FORM_FIELDS);
	if (n < 0)
		return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: not a form (NAME=VALUE&..., URL-encoded)");
	if (!strcmp(url, "/settings")) {
		status = s->h.settings(s->h.arg, (const char *const *)names,
				       (const char *const *)values, (size_t)n, &out);
	} else {
		if (n != 1 || strcmp(names[0], "command"))
			return text(c, MHD_HTTP_BAD_REQUEST, "lp-serve: control: one field, command=");
		status = s->h.control(s->h.arg, values[0], &out);
	}
	enum MHD_Result ret = text(c, (unsigned)status, out ? out : "");
	free(out);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct lp_http *s = cls;
	bool is_post = !strcmp(method, "POST");

	if (is_post && !*con_cls) {
		*con_cls = lp_calloc(1, sizeof(struct request));
		return MHD_YES;
	}
	if (is_post && *upload_size) {
		struct request *rq = *con_cls;
		if (rq->len + *upload_size > BODY_MAX) {
			rq->too_long = true;
		} else {
			memcpy(rq->body + rq->len, upload, *upload_size);
			rq->len += *upload_size;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	if (!host_ok(s, host))
		return text(c, MHD_HTTP_FORBIDDEN, "lp-serve: the Host header does not name this server");
	if (!same_token(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"), s->o.token))
		return text(c, MHD_HTTP_FORBIDDEN,
			    "lp-serve: the access token is needed (the URL lp-serve printed)");
	if (is_post) {
		if (!origin_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"), host))
			return text(c, MHD_HTTP_FORBIDDEN, "lp-serve: a request from another page");
		if (strcmp(url, "/settings") && strcmp(url, "/control"))
			return text(c, MHD_HTTP_NOT_FOUND, "lp-serve: no such thing to post to");
		return post(s, c, url, *con_cls);
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "lp-serve: GET or POST");
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", s->o.page, s->o.page_len);
	if (!strcmp(url, "/snapshot"))
		return snapshot(s, c);
	if (!strcmp(url, "/events"))
		return events(s, c);
	if (!strcmp(url, "/range"))
		return range(s, c);
	if (!strcmp(url, "/discover"))
		return discover(s, c);
	return text(c, MHD_HTTP_NOT_FOUND, "lp-serve: not found");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode code)
{
	free(*con_cls);
	*con_cls = NULL;
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
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0 ||
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

	int fd = listen_on(addr, v6, o->port, &s->port);
	if (fd < 0) {
		if (errno == EINVAL)
			lp_error("--listen '%s': not a numeric IPv4 or IPv6 address", addr);
		else
			lp_error_errno("cannot listen on %s port %u", addr, o->port);
		free(s);
		return NULL;
	}
	s->o = *o;
	s->h = *h;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	snprintf(s->hosts[0], sizeof(s->hosts[0]), "%s%s%s:%u", v6 ? "[" : "", addr, v6 ? "]" : "",
		 s->port);
	s->loopback = v6 ? !strcmp(addr, "::1") : !strncmp(addr, "127.", 4);
	if (s->loopback)
		snprintf(s->hosts[1], sizeof(s->hosts[1]), "localhost:%u", s->port);
	snprintf(s->url, sizeof(s->url), "http://%s/?token=%s", s->hosts[0], o->token);
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
					(v6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(4 * KEEPALIVE_S),
				MHD_OPTION_END);
	if (!s->d) {
		lp_error("cannot serve on %s port %u: libmicrohttpd refused", addr, s->port);
		close(fd);
		pthread_mutex_destroy(&s->lock);
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
	char *copy = lp_malloc(len + 1);
	memcpy(copy, json, len);
	copy[len] = 0;
	pthread_mutex_lock(&s->lock);
	free(s->snap);
	s->snap = copy;
	s->snap_len = len;
	s->gen++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void lp_http__stop(struct lp_http *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	MHD_stop_daemon(s->d);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s->snap);
	free(s);
}
