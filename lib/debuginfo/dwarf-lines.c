/* dwarf-lines.c - source lines in a file's DWARF (struct lp_dwarf), for
 * lp-trace's line probes and --list: every row of the line tables, the
 * line at an address, the function or inlined copy holding an address and
 * the ranges of the real one, a function's lines from its declaration to
 * its last (and any DIE's own lines: a lexical block's), and the file that
 * declares a DIE. */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <limits.h>
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

void lp_dw_add_ranges(Dwarf_Die *die, struct addr_ranges *rs)
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

static bool in_ranges(const struct addr_ranges *rs, uint64_t a)
{
	for (size_t i = 0; i < rs->n; i++)
		if (a >= rs->r[i][0] && a < rs->r[i][1])
			return true;
	return false;
}

static void widen(int line, int *lo, int *hi)
{
	if (!*lo || line < *lo)
		*lo = line;
	if (line > *hi)
		*hi = line;
}

/* The copies inlined anywhere inside die: their ranges, and [*lo, *hi]
 * widened by the call lines of those called from file. */
static void inlined_within(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, const char *file,
			   struct addr_ranges *rs, int *lo, int *hi, int depth)
{
	Dwarf_Die child;
	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Attribute a;
			Dwarf_Word cf, cl;
			lp_dw_add_ranges(&child, rs);
			if (dwarf_formudata(dwarf_attr(&child, DW_AT_call_file, &a), &cf) == 0 &&
			    dwarf_formudata(dwarf_attr(&child, DW_AT_call_line, &a), &cl) == 0 &&
			    files && cf < nfiles && !strcmp(dwarf_filesrc(files, cf, NULL, NULL) ?: "", file) &&
			    cl > 0 && cl <= INT_MAX)
				widen((int)cl, lo, hi);
		} else if (tag == DW_TAG_lexical_block) {
			inlined_within(&child, files, nfiles, file, rs, lo, hi, depth + 1);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

void lp_dw_own_lines(Dwarf_Die *cu, Dwarf_Die *die, const char *file, int *lo, int *hi)
{
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nlines, nfiles;

	if (dwarf_getsrclines(cu, &lines, &nlines) != 0 || dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		return;
	struct addr_ranges own = { 0 }, inl = { 0 };
	lp_dw_add_ranges(die, &own);
	inlined_within(die, files, nfiles, file, &inl, lo, hi, 0);
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i), *next;
		Dwarf_Addr a, na;
		int line;
		const char *f = dwarf_linesrc(l, NULL, NULL);
		if (!f || dwarf_lineaddr(l, &a) != 0 || dwarf_lineno(l, &line) != 0 || line <= 0 ||
		    !in_ranges(&own, a) || in_ranges(&inl, a) || strcmp(f, file))
			continue;
		/* A row the next one starts at the same address holds no
		 * code (GCC's views: an inlined callee's last line, then its
		 * caller's, at one instruction). */
		bool end;
		if (i + 1 < nlines && (next = dwarf_onesrcline(lines, i + 1)) &&
		    dwarf_lineaddr(next, &na) == 0 && na == a &&
		    dwarf_lineendsequence(l, &end) == 0 && !end)
			continue;
		widen(line, lo, hi);
	}
	free(own.r);
	free(inl.r);
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
	/* From the declaration: its own lines above it do not count. */
	int olo = 0, ohi = 0;
	lp_dw_own_lines(&cu, &ff.die, *file, &olo, &ohi);
	*hi = ohi > *lo ? ohi : *lo;
	return true;
}
