/* stream.c - the input layer (stream.h): opens an input, recognises its
 * format from its content (magic bytes, the keys of its JSON, the first
 * line that says something), and hands each line, or the whole document,
 * to that format's codec (codec.h), reporting what the codec finds wrong
 * with the file and line.  Knows no format's text itself. */
#include "stream/stream.h"
#include "base/linereader.h"
#include "base/util.h"
#include "stream/document.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_WARNINGS 10

/* Sniffed (line formats) or asked (documents) in this order: perf script's
 * event lines would take a bpftrace "Attaching 1 probe..." for theirs. */
static const struct lp_codec *const codecs[] = {
	&lp_codec_lp, &lp_codec_austin, &lp_codec_folded, &lp_codec_aggregation, &lp_codec_perf,
	&lp_codec_pprof, &lp_codec_cpuprofile, &lp_codec_speedscope, &lp_codec_chrometrace,
	&lp_codec_gecko, &lp_codec_nflx, &lp_codec_perfdata,
};
#define NCODECS (sizeof(codecs) / sizeof(codecs[0]))

/* What is read whole, decompressed or not: bounded so that a gzip or zstd
 * bomb is an error, not the machine's memory. */
#define DOC_MAX ((size_t)8 << 30)
/* A first line longer than this, none claims: a document's bytes. */
#define FIRST_LINE_MAX ((size_t)16 << 20)

static const struct lp_input_opts no_opts;

struct lp_reader {
	char *name;
	struct lp_linereader *lr;
	enum lp_input_format format;
	const struct lp_codec *codec;	/* NULL while format is LP_INPUT_AUTO */
	void *dec;			/* the codec's, made at the first line */
	const struct lp_input_opts *opts;
	struct lp_dict *dict;
	uint64_t warnings;
	int failed;
	bool started;			/* lines or a document: decided */
	bool whole;			/* a document, read by open_doc */
	struct lp_doc doc;
	char *bytes;			/* the document's */
};

static const struct lp_codec *codec_of(enum lp_input_format format)
{
	for (size_t i = 0; i < NCODECS; i++)
		if (codecs[i]->format == format)
			return codecs[i];
	return NULL;
}

int lp_input_format__parse(const char *name)
{
	if (!strcmp(name, "auto"))
		return LP_INPUT_AUTO;
	for (size_t i = 0; i < NCODECS; i++)
		if (!strcmp(name, codecs[i]->name))
			return (int)codecs[i]->format;
	return -1;
}

const char *lp_codec__why(char *buf, size_t len, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(buf, len, "%s", msg);
	return buf;
}

const char *lp_input_format__name(enum lp_input_format format)
{
	const struct lp_codec *c = codec_of(format);
	return c ? c->name : "auto";
}

enum lp_input_format lp_option_input_format(const char *arg)
{
	int f = lp_input_format__parse(arg);

	if (f < 0) {
		char names[256] = "expected auto";
		size_t left = NCODECS;
		for (int g = LP_INPUT_AUTO + 1; left; g++)	/* in the enum's order */
			if (codec_of((enum lp_input_format)g))
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s %s", --left ? "," : " or",
					 codec_of((enum lp_input_format)g)->name);
		lp_option_fail("input-format", arg, names);
	}
	return (enum lp_input_format)f;
}

struct lp_reader *lp_reader__open_opts(const char *path, enum lp_input_format format,
				       const struct lp_input_opts *opts)
{
	int fd;
	if (!strcmp(path, "-")) {
		fd = dup(STDIN_FILENO);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		lp_error_errno("%s", path);
		return NULL;
	}
	struct lp_reader *r = lp_calloc(1, sizeof(*r));
	r->name = lp_strdup(strcmp(path, "-") ? path : "<stdin>");
	r->lr = lp_linereader__new(fd);
	r->format = format;
	r->codec = codec_of(format);
	r->opts = opts ? opts : &no_opts;
	r->dict = lp_dict__new();
	return r;
}

void lp_reader__free(struct lp_reader *r)
{
	if (!r)
		return;
	if (r->warnings > MAX_WARNINGS)
		lp_error("%s: %llu lines skipped in all", r->name,
			 (unsigned long long)r->warnings);
	lp_linereader__free(r->lr);
	if (r->dec)
		r->codec->close(r->dec);
	lp_doc__free_json(&r->doc);
	free(r->bytes);
	lp_dict__free(r->dict);
	free(r->name);
	free(r);
}

enum lp_input_format lp_reader__format(const struct lp_reader *r) { return r->format; }
struct lp_dict *lp_reader__dict(struct lp_reader *r) { return r->dict; }
const char *lp_reader__name(const struct lp_reader *r) { return r->name; }
uint64_t lp_reader__lineno(const struct lp_reader *r) { return lp_linereader__lineno(r->lr); }

void lp_reader__error(const struct lp_reader *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->whole)
		lp_error("%s: %s", r->name, msg);
	else
		lp_error("%s:%llu: %s", r->name, (unsigned long long)lp_reader__lineno(r), msg);
}

/* The codec of a first line that says something, NULL for a blank or
 * comment line, which says nothing yet; a line none claims is an error
 * (*refused), but for a frame line perf script may begin with. */
static const struct lp_codec *sniff(const char *line, size_t len, bool *refused)
{
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len)
		return NULL;
	if (line[0] == '#') {
		for (size_t c = 0; c < NCODECS; c++)
			if (codecs[c]->comments && codecs[c]->sniff(line, len))
				return codecs[c];
		return NULL;
	}
	for (size_t c = 0; c < NCODECS; c++)
		if (codecs[c]->sniff && codecs[c]->sniff(line, len))
			return codecs[c];
	/* "\t    55d0c0ffee12 main+0x12 (/usr/bin/prog)": a sample's head cut off */
	if (i > 0 && i < len && strchr("0123456789abcdefABCDEF", line[i]))
		return &lp_codec_perf;
	*refused = true;
	return NULL;
}

static int fail(struct lp_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct lp_reader *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lp_error("%s: %s", r->name, msg);
	r->failed = 1;
	return -1;
}

static int first_line_is_text(const unsigned char *p, size_t n, bool at_end);

/* An input read whole: gunzipped, parsed when JSON, and opened by the
 * codec forced or the first that claims it. */
static int start_document(struct lp_reader *r)
{
	char *data;
	size_t len;
	int rc = lp_linereader__slurp(r->lr, DOC_MAX, &data, &len);
	if (rc < 0)
		return fail(r, "%s", errno == EFBIG ? "larger than lp reads whole" : strerror(errno));
	if (rc == 0)
		return 0;
	r->whole = true;
	r->bytes = data;
	const char *why = NULL;
	enum lp_doc_kind kind = lp_doc__kind((unsigned char *)data, len);
	if (kind == LP_DOC_GZIP || kind == LP_DOC_ZSTD) {
		char *plain;
		size_t plen;
		if (lp_doc__decompress(kind, (unsigned char *)data, len, DOC_MAX, &plain, &plen,
				       &why) < 0)
			return fail(r, "%s", why);
		free(r->bytes);
		r->bytes = data = plain;
		len = plen;
		r->doc.compressed = kind == LP_DOC_GZIP ? "gzipped" : "zstd-compressed";
		kind = lp_doc__kind((unsigned char *)data, len);
		if ((!r->codec || !r->codec->open_doc) && kind == LP_DOC_TEXT &&
		    (r->codec || first_line_is_text((unsigned char *)data, len, true) == 1)) {
			/* compressed text: read as lines */
			lp_linereader__free(r->lr);
			r->lr = lp_linereader__new_mem(data, len);
			r->bytes = NULL;
			r->whole = false;
			return 1;
		}
	}
	r->doc.data = (unsigned char *)data;
	r->doc.len = len;
	if (kind == LP_DOC_JSON) {
		char msg[512];
		if (lp_doc__parse_json(&r->doc, msg, sizeof(msg)) < 0) {
			lp_error("%s:%s", r->name, msg);	/* FILE:LINE:COLUMN: ... */
			r->failed = 1;
			return -1;
		}
	}
	if (!r->codec) {
		for (size_t c = 0; c < NCODECS && !r->codec; c++)
			if (codecs[c]->claims && codecs[c]->claims(&r->doc))
				r->codec = codecs[c];
		if (!r->codec) {
			char keys[256] = "";
			lp_doc__json_keys(&r->doc, keys, sizeof(keys));
			return fail(r, "not a format lp reads (it looks like %s%s%s%s%s)",
				    r->doc.compressed ? r->doc.compressed : "",
				    r->doc.compressed ? " " : "",
				    lp_doc__looks_like(r->doc.data, len), *keys ? " with keys " : "", keys);
		}
		r->format = r->codec->format;
	}
	if (!r->codec->open_doc)
		return fail(r, "%s is read line by line, and this is %s", r->codec->name,
			    lp_doc__looks_like(r->doc.data, len));
	r->dec = r->codec->open_doc(r->dict, &r->doc, r->opts);
	return 1;
}

/* Whether the first line that says something, in p[0..n), is one a line
 * format reads: 1 (or text none reads, which the line path refuses with
 * its line); 0: bytes no text format has (a document); -1: no such line
 * complete yet. */
static int first_line_is_text(const unsigned char *p, size_t n, bool at_end)
{
	for (size_t at = 0; at < n;) {
		const unsigned char *nl = memchr(p + at, '\n', n - at);
		if (!nl && !at_end)
			return -1;
		size_t len = (nl ? (size_t)(nl - p) : n) - at;
		/* the sniffers want a string: a copy, NUL-terminated */
		char *line = lp_malloc(len + 1);
		memcpy(line, p + at, len);
		line[len] = '\0';
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		bool refused = false;
		int text = sniff(line, len, &refused) ? 1 : refused ? lp_doc__is_text(p + at, len) : -1;
		free(line);
		if (text >= 0)
			return text;
		at = nl ? (size_t)(nl - p) + 1 : n;
	}
	return at_end ? 1 : -1;
}

/* Decides, from the first bytes (and the first line that says something),
 * whether the input is lines or a document.  1, 0 at the end (or a stop),
 * -1 on an error said. */
static int start(struct lp_reader *r)
{
	const unsigned char *p;
	size_t n, want = 1;
	for (;;) {
		int rc = lp_linereader__peek(r->lr, want, &p, &n);
		if (rc < 0)
			return fail(r, "read error: %s", strerror(errno));
		if (rc == 0 || n == 0)
			return 0;
		bool at_end = n < want;
		r->started = true;
		if ((r->codec && r->codec->open_doc) || lp_doc__kind(p, n) != LP_DOC_TEXT)
			return start_document(r);
		if (r->codec)
			return 1;
		int text = first_line_is_text(p, n, at_end);
		if (text == 1)
			return 1;
		if (text == 0 || n >= FIRST_LINE_MAX)
			return start_document(r);
		r->started = false;
		want = n + 1;
	}
}

int lp_reader__next(struct lp_reader *r, struct lp_record *rec)
{
	char *line;
	size_t len;
	int terminated, rc;

	if (r->failed)
		return -1;
	memset(rec, 0, sizeof(*rec));
	if (!r->started && (rc = start(r)) <= 0)
		return rc;
	if (r->whole) {
		const char *why = NULL;
		rc = r->codec->next_doc(r->dec, rec, &why);
		if (rc == LP_CODEC_BAD || rc < 0) {
			lp_reader__error(r, "%s: %s", r->codec->name, why ? why : "not well-formed");
			r->failed = 1;
			return -1;
		}
		return rc;
	}
	while ((rc = lp_linereader__next(r->lr, &line, &len, &terminated)) > 0) {
		if (len && line[len - 1] == '\r')	/* CRLF files read like LF ones */
			line[--len] = '\0';
		if (!r->codec) {
			bool refused = false;
			if (!(r->codec = sniff(line, len, &refused))) {
				if (!refused)
					continue;
				const char *what = lp_doc__looks_like((unsigned char *)line, len);
				if (strcmp(what, "text"))
					lp_reader__error(r, "not a format lp reads (it looks like %s)", what);
				else
					lp_reader__error(r, "not a format lp reads (it looks like text: '%.60s%s')",
							 line, len > 60 ? "..." : "");
				r->failed = 1;
				return -1;
			}
			r->format = r->codec->format;
		}
		if (!r->dec)
			r->dec = r->codec->open(r->dict, r->opts);
		const char *why = NULL;
		rc = r->codec->next(r->dec, line, len, terminated, rec, &why);
		if (rc > 0)
			return 1;
		if (rc == LP_CODEC_SKIP) {
			if (++r->warnings <= MAX_WARNINGS)
				lp_reader__error(r, "skipped: %s", why ? why : "not understood");
			/* what was skipped is said in the stream too */
			memset(rec, 0, sizeof(*rec));
			rec->kind = LP_REC_LOST;
			rec->lost = (struct lp_lost){ LP_TIME_NONE, "unreadable", 1 };
			return 1;
		} else if (rc < 0) {
			lp_reader__error(r, "%s", why ? why : "bad line");
			r->failed = 1;
			return -1;
		}
	}
	if (rc < 0) {
		lp_error_errno("%s: read error", r->name);
		r->failed = 1;
		return -1;
	}
	return 0;
}
