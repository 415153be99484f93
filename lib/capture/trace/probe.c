/* probe.c - probe specifications resolved with libelf and, through
 * lib/debuginfo/dwarf.h, libdw: lp_probe__resolve and lp_probe__path,
 * which send each kind of probe to its piece (probe-internal.h lists
 * them), and the function probes (FUNC, FUNC+OFF, 0xADDR) and python:
 * probes themselves. */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "capture/kfeatures.h"
#include "capture/trace/funcname.h"
#include "capture/trace/hazard.h"
#include "capture/trace/pyprobe.h"
#include "capture/trace/usdt.h"
#include "debuginfo/dwarf.h"

void lp_probe_point__fini(struct lp_probe_point *p)
{
	free(p->name);
	free(p->path);
	free(p->tp_subsys);
	free(p->tp_event);
	free(p->usdt_provider);
	free(p->usdt_name);
	for (size_t i = 0; i < p->nvals; i++)
		free(p->vals[i].name);
	free(p->ret.name);
	free(p->returns_why);
	free(p->walks);
	free(p->copy);
	free(p->rets);
	free(p->py);
}

struct lp_probe_point *lp_probe_new_point(const struct lp_probe_spec *spec, const char *path,
					  struct lp_probe_point **points, size_t *n)
{
	*points = lp_reallocarray(*points, *n + 1, sizeof(**points));
	struct lp_probe_point *pt = &(*points)[(*n)++];
	memset(pt, 0, sizeof(*pt));
	pt->spec = spec;
	pt->path = lp_strdup(path);
	pt->sysnr = -1;
	return pt;
}

/* A function probe's entry (past an endbr64 when that is cheaper), its
 * values and how its returns are seen; *catch: C++'s catch is to be
 * probed too. */
static int func_entry(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
		      const char *exe, const struct lp_fsym *fsym, const char *shown, uint64_t vaddr,
		      uint64_t off, bool verbose, struct lp_probe_point *pt, bool *catch)
{
	if (shown) {
		/* As lp-record names its frames: "store::Shop::checkout(long)". */
		size_t len = (spec->lib ? strlen(spec->lib) + 1 : 0) + strlen(shown) + 1;
		pt->name = lp_malloc(len);
		snprintf(pt->name, len, "%s%s%s", spec->lib ? spec->lib : "",
			 spec->lib ? ":" : "", shown);
	} else {
		pt->name = lp_strdup(spec->lib ? spec->text : spec->func);
		char *paren = lp_probe_list_start(pt->name);
		if (paren)
			*paren = '\0';
	}
	pt->cfg.kind = LP_PROBE_ENTRY;
	uint64_t skip = lp_probe_skip_endbr(o->elf, off);
	if (skip && verbose) {
		enum lp_insn next = lp_probe_insn_at(o->elf, off + skip);
		lp_error("%s: starts with endbr64: probing the %s at +%llu (%s, not single-stepped)",
			 spec->text, next == LP_INSN_NOP ? "nop" : "push, call or jump",
			 (unsigned long long)skip, next == LP_INSN_NOP ? "optimised" : "emulated");
	}
	if (lp_probe_func_values(pt, o->dw, vaddr, path) < 0)
		return -1;
	pt->offset = off + skip;
	pt->cfg.vaddr = vaddr + skip;
	struct lp_hazard hz;
	lp_probe_hazards(o, path, exe, &hz);
	char err[1024];
	if (lp_probe_choose_returns(spec, o, path, &hz, fsym, vaddr, verbose, pt, err,
				    sizeof(err)) < 0) {
		lp_error("%s", err);
		return -1;
	}
	*catch = hz.cxx && pt->returns == LP_RETURNS_INSN;
	return 0;
}

/* FUNC, FUNC+OFF, 0xADDR: a point at each compiled copy of FUNC (one
 * for the others), all named as FUNC; the catch and ld.so points it
 * needs, once. */
static int func_point(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
		      const char *exe, pid_t pid, bool verbose, struct lp_probe_point **points,
		      size_t *n)
{
	struct lp_fcopy *copies;
	size_t ncopies, first = *n;
	uint64_t vaddr0;
	char *shown = NULL;
	bool catch = false, gate = false;
	int ret = -1;

	if (lp_probe_func_address(spec, o, path, verbose, &copies, &ncopies, &vaddr0, &shown) < 0)
		goto out;
	for (size_t k = 0; k < ncopies; k++) {
		const struct lp_fsym *fsym = copies[k].sym;
		uint64_t vaddr = k ? fsym->value : vaddr0, off;
		if (lp_dwarf__file_offset(o->elf, vaddr, &off, NULL) < 0) {
			lp_error("probe '%s': address 0x%llx is not in a loaded segment of %s",
				 spec->text, (unsigned long long)vaddr, path);
			goto out;
		}
		struct lp_probe_point *pt = lp_probe_new_point(spec, path, points, n);
		pt->cfg.vaddr = vaddr;
		if (copies[k].copy)
			pt->copy = lp_strdup(copies[k].copy);
		if (spec->type == LP_PROBE_FUNC) {
			bool c = false;
			if (func_entry(spec, o, path, exe, fsym, shown, vaddr, off, verbose, pt, &c) < 0)
				goto out;
			catch |= c;
		} else {
			pt->name = lp_strdup(spec->text);
			pt->cfg.kind = LP_PROBE_POINT;
			pt->offset = off;
		}
		pt->insn = lp_probe_insn_at(o->elf, pt->offset);
		gate |= pt->dl_gate;
		if (verbose)
			lp_error("%s: %s at 0x%llx (file offset 0x%llx, %s instruction)%s%s",
				 spec->text, path, (unsigned long long)pt->cfg.vaddr,
				 (unsigned long long)pt->offset, lp_insn__name(pt->insn),
				 pt->copy ? ", its copy " : "", pt->copy ? fsym->name : "");
	}
	/* Last: they move *points. */
	if (catch)
		lp_probe_add_catch(spec, exe, pid, verbose, points, n);
	if (gate && !lp_probe_add_dl(spec, exe, pid, verbose, points, n)) {
		for (size_t k = first; k < first + ncopies; k++)
			(*points)[k].dl_gate = false;
	} else if (gate && (*points)[*n - 1].cfg.kind == LP_PROBE_DL) {
		/* Before the function: the tracer watches the loads before
		 * it arms any uretprobe. */
		struct lp_probe_point dl = (*points)[*n - 1];
		memmove(&(*points)[first + 1], &(*points)[first], (*n - 1 - first) * sizeof(**points));
		(*points)[first] = dl;
	}
	ret = 0;
out:
	lp_fname__free_copies(copies, ncopies);
	free(shown);
	return ret;
}

/* python:[MODULE:]NAME in the interpreter: exe, or the libpython it maps or needs
 * (pyenv's builds); a point at each site (lib/capture/trace/pyprobe.c), the
 * globs in its settings. */
static int python_points(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
			 bool verbose, struct lp_probe_point **points, size_t *n)
{
	struct lp_pyprobe pp;
	size_t nfiles;
	char **files = lp_probe_target_files(exe, pid, &nfiles);
	int r = lp_pyprobe__find((const char *const *)files, nfiles, spec->text, verbose, &pp);
	if (r < 0) {
		lp_usdt__free_files(files, nfiles);
		return -1;
	}
	const char *path = files[pp.file];
	if (lp_pyprobe__globs(spec->text, spec->module, spec->name, &pp.conf) < 0) {
		lp_usdt__free_files(files, nfiles);
		return -1;
	}
	/* One function named, not a glob of them: its calls alone may be
	 * made to trap, and where an exception reaches a frame is then
	 * needed too. */
	bool one = !strpbrk(spec->name, "*?") && (!spec->module || !strpbrk(spec->module, "*?"));
	bool watch = one && pp.watchable && pp.has_unwind && lp_kfeature__has(LP_KF_HW_WATCH);
	if (watch)
		pp.sites[pp.nsites++] = pp.unwind;
	for (size_t i = 0; i < pp.nsites; i++) {
		struct lp_probe_point *pt = lp_probe_new_point(spec, path, points, n);
		pt->name = lp_strdup(spec->text);
		pt->offset = pp.sites[i].offset;
		pt->insn = pp.sites[i].insn;
		pt->cfg.kind = LP_PROBE_PY;
		pt->cfg.vaddr = pp.sites[i].vaddr;
		pt->cfg.flags = pp.sites[i].flags;
		pt->py = lp_malloc(sizeof(*pt->py));
		*pt->py = pp.conf;
		pt->py_every = pp.sites[i].every;
		pt->py_watch = watch;
	}
	lp_usdt__free_files(files, nfiles);
	return 0;
}

char *lp_probe__path(const struct lp_probe_spec *spec, const char *exe, pid_t pid)
{
	if (!spec->lib)
		return lp_strdup(exe);
	char *path = lp_probe_find_lib(spec->lib, pid);
	if (!path)
		lp_error("probe '%s': no library '%s' %s", spec->text, spec->lib,
			 pid > 0 ? "mapped by the process or in the library directories"
				 : "in the library directories");
	return path;
}

int lp_probe__resolve(const struct lp_probe_spec *spec, const char *exe, pid_t pid,
		      bool verbose, struct lp_probe_point **points, size_t *n)
{
	if (spec->type == LP_PROBE_SYSCALLS || spec->type == LP_PROBE_TRACEPOINT) {
		lp_probe_kernel_point(spec, points, n);
		return 0;
	}
	if (spec->type == LP_PROBE_USDTS)
		return lp_probe_usdt_points(spec, exe, pid, points, n);
	if (spec->type == LP_PROBE_PYTHON)
		return python_points(spec, exe, pid, verbose, points, n);
	char *path = lp_probe__path(spec, exe, pid);
	if (!path)
		return -1;
	struct elfobj o;
	int ret = -1;
	if (lp_probe_elfobj_open(&o, path) == 0)
		ret = spec->type == LP_PROBE_LINE
			? lp_probe_line_points(spec, &o, path, verbose, points, n)
			: func_point(spec, &o, path, exe, pid, verbose, points, n);
	lp_probe_elfobj_close(&o);
	free(path);
	return ret;
}
