/* addr2line.c - binutils' `addr2line -i -f -s -C` answered with libdw (see
 * addr2line.h), through lib/debuginfo/dwarf.h.  Each module path opened
 * once; the inline chain of an address (lp_dwmod__funcs) innermost first,
 * the line table the innermost location, each inlined copy's call site the
 * location in its caller.  Function names are the linkage name when there
 * is one, demangled as binutils prints them (demangle.h: libiberty,
 * binutils' own demangler); else DW_AT_name; without DWARF, the ELF
 * symbol. */
#include "debuginfo/addr2line.h"
#include "debuginfo/demangle.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/elftab.h"
#include "base/util.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct a2l_mod {
	char *path;
	struct lp_dwfile *file;
	struct lp_dwmod *mod;	/* NULL: the module could not be read */
	uint64_t bias;
};

/* Deeper chains of inlined calls than this are cut (none seen near it). */
#define A2L_MAX_CHAIN 64

struct lp_addr2line {
	struct a2l_mod *mods;
	size_t nmods;
	/* the last answer */
	struct lp_a2l_entry *ent;
	size_t nent, capent;
	char **strs;
	size_t nstrs, capstrs;
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
		lp_dwfile__free(a->mods[i].file);
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
	m->file = lp_dwfile__open(path);
	m->mod = lp_dwfile__module(m->file);
	if (m->mod && !lp_dwmod__bias(m->mod, &m->bias))
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
static const char *elf_function(struct a2l_mod *m, uint64_t addr, const char **file)
{
	uint64_t bias;
	Elf *elf = lp_dwmod__elf(m->mod, &bias);
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
	int n = lp_dwmod__nsyms(m->mod);
	const char *best = NULL, *fname = NULL;
	GElf_Addr low = 0;
	GElf_Xword best_size = 0;
	enum { NOTHING, SYMBOL, FILE_AFTER_SYMBOL } state = NOTHING;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Word shndx;
		uint64_t value;
		const char *name = lp_dwmod__sym(m->mod, i, &sym, &value, &shndx);
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
		if (value <= addr && (value > low || (value == low && size > best_size))) {
			best = name;
			best_size = size;
			low = value;
			*file = fname && (bind == STB_LOCAL || state != FILE_AFTER_SYMBOL) ? fname
											  : NULL;
		}
	}
	return best;
}

/* binutils prefers the linkage name (demangled under -C) to DW_AT_name,
 * following abstract origins and specifications.  For the innermost
 * function only, a name without a linkage name is replaced by the ELF
 * symbol that holds the address (bfd's _bfd_dwarf2_find_nearest_line does
 * so, so a function inlined into work() shows as "work(unsigned int)"). */
static const char *func_name(struct lp_addr2line *a, const struct lp_dwfunc *f,
			     struct a2l_mod *m, uint64_t addr, bool innermost)
{
	const char *n;
	if (f->linkage)
		return demangled(a, f->linkage);
	if (innermost && !f->non_mangled) {
		const char *file;
		n = elf_function(m, addr, &file);
		if (n)
			return demangled(a, n);
	}
	return f->name;
}

static bool dwarf_chain(struct lp_addr2line *a, struct a2l_mod *m, uint64_t addr)
{
	struct lp_dwfunc chain[A2L_MAX_CHAIN];
	size_t n = lp_dwmod__funcs(m->mod, addr, chain, A2L_MAX_CHAIN);
	if (!n)
		return false;

	/* The innermost location: the line table's. */
	int line;
	const char *file = lp_dwmod__line(m->mod, addr, &line);
	const char *loc = (file || line) ? location(a, file, line) : "??:0";
	for (size_t i = 0; i < n; i++) {
		add_entry(a, func_name(a, &chain[i], m, addr, i == 0), loc);
		/* the caller's location is this inlined call's site */
		if (chain[i].inlined)
			loc = location(a, chain[i].call_file, (int)chain[i].call_line);
	}
	return true;
}

int lp_addr2line__lookup(struct lp_addr2line *a, const char *module, uint64_t addr,
			 const struct lp_a2l_entry **out)
{
	clear_answer(a);
	struct a2l_mod *m = get_module(a, module);
	if (!m->mod)
		return -1;
	uint64_t da = addr + m->bias;
	if (!dwarf_chain(a, m, da)) {
		/* No DWARF function here: the line table if it knows the
		 * address, and the ELF symbol, as bfd falls back to them. */
		const char *file = NULL, *sfile = NULL;
		int line;
		file = lp_dwmod__line(m->mod, da, &line);
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
	uint64_t bias;
	Elf *elf = lp_dwmod__elf(m->mod, &bias);
	if (!elf)
		return -1;
	/* nm reads the static symbol table only. */
	struct lp_elfsyms it;
	GElf_Sym sym;
	const char *s;
	if (!lp_elfsyms__open(&it, elf, SHT_SYMTAB))
		return -1;
	while ((s = lp_elfsyms__next(&it, &sym)))
		if (sym.st_shndx != SHN_UNDEF && !strcmp(s, name)) {
			*value = sym.st_value;
			return 0;
		}
	return -1;
}
