/* dwarf-internal.h - private to lib/debuginfo/dwarf*.c: the state of an
 * lp_dwarf and of an lp_dwscope, which the pieces of the dwarf module
 * share, and the functions one piece calls in another.  Not for any other
 * file: the API is dwarf.h.
 *
 * Names: lp_dwproc__VERB, lp_dwfile__VERB, lp_dwmod__VERB, lp_dwarf__VERB
 * and lp_dwscope__VERB are the public API (dwarf.h); lp_dw_NAME, one
 * underscore, a function of one piece that another calls.
 *
 * The pieces (with this header, the files lib/layers lets include libdw's
 * headers; unwind.c has libdwfl.h for its own part):
 *   dwarf.c        libdwfl's Dwfl: a process's modules, a file by path, and
 *                  what a module answers (symbols, lines, inline chains)
 *   dwarf-units.c  the compile unit holding an address without
 *                  .debug_aranges, for both ways in
 *   dwarf-elf.c    a file's Dwarf for lp-trace's probes (struct lp_dwarf):
 *                  where its debug file is, its units, its CFI
 *   dwarf-vars.c   types, functions' parameters, variables in scope, their
 *                  locations and members (struct lp_dwscope)
 *   dwarf-lines.c  line tables and the functions holding an address
 *   dwarf-scopes.c a function's inlined calls and lexical blocks, as a tree
 *
 * It does not include dwarf.h, whose types nothing here needs: dwarf.c
 * includes it, and lib/layers takes a header's include for its module's,
 * so dwarf.h -> dwarf-internal.h -> dwarf.c would be a cycle.  Each
 * dwarf*.c that needs dwarf.h includes it itself. */
#ifndef LP_DWARF_INTERNAL_H
#define LP_DWARF_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct units;

/* --- compile units by address (dwarf-units.c) -------------------------- */

/* The unit of dw after the one at *off (0: the first). */
bool lp_dw_next_unit(Dwarf *dw, Dwarf_Off *off, Dwarf_Die *cu);
/* dw's units' ranges, read once; freed with lp_dw_units_free (NULL too). */
struct units *lp_dw_units_read(Dwarf *dw);
void lp_dw_units_free(struct units *u);
/* The unit of dw whose range holds addr (a file address). */
bool lp_dw_units_find(const struct units *u, Dwarf *dw, Dwarf_Addr addr, Dwarf_Die *cu);
/* A module's unit when libdwfl finds none: its Dwarf, or NULL. */
Dwarf *lp_dw_module_unit(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *cu, Dwarf_Addr *bias);
/* dwfl_end, the units lp_dw_module_unit read for its modules freed first. */
void lp_dw_dwfl_free(Dwfl *dwfl);

/* --- Dwfl's modules (dwarf.c) ----------------------------------------- */

/* A subprogram, an inlined copy or an entry point. */
bool lp_dw_is_function(Dwarf_Die *die);
/* die (a function or an inlined copy) as one function of a chain (dwarf.h's
 * lp_dwfunc): its names and an inlined copy's call site, its file through
 * files (NULL: its unit's files unknown); nm: its language does not mangle. */
struct lp_dwfunc;
void lp_dw_func_of(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, bool nm,
		   struct lp_dwfunc *f);

/* --- a plain Dwarf read from an ELF (dwarf-elf.c) ----------------------- */

struct lp_dwarf {
	Elf *code;
	Dwarf *dw;		/* NULL: no DWARF; libdwfl's, freed with its module */
	const char *debug_path;	/* the separate debug file it is in; NULL: none */
	Dwarf_CFI *cfi[2];	/* .eh_frame, .debug_frame: read at first use */
	bool cfi_read;
	struct units *units;	/* read at first need (lp_dw_unit_of) */
};

/* The compile unit holding file address addr. */
bool lp_dw_unit_of(struct lp_dwarf *d, Dwarf_Addr addr, Dwarf_Die *cu);

/* --- values: types, functions, variables (dwarf-vars.c) ----------------- */

/* The function starting at addr, found by dwarf_getfuncs(cu,
 * lp_dw_func_cb, &ff, 0). */
struct func_find {
	uint64_t addr;
	Dwarf_Die die;
	bool found;
};
int lp_dw_func_cb(Dwarf_Die *die, void *arg);

struct lp_dwscope {
	struct lp_dwarf *d;
	uint64_t pc;
	Dwarf_Die *scopes;
	int n;
	Dwarf_Die var;		/* lp_dwscope__var's */
	/* lp_dwscope__nvars': each variable and the scope it is in */
	Dwarf_Die *vars;
	int *var_scope;
	size_t nvars;
	bool vars_read;
};

/* --- lines (dwarf-lines.c) --------------------------------------------- */

/* The file that declares die (DWARF 5's index 0 too), or NULL. */
const char *lp_dw_decl_file(Dwarf_Die *die);
/* Address ranges [r[i][0], r[i][1]), file addresses. */
struct addr_ranges {
	uint64_t (*r)[2];
	size_t n;
};
/* Appends die's non-empty ranges to rs (rs->r malloc'd). */
void lp_dw_add_ranges(Dwarf_Die *die, struct addr_ranges *rs);
/* Widens [*lo, *hi] (0: empty) by the lines of die's own code in file (a
 * name as cu's line table gives it): the rows of cu's line table in die's
 * ranges but not in those of a copy inlined anywhere in it, and the call
 * lines of those copies called from file. */
void lp_dw_own_lines(Dwarf_Die *cu, Dwarf_Die *die, const char *file, int *lo, int *hi);

#endif
