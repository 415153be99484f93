/* http.h - lp-serve's HTTP side, on libmicrohttpd: one page, its data as
 * Server-Sent Events, and the few requests the page makes, on one address
 * (loopback unless told), every request needing the access token and a
 * Host naming that address (no DNS rebinding), a POST's Origin, when
 * given, the page's own (formats/lp-serve.md says what each path takes).
 * One thread serves every connection; what a request asks of the program
 * goes through the hooks, each call on a thread of its own (8 at once at
 * most), which must lock what they touch. */
#ifndef LP_HTTP_H
#define LP_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct lp_http_hooks {
	void *arg;
	/* POST /settings and /control: the request's form (its fields
	 * decoded, as NAME=VALUE pairs, n of them).  The reply's text in
	 * *reply (malloc'd); the HTTP status (200, 400, 409...). */
	int (*settings)(void *arg, const char *const *names, const char *const *values, size_t n,
			char **reply);
	int (*control)(void *arg, const char *command, char **reply);
	/* GET /range?from=NS&to=NS: a flame graph's JSON (malloc'd), or NULL. */
	char *(*range)(void *arg, int64_t from, int64_t to);
	/* GET /discover?what=W&arg=A: text in *out (malloc'd, *len bytes);
	 * the HTTP status. */
	int (*discover)(void *arg, const char *what, const char *operand, char **out,
			size_t *len);
};

struct lp_http_opts {
	const char *address;	/* a numeric IPv4 or IPv6 address; NULL: 127.0.0.1 */
	unsigned port;		/* 0: one the kernel picks */
	const char *token;
	const char *page;	/* the page's HTML */
	size_t page_len;
};

struct lp_http;

/* Listening, or NULL after saying why. */
struct lp_http *lp_http__start(const struct lp_http_opts *o, const struct lp_http_hooks *h);
/* The page's address with its token: http://HOST:PORT/?token=TOKEN. */
const char *lp_http__url(const struct lp_http *s);
/* A new snapshot (one line of JSON) for /snapshot and every /events
 * stream; the server keeps a copy. */
void lp_http__publish(struct lp_http *s, const char *json, size_t len);
/* Ends every stream and stops listening. */
void lp_http__stop(struct lp_http *s);

#endif
