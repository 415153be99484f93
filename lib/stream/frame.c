/* frame.c - see frame.h. */
#include "stream/frame.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

bool lp_frame__has_module(const struct lp_frame *f)
{
	return f->module[0] && strcmp(f->module, "[unknown]");
}

const char *lp_frame__name(const struct lp_frame *f, char **buf, size_t *cap)
{
	if (f->symbol[0] || f->named)
		return f->symbol;
	if (lp_frame__has_module(f)) {
		const char *base = strrchr(f->module, '/');
		base = base ? base + 1 : f->module;
		size_t n = strlen(base);
		lp_grow(buf, cap, n + 3);
		(*buf)[0] = '[';
		memcpy(*buf + 1, base, n);
		memcpy(*buf + 1 + n, "]", 2);
		return *buf;
	}
	if (f->addr) {
		lp_grow(buf, cap, 20);
		snprintf(*buf, 20, "0x%llx", (unsigned long long)f->addr);
		return *buf;
	}
	return "[unknown]";
}

/* libc.so.6, libpthread.so.0, ld-linux-x86-64.so.2, the vDSO: the
 * wrappers every blocking call goes through. */
static bool system_module(const char *module)
{
	static const char *const prefixes[] = { "libc.so", "libc-", "libpthread", "ld-linux",
						"ld-musl", "libc.musl", "linux-vdso", "[vdso]" };
	const char *base = strrchr(module, '/');

	base = base ? base + 1 : module;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

const struct lp_frame *lp_stack__blocking_frame(const struct lp_stack *st)
{
	const struct lp_frame *user = NULL;

	if (!st || !st->nframes)
		return NULL;
	for (size_t i = st->nframes; i-- > 0;) {
		const struct lp_frame *f = st->frames[i];

		if (f->kind == LP_FRAME_KERNEL)
			continue;
		if (!system_module(f->module))
			return f;
		if (!user)
			user = f;
	}
	return user ? user : st->frames[st->nframes - 1];
}
