/* hazard.h - what an ELF file says against a uretprobe on the calls it
 * runs.  A uretprobe puts the kernel's trampoline where the return address
 * was until the call returns: whatever reads return addresses meanwhile
 * breaks (C++ exceptions: the unwinder finds no frame for the trampoline
 * and terminates; backtrace(3) stops there; Go's runtime walks its stacks
 * to grow them and dies on an unknown pc). */
#ifndef LP_HAZARD_H
#define LP_HAZARD_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

struct lp_hazard {
	bool go;		/* a Go binary */
	bool regabi;		/* Go >= 1.17: g in r14 */
	char go_version[32];
	bool cxx;		/* exceptions: C++'s catch can be probed */
	/* It throws, catches or unwinds (C++, Go, libstdc++ or libgcc_s
	 * linked, an unwinder's entry imported): what a library loaded later
	 * is judged by (lp_hazard__throws). */
	bool unwinds;
	char why[256];		/* the first reason a uretprobe is unsafe, "" when none */
	/* "X calls dlopen (...)": a library loaded later may throw through
	 * the traced calls; "" when it loads none. */
	char loads[256];
	/* "X calls backtrace": a backtrace taken while a traced call runs ends
	 * at it under a uretprobe; "" when it takes none. */
	char walks[256];
};

/* What file path (its ELF elf) says; go_syms: its symbols name Go's
 * runtime (a Go binary stripped of its Go sections). */
void lp_hazard__file(Elf *elf, const char *path, bool go_syms, struct lp_hazard *hz);

/* Whether a library (its ELF elf, its name as mapped) can throw or unwind
 * through calls of the program that loaded it: lp_hazard.unwinds, or it
 * is libstdc++, libc++ or libgcc_s itself.  why: "libthrow.so links
 * libstdc++.so.6 (...)" when it can. */
bool lp_hazard__throws(Elf *elf, const char *name, char *why, size_t whysize);

#endif
