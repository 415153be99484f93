/* stream.c - the input layer (stream.h): opens an input, recognises its
 * format from the first line that says something, and hands each line to
 * that format's codec (codec.h), reporting what the codec finds wrong with
 * the file and line.  Knows no format's text itself. */
#include "stream/stream.h"
#include "base/linereader.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_WARNINGS 10

/* Sniffed in this order; a first line none claims is perf script's, which
 * the script reads whatever it looks like. */
static const struct lp_codec *const codecs[] = {
	&lp_codec_lp, &lp_codec_folded, &lp_codec_perf,
};
#define NCODECS (sizeof(codecs) / sizeof(codecs[0]))

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

enum lp_input_format lp_option_input_format(const char *arg)
{
	int f = lp_input_format__parse(arg);

	if (f < 0)
		lp_option_fail("input-format", arg, "expected auto, lp, perf or folded");
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
	lp_error("%s:%llu: %s", r->name, (unsigned long long)lp_reader__lineno(r), msg);
}

/* The codec of a first line that says something, or NULL for a blank or
 * comment line, which says nothing yet. */
static const struct lp_codec *sniff(const char *line, size_t len)
{
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len || line[0] == '#')
		return NULL;
	for (size_t c = 0; c + 1 < NCODECS; c++)
		if (codecs[c]->sniff(line, len))
			return codecs[c];
	return codecs[NCODECS - 1];
}

int lp_reader__next(struct lp_reader *r, struct lp_record *rec)
{
	char *line;
	size_t len;
	int terminated, rc;

	if (r->failed)
		return -1;
	memset(rec, 0, sizeof(*rec));
	while ((rc = lp_linereader__next(r->lr, &line, &len, &terminated)) > 0) {
		if (len && line[len - 1] == '\r')	/* CRLF files read like LF ones */
			line[--len] = '\0';
		if (!r->codec) {
			if (!(r->codec = sniff(line, len)))
				continue;
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
