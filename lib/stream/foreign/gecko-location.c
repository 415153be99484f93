/* gecko-location.c - the Gecko format's frame location strings
 * (gecko-location.h), parsed by hand as the profiler's regular expressions
 * match them: a greedy name, then the last " (" after which the rest fits. */
#include "stream/foreign/gecko-location.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies of parts of loc, NUL-terminated, one after the other in buf. */
struct carve {
	char *buf;
	size_t len, used;
};

static const char *carve(struct carve *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *carve(struct carve *c, const char *fmt, ...)
{
	if (c->used + 1 >= c->len)
		return "";
	char *out = c->buf + c->used;
	size_t room = c->len - c->used;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(out, room, fmt, ap);
	va_end(ap);
	c->used += w < 0 ? room : (size_t)w + 1 < room ? (size_t)w + 1 : room;
	return out;
}

static bool digits(const char *s, size_t n)
{
	if (!n || n > 9)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* The length of s[0..n) less a last ":DIGITS", or n when it has none. */
static size_t less_number(const char *s, size_t n)
{
	size_t i = n;
	while (i && s[i - 1] != ':')
		i--;
	return i && digits(s + i, n - i) ? i - 1 : n;
}

/* "URL:LINE" or "URL:LINE:COLUMN" (the shortest URL that leaves one or
 * two numbers): the URL's length and the line; false when it is neither. */
static bool url_line(const char *s, size_t n, size_t *url, long *line)
{
	size_t one = less_number(s, n), two;
	if (one == n || !one)
		return false;
	two = less_number(s, one);
	*url = two < one && two ? two : one;
	*line = strtol(s + *url + 1, NULL, 10);
	return true;
}

static void js_result(struct carve *c, const char *name, size_t nlen, const char *url, size_t ulen,
		      long line, struct lp_gecko_location *out)
{
	/* "a -> b": the last script of the chain */
	for (const char *arrow; (arrow = memmem(url, ulen, " -> ", 4));) {
		ulen -= (size_t)(arrow + 4 - url);
		url = arrow + 4;
	}
	out->js = true;
	out->file = out->module = carve(c, "%.*s", (int)ulen, url);
	out->line = line;
	out->name = nlen ? carve(c, "%.*s", (int)nlen, name)
			 : carve(c, "(root scope) %.*s", (int)ulen, url);
}

/* "func (URL:LINE[:COL])[N]" or "URL:LINE[:COL][N]". */
static bool js_location(struct carve *c, const char *s, size_t n, struct lp_gecko_location *out)
{
	size_t url;
	long line;
	if (n && s[n - 1] == ']') {	/* a source index: "[5]" */
		size_t i = n - 1;
		while (i && s[i - 1] >= '0' && s[i - 1] <= '9')
			i--;
		if (i && s[i - 1] == '[' && i < n - 1)
			n = i - 1;
	}
	if (n && s[n - 1] == ')') {
		for (size_t i = n - 1; i-- > 0;) {
			if (s[i] != '(' || !i || s[i - 1] != ' ')
				continue;
			if (url_line(s + i + 1, n - 2 - i, &url, &line)) {
				js_result(c, s, i - 1, s + i + 1, url, line, out);
				return true;
			}
		}
	}
	if (!url_line(s, n, &url, &line))
		return false;
	js_result(c, "", 0, s, url, line, out);
	return true;
}

/* "func (in LIB)", then "", " + DIGITS" or " (FILE:LINE)". */
static bool cpp_location(struct carve *c, const char *s, size_t n, struct lp_gecko_location *out)
{
	for (size_t i = n; i-- > 0;) {
		if (strncmp(s + i, " (in ", 5))
			continue;
		const char *lib = s + i + 5, *close = memchr(lib, ')', n - i - 5);
		if (!close)
			continue;
		const char *rest = close + 1, *end = s + n;
		size_t rlen = (size_t)(end - rest), flen = 0;
		bool plain = !rlen || (rlen > 3 && !strncmp(rest, " + ", 3) && digits(rest + 3, rlen - 3));
		bool paren = rlen > 3 && !strncmp(rest, " (", 2) && end[-1] == ')' &&
			     memchr(rest + 2, ':', rlen - 3);
		if (!plain && !paren)
			continue;
		const char *name = s;
		size_t nlen = i;
		if (nlen >= 21 && !strncmp(name, "non-virtual thunk to ", 21))
			name += 21, nlen -= 21;
		out->name = carve(c, "%.*s", (int)nlen, name);
		out->module = carve(c, "%.*s", (int)(close - lib), lib);
		if (paren) {
			flen = less_number(rest + 2, rlen - 3);
			out->file = carve(c, "%.*s", (int)flen, rest + 2);
			out->line = flen < rlen - 3 ? strtol(rest + 2 + flen + 1, NULL, 10) : 0;
		}
		return true;
	}
	return false;
}

/* The lib whose mapping holds the address "0x...", or NULL. */
static json_t *lib_at(const char *loc, json_t *libs)
{
	size_t n = strlen(loc + 2), i;
	json_t *lib;
	if (!n || n > 16 || strspn(loc + 2, "0123456789abcdefABCDEF") != n)
		return NULL;
	double addr = (double)strtoull(loc + 2, NULL, 16);
	json_array_foreach(libs, i, lib) {
		json_t *start = json_object_get(lib, "start"), *end = json_object_get(lib, "end");
		if (json_is_number(start) && json_is_number(end) && addr >= json_number_value(start) &&
		    addr < json_number_value(end))
			return lib;
	}
	return NULL;
}

void lp_gecko__location(const char *loc, json_t *libs, struct lp_gecko_location *out,
			char *buf, size_t len)
{
	struct carve c = { buf, len, 0 };
	size_t n = strlen(loc);
	*out = (struct lp_gecko_location){ .name = loc };
	if (!strncmp(loc, "0x", 2)) {
		json_t *lib = lib_at(loc, libs);
		const char *path = json_string_value(json_object_get(lib, "path"));
		const char *name = json_string_value(json_object_get(lib, "name"));
		out->module = path && *path ? path : name;
		return;
	}
	if (cpp_location(&c, loc, n, out) || js_location(&c, loc, n, out))
		return;
	*out = (struct lp_gecko_location){ .name = loc };
}
