/* demangle.c - symbol names as perf and binutils show them (demangle.h). */
#include "debuginfo/demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

size_t lp_symbol__unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	/* "@" at the start is a name of its own, not a version; "@plt" names
	 * a PLT stub (debuginfo/plt.h). */
	return at && at > name && strcmp(at, "@plt") ? (size_t)(at - name) : strlen(name);
}

char *lp_symbol__demangle(const char *name, bool no_return_type)
{
	size_t len = lp_symbol__unversioned_len(name);
	char buf[256], *copy = buf;
	char *out;
	/* A PLT stub's: its function's, demangled, then "@plt". */
	bool plt = len > 4 && !strcmp(name + len - 4, "@plt");
	if (plt)
		len -= 4;

	/* Mangled names start "_Z" (C++, and Rust's legacy scheme, which
	 * libiberty tells apart by its hash) or "_R" (Rust v0): anything
	 * else is shown as it is, without calling the demangler. */
	if (len < 3 || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (name[len]) {
		copy = len < sizeof(buf) ? buf : lp_malloc(len + 1);
		memcpy(copy, name, len);
		copy[len] = '\0';
	} else {
		copy = (char *)name;
	}
	/* DMGL_AUTO tries Rust (legacy and v0) first, then the C++ ABI. */
	out = cplus_demangle(copy, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO |
				   (no_return_type ? DMGL_RET_DROP : 0));
	if (copy != buf && copy != name)
		free(copy);
	if (out && plt) {
		size_t n = strlen(out);
		out = lp_realloc(out, n + 5);
		memcpy(out + n, "@plt", 5);
	}
	return out;
}

const char *lp_symbol__params(const char *d)
{
	size_t n = strlen(d);
	int depth = 0;

	/* What may follow the list: clone suffixes (" [clone .cold]"), then
	 * qualifiers (" const", " &"...), all after its closing ')'. */
	for (;;) {
		if (n && d[n - 1] == ']') {
			const char *open = memchr(d, '[', n);
			const char *last = open;

			while (open && (open = memchr(open + 1, '[', n - (size_t)(open + 1 - d))))
				last = open;
			if (!last || last == d || last[-1] != ' ')
				return NULL;
			n = (size_t)(last - 1 - d);
			continue;
		}
		static const char *const quals[] = { " const", " volatile", " &&", " &",
						     " restrict" };
		size_t q = 0;
		for (; q < sizeof(quals) / sizeof(quals[0]); q++) {
			size_t ql = strlen(quals[q]);
			if (n > ql && !memcmp(d + n - ql, quals[q], ql)) {
				n -= ql;
				break;
			}
		}
		if (q < sizeof(quals) / sizeof(quals[0]))
			continue;
		break;
	}
	if (!n || d[n - 1] != ')')
		return NULL;
	for (size_t i = n; i-- > 0;) {
		if (d[i] == ')')
			depth++;
		else if (d[i] == '(' && --depth == 0)
			return i > 0 ? d + i : NULL;
	}
	return NULL;
}
