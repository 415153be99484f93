/* dwarf-scopes.c - a function's structure as its DWARF gives it (struct
 * lp_dwnode, for lp-trace --blocks): the calls inlined into it and the
 * lexical blocks of its source, nested (a call inlined into an inlined
 * callee, a block in a block or in an inlined callee), each with its code's
 * address ranges; an inlined call with its callee, call site and entry, a
 * block with its lines and the names of the variables declared in it.
 * What the compiler described, not what the code does: the loops and
 * basic blocks come from the instructions (cfg.h).  And where a function
 * is inlined, through the whole DWARF (struct lp_dwcopy). */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/dwarf-internal.h"

/* Nodes deeper than this are a malformed tree's (GCC nests as deep as the
 * source does; a few dozen at most). */
#define MAX_DEPTH 64

struct walk {
	Dwarf_Files *files;	/* the unit's, for call files; NULL: unknown */
	size_t nfiles;
	Dwarf_Die cu;
	struct lp_dwnode *v;
	size_t n;
};

/* A child DIE to list, and where its code starts (for the order). */
struct kid {
	Dwarf_Die die;
	uint64_t low;		/* UINT64_MAX: no code */
	uint64_t off;		/* its DIE's offset: the tie-break */
};

static int kid_cmp(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;

	if (x->low != y->low)
		return (x->low > y->low) - (x->low < y->low);
	return (x->off > y->off) - (x->off < y->off);
}

static int range_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return (x[0] > y[0]) - (x[0] < y[0]);
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The names of the variables declared directly in block (through their
 * abstract origins: an inlined callee's block names them there). */
static void block_vars(Dwarf_Die *block, struct lp_dwnode *nd)
{
	Dwarf_Die child;

	if (dwarf_child(block, &child) != 0)
		return;
	do {
		const char *name;
		if (dwarf_tag(&child) != DW_TAG_variable || !(name = dwarf_diename(&child)))
			continue;
		nd->vars = lp_reallocarray(nd->vars, nd->nvars + 1, sizeof(*nd->vars));
		nd->vars[nd->nvars++] = name;
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* Appends to kids the inlined calls and blocks directly in die, looking
 * through a block that is none of the source's: GCC wraps an inlined
 * callee's body in a block of its own, which the callee's abstract tree
 * has not (its locals are the function's there): a block with no abstract
 * origin directly in a function or copy that has one. */
static void add_kids(Dwarf_Die *die, struct kid **kids, size_t *nk)
{
	Dwarf_Die child;
	bool concrete = dwarf_hasattr(die, DW_AT_abstract_origin);

	if (dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		if (tag == DW_TAG_lexical_block && concrete && lp_dw_is_function(die) &&
		    !dwarf_hasattr(&child, DW_AT_abstract_origin)) {
			add_kids(&child, kids, nk);
			continue;
		}
		struct addr_ranges rs = { 0 };
		lp_dw_add_ranges(&child, &rs);
		struct kid k = { child, UINT64_MAX, dwarf_dieoffset(&child) };
		for (size_t i = 0; i < rs.n; i++)
			if (rs.r[i][0] < k.low)
				k.low = rs.r[i][0];
		free(rs.r);
		*kids = lp_reallocarray(*kids, *nk + 1, sizeof(**kids));
		(*kids)[(*nk)++] = k;
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* Sorts rs and joins the ranges that touch or overlap. */
static void merge_ranges(struct addr_ranges *rs)
{
	size_t k = 0;

	if (!rs->n)
		return;
	qsort(rs->r, rs->n, sizeof(*rs->r), range_cmp);
	for (size_t i = 1; i < rs->n; i++) {
		if (rs->r[i][0] <= rs->r[k][1]) {
			if (rs->r[i][1] > rs->r[k][1])
				rs->r[k][1] = rs->r[i][1];
		} else {
			rs->r[++k][0] = rs->r[i][0];
			rs->r[k][1] = rs->r[i][1];
		}
	}
	rs->n = k + 1;
}

/* The inlined calls and blocks directly in die (file: the file of the
 * function or callee they are in), each followed by those it holds. */
static void walk_children(struct walk *w, Dwarf_Die *die, int parent, int depth, const char *file)
{
	struct kid *kids = NULL;
	size_t nk = 0;

	if (depth > MAX_DEPTH)
		return;
	add_kids(die, &kids, &nk);
	if (nk)
		qsort(kids, nk, sizeof(*kids), kid_cmp);
	for (size_t i = 0; i < nk; i++) {
		Dwarf_Die *d = &kids[i].die;
		struct lp_dwnode nd = { .parent = parent, .depth = depth };
		struct addr_ranges rs = { 0 };
		const char *inner = file;

		lp_dw_add_ranges(d, &rs);
		merge_ranges(&rs);
		nd.ranges = rs.r;
		nd.nranges = rs.n;
		if (dwarf_tag(d) == DW_TAG_inlined_subroutine) {
			Dwarf_Addr entry;
			nd.inlined = true;
			lp_dw_func_of(d, w->files, w->nfiles, false, &nd.fn);
			nd.entry = dwarf_entrypc(d, &entry) == 0 ? entry : rs.n ? rs.r[0][0] : 0;
			/* Its blocks' lines are the callee's, in its file. */
			inner = lp_dw_decl_file(d);
		} else {
			nd.file = file;
			if (file)
				lp_dw_own_lines(&w->cu, d, file, &nd.lo, &nd.hi);
			block_vars(d, &nd);
		}
		w->v = lp_reallocarray(w->v, w->n + 1, sizeof(*w->v));
		w->v[w->n++] = nd;
		walk_children(w, d, (int)w->n - 1, depth + 1, inner);
	}
	free(kids);
}

bool lp_dwarf__structure(struct lp_dwarf *d, uint64_t addr, struct lp_dwnode **nodes, size_t *n)
{
	struct func_find ff = { .addr = addr };
	struct walk w = { 0 };

	*nodes = NULL;
	*n = 0;
	if (!d->dw || !lp_dw_unit_of(d, addr, &w.cu))
		return false;
	dwarf_getfuncs(&w.cu, lp_dw_func_cb, &ff, 0);
	if (!ff.found)
		return false;
	if (dwarf_getsrcfiles(&w.cu, &w.files, &w.nfiles) != 0)
		w.files = NULL;
	walk_children(&w, &ff.die, -1, 1, lp_dw_decl_file(&ff.die));
	*nodes = w.v;
	*n = w.n;
	return true;
}

void lp_dwnodes__free(struct lp_dwnode *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(nodes[i].ranges);
		free(nodes[i].vars);
	}
	free(nodes);
}

/* The inlined copies of one function, looked for through a whole DWARF. */
struct copies {
	const char *name;
	void (*fn)(const struct lp_dwcopy *, void *);
	void *arg;
	Dwarf_Files *files;
	size_t nfiles;
	const char *caller;
	size_t n;
};

static void find_copies(struct copies *c, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			const char *nm = dwarf_diename(&child);
			if (nm && !strcmp(nm, c->name)) {
				struct lp_dwcopy cp = { .caller = c->caller };
				Dwarf_Addr entry, lo;
				lp_dw_func_of(&child, c->files, c->nfiles, false, &cp.fn);
				cp.entry = dwarf_entrypc(&child, &entry) == 0 ? entry
					   : dwarf_lowpc(&child, &lo) == 0 ? lo : 0;
				c->n++;
				c->fn(&cp, c->arg);
			}
		}
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block)
			find_copies(c, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int copies_in_func(Dwarf_Die *func, void *arg)
{
	struct copies *c = arg;

	c->caller = dwarf_diename(func);
	find_copies(c, func, 1);
	return DWARF_CB_OK;
}

size_t lp_dwarf__inlined_copies(struct lp_dwarf *d, const char *name,
				void (*fn)(const struct lp_dwcopy *, void *), void *arg)
{
	struct copies c = { .name = name, .fn = fn, .arg = arg };
	Dwarf_Off off = 0;
	Dwarf_Die cu;

	while (d->dw && lp_dw_next_unit(d->dw, &off, &cu)) {
		if (dwarf_getsrcfiles(&cu, &c.files, &c.nfiles) != 0)
			c.files = NULL;
		dwarf_getfuncs(&cu, copies_in_func, &c, 0);
	}
	return c.n;
}
