/* addr2line.c - binutils' `addr2line -i -f -s -C` answered with libdw (see
 * addr2line.h).  One Dwfl per module path, opened once; the scopes of an
 * address (dwarf_getscopes) give the inline chain innermost first, the line
 * table the innermost location, each inlined_subroutine's DW_AT_call_file and
 * DW_AT_call_line the location in its caller.  Function names are the
 * linkage name when there is one, demangled as binutils prints them
 * (demangle.h: libiberty, binutils' own demangler); else DW_AT_name; without
 * DWARF, the ELF symbol. */
#include "debuginfo/addr2line.h"
#include "debuginfo/demangle.h"
#include "base/util.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct a2l_mod {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;	/* NULL: the module could not be read */
	Dwarf_Addr bias;
};

struct lp_addr2line {
	struct a2l_mod *mods;
	size_t nmods;
	/* the last answer */
	struct lp_a2l_entry *ent;
	size_t nent, capent;
	char **strs;
	size_t nstrs, capstrs;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct lp_addr2line *lp_addr2line__new(void)
{
	return lp_calloc(1, sizeof(struct lp_addr2line));
}

static void clear_answer(struct lp_addr2line *a)
{
	for (size_t i = 0; i < a->nstrs; i++)
		free(a->strs[i]);
	a->nstrs = 0;
	a->nent = 0;
}

void lp_addr2line__free(struct lp_addr2line *a)
{
	if (!a)
		return;
	clear_answer(a);
	for (size_t i = 0; i < a->nmods; i++) {
		if (a->mods[i].dwfl)
			dwfl_end(a->mods[i].dwfl);
		free(a->mods[i].path);
	}
	free(a->mods);
	free(a->ent);
	free(a->strs);
	free(a);
}

static struct a2l_mod *get_module(struct lp_addr2line *a, const char *path)
{
	for (size_t i = 0; i < a->nmods; i++)
		if (!strcmp(a->mods[i].path, path))
			return &a->mods[i];
	a->mods = lp_reallocarray(a->mods, a->nmods + 1, sizeof(*a->mods));
	struct a2l_mod *m = &a->mods[a->nmods++];
	memset(m, 0, sizeof(*m));
	m->path = lp_strdup(path);
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		return m;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_offline(m->dwfl, path, path, -1);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (m->mod && !dwfl_module_getelf(m->mod, &m->bias))
		m->mod = NULL;
	return m;
}

static const char *keep(struct lp_addr2line *a, char *s)
{
	if (a->nstrs == a->capstrs) {
		a->capstrs = a->capstrs ? 2 * a->capstrs : 16;
		a->strs = lp_reallocarray(a->strs, a->capstrs, sizeof(*a->strs));
	}
	a->strs[a->nstrs++] = s;
	return s;
}

static const char *demangled(struct lp_addr2line *a, const char *name)
{
	char *d = lp_symbol__demangle(name, false);

	return d ? keep(a, d) : name;
}

static void add_entry(struct lp_addr2line *a, const char *func, const char *loc)
{
	if (a->nent == a->capent) {
		a->capent = a->capent ? 2 * a->capent : 8;
		a->ent = lp_reallocarray(a->ent, a->capent, sizeof(*a->ent));
	}
	a->ent[a->nent].func = func && func[0] ? func : "??";
	a->ent[a->nent].loc = loc;
	a->nent++;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static const char *location(struct lp_addr2line *a, const char *file, int line)
{
	char *s = NULL;
	if (line > 0) {
		if (asprintf(&s, "%s:%d", file ? basename_of(file) : "??", line) < 0)
			s = NULL;
	} else if (asprintf(&s, "%s:?", file ? basename_of(file) : "??") < 0) {
		s = NULL;
	}
	return s ? keep(a, s) : "??:0";
}

/* bfd's _bfd_elf_find_function: among the symbols of the section holding
 * addr (a Dwfl address), in table order, the one with the highest value not
 * above addr (its size is not checked), the larger on a tie, the first on a
 * full tie; objects, TLS, section and file symbols and hidden local
 * zero-size markers do not count.  *file gets the STT_FILE symbol before it
 * when bfd would name it.  NULL when there is none. */
static const char *elf_function(struct a2l_mod *m, Dwarf_Addr addr, const char **file)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	*file = NULL;
	if (!elf)
		return NULL;
	size_t sec = 0;
	Elf_Scn *scn = NULL;
	GElf_Addr faddr = addr - bias;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) &&
		    sh.sh_addr <= faddr && faddr < sh.sh_addr + sh.sh_size) {
			sec = elf_ndxscn(scn);
			break;
		}
	}
	if (!sec)
		return NULL;
	int n = dwfl_module_getsymtab(m->mod);
	const char *best = NULL, *fname = NULL;
	GElf_Addr low = 0;
	GElf_Xword best_size = 0;
	enum { NOTHING, SYMBOL, FILE_AFTER_SYMBOL } state = NOTHING;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym(m->mod, i, &sym, &shndx);
		if (!name)
			continue;
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		if (type == STT_FILE) {
			fname = name;
			if (state == SYMBOL)
				state = FILE_AFTER_SYMBOL;
			continue;
		}
		if (state == NOTHING)
			state = SYMBOL;
		if (type == STT_SECTION || type == STT_OBJECT || type == STT_TLS ||
		    type == STT_COMMON || shndx != sec)
			continue;
		GElf_Xword size = sym.st_size;
		if (size == 0 && bind == STB_LOCAL && type == STT_NOTYPE &&
		    GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
			continue;
		if (!size)
			size = 1;
		if (sym.st_value <= addr &&
		    (sym.st_value > low || (sym.st_value == low && size > best_size))) {
			best = name;
			best_size = size;
			low = sym.st_value;
			*file = fname && (bind == STB_LOCAL || state != FILE_AFTER_SYMBOL) ? fname
											  : NULL;
		}
	}
	return best;
}

/* Whether the DIE's language does not mangle names (binutils' non_mangled():
 * there DW_AT_name counts as the linkage name). */
static bool non_mangled(Dwarf_Die *die)
{
	Dwarf_Die cu;
	Dwarf_Attribute attr;
	Dwarf_Word lang;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || !dwarf_attr(&cu, DW_AT_language, &attr) ||
	    dwarf_formudata(&attr, &lang) != 0)
		return false;
	switch (lang) {
	case DW_LANG_C89: case DW_LANG_C: case DW_LANG_Ada83: case DW_LANG_Cobol74:
	case DW_LANG_Cobol85: case DW_LANG_Fortran77: case DW_LANG_Pascal83:
	case DW_LANG_C99: case DW_LANG_Ada95: case DW_LANG_PLI: case DW_LANG_UPC:
	case DW_LANG_C11:
		return true;
	}
	return false;
}

/* binutils prefers the linkage name (demangled under -C) to DW_AT_name,
 * following abstract origins and specifications.  For the innermost
 * function only, a name without a linkage name is replaced by the ELF
 * symbol that holds the address (bfd's _bfd_dwarf2_find_nearest_line does
 * so, so a function inlined into work() shows as "work(unsigned int)"). */
static const char *die_name(struct lp_addr2line *a, Dwarf_Die *die, struct a2l_mod *m,
			    Dwarf_Addr addr, bool innermost)
{
	Dwarf_Attribute attr;
	const char *n = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		n = dwarf_formstring(&attr);
	if (n)
		return demangled(a, n);
	if (innermost && !non_mangled(die)) {
		const char *file;
		n = elf_function(m, addr, &file);
		if (n)
			return demangled(a, n);
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		n = dwarf_formstring(&attr);
	return n;
}

static bool dwarf_chain(struct lp_addr2line *a, struct a2l_mod *m, Dwarf_Addr addr)
{
	Dwarf_Addr cubias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, &cubias);
	if (!cu)
		return false;
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr - cubias, &scopes);
	if (n <= 0) {
		free(scopes);
		return false;
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;

	/* The innermost location: the line table's. */
	const char *file = NULL;
	int line = 0;
	Dwfl_Line *l = dwfl_module_getsrc(m->mod, addr);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	const char *loc = (file || line) ? location(a, file, line) : "??:0";

	/* dwarf_getscopes stops at the innermost function's abstract tree;
	 * the chain of inlined calls is that DIE's own parents. */
	int first = -1;
	for (int i = 0; i < n && first < 0; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_entry_point)
			first = i;
	}
	if (first < 0) {
		free(scopes);
		return false;
	}
	if (dwarf_tag(&scopes[first]) == DW_TAG_inlined_subroutine) {
		Dwarf_Die *chain = NULL;
		int nc = dwarf_getscopes_die(&scopes[first], &chain);
		if (nc > 0) {
			free(scopes);
			scopes = chain;
			n = nc;
			first = 0;
		} else {
			free(chain);
		}
	}
	bool any = false;
	for (int i = first; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_entry_point)
			continue;
		add_entry(a, die_name(a, &scopes[i], m, addr, !any), loc);
		any = true;
		if (tag != DW_TAG_inlined_subroutine)
			break;
		/* the caller's location is this inlined call's site */
		Dwarf_Attribute attr;
		Dwarf_Word fidx = 0, cline = 0;
		const char *cfile = NULL;
		if (dwarf_attr(&scopes[i], DW_AT_call_file, &attr) &&
		    dwarf_formudata(&attr, &fidx) == 0 && files)
			cfile = dwarf_filesrc(files, fidx, NULL, NULL);
		if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr))
			dwarf_formudata(&attr, &cline);
		loc = location(a, cfile, (int)cline);
	}
	free(scopes);
	return any;
}

int lp_addr2line__lookup(struct lp_addr2line *a, const char *module, uint64_t addr,
			 const struct lp_a2l_entry **out)
{
	clear_answer(a);
	struct a2l_mod *m = get_module(a, module);
	if (!m->mod)
		return -1;
	Dwarf_Addr da = addr + m->bias;
	if (!dwarf_chain(a, m, da)) {
		/* No DWARF function here: the line table if it knows the
		 * address, and the ELF symbol, as bfd falls back to them. */
		const char *file = NULL, *sfile = NULL;
		int line = 0;
		Dwfl_Line *l = dwfl_module_getsrc(m->mod, da);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		const char *name = elf_function(m, da, &sfile);
		if (!file)
			file = sfile;
		if (name || file || line)
			add_entry(a, name ? demangled(a, name) : "??", location(a, file, line));
		else
			add_entry(a, "??", "??:0");
	}
	*out = a->ent;
	return (int)a->nent;
}

int lp_addr2line__symbol(struct lp_addr2line *a, const char *module, const char *name,
			 uint64_t *value)
{
	struct a2l_mod *m = get_module(a, module);
	if (!m->mod)
		return -1;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf)
		return -1;
	/* nm reads the static symbol table only. */
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			const char *s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -1;
}
