/* document.h - what an input's first bytes say it is, and the inputs read
 * whole: gunzipped or zstd-decompressed, parsed as JSON, handed to the codec that claims them
 * (codec.h's open_doc).  The input layer's (stream.c) helper. */
#ifndef LP_DOCUMENT_H
#define LP_DOCUMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "stream/codec.h"

enum lp_doc_kind {
	LP_DOC_TEXT,	/* lines: read by a line codec */
	LP_DOC_JSON,	/* '{', or '[' then '{' or ']' */
	LP_DOC_GZIP,
	LP_DOC_ZSTD,
	LP_DOC_BINARY,	/* control bytes or ill-formed UTF-8: protobuf, perf.data, ... */
};

/* The kind of the n first bytes of an input: LP_DOC_TEXT when nothing in
 * them says otherwise. */
enum lp_doc_kind lp_doc__kind(const unsigned char *p, size_t n);
/* Whether p[0..n) is UTF-8 text without control bytes but tab, CR, LF, FF. */
bool lp_doc__is_text(const unsigned char *p, size_t n);
/* What the bytes look like, for a message: "gzip", "ELF", "a zip archive",
 * "JSON", "text", "binary data", ... */
const char *lp_doc__looks_like(const unsigned char *p, size_t n);

/* The bytes of a gzip member (or several), or of zstd frames (kind: which),
 * in *out (malloc'd, NUL after the end), at most max: 0, or -1 with *why. */
int lp_doc__decompress(enum lp_doc_kind kind, const unsigned char *in, size_t n, size_t max,
		       char **out, size_t *outlen, const char **why);

/* doc->json from doc's bytes: 0, or -1 with "LINE:COLUMN: what" in why. */
int lp_doc__parse_json(struct lp_doc *doc, char *why, size_t whylen);
void lp_doc__free_json(struct lp_doc *doc);
/* The first top-level keys of a JSON object, "a, b, c", for saying what
 * it is not; "" when doc is no object. */
void lp_doc__json_keys(const struct lp_doc *doc, char *out, size_t outlen);

#endif
