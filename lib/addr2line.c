/* addr2line.c - binutils' `addr2line -i -f -s -C` answered with libdw (see
 * addr2line.h).  One Dwfl per module path, opened once; the scopes of an
 * address (dwarf_getscopes) give the inline chain innermost first, the line
 * table the innermost location, each inlined_subroutine's DW_AT_call_file and
 * DW_AT_call_line the location in its caller.  Function names are the
 * linkage name when there is one, demangled with the C++ runtime's
 * __cxa_demangle (looked up at run time, so C programs need no libstdc++),
 * as binutils prints them; else DW_AT_name; without DWARF, the ELF symbol. */
#include "addr2line.h"
#include "util.h"

#include <dlfcn.h>
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

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

struct lp_addr2line {
	struct a2l_mod *mods;
	size_t nmods;
	demangle_fn demangle;
	bool demangle_tried;
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
	if (strncmp(name, "_Z", 2))
		return name;
	if (!a->demangle_tried) {
		a->demangle_tried = true;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			*(void **)&a->demangle = dlsym(h, "__cxa_demangle");
	}
	if (!a->demangle)
		return name;
	int status = -1;
	char *d = a->demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return name;
	}
	return keep(a, d);
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
	if (innermost) {
		GElf_Sym sym;
		GElf_Off off;
		n = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
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
		/* No DWARF here: the ELF symbol, as bfd falls back to it. */
		GElf_Sym sym;
		GElf_Off off;
		const char *name = dwfl_module_addrinfo(m->mod, da, &off, &sym, NULL, NULL, NULL);
		if (name)
			add_entry(a, demangled(a, name), "??:?");
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
