/* bpflog.c - see bpflog.h. */
#include "capture/bpflog.h"

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>

static int verbosity;

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int needed = level == LIBBPF_DEBUG ? 2 : 1;

	if (verbosity < needed)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void lp_bpflog__init(int v)
{
	verbosity = v;
	libbpf_set_print(print);
}
