/* stackcopy.c - the text of copied user stacks and of the map records they
 * are unwound with (stackcopy.h, formats/lp-stream.md).  Base64 rather
 * than hex for the copy: a sample's copy is up to 64 KiB (perf record
 * --call-graph dwarf's default is 8 KiB), and it is most of the stream's
 * bytes; base64 needs no escape in an attribute ('=' only ends the key, the
 * first one). */
#include "stream/stackcopy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define MAP_KIND "map"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* --- writing ------------------------------------------------------------ */

void lp_stackcopy__add_regs(struct lp_attrs_buf *b, const char *const *names,
			    const uint64_t *values, size_t n)
{
	/* "uregs=" and, a register, its name (at most 5 bytes), ':', 16 hex
	 * digits and ',' */
	char *text = lp_malloc(6 + n * 24 + 1);
	size_t len = 0;

	len += (size_t)sprintf(text, "uregs=");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%s%.5s:%" PRIx64, i ? "," : "", names[i],
				       values[i]);
	lp_attrs_buf__raw(b, text, len);
	free(text);
}

void lp_stackcopy__add_stack(struct lp_attrs_buf *b, const unsigned char *p, size_t len)
{
	char *text = lp_malloc(7 + (len + 2) / 3 * 4 + 1), *d = text;

	memcpy(d, "ustack=", 7);
	d += 7;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < len ? p[i + 2] : 0);
		*d++ = b64[v >> 18];
		*d++ = b64[v >> 12 & 63];
		*d++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*d++ = i + 2 < len ? b64[v & 63] : '=';
	}
	lp_attrs_buf__raw(b, text, (size_t)(d - text));
	free(text);
}

/* s escaped as a field is (lp_escape; "" and "-" as the writer says them). */
static void put_field(char **buf, size_t *cap, size_t *len, const char *s)
{
	size_t n = strlen(s);

	lp_grow(buf, cap, *len + 4 * n + 8);
	(*buf)[(*len)++] = '\t';
	if (!n || !strcmp(s, "-")) {
		memcpy(*buf + *len, n ? "\\x2d" : "-", n ? 4 : 1);
		*len += n ? 4 : 1;
	} else {
		*len += lp_escape(*buf + *len, s, n);
	}
}

size_t lp_maprec__format(const struct lp_maprec *m, char **buf, size_t *cap)
{
	size_t len;
	char head[128];

	if (m->time_ns == LP_TIME_NONE)
		snprintf(head, sizeof(head), MAP_KIND "\t-\t%" PRId32 "\t0x%" PRIx64 "\t0x%" PRIx64
			 "\t0x%" PRIx64, m->pid, m->start, m->end, m->bias);
	else
		snprintf(head, sizeof(head), MAP_KIND "\t%" PRId64 "\t%" PRId32 "\t0x%" PRIx64
			 "\t0x%" PRIx64 "\t0x%" PRIx64, m->time_ns, m->pid, m->start, m->end, m->bias);
	len = strlen(head);
	lp_grow(buf, cap, len + 1);
	memcpy(*buf, head, len);
	put_field(buf, cap, &len, m->module);
	if (m->build_id && *m->build_id) {
		size_t n = strlen(m->build_id);

		lp_grow(buf, cap, len + 11 + 4 * n);
		memcpy(*buf + len, "\tbuild_id=", 10);
		len += 10;
		len += lp_escape(*buf + len, m->build_id, n);
	}
	(*buf)[len] = '\0';
	return len;
}

/* --- reading ------------------------------------------------------------ */

bool lp_maprec__is(const char *line, size_t len)
{
	return len > 4 && !memcmp(line, MAP_KIND "\t", 4);
}

/* A field's number: decimal, or 0x and hex; false when it is not one. */
static bool number(const char *s, size_t n, int base, uint64_t *out)
{
	uint64_t v = 0;

	if (base == 16) {
		if (n < 3 || s[0] != '0' || s[1] != 'x')
			return false;
		s += 2;
		n -= 2;
	}
	if (!n || n > (base == 16 ? 16u : 19u))
		return false;
	for (size_t i = 0; i < n; i++) {
		int d = base == 16 ? lp_hexval(s[i]) : s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1;

		if (d < 0)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return true;
}

int lp_maprec__parse(const char *line, size_t len, struct lp_maprec *m, char **buf,
		     size_t *cap, const char **why)
{
	const char *f[7], *end = line + len, *p = line;
	size_t fl[7];
	uint64_t v;

	/* map TIME PID START END BIAS MODULE, then attributes */
	for (int i = 0; i < 7; i++) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));

		if (!tab && i < 6)
			return *why = "map: too few fields", -1;
		f[i] = p;
		fl[i] = (size_t)((tab ? tab : end) - p);
		p = tab ? tab + 1 : end;
	}
	struct lp_attrs attrs = { p, (size_t)(end - p) };
	*m = (struct lp_maprec){ .time_ns = LP_TIME_NONE };
	if (!(fl[1] == 1 && f[1][0] == '-')) {
		if (!number(f[1], fl[1], 10, &v) || v > INT64_MAX)
			return *why = "map: bad time", -1;
		m->time_ns = (int64_t)v;
	}
	if (!number(f[2], fl[2], 10, &v) || v > INT32_MAX)
		return *why = "map: bad pid", -1;
	m->pid = (int32_t)v;
	if (!number(f[3], fl[3], 16, &m->start) || !number(f[4], fl[4], 16, &m->end) ||
	    m->end < m->start)
		return *why = "map: bad address range", -1;
	if (!number(f[5], fl[5], 16, &m->bias))
		return *why = "map: bad bias", -1;
	/* The module, then the build-id, NUL-separated in *buf. */
	size_t id_len = 0;
	const char *id = lp_attrs__raw(&attrs, "build_id", 8, &id_len);
	lp_grow(buf, cap, fl[6] + id_len + 2);
	size_t n = fl[6] == 1 && f[6][0] == '-' ? 0 : lp_unescape(*buf, f[6], fl[6]);
	(*buf)[n] = '\0';
	if (!n)
		return *why = "map: no module", -1;
	size_t k = id ? lp_unescape(*buf + n + 1, id, id_len) : 0;
	(*buf)[n + 1 + k] = '\0';
	m->module = *buf;
	m->build_id = *buf + n + 1;
	return 0;
}

/* Each byte's base64 value plus one, 0 for the others: a copy is most of
 * a stream's bytes, decoded a byte at a time. */
static unsigned char b64_value1[256];

static int b64_value(char c)
{
	if (!b64_value1['A'])
		for (int i = 0; i < 64; i++)
			b64_value1[(unsigned char)b64[i]] = (unsigned char)(i + 1);
	return (int)b64_value1[(unsigned char)c] - 1;
}

/* Decodes n base64 characters into c->buf: false when they are not
 * base64 (a length that is no multiple of 4, a stray character). */
static bool decode(struct lp_stackcopy *c, const char *s, size_t n)
{
	size_t len = 0;

	if (n % 4)
		return false;
	if (n / 4 * 3 > c->cap) {
		c->cap = n / 4 * 3;
		c->buf = lp_realloc(c->buf, c->cap);
	}
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;

		for (int j = 0; j < 4; j++) {
			v[j] = b64_value(s[i + j]);
			if (s[i + j] == '=' && i + 4 == n && j >= 2 && (j == 3 || s[i + 3] == '='))
				v[j] = 0, pad++;
			else if (v[j] < 0)
				return false;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		c->buf[len++] = (unsigned char)(w >> 16);
		if (pad < 2)
			c->buf[len++] = (unsigned char)(w >> 8);
		if (pad < 1)
			c->buf[len++] = (unsigned char)w;
	}
	c->stack = c->buf;
	c->len = len;
	return true;
}

/* uregs=NAME:HEX,...: the registers an unwinder starts from. */
static bool read_regs(struct lp_stackcopy *c, const char *s, size_t n)
{
	const char *end = s + n;

	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s)), *fend = comma ? comma : end;
		const char *colon = memchr(s, ':', (size_t)(fend - s));
		uint64_t v = 0;

		if (!colon || fend - colon - 1 < 1 || fend - colon - 1 > 16)
			return false;
		for (const char *d = colon + 1; d < fend; d++) {
			if (lp_hexval(*d) < 0)
				return false;
			v = v << 4 | (uint64_t)lp_hexval(*d);
		}
		size_t nl = (size_t)(colon - s);
		if (nl == 2 && !memcmp(s, "ip", 2))
			c->ip = v, c->has_ip = true;
		else if (nl == 2 && !memcmp(s, "sp", 2))
			c->sp = v, c->has_sp = true;
		else if (nl == 2 && !memcmp(s, "bp", 2))
			c->bp = v, c->has_bp = true;
		s = comma ? comma + 1 : end;
	}
	return true;
}

int lp_stackcopy__read(const struct lp_attrs *attrs, struct lp_stackcopy *c, const char **why)
{
	size_t rn, sn;
	const char *regs = lp_attrs__raw(attrs, "uregs", 5, &rn);
	const char *stack = lp_attrs__raw(attrs, "ustack", 6, &sn);

	if (!regs || !stack)
		return 0;
	c->has_ip = c->has_sp = c->has_bp = false;
	c->ip = c->sp = c->bp = 0;
	if (!read_regs(c, regs, rn))
		return *why = "uregs: not NAME:HEX,...", -1;
	if (!decode(c, stack, sn))
		return *why = "ustack: not base64", -1;
	return 1;
}

void lp_stackcopy__strip(const struct lp_attrs *attrs, struct lp_attrs_buf *out)
{
	struct lp_attrs_iter it = LP_ATTRS_ITER(attrs);
	struct lp_attr a;

	lp_attrs_buf__reset(out);
	while (lp_attrs__next(&it, &a))
		if (!(a.key_len == 5 && !memcmp(a.key, "uregs", 5)) &&
		    !(a.key_len == 6 && !memcmp(a.key, "ustack", 6)))
			lp_attrs_buf__raw(out, a.field, a.field_len);
}

void lp_stackcopy__free(struct lp_stackcopy *c)
{
	free(c->buf);
	c->buf = NULL;
	c->cap = 0;
}
