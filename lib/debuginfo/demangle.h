/* demangle.h - symbol names as perf and binutils show them: without their
 * ELF symbol version, C++ and Rust (legacy and v0) names demangled by
 * libiberty, the demangler binutils and perf use. */
#ifndef LP_DEMANGLE_H
#define LP_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* The length of name without its symbol version ("memcpy@@GLIBC_2.14",
 * "__libc_start_main@GLIBC_2.2.5": the part before the '@'). */
size_t lp_symbol__unversioned_len(const char *name);

/* name (versioned or not) demangled with its parameters, as perf and
 * `c++filt` print it ("int add<int>(int, int)"; no_return_type: a
 * template function's return type left out, "add<int>(int, int)"):
 * malloc'd, or NULL when name is not a mangled C++ or Rust name. */
char *lp_symbol__demangle(const char *name, bool no_return_type);

/* Where a demangled name's parameter list "(int, char**)" starts (what
 * follows it, " const" or " [clone .cold]", is part of it), or NULL when
 * it has none: matched from the end, so "(anonymous namespace)::f(int)"
 * and "S::operator()(int)" are read right. */
const char *lp_symbol__params(const char *demangled);

#endif
