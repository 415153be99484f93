/* nodlopen.h - make static's stand-in for dlopen(3): no shared library is
 * ever loaded into a static program.  Its one caller is libdw, which would
 * load libdebuginfod.so.1 to fetch what is missing from debuginfod
 * servers; a static program has no debuginfod. */
#ifndef LP_NODLOPEN_H
#define LP_NODLOPEN_H

/* Linked with -Wl,--wrap=dlopen, in the static programs only (the
 * Makefile's static target): every call of dlopen comes here, and fails. */
void *__wrap_dlopen(const char *file, int mode);

#endif
