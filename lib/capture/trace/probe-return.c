/* probe-return.c - how a function probe sees its returns: a uretprobe, or
 * the instructions that leave the function when the hazards of the file and
 * its program make a uretprobe unsafe; and the points that go with them
 * (C++'s catch, ld.so's _dl_debug_state). */
#include "capture/trace/probe.h"
#include "capture/trace/probe-internal.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "capture/trace/funcname.h"
#include "capture/trace/hazard.h"
#include "debuginfo/disasm.h"
#include "debuginfo/dwarf.h"
#include "debuginfo/procns.h"

/* A function's code: its symbol's size, else the range of its unwind
 * information (an FDE of .eh_frame or .debug_frame). */
static int func_range(struct elfobj *o, uint64_t vaddr, uint64_t size, struct lp_range *r)
{
	if (size) {
		*r = (struct lp_range){ vaddr, vaddr + size };
		return 0;
	}
	return lp_dwarf__fde_range(o->dw, vaddr, &r->lo, &r->hi);
}

/* Whether the frame at pc is gone (CFA = rsp + 8, the return address at
 * the stack top): only there can a jmp be a tail call.  True when the
 * unwind information does not say. */
static bool frame_gone(struct elfobj *o, uint64_t pc)
{
	unsigned reg;
	long long off;
	if (lp_dwarf__cfa(o->dw, pc, &reg, &off) < 0)
		return true;
	return reg == 7 && off == 8;
}

static int cold_cmp(const void *a, const void *b)
{
	uint64_t x = (*(const struct lp_fsym *const *)a)->value, y = (*(const struct lp_fsym *const *)b)->value;
	return (x > y) - (x < y);
}

/* The cold parts that may hold address a (from the one returned on,
 * while their start is at most a), or NULL: a binary search, since every
 * call a function makes is looked up (--list asks of every function). */
static const struct lp_fsym *const *cold_parts(struct elfobj *o, uint64_t a)
{
	if (!o->cold_read) {
		o->cold_read = true;
		for (size_t k = 0; k < o->fs.nsyms; k++)
			if (strstr(o->fs.syms[k].name, ".cold")) {
				o->cold = lp_reallocarray(o->cold, o->ncold + 1, sizeof(*o->cold));
				o->cold[o->ncold++] = &o->fs.syms[k];
			}
		if (o->ncold)
			qsort(o->cold, o->ncold, sizeof(*o->cold), cold_cmp);
	}
	/* Parts do not overlap: the last that starts at or before a, and
	 * the aliases that start with it. */
	size_t lo = 0, hi = o->ncold;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (o->cold[mid]->value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	while (lo > 1 && o->cold[lo - 2]->value == o->cold[lo - 1]->value)
		lo--;
	return &o->cold[lo - 1];
}

/* The instructions that leave the function at vaddr (its symbol s, or NULL)
 * into pt->rets; the function's GCC-split cold part (NAME.cold) with it.
 * *leaf: it calls nothing and leaves only by ret (no exception can start
 * or pass while it runs, nor any other code read its stack); *reads_ret:
 * where it reads its own return address, from its start, else -1.  -1
 * when its code cannot be found or read (or Capstone opened). */
static int find_leaves(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
		       const struct lp_fsym *s, uint64_t vaddr, bool verbose, struct lp_probe_point *pt,
		       bool *leaf, int64_t *reads_ret)
{
	struct lp_range r[8];
	size_t nr = 1;
	*reads_ret = -1;
	if (func_range(o, vaddr, s ? s->size : 0, &r[0]) < 0)
		return -1;
	/* NAME.cold parts that the code jumps to are the function's too. */
	size_t namelen = s ? strlen(s->name) : 0;
	struct lp_disasm d = { 0 };
	for (size_t scanned = 0; scanned < nr; scanned++) {
		uint64_t off;
		size_t n = (size_t)(r[scanned].hi - r[scanned].lo);
		const unsigned char *code = lp_dwarf__file_offset(o->elf, r[scanned].lo, &off, NULL) == 0
			? lp_probe_file_bytes(o->elf, off, n) : NULL;
		size_t before = d.noutside;
		if (!code || lp_disasm__scan(code, n, r[scanned].lo, r, nr, &d) < 0) {
			lp_disasm__fini(&d);
			return -1;
		}
		for (size_t i = before; s && i < d.noutside && nr < 8; i++)
			for (const struct lp_fsym *const *cp = cold_parts(o, d.outside[i]);
			     cp && cp < o->cold + o->ncold && (*cp)->value <= d.outside[i]; cp++) {
				const struct lp_fsym *c = *cp;
				if (d.outside[i] >= c->value + c->size ||
				    strncmp(c->name, s->name, namelen) || strncmp(c->name + namelen, ".cold", 5))
					continue;
				bool have = false;
				for (size_t j = 0; j < nr; j++)
					have |= r[j].lo == c->value;
				if (!have)
					r[nr++] = (struct lp_range){ c->value, c->value + c->size };
			}
	}
	/* A jump into a cold part scanned after it was seen is no tail call;
	 * a jmp while the frame is still there is none either. */
	pt->rets = lp_calloc(d.nleaves ? d.nleaves : 1, sizeof(*pt->rets));
	pt->ret_insn = LP_INSN_NONE;
	*leaf = !d.calls;
	for (size_t i = 0; i < d.nleaves; i++) {
		const struct lp_leave *l = &d.leaves[i];
		bool internal = false;
		for (size_t k = 0; l->to && k < nr; k++)
			internal |= l->to >= r[k].lo && l->to < r[k].hi;
		if (internal || (l->kind != LP_RET_INSN && !frame_gone(o, l->vaddr)))
			continue;
		uint64_t off;
		if (lp_dwarf__file_offset(o->elf, l->vaddr, &off, NULL) < 0)
			continue;
		*leaf &= l->kind == LP_RET_INSN;
		pt->rets[pt->nrets++] = (struct lp_ret_point){ off, l->kind, l->reg,
							       (uint32_t)(l->vaddr - r[0].lo) };
		enum lp_insn c = lp_insn__classify(l->bytes, l->size);
		if (c > pt->ret_insn)
			pt->ret_insn = c;
	}
	if (d.undecoded && verbose)
		lp_error("%s: %zu bytes of %s that Capstone could not decode were skipped",
			 spec->text, d.undecoded, path);
	/* The slot of the return address: CFA - 8, the CFA being rsp or rbp
	 * plus an offset at each instruction (glibc's dlsym and dlopen read
	 * it to know their caller: a uretprobe makes that the trampoline). */
	for (size_t i = 0; i < d.nrefs && *reads_ret < 0; i++) {
		unsigned reg;
		long long off;
		if (lp_dwarf__cfa(o->dw, d.refs[i].vaddr, &reg, &off) == 0 && reg == d.refs[i].base &&
		    d.refs[i].disp == off - 8)
			*reads_ret = (int64_t)(d.refs[i].vaddr - r[0].lo);
	}
	pt->cfg.func_lo = r[0].lo;
	pt->cfg.func_hi = r[0].hi;
	lp_disasm__fini(&d);
	return 0;
}

/* What file path (o) says, and of Go's register ABI what its symbols say
 * when its build information does not. */
static void file_hazards(const struct elfobj *o, const char *path, struct lp_hazard *hz)
{
	lp_hazard__file(o->elf, path, lp_fname__sym(&o->fs, "runtime.morestack") != NULL, hz);
	/* Go 1.17 wrote no inline version: its ABI0 wrappers say. */
	for (size_t i = 0; hz->go && !hz->go_version[0] && i < o->fs.nsyms && !hz->regabi; i++) {
		size_t n = strlen(o->fs.syms[i].name);
		hz->regabi = n > 5 && !strcmp(o->fs.syms[i].name + n - 5, ".abi0");
	}
}

/* The hazards of the file probed and of the executable that runs it (a C++
 * program calling a C library's function with a callback that throws). */
void lp_probe_hazards(const struct elfobj *o, const char *path, const char *exe,
		      struct lp_hazard *hz)
{
	memset(hz, 0, sizeof(*hz));
	file_hazards(o, path, hz);
	if (!exe || !strcmp(exe, path))
		return;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (e && elf_kind(e) == ELF_K_ELF) {
		struct lp_hazard he = { 0 };
		lp_hazard__file(e, exe, false, &he);
		hz->cxx |= he.cxx;
		if (!hz->why[0])
			memcpy(hz->why, he.why, sizeof(hz->why));
		if (!hz->loads[0])
			memcpy(hz->loads, he.loads, sizeof(hz->loads));
		if (!hz->walks[0])
			memcpy(hz->walks, he.walks, sizeof(hz->walks));
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/* How function probe pt (symbol s, or NULL, at vaddr) sees its returns:
 * with a uretprobe unless that is unsafe (struct lp_hazard), or --returns
 * says.  -1 with why it cannot be traced in err (lp-trace's message, and
 * --list's reason). */
int lp_probe_choose_returns(const struct lp_probe_spec *spec, struct elfobj *o, const char *path,
			    const struct lp_hazard *hz, const struct lp_fsym *s, uint64_t vaddr,
			    bool verbose, struct lp_probe_point *pt, char *err, size_t errsize)
{
	/* What is said against a uretprobe: what the file does now, else
	 * what a library it may load could do. */
	const char *against = hz->why[0] ? hz->why : hz->loads;
	pt->returns = LP_RETURNS_URETPROBE;
	if (spec->returns == LP_RETURNS_URETPROBE) {
		if (against[0])
			lp_error("warning: probe '%s': uretprobe as --returns says, though %s: the program may break",
				 spec->text, against);
		pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
		return 0;
	}
	/* Go code keeps g in r14 from 1.17 on (its register ABI); before,
	 * a return cannot be told whose goroutine's it is. */
	const char *name = s ? s->name : "";
	bool go_code = hz->go && strchr(name, '.');
	if (go_code && !hz->regabi) {
		snprintf(err, errsize, "probe '%s': %s was built by %s, before Go 1.17's register ABI: a return cannot be matched to its goroutine, and a uretprobe would kill the program at its first stack growth; not traced",
			 spec->text, path, hz->go_version[0] ? hz->go_version : "a Go older than 1.17");
		return -1;
	}
	bool leaf;
	int64_t reads_ret;
	if (find_leaves(spec, o, path, s, vaddr, verbose, pt, &leaf, &reads_ret) < 0) {
		if (spec->returns == LP_RETURNS_AUTO && !against[0]) {
			pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
			return 0;	/* nothing known against a uretprobe */
		}
		snprintf(err, errsize, "probe '%s': cannot read the code of %s in %s (no symbol size, no unwind information): its returns cannot be probed, and a uretprobe would break the program (%s); not traced",
			 spec->text, s ? s->name : spec->text, path, against[0] ? against : "--returns insn");
		return -1;
	}
	char why[sizeof(hz->why)];
	snprintf(why, sizeof(why), "%s", against[0] ? against : "--returns insn");
	if (reads_ret >= 0 && (spec->returns == LP_RETURNS_AUTO || !against[0]))
		snprintf(why, sizeof(why), "%s reads its return address (at +%lld)", s ? s->name : spec->text,
			 (long long)reads_ret);
	if (spec->returns == LP_RETURNS_AUTO && !against[0] && reads_ret < 0) {
		free(pt->rets);
		pt->rets = NULL;
		pt->nrets = 0;
		pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
		return 0;
	}
	/* A function that calls nothing and leaves by ret: nothing can read
	 * its return address while it runs (but a signal handler; in Go,
	 * the runtime's asynchronous preemption can scan a stack there).  A
	 * function that is only a ret has its return at its entry: two
	 * uprobes there would run in no known order. */
	bool ret_at_entry = false;
	for (size_t i = 0; i < pt->nrets; i++)
		ret_at_entry |= pt->rets[i].offset == pt->offset;
	if ((spec->returns == LP_RETURNS_AUTO || ret_at_entry) && leaf && !hz->go && reads_ret < 0) {
		if (verbose)
			lp_error("%s: a uretprobe, though %s: it calls nothing%s", spec->text, why,
				 ret_at_entry ? " and is only a ret" : "");
		free(pt->rets);
		pt->rets = NULL;
		pt->nrets = 0;
		return 0;
	}
	pt->returns = LP_RETURNS_INSN;
	pt->returns_why = lp_strdup(why);
	if (go_code)
		pt->cfg.flags |= LP_PROBE_F_GO;
	/* Only a library loaded later could break a uretprobe: the tracer
	 * may arm one per call until one that can is loaded (dl_gate), and
	 * says how it took the returns. */
	pt->dl_gate = spec->returns == LP_RETURNS_AUTO && !hz->why[0] && reads_ret < 0 && !go_code;
	if (pt->dl_gate)
		pt->walks = hz->walks[0] ? lp_strdup(hz->walks) : NULL;
	else if (verbose)
		lp_probe_point__say_returns(pt);
	return 0;
}

void lp_probe_point__say_returns(const struct lp_probe_point *pt)
{
	lp_error("%s: returns probed at %zu instruction%s (%s, not a uretprobe: %s)%s", pt->spec->text,
		 pt->nrets, pt->nrets == 1 ? "" : "s", lp_insn__name(pt->ret_insn), pt->returns_why,
		 (pt->cfg.flags & LP_PROBE_F_GO) ? "; calls kept per goroutine" : "");
}

/* --- the points a function probe needs once: catch, ld.so ------------- */

/* C++'s catch, __cxa_begin_catch, where calls left by an exception end:
 * in the executable (a static libstdc++), else in libstdc++.  Once per
 * list of points.  Not found: those calls end at the next traced call or
 * return above them. */
void lp_probe_add_catch(const struct lp_probe_spec *spec, const char *exe, pid_t pid, bool verbose,
			struct lp_probe_point **points, size_t *n)
{
	static const char sym[] = "__cxa_begin_catch";
	char *paths[2] = { exe ? lp_strdup(exe) : NULL, lp_probe_find_lib("libstdc++", pid) };
	for (int i = 0; i < 2; i++) {
		struct elfobj lo;
		if (!paths[i])
			continue;
		if (lp_probe_elfobj_open(&lo, paths[i]) < 0) {
			lp_probe_elfobj_close(&lo);
			continue;
		}
		const struct lp_fsym *c = lp_fname__sym(&lo.fs, sym);
		uint64_t off;
		bool found = c && lp_dwarf__file_offset(lo.elf, c->value, &off, NULL) == 0;
		bool have = false;
		for (size_t k = 0; found && k < *n; k++)
			have |= (*points)[k].cfg.kind == LP_PROBE_CATCH && (*points)[k].offset == off &&
				!strcmp((*points)[k].path, paths[i]);
		if (found && !have) {
			struct lp_probe_point *pt = lp_probe_new_point(spec, paths[i], points, n);
			pt->name = lp_strdup(sym);
			pt->offset = off;
			pt->cfg.kind = LP_PROBE_CATCH;
			pt->cfg.vaddr = c->value;
			if (verbose)
				lp_error("%s: calls an exception leaves end at %s in %s", spec->text, sym,
					 paths[i]);
		}
		lp_probe_elfobj_close(&lo);
		if (found)
			break;
	}
	free(paths[0]);
	free(paths[1]);
}

/* The dynamic linker exe names (PT_INTERP), as pid sees it; NULL for a
 * static executable. */
static char *interp_of(const char *exe, pid_t pid)
{
	int fd = exe ? open(exe, O_RDONLY | O_CLOEXEC) : -1;
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	char *interp = NULL;
	size_t nph = 0;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &nph) == 0)
		for (size_t i = 0; i < nph && !interp; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP || !ph.p_filesz)
				continue;
			size_t len = 0;
			const char *raw = elf_rawfile(e, &len);
			if (raw && ph.p_offset + ph.p_filesz <= len && !raw[ph.p_offset + ph.p_filesz - 1])
				interp = pid > 0 ? lp_procns__path(pid, raw + ph.p_offset)
						 : lp_strdup(raw + ph.p_offset);
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return interp;
}

/* ld.so's _dl_debug_state, called as each library is loaded: where the
 * tracer sees what a program loads (struct lp_probe_point.dl_gate), in
 * its dynamic linker, else in the executable (a static one).  Once per
 * list of points.  False when there is none. */
bool lp_probe_add_dl(const struct lp_probe_spec *spec, const char *exe, pid_t pid, bool verbose,
		     struct lp_probe_point **points, size_t *n)
{
	static const char sym[] = "_dl_debug_state";
	char *path = interp_of(exe, pid);
	if (!path && exe)
		path = lp_strdup(exe);
	struct elfobj lo;
	bool found = false;
	if (path && lp_probe_elfobj_open(&lo, path) == 0) {
		const struct lp_fsym *c = lp_fname__sym(&lo.fs, sym);
		uint64_t off;
		found = c && lp_dwarf__file_offset(lo.elf, c->value, &off, NULL) == 0;
		bool have = false;
		for (size_t k = 0; found && k < *n; k++)
			have |= (*points)[k].cfg.kind == LP_PROBE_DL && !strcmp((*points)[k].path, path);
		if (found && !have) {
			struct lp_probe_point *pt = lp_probe_new_point(spec, path, points, n);
			pt->name = lp_strdup(sym);
			pt->offset = off;
			pt->cfg.kind = LP_PROBE_DL;
			pt->cfg.vaddr = c->value;
			if (verbose)
				lp_error("%s: the libraries the program loads are seen at %s in %s", spec->text,
					 sym, path);
		}
	}
	if (path)
		lp_probe_elfobj_close(&lo);
	free(path);
	return found;
}
