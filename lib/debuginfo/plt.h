/* plt.h - the PLT stubs of an x86-64 ELF file, named FUNC@plt as perf and
 * objdump name them.  A stub has no symbol of its own: without a name a
 * sample in one would read MODULE+0xSTART.
 *
 * Each stub jumps through a GOT slot (jmp *SLOT(%rip), in .plt, .plt.sec
 * or .plt.got), and the dynamic relocation of that slot names the function;
 * a lazy .plt entry of an IBT build, which only pushes its relocation's
 * index, is named by that index.  */
#ifndef LP_PLT_H
#define LP_PLT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct lp_plt_stub {
	uint64_t start, end;	/* file addresses */
	char *name;		/* "FUNC@plt" */
};

/* The stubs of elf, in address order: a malloc'd array (*out, NULL when
 * there are none) and their count. */
size_t lp_plt__stubs(Elf *elf, struct lp_plt_stub **out);
void lp_plt__free(struct lp_plt_stub *stubs, size_t n);

#endif
