/* post.h - one HTTP POST of a profile, retried as OTLP/HTTP says (lp-push's;
 * libcurl, Debian's libcurl4-openssl-dev, here alone). */
#ifndef LP_POST_H
#define LP_POST_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lp_post_opts {
	int64_t timeout_ns;	/* of each try, connecting included */
	int retries;		/* tries after the first */
	int verbose;		/* each try said on stderr */
};

struct lp_request {
	const char *url, *shown;
	struct curl_slist *headers;
	const void *body;
	size_t len;
	bool otlp;		/* a 200's body may hold a partial success */
};

/* POSTs q on c, retried (connection errors, 429, 502, 503, 504; the
 * server's Retry-After, else 0.5 s doubling to 30 s): 0 when the receiver
 * took it whole, -1 after a message naming q->shown and the status. */
int lp_post(CURL *c, const struct lp_post_opts *o, const struct lp_request *q);

#endif
