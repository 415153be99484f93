/* gecko-location.h - the frames of the Firefox Profiler's Gecko format:
 * location strings, read as the profiler's process-profile.ts reads them
 * (the first that fits):
 *   "0x7f3a9c2b1e40"                      an address, not symbolicated: its
 *                                         name, its module the lib mapped there;
 *   "Func (in libxul.so) + 123",          native code: Func in that library
 *   "Func (in lib) (file.cpp:12)",        (file and line when given);
 *   "Func (in lib)"
 *   "func (https://a/b.js:34:5)[7]",      JavaScript: func in that script at
 *   "https://a/b.js:34"                   that line ("(root scope) URL" when
 *                                         it has no name; "a -> b": b);
 *   anything else                         a label: its name. */
#ifndef LP_GECKO_LOCATION_H
#define LP_GECKO_LOCATION_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;

struct lp_gecko_location {
	const char *name;	/* never NULL */
	const char *module;	/* NULL: none */
	const char *file;	/* NULL: none */
	long line;		/* 0: none */
	bool js;
};

/* loc read into *out, its strings in buf (len bytes) or loc; libs: the
 * process's libs ({start, end, path, name}), for addresses. */
void lp_gecko__location(const char *loc, struct json_t *libs, struct lp_gecko_location *out,
			char *buf, size_t len);

#endif
