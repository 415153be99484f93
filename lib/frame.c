/* frame.c - see frame.h. */
#include "frame.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *lp_frame__name(const struct lp_frame *f, char *buf, size_t size)
{
	if (f->symbol[0])
		return f->symbol;
	if (f->module[0]) {
		const char *base = strrchr(f->module, '/');
		snprintf(buf, size, "[%s]", base ? base + 1 : f->module);
		return buf;
	}
	if (f->addr) {
		snprintf(buf, size, "0x%llx", (unsigned long long)f->addr);
		return buf;
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
