/* symbolize-syms.c - a module's symbol table, read once, sorted and shared by
 * every process that maps the file (keyed by build-id), and the name each
 * symbol gives a frame: demangled, without its version, a PLT stub's
 * FUNC@plt, or for a stripped file one of its own from its FDE. */
#include "debuginfo/symbolize.h"
#include "debuginfo/symbolize-internal.h"

#include <inttypes.h>
#include <stdlib.h>

#include "base/util.h"
#include "debuginfo/demangle.h"
#include "debuginfo/plt.h"

void lp_symbolize_symtab_free(struct lp_symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->names);
	free(t);
}

/* By address, then the longer first (one with a size before one
 * without). */
static int start_then_size(const struct lp_sym *x, const struct lp_sym *y)
{
	int c = (x->start > y->start) - (x->start < y->start);
	if (c)
		return c;
	return ((y->end - y->start) > (x->end - x->start)) - ((y->end - y->start) < (x->end - x->start));
}

/* Prefer the symbol with a size, then the longer one, then by name, so
 * aliases resolve the same way every run. */
int lp_symbolize_sym_cmp(const void *a, const void *b)
{
	const struct lp_sym *x = a, *y = b;
	int c = start_then_size(x, y);
	return c ? c : strcmp(x->name, y->name);
}

/* A user symbol table's aliases at one address (libc's
 * __libc_start_main_impl, __libc_start_main_alias_1 and
 * __libc_start_main@@GLIBC_2.34): the one with a size, then one without a
 * symbol version (the version is no part of the function's name), then
 * the one with fewer leading underscores, the shorter, by name. */
static int user_sym_cmp(const void *a, const void *b)
{
	const struct lp_sym *x = a, *y = b;
	int c = start_then_size(x, y);
	if (c)
		return c;
	bool vx = strchr(x->name, '@') != NULL, vy = strchr(y->name, '@') != NULL;
	if (vx != vy)
		return vx - vy;
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	if (ux != uy)
		return (ux > uy) - (ux < uy);
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return (lx > ly) - (lx < ly);
	return strcmp(x->name, y->name);
}

/* The last symbol starting at or before addr, if addr lies inside it. */
struct lp_sym *lp_symbolize_sym_find(struct lp_sym *syms, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* Several symbols at one address: the first of them (lp_symbolize_sym_cmp order). */
	while (lo > 1 && syms[lo - 2].start == syms[lo - 1].start)
		lo--;
	struct lp_sym *sym = &syms[lo - 1];
	if (sym->end > sym->start ? addr < sym->end : true)
		return sym;
	return NULL;
}

/* Sorts (by cmp), drops duplicates at one address and copies the names
 * into one block, without their symbol versions when unversion says so. */
void lp_symbolize_syms_finish(struct lp_sym *syms, size_t *n, char **names,
			      int (*cmp)(const void *, const void *), bool unversion)
{
	size_t total = 0, k = 0;
	char *p;

	qsort(syms, *n, sizeof(*syms), cmp);
	for (size_t i = 0; i < *n; i++)
		if (k == 0 || syms[i].start != syms[k - 1].start)
			syms[k++] = syms[i];
	for (size_t i = 0; i < k; i++)
		total += strlen(syms[i].name) + 1;
	*names = p = lp_malloc(total ? total : 1);
	for (size_t i = 0; i < k; i++) {
		size_t len = unversion ? lp_symbol__unversioned_len(syms[i].name)
				       : strlen(syms[i].name);

		memcpy(p, syms[i].name, len);
		p[len] = '\0';
		syms[i].name = p;
		p += len + 1;
	}
	/* A symbol without a size runs to the next one; the last one, a page
	 * (not to the end of the address space). */
	for (size_t i = 0; i < k; i++) {
		syms[i].unsized = syms[i].end == syms[i].start;
		if (syms[i].unsized)
			syms[i].end = i + 1 < k ? syms[i + 1].start : syms[i].start + 4096;
	}
	*n = k;
}

static uint64_t module_key(struct lp_dwmod *mod, const char *name)
{
	const unsigned char *bits;
	int len = lp_dwmod__build_id(mod, &bits);

	if (len > 0)
		return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT, bits, len));
	/* "[vdso: PID]": one kernel's vDSO, the same in every process. */
	if (!strncmp(name, "[vdso", 5))
		name = "[vdso]";
	return lp_hashmap__key(lp_hash_bytes(LP_HASH_INIT ^ 1, name, strlen(name)));
}

struct lp_symtab *lp_symbolize_module_symtab(struct lp_symbolizer *s, struct lp_dwmod *mod)
{
	void **userdata = lp_dwmod__userdata(mod);
	uint64_t start;
	const char *name = lp_dwmod__info(mod, &start, NULL);

	if (*userdata)
		return *userdata;

	uint64_t key = module_key(mod, name ? name : "");
	struct lp_symtab *t = lp_hashmap__get(&s->symtabs, key);
	if (t) {
		*userdata = t;
		return t;
	}
	t = lp_calloc(1, sizeof(*t));
	int nsyms = lp_dwmod__nsyms(mod);
	size_t cap = nsyms > 0 ? (size_t)nsyms : 0;
	t->syms = lp_calloc(cap ? cap : 1, sizeof(*t->syms));
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		uint64_t addr;
		GElf_Word shndx;
		const char *sname = lp_dwmod__sym(mod, i, &sym, &addr, &shndx);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!sname || !*sname || shndx == SHN_UNDEF || addr < start)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		t->syms[t->n].start = addr - start;
		t->syms[t->n].end = addr - start + sym.st_size;
		t->syms[t->n].name = sname;
		t->n++;
	}
	/* The PLT's stubs, which have no symbols: FUNC@plt. */
	uint64_t bias;
	Elf *elf = lp_dwmod__elf(mod, &bias);
	struct lp_plt_stub *stubs = NULL;
	size_t nstubs = elf ? lp_plt__stubs(elf, &stubs) : 0;
	t->syms = lp_reallocarray(t->syms, t->n + nstubs + 1, sizeof(*t->syms));
	for (size_t i = 0; i < nstubs; i++)
		if (stubs[i].start + bias >= start)
			t->syms[t->n++] = (struct lp_sym){ .start = stubs[i].start + bias - start,
							   .end = stubs[i].end + bias - start,
							   .name = stubs[i].name, .plt = true };
	lp_symbolize_syms_finish(t->syms, &t->n, &t->names, user_sym_cmp, true);
	lp_plt__free(stubs, nstubs);
	/* An empty table may only mean the file could not be read this time
	 * (a vDSO read from a process that is gone): not shared by build-id,
	 * but kept (under its own address) to be freed at the end. */
	if (!t->n)
		key = lp_hashmap__key((uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ULL);
	lp_hashmap__put(&s->symtabs, key, t);
	*userdata = t;
	s->st.modules++;
	s->st.symbols += t->n;
	return t;
}

/* The name a user symbol's frames show: demangled (C++, Rust) unless
 * --no-demangle; made once per symbol, at the first address in it. */
static const char *shown_name(struct lp_symbolizer *s, struct lp_sym *sym)
{
	if (sym->shown)
		return sym->shown;
	char *d = s->no_demangle ? NULL : lp_symbol__demangle(sym->name, false);
	sym->shown = d ? lp_dict__string(s->dict, d, strlen(d)) : sym->name;
	free(d);
	return sym->shown;
}

/* Cached identities of addresses no symbol covers (ident_name). */
struct lp_ident {
	const struct lp_symtab *t;
	uint64_t vaddr;
	const char *name;	/* NULL: none */
};

/* An address in a module that no symbol covers (a stripped binary's
 * static function, or past the end of a sized symbol) still gets an
 * identity of its own function, "MODULE+0xSTART" as perf report shows it:
 * START the function's first address in the file (ELF virtual address):
 * the start of the FDE covering it (.eh_frame, which stripping keeps),
 * else the end of the symbol before it (the gap it is in).  NULL when
 * neither is known.  Looked up once per (file, address): an FDE lookup
 * parses CFI and allocates. */
static const char *ident_name(struct lp_symbolizer *s, struct lp_dwmod *mod, struct lp_symtab *t,
			      uint64_t mstart, const char *modname, uint64_t look)
{
	uint64_t bias;

	if (!modname[0] || !lp_dwmod__bias(mod, &bias))
		return NULL;
	uint64_t vaddr = look - bias, start;
	uint64_t h = lp_hash_bytes(LP_HASH_INIT, &t, sizeof(t));
	uint64_t key = lp_hashmap__key(lp_hash_bytes(h, &vaddr, sizeof(vaddr)));
	struct lp_ident *id = lp_hashmap__get(&s->idents, key);

	if (id && id->t == t && id->vaddr == vaddr)
		return id->name;
	if (!id) {
		id = lp_malloc(sizeof(*id));
		lp_hashmap__put(&s->idents, key, id);
	}
	id->t = t;
	id->vaddr = vaddr;
	id->name = NULL;
	if (!lp_dwmod__fde_start(mod, vaddr, &start)) {
		/* The last symbol before look, which ends before it. */
		size_t lo = 0, hi = t->n;
		uint64_t rel = look - mstart;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (t->syms[mid].start <= rel)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* A PLT stub ends no function: what follows the PLT is code
		 * the file's symbols do not mark either. */
		if (!lo || t->syms[lo - 1].end > rel || t->syms[lo - 1].plt)
			return NULL;
		start = t->syms[lo - 1].end + mstart - bias;
	}
	const char *base = strrchr(modname, '/');
	char buf[512];
	int len = snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base ? base + 1 : modname, start);

	id->name = lp_dict__string(s->dict, buf, len < (int)sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
	return id->name;
}

/* The name of the function holding look in module mod (symbol table t,
 * lowest address mstart, path modname): its symbol's, shown as perf shows
 * it, else its own identity (ident_name); NULL when neither is known. */
const char *lp_symbolize_function_name(struct lp_symbolizer *s, struct lp_dwmod *mod,
				       struct lp_symtab *t, uint64_t mstart, const char *modname,
				       uint64_t look)
{
	uint64_t bias, fstart;
	bool have_bias = lp_dwmod__bias(mod, &bias);

	/* An address in the module's span but in none of its file's code: a
	 * JIT's code (node maps some between its segments) not yet in its
	 * map.  Named after the symbol before it, it would keep that wrong
	 * name in the cache; lp_symbolize_unresolved, it is looked up again. */
	if (have_bias && !lp_dwmod__in_code(mod, look - bias))
		return NULL;

	struct lp_sym *sym = lp_symbolize_sym_find(t->syms, t->n, look - mstart);
	/* A symbol without a size runs to the next one, unless the FDE
	 * holding look starts past it: a function of its own that the symbol
	 * table does not name. */
	if (sym && sym->unsized && have_bias &&
	    lp_dwmod__fde_start(mod, look - bias, &fstart) && fstart > sym->start + mstart - bias)
		sym = NULL;
	if (sym && sym->name[0])
		return shown_name(s, sym);
	return ident_name(s, mod, t, mstart, modname, look);
}
