/* plt.c - the PLT stubs of an x86-64 ELF file, named by the relocations of
 * the GOT slots they jump through (plt.h). */
#include "debuginfo/plt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* A dynamic relocation with a symbol: the slot it fills, the symbol. */
struct reloc {
	uint64_t slot;
	const char *sym;
};

struct relocs {
	struct reloc *all;	/* every section's, for the slots */
	size_t n;
	size_t plt_first, plt_n;	/* .rela.plt's, in order: a push's index */
};

static void add_relocs(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct relocs *r, bool plt)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *d = elf_getdata(scn, NULL), *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	if (!d || !syms || !gelf_getshdr(symscn, &symsh) || !sh->sh_entsize)
		return;
	size_t n = sh->sh_size / sh->sh_entsize;
	if (plt)
		r->plt_first = r->n;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela rela;
		GElf_Sym sym;
		if (!gelf_getrela(d, (int)i, &rela))
			break;
		size_t si = GELF_R_SYM(rela.r_info);
		if (!si || !gelf_getsym(syms, (int)si, &sym))
			continue;
		const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		r->all = lp_reallocarray(r->all, r->n + 1, sizeof(*r->all));
		r->all[r->n++] = (struct reloc){ rela.r_offset, name };
	}
	if (plt)
		r->plt_n = r->n - r->plt_first;
}

static const char *slot_sym(const struct relocs *r, uint64_t slot)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->all[i].slot == slot)
			return r->all[i].sym;
	return NULL;
}

/* The function stub b (size bytes at file address addr) goes to: its
 * first instruction, past endbr64 and a bnd prefix, is jmp *disp32(%rip)
 * (ff 25) through a slot a relocation names, or the push of its index in
 * .rela.plt (68 imm32: a lazy entry of an IBT build, whose jump is in
 * .plt.sec).  NULL for PLT0 (ff 35: push GOT+8) and anything else. */
static const char *stub_sym(const unsigned char *b, size_t size, uint64_t addr, const struct relocs *r)
{
	size_t i = 0;
	if (size >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	bool bnd = i < size && b[i] == 0xf2;
	if (i + 6 + bnd <= size && b[i + bnd] == 0xff && b[i + bnd + 1] == 0x25) {
		int32_t disp;
		memcpy(&disp, b + i + bnd + 2, 4);
		return slot_sym(r, addr + i + bnd + 6 + (uint64_t)(int64_t)disp);
	}
	if (i + 5 <= size && b[i] == 0x68) {
		uint32_t idx;
		memcpy(&idx, b + i + 1, 4);
		return idx < r->plt_n ? r->all[r->plt_first + idx].sym : NULL;
	}
	return NULL;
}

static void add_stubs(Elf_Scn *scn, const GElf_Shdr *sh, size_t entsize, const struct relocs *r,
		      struct lp_plt_stub **out, size_t *n)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < sh->sh_size)
		return;
	for (uint64_t off = 0; off + entsize <= sh->sh_size; off += entsize) {
		const char *sym = stub_sym((const unsigned char *)d->d_buf + off, entsize,
					   sh->sh_addr + off, r);
		if (!sym)
			continue;
		size_t len = strlen(sym);
		const char *at = strchr(sym, '@');	/* a version: puts@GLIBC_2.2.5 */
		if (at)
			len = (size_t)(at - sym);
		char *name = lp_malloc(len + 5);
		memcpy(name, sym, len);
		memcpy(name + len, "@plt", 5);
		*out = lp_reallocarray(*out, *n + 1, sizeof(**out));
		(*out)[(*n)++] = (struct lp_plt_stub){ sh->sh_addr + off, sh->sh_addr + off + entsize,
						       name };
	}
}

static int stub_cmp(const void *a, const void *b)
{
	const struct lp_plt_stub *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

size_t lp_plt__stubs(Elf *elf, struct lp_plt_stub **out)
{
	GElf_Ehdr eh;
	size_t shstrndx, n = 0;
	struct relocs r = { 0 };
	*out = NULL;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".rela.plt") || !strcmp(name, ".rela.dyn")))
			add_relocs(elf, scn, &sh, &r, !strcmp(name, ".rela.plt"));
	}
	for (Elf_Scn *scn = NULL; r.n && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".plt", 4) || (name[4] && strcmp(name + 4, ".sec") &&
							   strcmp(name + 4, ".got")))
			continue;
		/* 16 bytes an entry, but .plt.got's 8 without IBT (the linker
		 * says in sh_entsize). */
		size_t entsize = sh.sh_entsize ? sh.sh_entsize : 16;
		add_stubs(scn, &sh, entsize, &r, out, &n);
	}
	free(r.all);
	if (n)
		qsort(*out, n, sizeof(**out), stub_cmp);
	return n;
}

void lp_plt__free(struct lp_plt_stub *stubs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(stubs[i].name);
	free(stubs);
}
