/* dwarf-lines.c - source lines in a file's DWARF (struct lp_dwarf), for
 * lp-trace's line probes and --list: every row of the line tables, the
 * line at an address, the function or inlined copy holding an address and
 * the ranges of the real one, a function's lines from its declaration to
 * its last, and the file that declares a DIE. */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/dwarf-internal.h"

/* The file that declares die: DW_AT_decl_file through its unit's file
 * table, where index 0 is the unit's primary file from DWARF 5 on (clang's
 * usual answer, which elfutils 0.188's dwarf_decl_file does not take). */
const char *lp_dw_decl_file(Dwarf_Die *die)
{
	const char *f = dwarf_decl_file(die);
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;
	if (f || dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &a), &idx) != 0 ||
	    !dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
	    idx >= nfiles)
		return f;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

void lp_dwarf__each_line(struct lp_dwarf *d, void (*fn)(const struct lp_dwline *, void *),
			 void *arg)
{
	Dwarf_Off off = 0;
	Dwarf_Die cu;

	while (lp_dw_next_unit(d->dw, &off, &cu)) {
		Dwarf_Lines *lines;
		size_t nlines;
		uint64_t cuoff = dwarf_dieoffset(&cu);

		if (dwarf_getsrclines(&cu, &lines, &nlines) != 0)
			continue;
		for (size_t i = 0; i < nlines; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			struct lp_dwline row = { .file = dwarf_linesrc(l, NULL, NULL), .cu = cuoff };
			Dwarf_Addr addr = 0;

			if (!row.file)
				continue;
			dwarf_linebeginstatement(l, &row.stmt);
			dwarf_lineendsequence(l, &row.end);
			row.valid = dwarf_lineno(l, &row.line) == 0 && dwarf_lineaddr(l, &addr) == 0;
			row.addr = addr;
			fn(&row, arg);
		}
	}
}

bool lp_dwarf__line_at(struct lp_dwarf *d, uint64_t cu, uint64_t addr, const char **file,
		       int *line)
{
	Dwarf_Die cudie;
	Dwarf_Line *l;

	if (!d->dw || !dwarf_offdie(d->dw, cu, &cudie) || !(l = dwarf_getsrc_die(&cudie, addr)))
		return false;
	*file = dwarf_linesrc(l, NULL, NULL);
	return *file && dwarf_lineno(l, line) == 0;
}

uint64_t lp_dwarf__func_at(struct lp_dwarf *d, uint64_t cu, uint64_t pc)
{
	struct lp_dwscope *sc = lp_dwarf__scope(d, cu, pc);
	uint64_t scope = 0;

	for (int k = 0; k < sc->n; k++) {
		int tag = dwarf_tag(&sc->scopes[k]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			scope = dwarf_dieoffset(&sc->scopes[k]);
			break;
		}
	}
	lp_dwscope__free(sc);
	return scope;
}

int lp_dwarf__func_ranges(struct lp_dwarf *d, uint64_t cu, uint64_t pc, uint64_t *lo,
			  uint64_t *hi, size_t max)
{
	struct lp_dwscope *sc = lp_dwarf__scope(d, cu, pc);
	Dwarf_Die *fn = NULL;
	Dwarf_Addr base, l, h;
	ptrdiff_t off = 0;
	size_t nr = 0;

	for (int k = 0; k < sc->n; k++)
		if (dwarf_tag(&sc->scopes[k]) == DW_TAG_subprogram)
			fn = &sc->scopes[k];	/* the outermost */
	while (fn && nr < max && (off = dwarf_ranges(fn, off, &base, &l, &h)) > 0)
		if (h > l && h - l < (1u << 20)) {
			lo[nr] = l;
			hi[nr++] = h;
		}
	lp_dwscope__free(sc);
	return !nr || off > 0 ? -1 : (int)nr;	/* none, or more ranges than max */
}

/* Address ranges, for lp_dwarf__func_lines. */
struct ranges {
	uint64_t (*r)[2];
	size_t n;
};

static void add_ranges(Dwarf_Die *die, struct ranges *rs)
{
	Dwarf_Addr base, l, h;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &l, &h)) > 0)
		if (h > l) {
			rs->r = lp_reallocarray(rs->r, rs->n + 1, sizeof(*rs->r));
			rs->r[rs->n][0] = l;
			rs->r[rs->n++][1] = h;
		}
}

static bool in_ranges(const struct ranges *rs, uint64_t a)
{
	for (size_t i = 0; i < rs->n; i++)
		if (a >= rs->r[i][0] && a < rs->r[i][1])
			return true;
	return false;
}

/* The copies inlined anywhere inside die: their ranges, and the highest
 * call line of those called from file (*hi). */
static void inlined_within(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, const char *file,
			   struct ranges *rs, int *hi, int depth)
{
	Dwarf_Die child;
	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute a;
			Dwarf_Word cf, cl;
			add_ranges(&child, rs);
			if (dwarf_formudata(dwarf_attr(&child, DW_AT_call_file, &a), &cf) == 0 &&
			    dwarf_formudata(dwarf_attr(&child, DW_AT_call_line, &a), &cl) == 0 &&
			    files && cf < nfiles && !strcmp(dwarf_filesrc(files, cf, NULL, NULL) ?: "", file) &&
			    (int)cl > *hi)
				*hi = (int)cl;
		} else if (tag == DW_TAG_lexical_block) {
			inlined_within(&child, files, nfiles, file, rs, hi, depth + 1);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

bool lp_dwarf__func_lines(struct lp_dwarf *d, uint64_t addr, const char **file, int *lo, int *hi)
{
	Dwarf_Die cu;
	struct func_find ff = { .addr = addr };
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nlines, nfiles;

	if (!lp_dw_unit_of(d, addr, &cu))
		return false;
	dwarf_getfuncs(&cu, lp_dw_func_cb, &ff, 0);
	if (!ff.found || !(*file = lp_dw_decl_file(&ff.die)) || dwarf_decl_line(&ff.die, lo) != 0 ||
	    dwarf_getsrclines(&cu, &lines, &nlines) != 0 || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		return false;
	struct ranges own = { 0 }, inl = { 0 };
	*hi = *lo;
	add_ranges(&ff.die, &own);
	inlined_within(&ff.die, files, nfiles, *file, &inl, hi, 0);
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int line;
		const char *f = dwarf_linesrc(l, NULL, NULL);
		if (!f || dwarf_lineaddr(l, &a) != 0 || dwarf_lineno(l, &line) != 0 ||
		    !in_ranges(&own, a) || in_ranges(&inl, a) || strcmp(f, *file))
			continue;
		if (line > *hi)
			*hi = line;
	}
	free(own.r);
	free(inl.r);
	return true;
}
