/* probe-file.c - discovery (lp-trace --list, --lines, --vars): the
 * questions lp_probe__resolve answers for one probe, asked of a file opened
 * once and answered by the same code. */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "capture/kfeatures.h"
#include "capture/trace/funcname.h"
#include "capture/trace/hazard.h"
#include "debuginfo/dwarf.h"

struct lp_probe_file {
	struct elfobj o;
	char *path, *exe;
	struct lp_hazard hz;
	bool hz_read;
};

struct lp_probe_file *lp_probe_file__open(const char *path, const char *exe)
{
	struct lp_probe_file *f = lp_calloc(1, sizeof(*f));
	if (lp_probe_elfobj_open(&f->o, path) < 0) {
		lp_probe_elfobj_close(&f->o);
		free(f);
		return NULL;
	}
	f->path = lp_strdup(path);
	f->exe = exe ? lp_strdup(exe) : NULL;
	return f;
}

void lp_probe_file__free(struct lp_probe_file *f)
{
	if (!f)
		return;
	lp_probe_elfobj_close(&f->o);
	free(f->path);
	free(f->exe);
	free(f);
}

struct lp_dwarf *lp_probe_file__dwarf(struct lp_probe_file *f)
{
	return f->o.dw;
}

const char *lp_probe_file__debug_path(const struct lp_probe_file *f)
{
	return f->o.dbg_path;
}

bool lp_probe_file__stripped(const struct lp_probe_file *f)
{
	return f->o.stripped;
}

bool lp_probe_file__func(const struct lp_probe_file *f, size_t i, struct lp_probe_func *out)
{
	if (i >= f->o.fs.nsyms)
		return false;
	const struct lp_fsym *s = &f->o.fs.syms[i];
	*out = (struct lp_probe_func){ s->name, s->value, s->size, s->ifunc };
	return true;
}

int lp_probe_file__returns(struct lp_probe_file *f, size_t i, char *why, size_t whysize)
{
	const struct lp_fsym *s = &f->o.fs.syms[i];
	uint64_t off;
	why[0] = '\0';
	if (s->ifunc) {
		snprintf(why, whysize, "an IFUNC resolver, run once by ld.so");
		return -1;
	}
	if (lp_dwarf__file_offset(f->o.elf, s->value, &off, NULL) < 0) {
		snprintf(why, whysize, "not in a loaded segment");
		return -1;
	}
	if (!f->hz_read) {
		lp_probe_hazards(&f->o, f->path, f->exe, &f->hz);
		f->hz_read = true;
	}
	/* As func_entry decides it, with --returns auto and nothing said. */
	struct lp_probe_spec spec = { .type = LP_PROBE_FUNC, .text = (char *)s->name,
				      .func = (char *)s->name, .returns = LP_RETURNS_AUTO };
	struct lp_probe_point pt = { .spec = &spec,
				      .offset = off + lp_probe_skip_endbr(f->o.elf, off) };
	int r = lp_probe_choose_returns(&spec, &f->o, f->path, &f->hz, s, s->value, false, &pt, why,
					whysize);
	if (r == 0 && pt.returns == LP_RETURNS_INSN)
		snprintf(why, whysize, "%s%s", pt.returns_why,
			 pt.dl_gate && lp_kfeature__has(LP_KF_UPROBE_SESSION) &&
			 lp_kfeature__has(LP_KF_UPROBE_MULTI)
			 ? "; traced in a process: a uretprobe per call until it loads a library that can throw" : "");
	r = r < 0 ? -1 : (int)pt.returns;
	lp_probe_point__fini(&pt);
	return r;
}

int lp_probe_file__find(struct lp_probe_file *f, struct lp_probe_spec *spec, uint64_t *vaddr,
			uint64_t *size)
{
	struct lp_fcopy *copies;
	size_t n;
	char *shown = NULL;
	int r = lp_probe_func_address(spec, &f->o, f->path, false, &copies, &n, vaddr, &shown);
	free(shown);
	*size = r == 0 && n && copies[0].sym ? copies[0].sym->size : 0;
	lp_fname__free_copies(copies, n);
	return r;
}

int lp_probe_file__flow(struct lp_probe_file *f, uint64_t cu, uint64_t pc, struct lp_insnflow *flow)
{
	return lp_probe_function_flow(&f->o, cu, pc, flow);
}

int lp_probe_file__sites(struct lp_probe_file *f, const struct lp_probe_spec *spec, int hi,
			 struct lp_probe_site **sites, size_t *n)
{
	struct line_hit *hits = NULL;
	size_t nhits = 0;
	*sites = NULL;
	*n = 0;
	if (hi == spec->line) {
		if (lp_probe_resolve_line(spec, &f->o, f->path, &hits, &nhits) < 0)
			return -1;
	} else if (lp_dwarf__has_dwarf(f->o.dw)) {
		struct line_walk w = { .file = spec->file, .lo = spec->line, .hi = hi, .dw = f->o.dw };
		lp_dwarf__each_line(f->o.dw, lp_probe_line_row, &w);
		hits = w.hits;
		nhits = w.nhits;
	}
	*sites = lp_calloc(nhits ? nhits : 1, sizeof(**sites));
	for (size_t i = 0; i < nhits; i++) {
		/* Where lp_probe_line_points puts it, for the same reasons. */
		struct lp_probe_point pt = { .spec = spec };
		struct lp_probe_site *st = &(*sites)[(*n)++];
		uint64_t off;
		st->line = hits[i].line;
		st->cu = hits[i].cu;
		st->addr = lp_probe_choose_line_addr(&pt, &f->o, &hits[i], &st->insn, &st->why);
		if (st->addr != hits[i].addr && lp_dwarf__file_offset(f->o.elf, st->addr, &off, NULL) < 0)
			st->addr = hits[i].addr, st->insn = LP_INSN_STEPPED;
		lp_probe_point__fini(&pt);
	}
	lp_probe_free_hits(hits, nhits);
	return 0;
}

int lp_probe_file__capture(struct lp_probe_file *f, const struct lp_probe_spec *spec,
			   const struct lp_probe_site *site, const char *name, char *why,
			   size_t whysize)
{
	struct lp_probe_point pt = { .spec = spec };
	struct lp_dwscope *sc = lp_dwarf__scope(f->o.dw, site->cu, site->addr);
	int nstrs = 0;
	int r = lp_probe_line_value(&pt, sc, name, site->addr, &nstrs, why, whysize);
	lp_dwscope__free(sc);
	lp_probe_point__fini(&pt);
	return r;
}
