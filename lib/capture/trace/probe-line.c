/* probe-line.c - FILE:LINE: the line tables walked for the functions and
 * inlined copies with code at a line, and the cheapest place in each to
 * probe. */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "debuginfo/disasm.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/insnflow.h"

static bool file_matches(const char *path, const char *want)
{
	size_t lp = strlen(path), lw = strlen(want);
	if (lw > lp || strcmp(path + lp - lw, want))
		return false;
	return lw == lp || path[lp - lw - 1] == '/';
}

void lp_probe_line_row(const struct lp_dwline *l, void *arg)
{
	struct line_walk *w = arg;

	if (!file_matches(l->file, w->file))
		return;
	w->file_seen = true;
	if (!l->valid || !l->stmt || l->end)
		return;
	if (l->line < w->lo && l->line > w->below)
		w->below = l->line;
	if (l->line > w->hi && l->line < w->above)
		w->above = l->line;
	if (l->line < w->lo || l->line > w->hi)
		return;
	/* One address per line and function or inlined copy: its lowest. */
	uint64_t scope = lp_dwarf__func_at(w->dw, l->cu, l->addr);
	size_t k;
	for (k = 0; k < w->nhits; k++)
		if (w->hits[k].scope == scope && w->hits[k].line == l->line)
			break;
	if (k == w->nhits) {
		w->hits = lp_reallocarray(w->hits, w->nhits + 1, sizeof(*w->hits));
		w->hits[w->nhits++] = (struct line_hit){ l->line, l->addr, scope, l->cu, NULL, 0 };
	} else if (l->addr < w->hits[k].addr) {
		w->hits[k].addr = l->addr;
	}
	struct line_hit *h = &w->hits[k];
	h->stmts = lp_reallocarray(h->stmts, h->nstmts + 1, sizeof(*h->stmts));
	h->stmts[h->nstmts++] = l->addr;
}

int lp_probe_resolve_line(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			  struct line_hit **hits, size_t *nhits)
{
	if (!lp_dwarf__has_dwarf(o->dw)) {
		lp_error("probe '%s': %s has no DWARF line information (build with -g)", spec->text, path);
		return -1;
	}
	struct line_walk w = { .file = spec->file, .lo = spec->line, .hi = spec->line, .dw = o->dw,
			       .above = INT_MAX };
	lp_dwarf__each_line(o->dw, lp_probe_line_row, &w);
	*hits = w.hits;
	*nhits = w.nhits;
	if (w.nhits)
		return 0;
	if (!w.file_seen) {
		lp_error("probe '%s': no source file '%s' in the line table of %s", spec->text,
			 spec->file, path);
	} else if (w.below && w.above != INT_MAX) {
		lp_error("probe '%s': no code at line %d; nearest lines with code: %d, %d",
			 spec->text, spec->line, w.below, w.above);
	} else {
		lp_error("probe '%s': no code at line %d; nearest line with code: %d", spec->text,
			 spec->line, w.below ? w.below : w.above);
	}
	return -1;
}

int lp_probe_function_flow(struct elfobj *o, uint64_t cu, uint64_t pc, struct lp_insnflow *f)
{
	Elf *elf = o->elf;
	uint64_t lo[16], hi[16];
	int n = lp_dwarf__func_ranges(o->dw, cu, pc, lo, hi, 16);
	if (n < 0)	/* none, or more ranges than we keep */
		return -1;
	struct lp_range r[16];
	size_t nr = (size_t)n;
	for (size_t i = 0; i < nr; i++)
		r[i] = (struct lp_range){ lo[i], hi[i] };
	/* In address order, for lp_insnflow__find's search. */
	for (size_t i = 1; i < nr; i++)
		for (size_t j = i; j > 0 && r[j].lo < r[j - 1].lo; j--) {
			struct lp_range t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	for (size_t i = 0; i < nr; i++) {
		uint64_t foff;
		if (lp_dwarf__file_offset(elf, r[i].lo, &foff, NULL) < 0)
			goto fail;
		const unsigned char *b = lp_probe_file_bytes(elf, foff, r[i].hi - r[i].lo);
		if (!b || lp_insnflow__decode(b, r[i].hi - r[i].lo, r[i].lo, f) < 0)
			goto fail;
	}
	return 0;
fail:
	lp_insnflow__fini(f);
	return -1;
}

/* Where in a line its probe costs least (PERF-NOTES.md: an instruction the
 * kernel single-steps out of line costs ~10x one it emulates).  The line's
 * first instruction is the natural place; a later one is taken only when
 * it is cheaper, every pass through the first instruction reaches it and
 * nothing else does (straight-line code between them, no jump of the
 * function into it, no switch whose targets are unknown), and it is the
 * line's own: with VARs, it starts a statement of the line (an is_stmt
 * row: where a debugger would stop too) where they can be read; without,
 * any of the line's instructions will do (its count is the same, and at
 * -O2 gcc states few: a loop's jcc, a call are often mid-statement).
 * Returns the address; *cls its class; *why, when it stays single-stepped,
 * why. */
uint64_t lp_probe_choose_line_addr(struct lp_probe_point *pt, struct elfobj *o,
				   const struct line_hit *h, enum lp_insn *cls, const char **why)
{
	Elf *elf = o->elf;
	uint64_t foff;
	*cls = lp_dwarf__file_offset(elf, h->addr, &foff, NULL) == 0 ? lp_probe_insn_at(elf, foff) : LP_INSN_STEPPED;
	*why = NULL;
	if (*cls != LP_INSN_STEPPED)
		return h->addr;
	bool counts = pt->spec->nvars == 0;
	uint64_t last = h->addr;
	for (size_t i = 0; i < h->nstmts; i++)
		if (h->stmts[i] > last)
			last = h->stmts[i];
	if (last == h->addr && !counts) {
		*why = "it has no other statement";
		return h->addr;
	}
	struct lp_insnflow f = { 0 };
	if (lp_probe_function_flow(o, h->cu, h->addr, &f) < 0) {
		*why = "its function's code could not be decoded";
		return h->addr;
	}
	uint64_t best = h->addr;
	long i = lp_insnflow__find(&f, h->addr);
	if (f.indirect_jumps) {
		*why = "its function has a switch through a table (jump targets unknown)";
		i = -1;
	}
	if (i < 0 && !*why)
		*why = "no instruction starts at its address";
	bool past_call = false;	/* a callee may not come back (exit, longjmp) */
	for (long j = i; j >= 0 && (size_t)j < f.n && (counts || f.insns[j].vaddr <= last); j++) {
		const struct lp_insnflow_insn *in = &f.insns[j];
		if (j > i) {
			if (in->vaddr != f.insns[j - 1].vaddr + f.insns[j - 1].size)
				break;	/* the function's next range: not straight on */
			if (lp_insnflow__is_target(&f, in->vaddr)) {
				/* Reached otherwise than through the first: a
				 * probe here or past it would count passes that
				 * skipped the line's start. */
				if (!*why)
					*why = "a jump of its function lands inside it, past its first instruction";
				break;
			}
			bool own = false;
			for (size_t k = 0; k < h->nstmts; k++)
				own |= h->stmts[k] == in->vaddr;
			const char *file;
			int line;
			if (!own && counts && !past_call)
				own = lp_dwarf__line_at(o->dw, h->cu, in->vaddr, &file, &line) &&
				      line == h->line && file_matches(file, pt->spec->file);
			enum lp_insn c = lp_insn__classify(in->bytes, in->size);
			if (own && c < *cls) {
				struct lp_probe_point trial = { .spec = pt->spec };
				int ok = lp_probe_line_values(&trial, o->dw, h->cu, in->vaddr,
							      true) == 0;
				lp_probe_point__fini(&trial);
				if (ok) {
					best = in->vaddr;
					*cls = c;
					if (c == LP_INSN_NOP)
						break;
				} else if (!*why) {
					*why = "its variables cannot be read at its cheaper statements";
				}
			}
		}
		if (in->branches || !in->falls_through)
			break;	/* past it, not every pass */
		past_call |= in->calls;
	}
	if (*cls == LP_INSN_STEPPED && !*why)
		*why = counts ? "none of its instructions reached on every pass is a push, a jump, a call or a nop"
			      : "none of its statements reached on every pass starts with a push, a jump, a call or a nop";
	lp_insnflow__fini(&f);
	return best;
}

void lp_probe_free_hits(struct line_hit *hits, size_t nhits)
{
	for (size_t i = 0; i < nhits; i++)
		free(hits[i].stmts);
	free(hits);
}

/* FILE:LINE: a point at each function or inlined copy with code there. */
int lp_probe_line_points(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			 bool verbose, struct lp_probe_point **points, size_t *n)
{
	struct line_hit *hits;
	size_t nhits;
	if (lp_probe_resolve_line(spec, o, path, &hits, &nhits) < 0)
		return -1;
	for (size_t i = 0; i < nhits; i++) {
		uint64_t off;
		if (lp_dwarf__file_offset(o->elf, hits[i].addr, &off, NULL) < 0)
			continue;
		struct lp_probe_point *pt = lp_probe_new_point(spec, path, points, n);
		char name[512];
		snprintf(name, sizeof(name), "%s:%d", spec->file, spec->line);
		pt->name = lp_strdup(name);
		pt->cfg.kind = LP_PROBE_POINT;
		const char *why;
		uint64_t addr = lp_probe_choose_line_addr(pt, o, &hits[i], &pt->insn, &why);
		if (addr != hits[i].addr && lp_dwarf__file_offset(o->elf, addr, &off, NULL) < 0)
			addr = hits[i].addr, pt->insn = LP_INSN_STEPPED;
		pt->offset = off;
		pt->cfg.vaddr = addr;
		if (lp_probe_line_values(pt, o->dw, hits[i].cu, addr, false) < 0) {
			lp_probe_free_hits(hits, nhits);
			return -1;
		}
		if (pt->insn == LP_INSN_STEPPED)
			lp_error("note: probe '%s': each hit at 0x%llx is single-stepped out of line (insn=stepped in its cost record: about ten times a function probe's cost): %s",
				 spec->text, (unsigned long long)addr, why);
		if (verbose)
			lp_error("%s: %s at 0x%llx (file offset 0x%llx, %s instruction%s)", spec->text,
				 path, (unsigned long long)addr, (unsigned long long)off,
				 lp_insn__name(pt->insn),
				 addr == hits[i].addr ? "" : spec->nvars ? ", a later statement of the line"
				 : ", later in the line");
	}
	lp_probe_free_hits(hits, nhits);
	return 0;
}
