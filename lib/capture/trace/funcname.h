/* funcname.h - a function named as a user writes it, among a file's
 * function symbols: by its symbol (C, or a mangled C++ or Rust name), or
 * by the demangled name a profile shows ("store::Shop::checkout", its end
 * after a "::", a Rust method by its path), its parameter list picking an
 * overload ("traced(int)"); with every compiled copy of it, the clones
 * gcc and clang make (NAME.isra.0, NAME.llvm.123).  When none is found,
 * the closest names ("did you mean").  Reads symbols lp-trace's probe
 * resolution (probe-elf.c) has loaded; no ELF of its own. */
#ifndef LP_FUNCNAME_H
#define LP_FUNCNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lp_fsym {
	const char *name;
	uint64_t value, size;
	bool ifunc;		/* STT_GNU_IFUNC: the resolver, not the function */
};

struct lp_fsyms {
	struct lp_fsym *syms;
	size_t nsyms;
};

/* What the user wrote. */
struct lp_fname_query {
	const char *text;	/* the probe as given, for messages */
	const char *func;	/* the name */
	const char *params;	/* "(int, char**)" when given, else NULL */
	bool params_or_args;	/* "(x)" may be values to capture instead */
	bool no_demangle;	/* spans named by the symbol */
	bool params_used;	/* out: the list named parameters, not values */
};

/* One compiled copy of a function: the function itself (copy NULL) or a
 * clone (copy its suffix, "isra.0"). */
struct lp_fcopy {
	const struct lp_fsym *sym;
	char *copy;
};

/* q's function among o's symbols, with every compiled copy of it (a part
 * split off by partial inlining only when nothing whole is left; cold
 * parts never).  1, *out and *nout: found, *shown the name its spans take
 * (malloc'd; NULL for a C function); 0: none; -1: more than one function
 * (overloads, said on stderr with each of them) or no copy with q's
 * parameters (said).  A copy named by its own symbol is that copy alone. */
int lp_fname__find(const struct lp_fsyms *o, struct lp_fname_query *q, const char *path,
		   struct lp_fcopy **out, size_t *nout, char **shown);
void lp_fname__free_copies(struct lp_fcopy *c, size_t n);

/* "; did you mean: a, b, c" for the names closest to name, or "". */
void lp_fname__suggest(const struct lp_fsyms *o, const char *name, char *buf, size_t size);

/* The symbol named name exactly, or NULL. */
const struct lp_fsym *lp_fname__sym(const struct lp_fsyms *o, const char *name);

/* Where the suffix of a compiler's copy of a function starts in symbol
 * name: gcc's clones (NAME.isra.0, NAME.constprop.0, NAME.part.0,
 * NAME.lto_priv.0, chained) and clang's (NAME.llvm.123,
 * NAME.specialized.1); else NULL.  *cold: a part split off cold
 * (NAME.cold), which no call enters. */
const char *lp_fname__clone_suffix(const char *name, bool *cold);

#endif
