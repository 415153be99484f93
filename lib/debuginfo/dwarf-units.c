/* dwarf-units.c - the compile unit holding an address when
 * .debug_aranges does not say (below): the units' own ranges, read once per
 * file, for a plain Dwarf (dwarf-elf.c's lp_dw_unit_of) and for a Dwfl's
 * modules (kept by module until their Dwfl is freed: lp_dw_dwfl_free); and
 * the walk over a file's units (lp_dw_next_unit). */
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "debuginfo/dwarf-internal.h"

/* --- compile units by address, without .debug_aranges -------------------
 * dwarf_addrdie and libdwfl find a unit through .debug_aranges, which clang
 * does not write unless asked (-gdwarf-aranges): the units' own ranges
 * (DW_AT_low_pc/high_pc, DW_AT_ranges), read once per file. */

struct unit_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off off;		/* its DIE */
};

struct units {
	struct unit_range *v;	/* by lo */
	size_t n;
};

static int unit_range_cmp(const void *a, const void *b)
{
	const struct unit_range *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The unit of dw after the one at *off (0: the first): its DIE; false past
 * the last. */
bool lp_dw_next_unit(Dwarf *dw, Dwarf_Off *off, Dwarf_Die *cu)
{
	Dwarf_Off next;
	size_t hsize;

	while (dw && dwarf_nextcu(dw, *off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Off cuoff = *off + hsize;
		*off = next;
		if (dwarf_offdie(dw, cuoff, cu))
			return true;
	}
	return false;
}

struct units *lp_dw_units_read(Dwarf *dw)
{
	struct units *u = lp_calloc(1, sizeof(*u));
	Dwarf_Off off = 0;
	Dwarf_Die die;
	while (lp_dw_next_unit(dw, &off, &die)) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t at = 0;
		if (dwarf_tag(&die) != DW_TAG_compile_unit)
			continue;
		while ((at = dwarf_ranges(&die, at, &base, &lo, &hi)) > 0) {
			u->v = lp_reallocarray(u->v, u->n + 1, sizeof(*u->v));
			u->v[u->n++] = (struct unit_range){ lo, hi, dwarf_dieoffset(&die) };
		}
	}
	if (u->n)
		qsort(u->v, u->n, sizeof(*u->v), unit_range_cmp);
	return u;
}

void lp_dw_units_free(struct units *u)
{
	if (u)
		free(u->v);
	free(u);
}

/* The unit of dw whose range holds addr: the last range starting at or
 * before it, or one before (a unit's span may hold another's). */
bool lp_dw_units_find(const struct units *u, Dwarf *dw, Dwarf_Addr addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (u->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;)
		if (addr < u->v[i].hi)
			return dwarf_offdie(dw, u->v[i].off, cu) != NULL;
	return false;
}

/* The units of the modules libdwfl finds no unit in, by module: read once
 * each, freed with their Dwfl (lp_dw_dwfl_free).  A module's userdata is
 * not lp's to use (libdwfl's callbacks are given it).  Symbolizers may run
 * in threads of their own: one lock. */
static struct lp_hashmap module_units;
static pthread_mutex_t module_units_lock = PTHREAD_MUTEX_INITIALIZER;

/* A module's unit (addr a module address: less its bias, a file one),
 * when libdwfl finds none: dw, or NULL. */
Dwarf *lp_dw_module_unit(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
	Dwarf *dw = dwfl_module_getdwarf(mod, bias);
	if (!dw)
		return NULL;
	uint64_t key = lp_hashmap__key((uint64_t)(uintptr_t)mod);
	pthread_mutex_lock(&module_units_lock);
	if (!module_units.cap)
		lp_hashmap__init(&module_units);
	struct units *u = lp_hashmap__get(&module_units, key);
	if (!u)
		lp_hashmap__put(&module_units, key, u = lp_dw_units_read(dw));
	bool found = lp_dw_units_find(u, dw, addr - *bias, cu);
	pthread_mutex_unlock(&module_units_lock);
	return found ? dw : NULL;
}

static int free_module_units(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			     void *arg)
{
	(void)userdata, (void)name, (void)start, (void)arg;
	lp_dw_units_free(lp_hashmap__del(&module_units, lp_hashmap__key((uint64_t)(uintptr_t)mod)));
	return DWARF_CB_OK;
}

void lp_dw_dwfl_free(Dwfl *dwfl)
{
	pthread_mutex_lock(&module_units_lock);
	if (module_units.count)
		dwfl_getmodules(dwfl, free_module_units, NULL, 0);
	pthread_mutex_unlock(&module_units_lock);
	dwfl_end(dwfl);
}
