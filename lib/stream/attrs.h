/* attrs.h - the lp stream's attributes (formats/lp-stream.md): the
 * tab-separated "key=value" fields after a record's fixed ones, each value
 * escaped as the format says.  The one place that knows the escapes: every
 * program reads attributes with the iterator or lookups below and builds
 * them with lp_attrs_buf. */
#ifndef LP_ATTRS_H
#define LP_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "model/record.h"

/* Escaping of one field: \\ \t \n \r and other control bytes as \xHH. */
size_t lp_escape(char *dst, const char *src, size_t len);	/* dst holds 4*len bytes */
size_t lp_unescape(char *dst, const char *src, size_t len);	/* in place is fine */

/* Hex digit values plus one, 0 for other bytes (ids are read a digit at a
 * time on every record). */
extern const unsigned char lp_hex_digit1[256];
static inline int lp_hexval(char c)
{
	return (int)lp_hex_digit1[(unsigned char)c] - 1;
}

/* --- reading ------------------------------------------------------------ */

/* Looks "key" up in attrs and puts its unescaped value, NUL-terminated, in
 * *buf, which grows to fit (lp_grow): a value may be any length.  *buf and
 * *cap start NULL and 0, are kept from call to call, and the caller frees
 * *buf.  Returns the value's length, or -1 when the key is absent. */
ssize_t lp_attrs__get(const struct lp_attrs *attrs, const char *key, char **buf, size_t *cap);
/* The value of key (klen bytes) as written, escaped, and its length in
 * *len; NULL when the key is absent.  No copy: for the hot paths. */
const char *lp_attrs__raw(const struct lp_attrs *attrs, const char *key, size_t klen,
			 size_t *len);
/* Whether attrs has "key" and its unescaped value is exactly value. */
bool lp_attrs__is(const struct lp_attrs *attrs, const char *key, const char *value);
/* Whether a value as written (lp_attrs__raw's) unescapes to exactly value. */
bool lp_attrs__value_is(const char *v, size_t vlen, const char *value);
/* A value as written (lp_attrs__raw's) that is a plain decimal int64, as
 * lp's programs write times and counts, into *out: read without strtoll,
 * any int64 (19 digits), refusing what overflows rather than wrapping. */
bool lp_attrs__value_i64(const char *v, size_t n, int64_t *out);

/* Every field in turn, as written:
 *
 *	struct lp_attrs_iter it = LP_ATTRS_ITER(&attrs);
 *	struct lp_attr a;
 *	while (lp_attrs__next(&it, &a)) ...
 *
 * a.key and a.value point into the text (not NUL-terminated, value still
 * escaped: lp_attr__value unescapes it).  A field without '=' has key the
 * whole field and value NULL; an empty field (two tabs) is skipped. */
struct lp_attr {
	const char *field, *key, *value;
	size_t field_len, key_len, value_len;
};
struct lp_attrs_iter {
	const char *p, *end;
};
#define LP_ATTRS_ITER(a) ((struct lp_attrs_iter){ (a)->text, (a)->text + (a)->len })
/* Inline: trace-event output calls it for every attribute of every sample. */
static inline bool lp_attrs__next(struct lp_attrs_iter *it, struct lp_attr *a)
{
	while (it->p < it->end) {
		const char *p = it->p, *tab = memchr(p, '\t', (size_t)(it->end - p));
		const char *fend = tab ? tab : it->end;
		it->p = tab ? tab + 1 : it->end;
		if (fend == p)
			continue;
		const char *eq = memchr(p, '=', (size_t)(fend - p));
		a->field = a->key = p;
		a->field_len = (size_t)(fend - p);
		a->key_len = (size_t)((eq ? eq : fend) - p);
		a->value = eq ? eq + 1 : NULL;
		a->value_len = eq ? (size_t)(fend - eq - 1) : 0;
		return true;
	}
	return false;
}
/* The field's value unescaped, *len bytes, not NUL-terminated: the text
 * itself when it holds no escape, else a copy in *buf (lp_grow: NULL and 0
 * at first, kept from call to call, freed by the caller).  "" for a field
 * without '='. */
const char *lp_attr__value(const struct lp_attr *a, char **buf, size_t *cap, size_t *len);

/* --- building ----------------------------------------------------------- */

/* A list of attributes being built: text as a record carries it. */
struct lp_attrs_buf {
	char *text;
	size_t len, cap;
};
/* Appends key=value, escaping value (tab-separated from what is there). */
int lp_attrs_buf__add(struct lp_attrs_buf *buf, const char *key, const char *value);
/* The same with a value of vlen bytes, which may hold any byte. */
int lp_attrs_buf__addn(struct lp_attrs_buf *buf, const char *key, size_t klen,
		       const char *value, size_t vlen);
/* Appends a field as written (already escaped: one another stream carried). */
int lp_attrs_buf__raw(struct lp_attrs_buf *buf, const char *field, size_t len);
/* Appends key=v in decimal. */
int lp_attrs_buf__add_i64(struct lp_attrs_buf *buf, const char *key, size_t klen, int64_t v);
/* Appends an attribute read from a stream (lp_attrs__next) as
 * "PREFIX.KEY=VALUE" (prefix NULL: "KEY=VALUE"), its value escaped as
 * lp_escape escapes: as it was written when it already was. */
int lp_attrs_buf__add_attr(struct lp_attrs_buf *buf, const char *prefix,
			   const struct lp_attr *a);
/* Replaces the buffer's text by a's. */
void lp_attrs_buf__set(struct lp_attrs_buf *buf, const struct lp_attrs *a);
/* The header keys every producer writes, read now: clock=monotonic, host=,
 * realtime_offset_ns=.  The producer adds its own keys after them. */
void lp_attrs_buf__producer_keys(struct lp_attrs_buf *buf);
void lp_attrs_buf__reset(struct lp_attrs_buf *buf);
void lp_attrs_buf__free(struct lp_attrs_buf *buf);
static inline struct lp_attrs lp_attrs_buf__attrs(const struct lp_attrs_buf *buf)
{
	struct lp_attrs a = { buf->len ? buf->text : "", buf->len };
	return a;
}

#endif
