/* elftab.h - an ELF file's raw tables, read one way: the static symbol
 * table (.symtab) or the dynamic one (.dynsym), each named symbol in turn,
 * the dynamic entries that name a string (DT_NEEDED, DT_SONAME, DT_RPATH,
 * DT_RUNPATH), and a section by name.  For what a file links against and
 * exports (a probe's hazards: what it imports; a libpython's exported
 * symbols; the libraries it needs) and nm's view (.symtab alone).  The
 * functions a file has are read through libdwfl (lib/debuginfo/dwarf.h's
 * lp_dwfile, lp_dwmod__sym), which merges the tables and a MiniDebugInfo's:
 * the symbolizer's names and lp-trace's probes come from the same place. */
#ifndef LP_ELFTAB_H
#define LP_ELFTAB_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lp_elfsyms {
	Elf *elf;
	Elf_Data *data;
	size_t strtab;		/* the names' section */
	size_t n, i;
};

/* Opens e's table of sh_type (SHT_SYMTAB or SHT_DYNSYM) into *it: false
 * when e has none. */
bool lp_elfsyms__open(struct lp_elfsyms *it, Elf *e, unsigned sh_type);
/* The next symbol with a name, into *sym: its name, or NULL at the end. */
const char *lp_elfsyms__next(struct lp_elfsyms *it, GElf_Sym *sym);

struct lp_elfdyn {
	Elf *elf;
	Elf_Data *data;
	size_t strtab;
	size_t n, i;
};

/* Opens e's dynamic section into *it: false when e has none. */
bool lp_elfdyn__open(struct lp_elfdyn *it, Elf *e);
/* The next entry that names a string (DT_NEEDED, DT_SONAME, DT_RPATH,
 * DT_RUNPATH), its tag into *tag: the string, or NULL at the end. */
const char *lp_elfdyn__next(struct lp_elfdyn *it, int64_t *tag);

/* e's first section named name, or NULL. */
Elf_Scn *lp_elftab__section(Elf *e, const char *name);

#endif
