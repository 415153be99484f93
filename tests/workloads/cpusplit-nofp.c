/* cflags: -fomit-frame-pointer -momit-leaf-frame-pointer */
/* cpusplit-nofp - cpusplit built without frame pointers (Debian's default),
 * for lp-record --call-graph dwarf: a() 25%, b() 75% of the CPU. */
#include "cpusplit.c"
