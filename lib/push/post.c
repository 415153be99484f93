/* post.c - one HTTP POST of a profile, retried (post.h): its reply kept
 * (the status line's words, Retry-After, the body's first 64 KiB for its
 * message and OTLP's partial success). */
#include "push/post.h"
#include "base/protobuf.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define REPLY_KEEP 65536	/* of a reply's body: its message, OTLP's partial success */
#define MESSAGE_MAX 200

struct reply {
	char body[REPLY_KEEP + 1];	/* and a NUL */
	size_t len;
	char reason[64];	/* the status line's words after the code */
	long retry_after;	/* seconds; -1: none */
	bool protobuf;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = size * n, room = REPLY_KEEP - r->len;
	memcpy(r->body + r->len, p, len < room ? len : room);
	r->len += len < room ? len : room;
	r->body[r->len] = '\0';
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = size * n;
	char line[256];
	snprintf(line, sizeof(line), "%.*s", (int)(len < 255 ? len : 255), p);
	line[strcspn(line, "\r\n")] = '\0';
	int code, at = 0;
	if (sscanf(line, "HTTP/%*s %d %n", &code, &at) == 1 && at)
		snprintf(r->reason, sizeof(r->reason), "%s", line + at);
	else if (!strncasecmp(line, "retry-after:", 12))
		r->retry_after = strspn(line + 12 + strspn(line + 12, " "), "0123456789") ?
				 atol(line + 12) : -1;
	else if (!strncasecmp(line, "content-type:", 13))
		r->protobuf = strstr(line, "protobuf") != NULL;
	return len;
}

/* A failed reply's words: a protobuf google.rpc.Status's message (2), as
 * OTLP/HTTP receivers send it, or the body's first line. */
static void reply_message(const struct reply *r, char *out, size_t size)
{
	struct lp_pb m = lp_pb__of(r->body, r->len);
	struct lp_pb_field f;
	int rc;
	out[0] = '\0';
	if (r->protobuf) {
		while ((rc = lp_pb__next(&m, &f)) > 0)
			if (f.number == 2 && f.wire == LP_PB_LEN)
				snprintf(out, size, "%.*s", (int)f.len, (const char *)f.data);
		return;
	}
	size_t n = strcspn(r->body, "\r\n");
	snprintf(out, size, "%.*s", (int)(n < r->len ? n : r->len), r->body);
}

/* OTLP's partial success in a 200's ExportProfilesServiceResponse:
 * partial_success (1): rejected_profiles (1), error_message (2).  The
 * number rejected; *msg its message. */
static int64_t rejected(const struct reply *r, char *msg, size_t size)
{
	struct lp_pb m = lp_pb__of(r->body, r->len), ps;
	struct lp_pb_field f;
	int64_t n = 0;
	msg[0] = '\0';
	while (lp_pb__next(&m, &f) > 0) {
		if (f.number != 1 || f.wire != LP_PB_LEN)
			continue;
		ps = lp_pb__of(f.data, f.len);
		while (lp_pb__next(&ps, &f) > 0) {
			if (f.number == 1 && f.wire == LP_PB_VARINT)
				n = (int64_t)f.value;
			else if (f.number == 2 && f.wire == LP_PB_LEN)
				snprintf(msg, size, "%.*s", (int)f.len, (const char *)f.data);
		}
	}
	return n;
}

/* One try: the transfer's code, and the HTTP status in *status. */
static CURLcode try_once(CURL *c, const struct lp_post_opts *o, const struct lp_request *q,
			 struct reply *r, long *status, char *err)
{
	curl_easy_reset(c);
	*r = (struct reply){ .retry_after = -1 };
	err[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, q->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, q->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, q->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "lp-push/" LP_VERSION);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(o->timeout_ns / 1000000));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->timeout_ns / 1000000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	CURLcode cc = curl_easy_perform(c);
	*status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (!err[0])
		snprintf(err, CURL_ERROR_SIZE, "%s", curl_easy_strerror(cc));
	return cc;
}

/* Failures that may pass: no connection (yet), a timeout, a connection
 * cut; and the statuses OTLP/HTTP calls retryable. */
static bool retryable(CURLcode cc, long status)
{
	switch (cc) {
	case CURLE_OK:
		return status == 429 || status == 502 || status == 503 || status == 504;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return true;
	default:
		return false;
	}
}

/* Before try n + 1: 0.5 s doubling, at most 30 s, a quarter either way
 * at random; the server's Retry-After (seconds) when it gave one. */
static void back_off(int n, const struct reply *r)
{
	double s = r->retry_after >= 0 ? (double)r->retry_after : 0.5 * (double)(1 << (n < 6 ? n : 6));
	if (s > 30)
		s = 30;
	if (r->retry_after < 0)
		s *= 0.75 + 0.5 * ((double)rand() / RAND_MAX);
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* What a reply that is no success says, as one message. */
static void report_failure(const struct lp_request *q, CURLcode cc, long status,
			   const struct reply *r, const char *err, int tries)
{
	char msg[MESSAGE_MAX + 1];
	char after[32] = "";
	if (tries > 1)
		snprintf(after, sizeof(after), " (after %d tries)", tries);
	if (cc != CURLE_OK) {
		lp_error("POST %s: %s%s", q->shown, err, after);
		return;
	}
	reply_message(r, msg, sizeof(msg));
	lp_error("POST %s: HTTP %ld%s%s%s%s%s", q->shown, status, r->reason[0] ? " " : "", r->reason,
		 msg[0] ? ": " : "", msg, after);
}

int lp_post(CURL *c, const struct lp_post_opts *o, const struct lp_request *q)
{
	static struct reply r;	/* 64 KiB: not on the stack */
	char err[CURL_ERROR_SIZE], msg[MESSAGE_MAX + 1];
	for (int n = 0;; n++) {
		long status;
		CURLcode cc = try_once(c, o, q, &r, &status, err);
		if (cc == CURLE_OK && status / 100 == 2) {
			int64_t rej = q->otlp ? rejected(&r, msg, sizeof(msg)) : 0;
			if (!q->otlp)
				msg[0] = '\0';
			if (o->verbose)
				lp_error("POST %s: HTTP %ld, %zu bytes (try %d)", q->shown, status, q->len,
					 n + 1);
			if (rej > 0 || msg[0])
				lp_error("POST %s: the receiver rejected %lld profiles%s%s", q->shown,
					 (long long)rej, msg[0] ? ": " : "", msg);
			return rej > 0 ? -1 : 0;
		}
		if (!retryable(cc, status) || n == o->retries) {
			report_failure(q, cc, status, &r, err, n + 1);
			return -1;
		}
		if (o->verbose && cc != CURLE_OK)
			lp_error("POST %s: %s, retrying", q->shown, err);
		else if (o->verbose)
			lp_error("POST %s: HTTP %ld, retrying", q->shown, status);
		back_off(n, &r);
	}
}
