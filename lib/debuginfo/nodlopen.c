/* nodlopen.c - make static's stand-in for dlopen(3) (nodlopen.h).
 *
 * glibc's dlopen in a static program loads the library with the host's
 * libc.so.6 beside the program's own: it works only when the host's glibc
 * is the one the program was linked with (ld warns so), and otherwise
 * fails or crashes.  A static lp is meant to run anywhere, so it loads
 * nothing: libdw finds libdebuginfod missing, as on a host without it,
 * and looks for debug information locally alone (build-id and
 * .gnu_debuglink paths, through the process's own root). */
#include <stddef.h>

#include "debuginfo/nodlopen.h"

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}
