/* elftab.c - an ELF file's raw tables: symbols, dynamic entries, sections
 * (elftab.h). */
#include "debuginfo/elftab.h"

#include <string.h>

/* e's first section of sh_type with entries: its data, its strings'
 * section and its count of entries; false when there is none. */
static bool table(Elf *e, unsigned sh_type, Elf_Data **data, size_t *strtab, size_t *n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == sh_type && sh.sh_entsize)
			break;
	if (!scn)
		return false;
	*data = elf_getdata(scn, NULL);
	*strtab = sh.sh_link;
	*n = *data ? sh.sh_size / sh.sh_entsize : 0;
	return true;
}

bool lp_elfsyms__open(struct lp_elfsyms *it, Elf *e, unsigned sh_type)
{
	memset(it, 0, sizeof(*it));
	it->elf = e;
	return table(e, sh_type, &it->data, &it->strtab, &it->n);
}

const char *lp_elfsyms__next(struct lp_elfsyms *it, GElf_Sym *sym)
{
	while (it->i < it->n) {
		int i = (int)it->i++;
		const char *name;

		if (gelf_getsym(it->data, i, sym) && (name = elf_strptr(it->elf, it->strtab, sym->st_name)) &&
		    *name)
			return name;
	}
	return NULL;
}

bool lp_elfdyn__open(struct lp_elfdyn *it, Elf *e)
{
	memset(it, 0, sizeof(*it));
	it->elf = e;
	return table(e, SHT_DYNAMIC, &it->data, &it->strtab, &it->n);
}

const char *lp_elfdyn__next(struct lp_elfdyn *it, int64_t *tag)
{
	while (it->i < it->n) {
		GElf_Dyn dyn;
		const char *s;

		if (!gelf_getdyn(it->data, (int)it->i++, &dyn) ||
		    (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME && dyn.d_tag != DT_RPATH &&
		     dyn.d_tag != DT_RUNPATH) ||
		    !(s = elf_strptr(it->elf, it->strtab, dyn.d_un.d_val)))
			continue;
		*tag = dyn.d_tag;
		return s;
	}
	return NULL;
}

Elf_Scn *lp_elftab__section(Elf *e, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}
