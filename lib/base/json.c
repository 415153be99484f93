/* json.c - JSON strings and numbers for lp's writers (see json.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"

static const char hexdigits[] = "0123456789abcdef";

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when the bytes
 * there are ill-formed; *bad is then the length of the maximal subpart to
 * replace with one U+FFFD (WHATWG "UTF-8 decode", Unicode 3.9 best practice). */
static size_t utf8_seq(const unsigned char *s, size_t avail, size_t *bad)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf) {
		need = 1;
	} else if (b >= 0xe0 && b <= 0xef) {
		need = 2;
		if (b == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (b == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (b >= 0xf0 && b <= 0xf4) {
		need = 3;
		if (b == 0xf0)
			lo = 0x90;	/* overlong */
		else if (b == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i <= need; i++) {
		if (i >= avail || s[i] < lo || s[i] > hi) {
			*bad = i;	/* the byte at i starts afresh */
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

int lp_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, bad;

	while (i < len) {
		size_t n = utf8_seq(p + i, len - i, &bad);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

void lp_json__string(FILE *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, bad;

	putc_unlocked('"', out);
	while (i < len) {
		unsigned char c = p[i];
		/* Plain printable ASCII is the common case: copy it in runs. */
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		size_t n = c < 0x80 ? 1 : utf8_seq(p + i, len - i, &bad);
		if (n > 1) {		/* well-formed multibyte: copied as it is */
			i += n;
			continue;
		}
		if (i > run)
			fwrite(p + run, 1, i - run, out);
		if (n == 0) {
			fputs("\xef\xbf\xbd", out);	/* U+FFFD */
			i += bad;
		} else {
			putc_unlocked('\\', out);
			switch (c) {
			case '"': putc_unlocked('"', out); break;
			case '\\': putc_unlocked('\\', out); break;
			case '\n': putc_unlocked('n', out); break;
			case '\t': putc_unlocked('t', out); break;
			case '\r': putc_unlocked('r', out); break;
			default:
				fputs("u00", out);
				putc_unlocked(hexdigits[c >> 4], out);
				putc_unlocked(hexdigits[c & 15], out);
			}
			i++;
		}
		run = i;
	}
	if (i > run)
		fwrite(p + run, 1, i - run, out);
	putc_unlocked('"', out);
}

void lp_json__int(FILE *out, int64_t v)
{
	fprintf(out, "%" PRId64, v);
}

void lp_json__number(FILE *out, double v)
{
	char buf[40];

	if (!isfinite(v)) {
		putc_unlocked('0', out);
		return;
	}
	if (v == 0) {		/* also -0, which %g would print as "-0" */
		putc_unlocked('0', out);
		return;
	}
	if (fabs(v) < 1e15 && v == (double)(int64_t)v) {
		lp_json__int(out, (int64_t)v);
		return;
	}
	/* The shortest of 15..17 significant digits that reads back exactly. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, out);
}

void lp_json__ns_as_us(FILE *out, int64_t ns)
{
	/* Exact decimal: no double rounding of 16-digit monotonic times. */
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	fprintf(out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000, a % 1000);
}
