/* attrs.c - attributes and the format's escapes (attrs.h). */
#include "stream/attrs.h"
#include "base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- escaping ------------------------------------------------------- */

static inline int needs_escape(unsigned char c)
{
	return c < 0x20 || c == '\\' || c == 0x7f;
}

/* Whether any of the 8 bytes in x needs escaping (< 0x20, '\\', 0x7f):
 * the usual "has a byte less than n" and "has a zero byte" word tricks,
 * exact about whether such a byte exists. */
static inline int word_needs_escape(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t bs = x ^ (ones * '\\'), del = x ^ (ones * 0x7f);
	return ((((x - ones * 0x20) & ~x) | ((bs - ones) & ~bs) | ((del - ones) & ~del)) & highs) != 0;
}

size_t lp_escape(char *dst, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i = 0;
	/* Most strings need no escaping: copy them a word at a time up to the
	 * first word that holds a byte to escape. */
	while (i + 8 <= len) {
		uint64_t x;
		memcpy(&x, src + i, 8);
		if (word_needs_escape(x))
			break;
		memcpy(dst + i, &x, 8);
		i += 8;
	}
	o = i;
	for (; i < len; i++) {
		unsigned char c = src[i];
		if (!needs_escape(c)) {
			dst[o++] = c;
			continue;
		}
		dst[o++] = '\\';
		switch (c) {
		case '\\': dst[o++] = '\\'; break;
		case '\t': dst[o++] = 't'; break;
		case '\n': dst[o++] = 'n'; break;
		case '\r': dst[o++] = 'r'; break;
		default:
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	return o;
}

/* Hex digit values plus one, 0 for other bytes: ids are parsed a digit at
 * a time on every record. */
const unsigned char lp_hex_digit1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

size_t lp_unescape(char *dst, const char *src, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (src[i] != '\\' || i + 1 == len) {
			dst[o++] = src[i];
			continue;
		}
		char c = src[++i];
		switch (c) {
		case '\\': dst[o++] = '\\'; break;
		case 't': dst[o++] = '\t'; break;
		case 'n': dst[o++] = '\n'; break;
		case 'r': dst[o++] = '\r'; break;
		case 'x':
			if (i + 2 < len && lp_hexval(src[i + 1]) >= 0 && lp_hexval(src[i + 2]) >= 0) {
				dst[o++] = (char)(lp_hexval(src[i + 1]) * 16 + lp_hexval(src[i + 2]));
				i += 2;
				break;
			}
			/* a lone "\x" stays as written */
			__attribute__((fallthrough));
		default:
			dst[o++] = '\\';
			dst[o++] = c;
		}
	}
	return o;
}

/* --- attributes ----------------------------------------------------- */

const char *lp_attr__value(const struct lp_attr *a, char **buf, size_t *cap, size_t *len)
{
	if (!a->value) {
		*len = 0;
		return "";
	}
	if (!memchr(a->value, '\\', a->value_len)) {
		*len = a->value_len;
		return a->value;
	}
	lp_grow(buf, cap, a->value_len);	/* unescaping never lengthens */
	*len = lp_unescape(*buf, a->value, a->value_len);
	return *buf;
}

const char *lp_attrs__raw(const struct lp_attrs *attrs, const char *key, size_t klen,
			 size_t *len)
{
	if (!attrs->len)
		return NULL;	/* (no attributes: text may be NULL) */
	const char *p = attrs->text, *end = attrs->text + attrs->len;
	while (p < end) {
		const char *tab = memchr(p, '\t', end - p);
		const char *fend = tab ? tab : end;
		if ((size_t)(fend - p) > klen && p[klen] == '=' && !memcmp(p, key, klen)) {
			*len = fend - (p + klen + 1);
			return p + klen + 1;
		}
		p = fend + 1;
	}
	return NULL;
}

ssize_t lp_attrs__get(const struct lp_attrs *attrs, const char *key, char **buf, size_t *cap)
{
	size_t vlen, n;
	const char *v = lp_attrs__raw(attrs, key, strlen(key), &vlen);
	if (!v)
		return -1;
	lp_grow(buf, cap, vlen + 1);	/* unescaping never lengthens */
	if (memchr(v, '\\', vlen)) {
		n = lp_unescape(*buf, v, vlen);
	} else {
		memcpy(*buf, v, vlen);
		n = vlen;
	}
	(*buf)[n] = '\0';
	return (ssize_t)n;
}

bool lp_attrs__value_i64(const char *v, size_t n, int64_t *out)
{
	bool neg = n && *v == '-';
	size_t i = neg;
	if (n <= i || n - i > 19)
		return false;
	uint64_t x = 0;
	for (; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');	/* 19 digits fit in 64 bits */
	}
	if (x > (uint64_t)INT64_MAX + neg)
		return false;
	*out = neg ? (int64_t)(0 - x) : (int64_t)x;
	return true;
}

bool lp_attrs__value_is(const char *v, size_t vlen, const char *value)
{
	size_t want = strlen(value);
	if (vlen < want)	/* escaping only lengthens */
		return false;
	if (!memchr(v, '\\', vlen))
		return vlen == want && !memcmp(v, value, want);
	char *tmp = lp_malloc(vlen);
	size_t n = lp_unescape(tmp, v, vlen);
	bool same = n == want && !memcmp(tmp, value, want);
	free(tmp);
	return same;
}

bool lp_attrs__is(const struct lp_attrs *attrs, const char *key, const char *value)
{
	size_t vlen;
	const char *v = lp_attrs__raw(attrs, key, strlen(key), &vlen);
	return v && lp_attrs__value_is(v, vlen, value);
}


/* Room for more bytes and a NUL after b->len; where they go. */
static char *room(struct lp_attrs_buf *b, size_t more)
{
	if (b->len + more + 1 > b->cap) {
		b->cap = (b->len + more + 1) * 2;
		b->text = lp_realloc(b->text, b->cap);
	}
	return b->text + b->len;
}

int lp_attrs_buf__addn(struct lp_attrs_buf *b, const char *key, size_t klen,
		       const char *value, size_t vlen)
{
	size_t need = b->len + 1 + klen + 1 + 4 * vlen + 1;
	if (need > b->cap) {
		b->cap = need * 2;
		b->text = lp_realloc(b->text, b->cap);
	}
	if (b->len)
		b->text[b->len++] = '\t';
	memcpy(b->text + b->len, key, klen);
	b->len += klen;
	b->text[b->len++] = '=';
	b->len += lp_escape(b->text + b->len, value, vlen);
	b->text[b->len] = '\0';
	return 0;
}

int lp_attrs_buf__add(struct lp_attrs_buf *b, const char *key, const char *value)
{
	return lp_attrs_buf__addn(b, key, strlen(key), value, strlen(value));
}

int lp_attrs_buf__raw(struct lp_attrs_buf *b, const char *field, size_t len)
{
	char *d = room(b, 1 + len), *d0 = d;
	if (b->len)
		*d++ = '\t';
	memcpy(d, field, len);
	d += len;
	*d = '\0';
	b->len += (size_t)(d - d0);
	return 0;
}

int lp_attrs_buf__add_i64(struct lp_attrs_buf *b, const char *key, size_t klen, int64_t v)
{
	/* digits need no escaping: written once, not formatted and measured */
	char num[24], *p = num + sizeof(num);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	size_t n = (size_t)(num + sizeof(num) - p);
	char *d = room(b, 1 + klen + 1 + n), *d0 = d;
	if (b->len)
		*d++ = '\t';
	memcpy(d, key, klen);
	d += klen;
	*d++ = '=';
	memcpy(d, p, n);
	d += n;
	*d = '\0';
	b->len += (size_t)(d - d0);
	return 0;
}

/* Whether a value as written is as lp_escape writes it: no backslash and
 * no byte it rewrites, so that unescaping and escaping again give it back. */
static bool canonical(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (needs_escape((unsigned char)v[i]))
			return false;
	return true;
}

int lp_attrs_buf__add_attr(struct lp_attrs_buf *b, const char *prefix, const struct lp_attr *a)
{
	size_t plen = prefix ? strlen(prefix) + 1 : 0;
	if (!a->value || canonical(a->value, a->value_len)) {
		/* the common case: "PREFIX.KEY=VALUE" copied as it was written */
		char *d = room(b, 1 + plen + a->field_len), *d0 = d;
		if (b->len)
			*d++ = '\t';
		if (plen) {
			memcpy(d, prefix, plen - 1);
			d[plen - 1] = '.';
			d += plen;
		}
		memcpy(d, a->field, a->field_len);
		d += a->field_len;
		*d = '\0';
		b->len += (size_t)(d - d0);
		return 0;
	}
	/* escaped as lp_escape escapes: "\q" (no escape of the format's)
	 * becomes "\\q", which reads back as the same "\q" */
	char *v = lp_strndup(a->value, a->value_len), *k = lp_malloc(plen + a->key_len + 1);
	size_t vn = lp_unescape(v, v, a->value_len);
	if (plen) {
		memcpy(k, prefix, plen - 1);
		k[plen - 1] = '.';
	}
	memcpy(k + plen, a->key, a->key_len);
	lp_attrs_buf__addn(b, k, plen + a->key_len, v, vn);
	free(k);
	free(v);
	return 0;
}

void lp_attrs_buf__set(struct lp_attrs_buf *b, const struct lp_attrs *a)
{
	b->len = 0;
	memcpy(room(b, a->len), a->text, a->len);
	b->len = a->len;
	b->text[b->len] = '\0';
}

void lp_attrs_buf__producer_keys(struct lp_attrs_buf *b)
{
	struct timespec mono, real;
	char host[256], num[32];

	if (gethostname(host, sizeof(host)) < 0 || !host[0])
		strcpy(host, "-");
	host[sizeof(host) - 1] = '\0';
	/* The realtime offset of the monotonic clock, read as close together
	 * as two vDSO calls allow. */
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	int64_t off = (int64_t)(real.tv_sec - mono.tv_sec) * 1000000000LL +
		      (real.tv_nsec - mono.tv_nsec);
	snprintf(num, sizeof(num), "%lld", (long long)off);
	lp_attrs_buf__add(b, "clock", "monotonic");
	lp_attrs_buf__add(b, "host", host);
	lp_attrs_buf__add(b, "realtime_offset_ns", num);
}

void lp_attrs_buf__reset(struct lp_attrs_buf *b)
{
	b->len = 0;
	if (b->text)
		b->text[0] = '\0';
}

void lp_attrs_buf__free(struct lp_attrs_buf *b)
{
	free(b->text);
	b->text = NULL;
	b->len = b->cap = 0;
}

