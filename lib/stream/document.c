/* document.c - inputs recognised from their first bytes, and those read
 * whole (document.h).  JSON is parsed by jansson (Debian's libjansson):
 * strict RFC 8259, with the line and column of an error. */
#include "stream/document.h"
#include "base/util.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static bool starts(const unsigned char *p, size_t n, const char *magic, size_t m)
{
	return n >= m && !memcmp(p, magic, m);
}

static size_t skip_space(const unsigned char *p, size_t n, size_t i)
{
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	return i;
}

/* Whether p[0..n) is text: UTF-8 without control bytes but tab, CR, LF
 * and FF; a sequence cut by the end of what was peeked is text. */
static bool is_text(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char b = p[i];
		if (b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f')
			return false;
		if (b == 0x7f)
			return false;
		if (b < 0x80) {
			i++;
			continue;
		}
		size_t need = b >= 0xf0 && b <= 0xf4 ? 3 : b >= 0xe0 ? 2 : b >= 0xc2 && b <= 0xdf ? 1 : 9;
		if (need == 9 || b > 0xf4)
			return false;
		for (size_t k = 1; k <= need; k++) {
			if (i + k >= n)
				return true;
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
		}
		i += need + 1;
	}
	return true;
}

/* The opening of a protocol buffer lp reads: pprof's sample_type (field 1,
 * a message whose own field 1 comes first: 0a LEN 08), nflxprofile's
 * start_time and end_time (doubles, fields 1 and 2: 09 ... 11).  No text
 * begins so: a blank line followed by a backspace, a tab whose ninth byte
 * is a control byte. */
static bool protobuf_opening(const unsigned char *p, size_t n)
{
	if (n >= 3 && p[0] == 0x0a && p[1] < 0x80 && p[2] == 0x08)
		return true;
	if (n >= 4 && p[0] == 0x0a && p[1] >= 0x80 && p[2] < 0x80 && p[3] == 0x08)
		return true;
	return n >= 10 && p[0] == 0x09 && p[9] == 0x11;
}

static const struct {
	const char *magic;
	size_t len;
	const char *what;
} magics[] = {
	{ "\x1f\x8b", 2, "gzip" },
	{ "\x7f" "ELF", 4, "an ELF file" },
	{ "PK\x03\x04", 4, "a zip archive" },
	{ "\xfd" "7zXZ", 5, "xz" },
	{ "BZh", 3, "bzip2" },
	{ "\x28\xb5\x2f\xfd", 4, "zstd" },
	{ "\x89PNG", 4, "a PNG image" },
	{ "%PDF", 4, "a PDF document" },
	{ "PERFILE2", 8, "perf.data" },
	{ "2ELIFREP", 8, "perf.data of a big-endian machine" },
	{ "SQLite format 3", 15, "an SQLite database" },
};
#define NMAGICS (sizeof(magics) / sizeof(magics[0]))

enum lp_doc_kind lp_doc__kind(const unsigned char *p, size_t n)
{
	if (starts(p, n, "\x1f\x8b", 2))
		return LP_DOC_GZIP;
	if (starts(p, n, "\x28\xb5\x2f\xfd", 4))
		return LP_DOC_ZSTD;
	for (size_t k = 0; k < NMAGICS; k++)
		if (starts(p, n, magics[k].magic, magics[k].len))
			return LP_DOC_BINARY;
	if (protobuf_opening(p, n))
		return LP_DOC_BINARY;
	size_t i = n >= 3 && starts(p, n, "\xef\xbb\xbf", 3) ? 3 : 0;	/* a BOM */
	i = skip_space(p, n, i);
	if (i < n && p[i] == '{')
		return LP_DOC_JSON;
	if (i < n && p[i] == '[') {
		/* folded stacks may begin "[unknown];..." */
		size_t j = skip_space(p, n, i + 1);
		if (j < n && (p[j] == '{' || p[j] == ']'))
			return LP_DOC_JSON;
	}
	/* Lines, or a document the line formats' sniffers do not claim. */
	return LP_DOC_TEXT;
}

bool lp_doc__is_text(const unsigned char *p, size_t n)
{
	return is_text(p, n);
}

const char *lp_doc__looks_like(const unsigned char *p, size_t n)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} texts[] = {
		{ "<?xml", 5, "XML" }, { "<svg", 4, "an SVG image" },
		{ "<!DOCTYPE", 9, "HTML" }, { "<html", 5, "HTML" },
	};
	for (size_t k = 0; k < NMAGICS; k++)
		if (starts(p, n, magics[k].magic, magics[k].len))
			return magics[k].what;
	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++)
		if (starts(p, n, texts[k].magic, texts[k].len))
			return texts[k].what;
	if (n >= 262 && !memcmp(p + 257, "ustar", 5))
		return "a tar archive";
	if (protobuf_opening(p, n))
		return "a protocol buffer";
	if (lp_doc__kind(p, n) == LP_DOC_JSON)
		return "JSON";
	if (!n)
		return "an empty input";
	return is_text(p, n < 4096 ? n : 4096) ? "text" : "binary data";
}

static int gunzip(const unsigned char *in, size_t n, size_t max, char **out, size_t *outlen,
		  const char **why)
{
	z_stream z = { 0 };
	if (inflateInit2(&z, 15 + 32) != Z_OK) {	/* +32: a gzip or zlib header */
		*why = "zlib cannot start";
		return -1;
	}
	size_t cap = n * 4 + 4096, len = 0;
	char *buf = lp_malloc(cap + 1);
	z.next_in = (unsigned char *)in;
	int rc = Z_OK;
	const unsigned char *end = in + n;
	while (z.next_in < end || rc != Z_STREAM_END) {
		if (len == cap) {
			if (cap >= max) {
				*why = "gunzipped, it is larger than lp reads whole";
				goto bad;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = lp_realloc(buf, cap + 1);
		}
		size_t left = (size_t)(end - z.next_in);
		z.avail_in = left > UINT32_MAX ? UINT32_MAX : (unsigned)left;
		size_t room = cap - len;
		z.avail_out = room > UINT32_MAX ? UINT32_MAX : (unsigned)room;
		z.next_out = (unsigned char *)buf + len;
		rc = inflate(&z, Z_NO_FLUSH);
		len = (size_t)((char *)z.next_out - buf);
		if (rc == Z_STREAM_END) {
			if (z.next_in == end)
				break;
			/* gzip -c a b > c: members one after the other */
			if (inflateReset(&z) != Z_OK) {
				*why = "zlib cannot go on to the next gzip member";
				goto bad;
			}
			continue;
		}
		if (rc == Z_BUF_ERROR && z.avail_in == 0 && z.next_in == end) {
			*why = "gzip data cut short";
			goto bad;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			*why = rc == Z_DATA_ERROR ? "damaged gzip data" : "gzip data lp cannot read";
			goto bad;
		}
	}
	inflateEnd(&z);
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
bad:
	inflateEnd(&z);
	free(buf);
	return -1;
}

int lp_doc__parse_json(struct lp_doc *doc, char *why, size_t whylen)
{
	json_error_t err;
	doc->json = json_loadb((const char *)doc->data, doc->len, JSON_ALLOW_NUL, &err);
	if (!doc->json) {
		snprintf(why, whylen, "%d:%d: not well-formed JSON: %s", err.line, err.column, err.text);
		return -1;
	}
	return 0;
}

void lp_doc__free_json(struct lp_doc *doc)
{
	json_decref(doc->json);
	doc->json = NULL;
}

void lp_doc__json_keys(const struct lp_doc *doc, char *out, size_t outlen)
{
	const char *key;
	json_t *v;
	size_t n = 0, at = 0;
	out[0] = '\0';
	if (!json_is_object(doc->json))
		return;
	json_object_foreach(doc->json, key, v) {
		if (n++ == 6) {
			snprintf(out + at, outlen - at, ", ...");
			return;
		}
		int w = snprintf(out + at, outlen - at, "%s%.40s", at ? ", " : "", key);
		if (w < 0 || (size_t)w >= outlen - at)
			return;
		at += (size_t)w;
	}
}

/* zstd frames one after the other (zstd -c a b > c), as zstd -d reads them. */
static int unzstd(const unsigned char *in, size_t n, size_t max, char **out, size_t *outlen,
		  const char **why)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	if (!z || ZSTD_isError(ZSTD_initDStream(z))) {
		ZSTD_freeDStream(z);
		*why = "libzstd cannot start";
		return -1;
	}
	size_t cap = n * 4 + 4096, rc = 0;
	char *buf = lp_malloc(cap + 1);
	ZSTD_inBuffer src = { in, n, 0 };
	ZSTD_outBuffer dst = { buf, cap, 0 };
	for (;;) {
		if (dst.pos == cap) {
			if (cap >= max) {
				*why = "decompressed, it is larger than lp reads whole";
				goto bad;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = lp_realloc(buf, cap + 1);
			dst.dst = buf;
			dst.size = cap;
		}
		rc = ZSTD_decompressStream(z, &dst, &src);
		if (ZSTD_isError(rc)) {
			static _Thread_local char msg[160];
			snprintf(msg, sizeof(msg), "damaged zstd data (%s)", ZSTD_getErrorName(rc));
			*why = msg;
			goto bad;
		}
		/* All read, and zstd wrote all it could: a frame ended (rc 0),
		 * or the data stop inside one. */
		if (src.pos == src.size && dst.pos < dst.size)
			break;
	}
	if (rc) {
		*why = "zstd data cut short";
		goto bad;
	}
	ZSTD_freeDStream(z);
	buf[dst.pos] = '\0';
	*out = buf;
	*outlen = dst.pos;
	return 0;
bad:
	ZSTD_freeDStream(z);
	free(buf);
	return -1;
}

int lp_doc__decompress(enum lp_doc_kind kind, const unsigned char *in, size_t n, size_t max,
		       char **out, size_t *outlen, const char **why)
{
	return kind == LP_DOC_ZSTD ? unzstd(in, n, max, out, outlen, why)
				   : gunzip(in, n, max, out, outlen, why);
}
