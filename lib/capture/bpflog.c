/* bpflog.c - see bpflog.h. */
#include "capture/bpflog.h"

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int verbosity;
static char failed[64];

/* libbpf's "libbpf: prog '%s': failed to load: %d" names the program the kernel
 * refused: kept for the loader's retry without it. */
static void note_failure(const char *fmt, va_list ap)
{
	if (!strstr(fmt, "prog '%s': failed to load"))
		return;
	va_list copy;
	va_copy(copy, ap);
	snprintf(failed, sizeof(failed), "%s", va_arg(copy, const char *));
	va_end(copy);
}

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int needed = level == LIBBPF_DEBUG ? 2 : 1;

	if (level == LIBBPF_WARN)
		note_failure(fmt, ap);
	if (verbosity < needed)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void lp_bpflog__init(int v)
{
	verbosity = v;
	libbpf_set_print(print);
}

const char *lp_bpflog__refused(void)
{
	return failed;
}

void lp_bpflog__forget(void)
{
	failed[0] = 0;
}
